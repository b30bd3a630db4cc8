"""A remote MCP server's answers of the wrong shape are a clear error, never a crash inside the notebook.

``Session.connect`` talks to any server: a buggy or hostile one can answer any tool with any
JSON. What an attack round found the notebook building from such answers, each fixed where the
answer is received (``notebook/_answers.py``):

- a page answer (open_page, an action, fetch_page) whose SOM had a wrong type anywhere (regions
  an object, an element a number, ``actions`` a number, a title a number, ...) made a ``Page``
  whose repr, HTML repr, ``elements``, ``find`` or ``changes()`` raised AttributeError or
  TypeError deep in page.py: Jupyter showed a traceback, or silently nothing;
- a missing or mistyped ``session_id``, ``cookies``, ``set``, ``cleared``, ``result`` raised a bare
  KeyError or TypeError; a string ``set`` count came back as the count;
- a ``changes`` answer that is not an object raised AttributeError in the session;
- a replay_validate answer without ``status``/``message``/``execution_available`` raised KeyError;
  an unknown status was summarised as another drift; ``execution_available: "false"`` (a string)
  counted as true, so the replay panel showed its Execute button;
- an answer nested deeper than Python's JSON reader goes raised RecursionError from the transport;
- a screenshot whose image data is not base64, or whose PNG header is cut short, raised from
  the transport or from the Screenshot's repr.

A second round (``test_answer_properties.py``, Hypothesis over mutated valid answers) found:

- ``changes`` whose ``keys`` (or ``removed_fields``) leave out ``regions`` raised KeyError from
  ``apply_to_regions`` out of the action, instead of the session reading the page whole;
- a lone surrogate in an element's id, role or action went raw into ``repr(page)`` and the find
  errors' lines, which no UTF-8 message to a notebook carries (and bidirectional controls there
  turned the line round);
- a region without ``elements`` (the check lets it be absent) made ``page.changes()`` and
  ``diff`` raise KeyError once the page was compared with one just like it (an unchanged page);
- answers nested as deep as Python's JSON reader still reads (about 990 levels) passed the
  iterative checks and then raised RecursionError a few frames deeper, where a kernel displays:
  element children nested some 450 deep in ``page.changes()`` and ``diff`` (``==``), an
  ``evaluate`` result in its repr, any value of a trace export in the schema check. A page's
  regions may nest 256 levels, a result and an export 127 (the contract's reader, serde_json,
  refuses 128);
- a close_page answer that is no object was taken for an untraced session's (``close()``
  returned None).

Every such answer is now a ``ServerAnswerError`` (a ``ToolError``) naming the tool, the JSON path
and the type found, never the value, with a hint; the session keeps the page it had. The last
test runs a hostile server built on the MCP SDK's low-level server over real stdio.
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import plasmate_nb as pnb
import plasmate_nb.notebook as nb
from plasmate_nb.client import ServerAnswerError, ToolError
from plasmate_nb.client._payload import payload_or_raise
from plasmate_nb.client.base import CallListeners, parse_payload
from plasmate_nb.tools.som_changes import ChangesMismatch, apply_to_regions, no_changes
from plasmate_nb.trace.constants import RETENTION

URL = "http://127.0.0.1:8765/login.html"
SECRET = "SERVER-CHOSEN-TEXT"  # a value the server sent: never in an error message
TRACE_ID = "24ee158f-b346-490d-9e0b-b979485402d4"
REGIONS = [
    {"id": "r_main", "role": "main", "elements": [
        {"id": "e_1", "role": "button", "text": "Sign in", "actions": ["click"]},
        {"id": "e_2", "role": "text_input", "label": "Email", "actions": ["type", "clear"]},
        {"id": "e_3", "role": "select", "label": "Plan", "actions": ["select"],
         "attrs": {"options": [{"text": "Free", "value": "free"}]}},
    ]},
]  # fmt: skip
PAGE = {"url": URL, "title": "Sign in", "regions": REGIONS}
PLAN = {
    "schema": "plasmate.trace.v1", "trace_id": TRACE_ID, "sequence": 1, "status": "refused",
    "drift": "state_drift", "message": "m", "action": "click", "execution": "validation_only",
    "execution_available": False, "side_effects": False,
}  # fmt: skip
ANSWERS: dict[str, Any] = {
    "open_page": {"session_id": "sid-1", **PAGE},
    "trace_status": {
        "schema": "plasmate.trace.v1", "enabled": True, "trace_id": TRACE_ID, "retained_events": 0,
        "retained_bytes": 0, "max_events": 128, "max_bytes": 49152, "next_sequence": 1,
        "evicted_events": 0, "oversized_events": 0, "cleared_events": 0, "retention": RETENTION,
    },
    **{tool: PAGE for tool in ("click", "navigate_to", "type_text", "fetch_page", "page_som")},
    "get_cookies": {"cookies": [], "count": 0},
    "set_cookies": {"session_id": "sid-1", "set": 1},
    "clear_cookies": {"session_id": "sid-1", "cleared": 1},
    "evaluate": {"result": 7},
    "replay_validate": PLAN,
    "close_page": {"closed": True, "session_id": "sid-1"},
}  # fmt: skip


class _ScriptedServer:
    """A server answering each tool with ``answers[tool]`` (a callable is called with the arguments)."""

    def __init__(self, **answers: Any) -> None:
        self.answers = {**ANSWERS, **answers}
        self._listeners = CallListeners()

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        answer = self.answers[tool]
        return copy.deepcopy(answer(arguments) if callable(answer) else answer)

    async def list_tools(self) -> list[dict[str, Any]]:
        return []

    def subscribe(self, callback: Any) -> Callable[[], None]:
        return self._listeners.add(callback)

    async def aclose(self) -> None:
        pass


def _assert_clear(error: ServerAnswerError, tool: str, path: str) -> None:
    """Names the tool and the path, says what to do, and quotes nothing the server sent."""
    assert isinstance(error, ToolError) and error.tool == tool and error.path == path
    assert f"answer to {tool}" in str(error) and f"at {path}:" in str(error), str(error)
    assert error.hint and "server" in error.hint
    assert SECRET not in str(error) and SECRET not in error.hint
    assert error.__cause__ is None and error.__context__ is None  # no frames holding the answer


def _element(**fields: Any) -> list[dict[str, Any]]:
    return [
        {
            "id": "r",
            "role": "main",
            "elements": [{"id": "e_1", "role": "button", "actions": ["click"], **fields}],
        }
    ]


E0 = "$.regions[0].elements[0]"
BAD_PAGES: dict[str, tuple[dict[str, Any], str]] = {
    "regions an object": ({"regions": {SECRET: 1}}, "$.regions"),
    "regions missing": ({"regions": None}, "$.regions"),
    "region text": ({"regions": [SECRET]}, "$.regions[0]"),
    "region role a number": ({"regions": [{"role": 5, "elements": []}]}, "$.regions[0].role"),
    "region id an array": ({"regions": [{"id": [SECRET], "role": "main", "elements": []}]}, "$.regions[0].id"),
    "elements an object": ({"regions": [{"role": "main", "elements": {SECRET: 1}}]}, "$.regions[0].elements"),
    "element a number": ({"regions": [{"role": "main", "elements": [1]}]}, E0),
    "id missing": ({"regions": [{"role": "main", "elements": [{"role": "button"}]}]}, f"{E0}.id"),
    "id a number": ({"regions": _element(id=7)}, f"{E0}.id"),
    "role null": ({"regions": _element(role=None)}, f"{E0}.role"),
    "label a number": ({"regions": _element(label=3)}, f"{E0}.label"),
    "text an object": ({"regions": _element(text={SECRET: SECRET})}, f"{E0}.text"),
    "actions a number": ({"regions": _element(actions=5)}, f"{E0}.actions"),
    "actions text": ({"regions": _element(actions=SECRET)}, f"{E0}.actions"),
    "an action a number": ({"regions": _element(actions=["click", 2])}, f"{E0}.actions[1]"),
    "attrs an array": ({"regions": _element(attrs=[SECRET])}, f"{E0}.attrs"),
    "options a number": ({"regions": _element(attrs={"options": 3})}, f"{E0}.attrs.options"),
    "children an object": ({"regions": _element(children={SECRET: 1})}, f"{E0}.children"),
    "a child text": ({"regions": _element(children=[SECRET])}, f"{E0}.children[0]"),
    "shadow text": ({"regions": _element(shadow=SECRET)}, f"{E0}.shadow"),
    "shadow elements text": ({"regions": _element(shadow={"elements": SECRET})}, f"{E0}.shadow.elements"),
    "deep shadow role": (
        {"regions": _element(shadow={"elements": [{"id": "e_2", "role": "group", "shadow": {"elements": [
            {"id": "e_3", "role": ["x"]}]}}]})},
        f"{E0}.shadow.elements[0].shadow.elements[0].role",
    ),
    "title a number": ({"title": 5}, "$.title"),
    "title an object": ({"title": {SECRET: SECRET}}, "$.title"),
    "url a number": ({"url": 5}, "$.url"),
    "scroll_position text": ({"scroll_position": "NaN"}, "$.scroll_position"),
    "som_digest a number": ({"som_digest": 1}, "$.som_digest"),
}  # fmt: skip


@pytest.mark.parametrize(("change", "path"), BAD_PAGES.values(), ids=BAD_PAGES)
def test_a_page_answer_of_the_wrong_shape_is_a_clear_error(change: dict[str, Any], path: str) -> None:
    bad = {**PAGE, **change}
    with pytest.raises(ServerAnswerError) as opening:
        nb.Session(_ScriptedServer(open_page={"session_id": "sid-1", **bad})).open(URL)
    _assert_clear(opening.value, "open_page", path)

    s = nb.Session(_ScriptedServer(click=bad))
    first = s.open(URL)
    with pytest.raises(ServerAnswerError) as clicking:
        s.click("e_1")
    _assert_clear(clicking.value, "click", path)
    assert s.page is first  # the page it had, whole

    with pytest.raises(ServerAnswerError) as fetching:
        nb.fetch(URL, transport=_ScriptedServer(fetch_page=bad))
    _assert_clear(fetching.value, "fetch_page", path)


@pytest.mark.parametrize(
    "answer", [[PAGE], SECRET, 5, None, True], ids=["array", "text", "number", "null", "bool"]
)
def test_an_answer_that_is_no_object_is_a_clear_error(answer: Any) -> None:
    with pytest.raises(ServerAnswerError) as opening:
        nb.Session(_ScriptedServer(open_page=answer)).open(URL)
    _assert_clear(opening.value, "open_page", "$")
    s = nb.Session(_ScriptedServer(click=answer, evaluate=answer, get_cookies=answer))
    s.open(URL)
    for tool, act in [("click", lambda: s.click("e_1")), ("evaluate", lambda: s.evaluate("1")),
                      ("get_cookies", s.cookies)]:  # fmt: skip
        with pytest.raises(ServerAnswerError) as failing:
            act()
        _assert_clear(failing.value, tool, "$")


def test_a_page_that_follows_the_contract_shows_whatever_its_text() -> None:
    """Odd but well-formed: duplicate ids, markup, a huge title, no optional fields, nested shadows."""
    regions = [
        {"id": "r", "role": "main", "elements": [
            {"id": "e_1", "role": "button", "text": "<script>alert(1)</script>", "actions": ["click"]},
            {"id": "e_1", "role": "button", "label": "<b>x</b>"},
            {"id": "e_4", "role": "group", "shadow": {"elements": [{"id": "e_5", "role": "link"}]}},
        ]},
        {"elements": []},
    ]  # fmt: skip
    answer = {"session_id": "sid-1", "url": URL, "title": "T" * 100_000, "regions": regions}
    page = nb.Session(_ScriptedServer(open_page=answer)).open(URL)
    assert "<script>" not in page._repr_html_() and "e_5" in repr(page)
    assert len(page.elements) == 4 and len(page.changes()) == 3  # a shadow travels with its host
    with pytest.raises(pnb.AmbiguousElement):
        page.find(role="button")


def test_an_open_answer_without_a_session_id_is_a_clear_error() -> None:
    for session_id, path in ((None, "$.session_id"), (7, "$.session_id"), ({SECRET: 1}, "$.session_id")):
        s = nb.Session(_ScriptedServer(open_page={**PAGE, "session_id": session_id}))
        with pytest.raises(ServerAnswerError) as opening:
            s.open(URL)
        _assert_clear(opening.value, "open_page", path)
        assert s.session_id is None and s.page is None


def test_changes_that_are_no_object_are_a_clear_error() -> None:
    for changes in (SECRET, [1], 5):
        s = nb.Session(_ScriptedServer(click={"changes": changes, "som_digest": "sha256:x", "url": URL}))
        first = s.open(URL)
        with pytest.raises(ServerAnswerError) as clicking:
            s.click("e_1")
        _assert_clear(clicking.value, "click", "$.changes")
        assert s.page is first


def test_changes_that_do_not_apply_fetch_the_page_and_check_it() -> None:
    """Changes for another page model make the session read the whole model; a bad one is an error."""
    changes = {"base_digest": None, "added": SECRET, "removed": 5}  # the first page has no digest either
    good = nb.Session(_ScriptedServer(click={"changes": changes, "url": URL}))
    good.open(URL)
    with pytest.warns(UserWarning, match="changed again"):
        assert good.click("e_1").find(role="button").id == "e_1"  # read whole from page_som
    bad = nb.Session(
        _ScriptedServer(click={"changes": changes, "url": URL}, page_som={"regions": {SECRET: 1}})
    )
    bad.open(URL)
    with pytest.raises(ServerAnswerError) as clicking:
        bad.click("e_1")
    _assert_clear(clicking.value, "page_som", "$.regions")


@pytest.mark.parametrize(
    ("tool", "answer", "path"),
    [
        ("get_cookies", {}, "$.cookies"),
        ("get_cookies", {"cookies": {SECRET: 1}}, "$.cookies"),
        ("get_cookies", {"cookies": SECRET}, "$.cookies"),
        ("get_cookies", {"cookies": [SECRET]}, "$.cookies[0]"),
        ("set_cookies", {}, "$.set"),
        ("set_cookies", {"set": "1"}, "$.set"),
        ("set_cookies", {"set": -5}, "$.set"),
        ("set_cookies", {"set": True}, "$.set"),
        ("set_cookies", {"set": 1.5}, "$.set"),
        ("clear_cookies", {}, "$.cleared"),
        ("clear_cookies", {"cleared": None}, "$.cleared"),
        ("evaluate", {}, "$.result"),
        ("close_page", {"closed": True, "final_trace": SECRET}, "$.final_trace"),
        ("close_page", {"closed": True, "final_trace": [1]}, "$.final_trace"),
        ("close_page", [SECRET], "$"),
        ("close_page", None, "$"),
    ],
)
def test_counts_cookies_and_results_of_the_wrong_shape_are_clear_errors(
    tool: str, answer: Any, path: str
) -> None:
    s = nb.Session(_ScriptedServer(**{tool: answer}))
    s.open(URL)
    calls = {
        "get_cookies": s.cookies,
        "set_cookies": lambda: s.set_cookies([{"name": "a", "value": "b", "url": URL}]),
        "clear_cookies": s.clear_cookies,
        "evaluate": lambda: s.evaluate("1"),
        "close_page": s.close,
    }
    with pytest.raises(ServerAnswerError) as failing:
        calls[tool]()
    _assert_clear(failing.value, tool, path)


BAD_PLANS: dict[str, tuple[dict[str, Any], str]] = {
    "status missing": ({"status": None}, "$.status"),
    "status unknown": ({"status": SECRET}, "$.status"),
    "status a number": ({"status": 5}, "$.status"),
    "refused without drift": ({"drift": None}, "$.drift"),
    "drift an array": ({"drift": [SECRET]}, "$.drift"),
    "message missing": ({"message": None}, "$.message"),
    "sequence text": ({"sequence": "1"}, "$.sequence"),
    "sequence a float": ({"sequence": 1.0}, "$.sequence"),
    "sequence not the one asked about": ({"sequence": 2}, "$.sequence"),
    "sequence past 64 bits": ({"sequence": 2**64}, "$.sequence"),  # an Int64 column cannot hold it
    "action a number": ({"action": 5}, "$.action"),
    "execution_available text": ({"execution_available": "false"}, "$.execution_available"),
    "execution_available missing": ({"execution_available": None}, "$.execution_available"),
}


@pytest.mark.parametrize(("change", "path"), BAD_PLANS.values(), ids=BAD_PLANS)
def test_a_replay_plan_of_the_wrong_shape_is_a_clear_error(change: dict[str, Any], path: str) -> None:
    plan = {k: v for k, v in {**PLAN, **change}.items() if v is not None}
    s = nb.Session(_ScriptedServer(replay_validate=plan))
    s.open(URL)
    with pytest.raises(ServerAnswerError) as validating:
        s.replay_validate(1)
    _assert_clear(validating.value, "replay_validate", path)


def test_an_unknown_drift_code_is_shown_as_unknown() -> None:
    """A newer server's code is no error: the plan says it does not know it (and pnb.explain how to look)."""
    s = nb.Session(_ScriptedServer(replay_validate={**PLAN, "drift": "newer_drift"}))
    s.open(URL)
    plan = s.replay_validate(1)
    assert "unknown drift code 'newer_drift'" in plan.summary and "<table>" in plan._repr_html_()


def test_a_replay_execution_answer_of_the_wrong_shape_is_a_clear_error() -> None:
    def refusing(text: str) -> Callable[[dict[str, Any]], Any]:
        def answer(arguments: dict[str, Any]) -> Any:
            raise ToolError("replay_execute", text)

        return answer

    prefix = pnb.errors.REPLAY_NOT_EXECUTED_PREFIX
    cases = [
        ({**PAGE, "sequence": 3}, "$.replayed_sequence"),
        ({**PAGE, "replayed_sequence": "1", "sequence": 3}, "$.replayed_sequence"),
        ({**PAGE, "replayed_sequence": 1, "sequence": None}, "$.sequence"),
        ({**PAGE, "regions": SECRET, "replayed_sequence": 1, "sequence": 3}, "$.regions"),
        (refusing(prefix + SECRET + "{"), "$"),
        (refusing(prefix + "[" * 100_000), "$"),
        (refusing(prefix + json.dumps({**PLAN, "status": 5})), "$.status"),
    ]
    for answer, path in cases:
        s = nb.Session(_ScriptedServer(replay_execute=answer))
        first = s.open(URL)
        with pytest.raises(ServerAnswerError) as replaying:
            s.replay(1, confirmed=True)
        _assert_clear(replaying.value, "replay_execute", path)
        assert s.page is first


def test_json_nested_deeper_than_python_reads_is_no_recursion_error() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    assert parse_payload(deep) == deep  # text, as any answer that is no JSON
    s = nb.Session(_ScriptedServer(evaluate=parse_payload('{"result": ' + deep + "}")))
    s.open(URL)
    with pytest.raises(ServerAnswerError) as evaluating:
        s.evaluate("1")
    _assert_clear(evaluating.value, "evaluate", "$")


def test_a_broken_screenshot_is_a_clear_error_and_a_cut_header_no_broken_repr() -> None:
    with pytest.raises(ServerAnswerError) as decoding:
        payload_or_raise("screenshot_page", "", False, [("abc", "image/png")], has_text=False)
    assert decoding.value.tool == "screenshot_page" and "abc" not in str(decoding.value)
    assert decoding.value.hint
    cut = pnb.Screenshot(b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00")
    assert cut.size is None and repr(cut) == "Screenshot(image/png, 18 bytes)"
    s = nb.Session(_ScriptedServer(screenshot_page={"not": "an image"}))
    s.open(URL)
    with pytest.raises(ServerAnswerError) as shooting:
        s.screenshot()
    _assert_clear(shooting.value, "screenshot_page", "$")


def test_a_text_tool_answering_an_image_is_refused() -> None:
    image = payload_or_raise("extract_text", "", False, [("iVBORw0KGgo=", "image/png")], has_text=False)
    s = nb.Session(_ScriptedServer(extract_text=image, extract_links=image))
    s.open(URL)
    for tool, read in (("extract_text", s.text), ("extract_links", s.links)):
        with pytest.raises(ServerAnswerError) as reading:
            read()
        _assert_clear(reading.value, tool, "$")


def test_the_reference_without_chrome_says_it_takes_no_screenshots() -> None:
    # A success in the reference's contract (plasmate-stateless-tools.md), not a broken answer.
    answer = {"error": "screenshot_not_implemented", "hint": "h", "message": "m", "som": {"regions": []}}
    s = nb.Session(_ScriptedServer(screenshot_page=answer))
    s.open(URL)
    with pytest.raises(ToolError) as shooting:
        s.screenshot()
    assert not isinstance(shooting.value, ServerAnswerError)
    assert "no Chrome" in str(shooting.value) and "s.text()" in (shooting.value.hint or "")


def test_a_hostile_stdio_server_gets_clear_errors(tmp_path: Path) -> None:
    """End to end: a server of another author (the MCP SDK's low-level server over stdio)."""
    script = tmp_path / "answers.json"
    bad_page = {**PAGE, "regions": _element(actions=5)}
    answers = {
        "open_page": {"session_id": "sid-1", **PAGE},
        "trace_status": ANSWERS["trace_status"],
        "click": bad_page,
        "replay_validate": {**PLAN, "status": "validated", "execution_available": "false"},
        "close_page": ANSWERS["close_page"],
    }
    texts = {tool: json.dumps(answer) for tool, answer in answers.items()}
    texts["evaluate"] = '{"result": ' + "[" * 50_000 + "]" * 50_000 + "}"
    script.write_text(json.dumps(texts), encoding="utf-8")
    server = Path(__file__).with_name("hostile_mcp_server.py")
    with nb.Session.connect(command=[sys.executable, str(server), str(script)]) as s:
        first = s.open(URL)
        with pytest.raises(ServerAnswerError) as clicking:
            s.click("e_1")
        _assert_clear(clicking.value, "click", f"{E0}.actions")
        assert s.page is first and "Sign in" in first._repr_html_()
        with pytest.raises(ServerAnswerError) as validating:
            s.replay_validate(1)
        _assert_clear(validating.value, "replay_validate", "$.execution_available")
        with pytest.raises(ServerAnswerError) as evaluating:
            s.evaluate("1")
        _assert_clear(evaluating.value, "evaluate", "$")


@pytest.mark.parametrize("text", ["\n\n1.50", '"quoted"', "1e400", "[1, 2]", "null"])
def test_a_page_whose_text_looks_like_json_reads_back_as_written(tmp_path: Path, text: str) -> None:
    """extract_text and extract_links answer the page's own text: none of it is parsed as JSON
    (it came back as 1.5, as quoted without its quotes, as inf), over a real stdio server."""
    script = tmp_path / "answers.json"
    texts = {tool: json.dumps(ANSWERS[tool]) for tool in ("open_page", "trace_status", "close_page")}
    texts |= {"extract_text": text, "extract_links": text.strip()}
    script.write_text(json.dumps(texts), encoding="utf-8")
    server = Path(__file__).with_name("hostile_mcp_server.py")
    with nb.Session.connect(command=[sys.executable, str(server), str(script)]) as s:
        s.open(URL)
        assert s.text() == text
        assert s.links() == [text.strip()]


# -- found by the properties (test_answer_properties.py) ------------------------------------------


@pytest.mark.parametrize("patch", [{"keys": []}, {"removed_fields": ["regions"]}], ids=["keys", "removed"])
def test_changes_that_drop_the_regions_are_a_mismatch_and_the_page_is_read_whole(
    patch: dict[str, Any],
) -> None:
    changes = {**no_changes(), "base_digest": None, **patch}
    with pytest.raises(ChangesMismatch):
        apply_to_regions(copy.deepcopy(REGIONS), changes)
    s = nb.Session(_ScriptedServer(click={"changes": changes, "url": URL}))
    s.open(URL)
    with pytest.warns(UserWarning, match="changed again"):
        assert s.click("e_1").regions == REGIONS  # read whole from page_som


def test_ids_roles_and_actions_a_server_sent_show_escaped_in_text() -> None:
    odd = {"id": "e_\ud800", "role": "button\u202e", "text": "Go", "actions": ["click\udc01"]}
    regions = [{"id": "r", "role": "main", "elements": [odd]}]
    page = nb.Session(_ScriptedServer(open_page={"session_id": "sid-1", **PAGE, "regions": regions})).open(
        URL
    )
    shown = repr(page)
    shown.encode("utf-8")
    assert "e_\\ud800" in shown and "button\\u202e" in shown and "click\\udc01" in shown
    with pytest.raises(pnb.ElementNotFound) as missing:
        page.find(text="Stop")
    str(missing.value).encode("utf-8")
    assert page.find(role="button\u202e").id == "e_\ud800"  # the element itself keeps them


def test_pages_with_a_region_without_elements_compare() -> None:
    regions = [*REGIONS, {"id": "r_empty", "role": "aside"}, {"role": "footer", "elements": None}]
    server = _ScriptedServer(open_page={"session_id": "sid-1", **PAGE, "regions": regions})
    server.answers["scroll"] = {**PAGE, "regions": regions}
    s = nb.Session(server)
    first = s.open(URL)
    after = s.scroll()
    assert after.changes().empty and first.diff(after).empty and len(first.changes()) == 3


def _nested_children(depth: int) -> dict[str, Any]:
    element: dict[str, Any] = {"id": "e_1", "role": "group"}
    for _ in range(depth):
        element = {"id": "e_1", "role": "group", "children": [element]}
    return element


def test_answers_nested_deeper_than_the_contract_reads_are_clear_errors() -> None:
    deep_page = {**PAGE, "regions": [{"id": "r", "role": "main", "elements": [_nested_children(140)]}]}
    shallow = {**PAGE, "regions": [{"id": "r", "role": "main", "elements": [_nested_children(100)]}]}
    assert (
        nb.Session(_ScriptedServer(open_page={"session_id": "sid-1", **shallow})).open(URL).changes().shape[0]
        == 1
    )
    with pytest.raises(ServerAnswerError) as opening:
        nb.Session(_ScriptedServer(open_page={"session_id": "sid-1", **deep_page})).open(URL)
    _assert_clear(
        opening.value, "open_page", "$.regions[0].elements[0]" + ".children[0]" * 127
    )  # the first element past level 256 (elements sit at even levels: 4, 6, ...)

    result: Any = [SECRET]
    for _ in range(126):
        result = [result]
    s = nb.Session(_ScriptedServer(evaluate={"result": result}))
    s.open(URL)
    assert s.evaluate("1") == result  # 127 levels: as deep as the contract's reader goes
    s = nb.Session(_ScriptedServer(evaluate={"result": {SECRET: [result]}}))
    s.open(URL)
    with pytest.raises(ServerAnswerError) as evaluating:
        s.evaluate("1")
    _assert_clear(evaluating.value, "evaluate", "$.result")  # never a key the page chose

    s = nb.Session(
        _ScriptedServer(trace_export={"schema": "plasmate.trace.v1", "events": [{"parameters": result}]})
    )
    s.open(URL)
    with pytest.raises(ServerAnswerError) as exporting:
        s.trace.export()
    _assert_clear(exporting.value, "trace_export", "$.events[0].parameters" + "[0]" * 124)  # level 128


def test_a_value_nested_too_deep_beside_the_som_is_found_in_the_same_walk() -> None:
    deep: Any = [SECRET]
    for _ in range(300):
        deep = [deep]
    for field, path in (("attrs", f"{E0}.attrs"), (SECRET, E0)):  # a key the server chose is not shown
        server = _ScriptedServer(
            open_page={"session_id": "sid-1", **PAGE, "regions": _element(**{field: {"x": deep}})}
        )
        with pytest.raises(ServerAnswerError) as opening:
            nb.Session(server).open(URL)
        _assert_clear(opening.value, "open_page", path)


def test_a_clear_answer_that_is_no_object_or_has_no_status_says_where() -> None:
    for answer, path in (([1], "$"), ({"cleared_events": 1}, "$.status")):
        s = nb.Session(_ScriptedServer(trace_clear=answer))
        s.open(URL)
        with pytest.raises(ServerAnswerError) as clearing:
            s.trace.clear()
        _assert_clear(clearing.value, "trace_clear", path)
    assert "got nothing (the field is missing)" in str(clearing.value)
