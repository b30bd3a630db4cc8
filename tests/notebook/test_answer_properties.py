"""Any answer a server sends is either shown or refused clearly: properties over mutated answers.

``Session.connect`` talks to any MCP server. For any JSON a server answers a notebook call with,
and in particular for answers that are almost right (a valid answer with one field replaced by
another JSON value, deleted, or joined by an extra key; deep nesting; huge text; lone surrogates
and bidirectional controls; numbers like ``1e308``, ``-0.0``, ``2**64``), the call either
succeeds, and then everything it returns displays (``repr``, ``_repr_html_``, ``Page.elements``,
``find`` missing with ``ElementNotFound``, ``changes()``, the trace objects' reprs), or raises a
``ServerAnswerError`` that names the tool and path and never a value of the answer.

The valid answers are those the real dispatcher gives over the scripted engine, beside the
hand-written ones of ``test_hostile_server_answers``; each example mutates one of them at one to
three JSON paths and hands it, written as JSON text and read back as a remote transport reads
it, to a session. What comes back is displayed under Python's own recursion limit (Hypothesis
raises it) a hundred frames deeper, as a kernel does. What the rules found is listed, with a
hand-written case each, in ``test_hostile_server_answers``.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import math
import sys
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import plasmate_nb.notebook as nb
from plasmate_nb._loop import background_loop, run_sync
from plasmate_nb.client import InProcessTransport, LoopBoundTransport, ServerAnswerError, ToolError
from plasmate_nb.client.base import parse_payload
from plasmate_nb.demo_site import DemoSite
from plasmate_nb.notebook import _answers as answers
from plasmate_nb.notebook.page import ElementNotFound, Page
from plasmate_nb.tools import Dispatcher
from plasmate_nb.tools.som_changes import ChangesMismatch, apply_to_regions, diff_som
from tests.notebook.test_hostile_server_answers import ANSWERS, PAGE, PLAN, URL, _ScriptedServer
from tests.scripted_engine import ScriptedEngine
from tests.support import DelegatingTransport

SECRET = "SERVER-CHOSEN-TEXT"  # a value the server sent: never in an error message
EXAMPLES = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))

# -- JSON values, odd ones first ------------------------------------------------------------------

ODD_TEXTS = [SECRET, "", "\ud800", "a\udc01b", "\u202eevil\u202c", "\u2066x\u2069", "e_1", "button",
             "<script>x</script>", "T" * 100_000, "\x00\x1b[31m", "http://[", "javascript:alert(1)"]  # fmt: skip
ODD_NUMBERS = [0, 1, -1, 2**63, 2**64, -(2**64), 1e308, -1e308, -0.0, 0.5, 3.0, math.inf, -math.inf,
               math.nan, True, False]  # fmt: skip
KEYS = st.sampled_from(
    ["id", "role", "label", "text", "actions", "attrs", "options", "children", "shadow", "elements",
     "regions", "url", "title", "som_digest", "scroll_position", "session_id", "status", "drift",
     "sequence", "action", "message", "execution_available", "cookies", "set", "cleared", "result",
     "changes", "base_digest", "fields", "keys", "removed_fields", "added", "removed", "changed",
     "index", "region", "element", "events", "final_trace", "omitted", "reason", SECRET]
) | st.text(max_size=8)  # fmt: skip
LEAVES = (
    st.none()
    | st.booleans()
    | st.sampled_from(ODD_NUMBERS)
    | st.integers()
    | st.floats()
    | st.sampled_from(ODD_TEXTS)
    | st.text(max_size=12)
)
JSON = st.recursive(
    LEAVES, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3), max_leaves=8
)


def _nested(depth: int, kind: str) -> Any:
    """A value nested ``depth`` deep, as a real JSON reader still hands over (it stops near 1000)."""
    value: Any = SECRET
    for _ in range(depth):
        if kind == "list":
            value = [value]
        elif kind == "object":
            value = {"x": value}
        else:  # an element whose children nest: every level is a valid SOM element
            value = {"id": "e_deep", "role": "group", "children": [value] if isinstance(value, dict) else []}
    return value


# Depths around the contract's bounds and up to where a JSON reader gives up (about 990 levels).
DEPTHS = st.sampled_from([2, 127, 128, 129, 255, 256, 257, 400, 900, 940, 960, 975, 985]) | st.integers(
    1, 990
)
DEEP = st.builds(_nested, DEPTHS, st.sampled_from(["list", "object"])) | st.builds(
    _nested, DEPTHS.map(lambda depth: depth // 2), st.just("element")
)


def _deepened(node: Any, depth: int) -> Any:
    """``node`` nested ``depth`` levels down where it was: inside element children (a SOM element's
    own nesting) when it is an element, else inside arrays."""
    for _ in range(depth):
        if isinstance(node, dict) and "id" in node and "role" in node:
            node = {"id": "e_deep", "role": "group", "children": [node]}
        else:
            node = [node]
    return node


VALUES = JSON | DEEP | st.lists(KEYS, max_size=3)  # the last: a key list (``keys``, ``removed_fields``)


# -- mutations of a valid answer ------------------------------------------------------------------


def _paths(value: Any) -> list[tuple[Any, ...]]:
    """Every JSON path in ``value`` (iteratively: answers may nest deep)."""
    found: list[tuple[Any, ...]] = []
    stack: list[tuple[tuple[Any, ...], Any]] = [((), value)]
    while stack:
        path, node = stack.pop()
        found.append(path)
        if isinstance(node, dict):
            stack += [((*path, key), child) for key, child in node.items()]
        elif isinstance(node, list):
            stack += [((*path, index), child) for index, child in enumerate(node)]
    return found


@st.composite
def mutated(draw: st.DrawFn, valid: Any) -> Any:
    """``valid`` with one to three JSON paths replaced, deleted or joined by another value."""
    answer = copy.deepcopy(valid)
    for _ in range(draw(st.integers(1, 3))):
        answer = _mutate(draw, answer)
    return answer


def _mutate(draw: st.DrawFn, answer: Any) -> Any:
    if draw(st.booleans()):  # any path alike
        path = draw(st.sampled_from(sorted(_paths(answer), key=repr)))
    else:  # a walk from the top, stopping at each step by chance: the answer's own fields first
        path, node = (), answer
        while isinstance(node, dict | list) and node and draw(st.booleans()):
            key = draw(st.sampled_from(list(node) if isinstance(node, dict) else range(len(node))))
            path, node = (*path, key), node[key]
    operation = draw(st.sampled_from(["replace", "replace", "delete", "add", "deepen", "deepen", "keep"]))
    if operation == "keep":
        return answer
    if not path:
        return draw(VALUES) if operation == "replace" else answer
    if operation == "deepen":  # the value at ``path``, nested deeper where it is
        elements = [p for p in _paths(answer) if len(p) > 1 and p[-2] in ("elements", "children")]
        path = draw(st.sampled_from(sorted(elements, key=repr))) if elements and draw(st.booleans()) else path
    parent = answer
    for key in path[:-1]:
        parent = parent[key]
    node = parent[path[-1]]
    if operation == "replace":
        parent[path[-1]] = draw(VALUES)
    elif operation == "deepen":
        parent[path[-1]] = _deepened(node, draw(DEPTHS) // (2 if isinstance(node, dict) else 1))
    elif operation == "delete":
        del parent[path[-1]]
    elif isinstance(node, dict):
        node[draw(KEYS)] = draw(VALUES)
    elif isinstance(node, list):
        node.insert(draw(st.integers(0, len(node))), draw(VALUES))
    else:
        parent[path[-1]] = draw(VALUES)
    return answer


def changes_for(
    regions: list[dict[str, Any]], base_digest: str | None, others: list[list[dict[str, Any]]]
) -> st.SearchStrategy[Any]:
    """``changes`` from ``regions`` to one of ``others`` (diff_som's), some of their fields
    replaced by others of the contract's shape naming ``regions``' ids (and other ids), with
    values of any JSON type where the shape has one."""
    bases = [diff_som({"regions": regions}, {"regions": after}) for after in [regions, *others]]
    elements = [e for region in regions for e in region.get("elements") or []]
    region_ids = st.sampled_from([r.get("id") for r in regions] + ["r_new"]) | VALUES
    element_ids = st.sampled_from([e["id"] for e in elements] + ["e_new"]) | VALUES
    index = st.integers(-1, 12) | VALUES
    element = st.sampled_from(elements) | st.fixed_dictionaries({"id": element_ids, "role": KEYS}) | VALUES
    some_keys = st.lists(
        st.sampled_from(["regions", "url", "title", "id", "role", "elements"]) | KEYS, max_size=4
    )

    def patch(ids: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        optional = {
            "fields": st.dictionaries(KEYS, VALUES, max_size=2),
            "removed_fields": some_keys,
            "keys": some_keys,
        }
        return st.fixed_dictionaries({"id": ids}, optional=optional) | VALUES

    lists = lambda inner: st.lists(inner, max_size=3) | VALUES  # noqa: E731
    region_changes = st.fixed_dictionaries(
        {},
        optional={
            "added": lists(
                st.fixed_dictionaries({"index": index, "region": st.sampled_from(regions) | VALUES})
            ),
            "removed": lists(region_ids),
            "changed": lists(patch(region_ids)),
        },
    )
    valid = st.sampled_from(bases)
    return st.builds(
        lambda base, fields: {**base, "base_digest": base_digest, **fields},
        valid,
        st.fixed_dictionaries(
            {},
            optional={
                "base_digest": VALUES,
                "fields": st.dictionaries(KEYS, VALUES, max_size=2) | VALUES,
                "removed_fields": some_keys | VALUES,
                "keys": some_keys | VALUES,
                "regions": region_changes | VALUES,
                "added": lists(
                    st.fixed_dictionaries({"region": region_ids, "index": index, "element": element})
                ),
                "removed": lists(element_ids),
                "changed": lists(patch(element_ids)),
            },
        ),
    )


# -- valid answers: the real dispatcher's, recorded once -------------------------------------------


class _Recording(DelegatingTransport):
    """The real dispatcher; every answer is kept per tool."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.answers: dict[str, list[Any]] = defaultdict(list)

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        answer = await self.inner.call(tool, arguments)
        self.answers[tool].append(copy.deepcopy(answer))
        return answer


class Recorded:
    def __init__(self) -> None:
        self.valid: dict[str, list[Any]] = {}
        #: A som_answers="changes" session: its open answer, then (action answer, page_som after it).
        self.changes_open: Any = None
        self.changes_steps: list[tuple[Any, Any]] = []


@pytest.fixture(scope="module")
def recorded() -> Iterator[Recorded]:
    with DemoSite() as site:
        inner = LoopBoundTransport(
            InProcessTransport(Dispatcher(ScriptedEngine(site.base_url))), background_loop()
        )
        full = _Recording(inner)
        with nb.Session(full) as s:
            page = s.open(site.url("/login.html"))
            email = page.find(label="Email")
            s.type_text(email, "analyst@example.test")
            s.toggle(page.find(role="checkbox", label="Remember me"))
            s.select_option(page.find(label="Plan"), "Team")
            s.clear(email)
            s.scroll("down", 100)
            scrolled = s.trace.status().next_sequence - 1  # a scroll leaves the state as it was
            s.replay_validate(scrolled)
            s.replay_validate(scrolled, confirmed=True)
            s.evaluate("document.title")
            s.set_cookies([{"name": "a", "value": "b", "url": site.url("/")}])
            s.cookies()
            s.clear_cookies()
            s.trace.status()
            for sequence, confirmed in ((2, False), (2, True), (1, False), (999, False)):
                s.replay_validate(sequence, confirmed)
            run_sync(full.call("page_som", {"session_id": s.session_id}))
            s.navigate(site.url("/index.html"))
            s.trace.export()
            s.trace.clear()
        changing = _Recording(inner)
        result = Recorded()
        with nb.Session(changing) as s:
            page = s.open(site.url("/login.html"), som_answers="changes")
            result.changes_open = changing.answers["open_page"][0]
            for act in (
                lambda: s.type_text(page.find(label="Email"), "a@b.test"),
                lambda: s.toggle(page.find(role="checkbox", label="Remember me")),
                lambda: s.select_option(page.find(label="Plan"), "Team"),
                lambda: s.click(page.find(role="link", text="Home")),
            ):
                act()
                tool = next(t for t in changing.answers if t not in ("open_page", "trace_status", "page_som"))
                answer = changing.answers.pop(tool)[0]
                som = run_sync(changing.call("page_som", {"session_id": s.session_id}))
                if "changes" in answer:  # a navigation answers the whole new page
                    result.changes_steps.append((answer, som))
        valid: dict[str, list[Any]] = {
            tool: [copy.deepcopy(a) for a in found] for tool, found in full.answers.items()
        }
        for tool in ("open_page", "navigate_to", "click", "type_text", "select_option", "scroll",
                     "toggle", "clear", "page_som", "fetch_page"):  # fmt: skip
            valid.setdefault(tool, []).append(
                {**PAGE, **({"session_id": "sid-1"} if tool == "open_page" else {})}
            )
        valid["click"] += valid["navigate_to"]
        valid["fetch_page"] += valid["page_som"]
        valid["replay_validate"].append(PLAN)
        valid["close_page"].append(ANSWERS["close_page"])
        result.valid = valid
        yield result


class _JsonServer(_ScriptedServer):
    """``_ScriptedServer`` over the wire: each answer is sent as JSON text and read back as a
    remote transport reads it (``parse_payload``: an answer nested deeper than Python's reader
    goes arrives as text)."""

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        self.read[tool] = _over_the_wire(self.answers[tool])
        return self.read[tool]

    @functools.cached_property
    def read(self) -> dict[str, Any]:
        """What the session read of each tool's last answer."""
        return {}


def _over_the_wire(answer: Any) -> Any:
    """``answer`` as a remote transport hands it over: written as JSON text, read back."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))  # the server's side writes any depth
    try:
        text = json.dumps(answer)
    finally:
        sys.setrecursionlimit(limit)
    return parse_payload(text)


def _server(recorded: Recorded, **answers_: Any) -> _JsonServer:
    """Every tool answered validly (the dispatcher's first answer), but those given."""
    first = {tool: found[0] for tool, found in recorded.valid.items()}
    return _JsonServer(**{**first, **answers_})


# -- what "displays" and "a clear error" mean -------------------------------------------------------


def _assert_clear(error: BaseException, tools: tuple[str, ...]) -> None:
    """A ServerAnswerError naming one of ``tools`` and a path, a hint, no value, no chained error."""
    assert isinstance(error, ServerAnswerError), repr(error)
    assert isinstance(error, ToolError) and error.tool in tools, (error.tool, tools)
    message = str(error)
    assert error.path.startswith("$") and f"answer to {error.tool}" in message, message
    assert error.hint and "server" in error.hint
    assert SECRET not in message and SECRET not in error.hint, message
    assert error.__cause__ is None and error.__context__ is None
    message.encode("utf-8")


#: A notebook displays on the kernel's thread, this many frames deeper than where the transport
#: read the answer (on the session's loop): whatever nests near the reader's limit must still show.
KERNEL_FRAMES = 100


def _deeper(frames: int, call: Callable[[], Any]) -> Any:
    return call() if frames == 0 else _deeper(frames - 1, call)


def _displays_page(page: Page, previous: Page | None = None) -> None:
    _deeper(KERNEL_FRAMES, lambda: _shows_page(page, previous))


def _shows_page(page: Page, previous: Page | None) -> None:
    repr(page).encode("utf-8")
    page._repr_html_().encode("utf-8")
    assert isinstance(page.elements, pd.DataFrame) and len(page.elements) == len(page.element_list)
    page.elements.to_string().encode("utf-8")
    try:
        page.find(role="no-such-role-in-any-answer")
    except ElementNotFound as missing:
        str(missing).encode("utf-8")
        assert missing.hint
    changes = page.changes()
    assert isinstance(changes, pd.DataFrame)
    changes.to_string().encode("utf-8")
    if previous is not None:
        previous.diff(page).to_string().encode("utf-8")
        page.diff(previous).to_string().encode("utf-8")


def _displays(value: Any) -> None:
    if isinstance(value, Page):
        _displays_page(value)
        return
    _deeper(KERNEL_FRAMES, lambda: repr(value)).encode("utf-8")
    if hasattr(value, "_repr_html_"):
        value._repr_html_().encode("utf-8")
    if isinstance(value, pd.DataFrame):
        value.to_string().encode("utf-8")


def _outcome(call: Callable[[], Any], tools: tuple[str, ...]) -> Any:
    """What ``call`` returned, or None after checking the ServerAnswerError it raised."""
    try:
        return call()
    except ServerAnswerError as error:
        _assert_clear(error, tools)
        return None


# -- the rules ------------------------------------------------------------------------------------

ACTIONS: dict[str, Callable[[nb.Session], Page]] = {
    "navigate_to": lambda s: s.navigate(URL),
    "click": lambda s: s.click("e_1"),
    "type_text": lambda s: s.type_text("e_2", "typed"),
    "select_option": lambda s: s.select_option("e_3", "free"),
    "scroll": lambda s: s.scroll("down", 100),
    "toggle": lambda s: s.toggle("e_1"),
    "clear": lambda s: s.clear("e_2"),
}
PAGE_TOOLS = ("open_page", "fetch_page", *ACTIONS)


COUNTS = ("set_cookies", "clear_cookies")
OTHER_TOOLS = ("get_cookies", *COUNTS, "evaluate", "replay_validate")
TRACE_CALLS: dict[str, Callable[[nb.Session], Any]] = {
    "trace_status": lambda s: s.trace.status(),
    "trace_export": lambda s: (s.trace.export(), s.trace.events(), s.trace.events(columns="all")),
    "trace_clear": lambda s: s.trace.clear(),
    "close_page": lambda s: s.close(),
}
OTHER_CALLS: dict[str, Callable[[nb.Session], Any]] = {
    "get_cookies": lambda s: s.cookies(),
    "set_cookies": lambda s: s.set_cookies([{"name": "a", "value": "b", "url": URL}]),
    "clear_cookies": lambda s: s.clear_cookies(),
    "evaluate": lambda s: s.evaluate("document.title"),
    "replay_validate": lambda s: s.replay_validate(2),
    **TRACE_CALLS,
}


@contextlib.contextmanager
def _python_recursion_limit() -> Iterator[None]:
    """Python's own recursion limit (Hypothesis raises it while a test runs): where a kernel
    displays, and where a transport reads an answer."""
    raised = sys.getrecursionlimit()
    sys.setrecursionlimit(PYTHON_RECURSION_LIMIT)
    try:
        yield
    finally:
        sys.setrecursionlimit(raised)


PYTHON_RECURSION_LIMIT = 1000


def _exercise(recorded: Recorded, tool: str, answer: Any) -> None:
    """Call what asks ``tool``, the server answering ``answer``; then display what came back
    (a page after a page alike too: two pages compared), or check the error it raised."""
    with _python_recursion_limit():
        _exercise_at_limit(recorded, tool, answer)


def _exercise_at_limit(recorded: Recorded, tool: str, answer: Any) -> None:
    server = _server(recorded)
    if tool == "fetch_page":
        server.answers[tool] = answer
        page = _outcome(lambda: nb.fetch(URL, transport=server), (tool,))
        if page is not None:  # fetched twice: the same page compared with itself
            _displays_page(nb.fetch(URL, transport=server), page)
        return
    s = nb.Session(server)
    if tool == "open_page":
        server.answers[tool] = answer
        page = _outcome(lambda: s.open(URL), (tool,))
        if page is None:
            assert s.page is None and s.session_id is None
        else:
            _displays_page(nb.Session(server).open(URL), page)
        return
    first = s.open(URL)  # open asks trace_status too: the answer changes after it
    server.answers[tool] = answer
    if tool in ACTIONS:
        page = _outcome(lambda: ACTIONS[tool](s), (tool,))
        if page is None:
            assert s.page is first  # the page it had, whole
        else:  # and again: the same page after itself (each action's answer alike)
            _displays_page(page, first)
            _displays_page(ACTIONS[tool](s), page)
        return
    result = _outcome(lambda: OTHER_CALLS[tool](s), (tool,))
    if tool in COUNTS and result is not None:
        assert type(result) is int and result >= 0
    for value in result if isinstance(result, tuple) else (result,):
        _displays(value)  # any JSON value (evaluate's) shows as Python shows it
    if tool == "replay_validate" and result is not None:
        assert result.summary and result.what_to_do and result.explanation


@EXAMPLES
@given(tool=st.sampled_from(PAGE_TOOLS), data=st.data())
def test_any_page_answer_displays_or_is_a_clear_error(
    recorded: Recorded, tool: str, data: st.DataObject
) -> None:
    _exercise(recorded, tool, data.draw(mutated(data.draw(st.sampled_from(recorded.valid[tool])))))


@EXAMPLES
@given(data=st.data())
def test_any_page_som_answer_after_changes_that_do_not_apply_displays_or_is_a_clear_error(
    recorded: Recorded, data: st.DataObject
) -> None:
    action, som = data.draw(st.sampled_from(recorded.changes_steps))
    answer = {**action, "changes": {**action["changes"], "base_digest": "sha256:another-page"}}
    server = _server(
        recorded, open_page=recorded.changes_open, click=answer, page_som=data.draw(mutated(som))
    )
    with _python_recursion_limit():
        s = nb.Session(server)
        first = s.open(URL, som_answers="changes")
        with warnings.catch_warnings(action="ignore"):  # "changed again": the digests differ
            page = _outcome(lambda: s.click("e_1"), ("page_som",))
        if page is None:
            assert s.page is first
        else:
            _displays_page(page, first)


@EXAMPLES
@given(tool=st.sampled_from(OTHER_TOOLS), data=st.data())
def test_any_cookie_evaluate_or_replay_plan_answer_displays_or_is_a_clear_error(
    recorded: Recorded, tool: str, data: st.DataObject
) -> None:
    _exercise(recorded, tool, data.draw(mutated(data.draw(st.sampled_from(recorded.valid[tool])))))


@EXAMPLES
@given(tool=st.sampled_from(list(TRACE_CALLS)), data=st.data())
def test_any_trace_answer_displays_or_is_a_clear_error(
    recorded: Recorded, tool: str, data: st.DataObject
) -> None:
    _exercise(recorded, tool, data.draw(mutated(data.draw(st.sampled_from(recorded.valid[tool])))))


@EXAMPLES
@given(tool=st.sampled_from([*PAGE_TOOLS, *OTHER_TOOLS, *TRACE_CALLS]), data=st.data())
def test_any_answer_nested_as_deep_as_a_json_reader_goes_displays_or_is_a_clear_error(
    recorded: Recorded, tool: str, data: st.DataObject
) -> None:
    """One value of a valid answer nested in place to near where a JSON reader stops (about 990
    levels): an element inside element children, anything else inside arrays."""
    answer = copy.deepcopy(data.draw(st.sampled_from(recorded.valid[tool])))
    paths = [p for p in _paths(answer) if p]
    elements = [p for p in paths if len(p) > 1 and p[-2] in ("elements", "children")]
    path = data.draw(st.sampled_from(sorted(elements or paths, key=repr)))
    parent = answer
    for key in path[:-1]:
        parent = parent[key]
    element = path in elements
    depth = data.draw(st.integers(380, 495) if element else st.integers(100, 990))
    parent[path[-1]] = _deepened(parent[path[-1]], depth)
    _exercise(recorded, tool, answer)


@EXAMPLES
@given(data=st.data())
def test_any_changes_give_the_applied_page_the_fetched_page_or_a_clear_error(
    recorded: Recorded, data: st.DataObject
) -> None:
    action, som = data.draw(st.sampled_from(recorded.changes_steps))
    if data.draw(st.booleans()):
        answer = data.draw(mutated(action))
    else:
        opened = recorded.changes_open
        pages = [after["regions"] for _, after in recorded.changes_steps]
        answer = {**action, "changes": data.draw(changes_for(opened["regions"], opened["som_digest"], pages))}
    with _python_recursion_limit():
        server = _server(recorded, open_page=recorded.changes_open, click=answer, page_som=som)
        s = nb.Session(server)
        first = s.open(URL, som_answers="changes")
        with warnings.catch_warnings(action="ignore"):  # "changed again": the digests differ
            page = _outcome(lambda: s.click("e_1"), ("click",))
        if page is None:
            assert s.page is first
            return
        _displays_page(page, first)
        received = server.read["click"]
        if "changes" not in received:  # a whole page after all
            assert page.regions == (received.get("regions") or [])
            return
        changes = received["changes"]
        possible = [som["regions"]]  # fetched whole when they do not apply
        if changes.get("base_digest") == first.som_digest:
            with contextlib.suppress(ChangesMismatch):
                possible.append(apply_to_regions(copy.deepcopy(first.regions), changes))
        assert page.regions in possible


@EXAMPLES
@given(data=st.data())
def test_apply_to_regions_raises_only_changes_mismatch(recorded: Recorded, data: st.DataObject) -> None:
    pages = [recorded.changes_open["regions"], *(som["regions"] for _, som in recorded.changes_steps)]
    before = data.draw(st.sampled_from(pages))
    after = data.draw(st.sampled_from(pages))
    if data.draw(st.booleans()):
        changes = data.draw(mutated(diff_som({"regions": before}, {"regions": after})))
    else:
        changes = data.draw(changes_for(before, None, pages))
    try:
        regions = apply_to_regions(copy.deepcopy(before), changes)
    except ChangesMismatch:
        return
    assert isinstance(regions, list)


def test_the_recorded_answers_are_valid(recorded: Recorded) -> None:
    """The bases the mutations start from pass the checks as they are."""
    for tool in PAGE_TOOLS:
        for answer in recorded.valid[tool]:
            answers.page_answer(tool, answer)
    statuses = {plan["status"] for plan in recorded.valid["replay_validate"]}
    assert statuses == {"refused", "confirmation_required", "validated"}, statuses
    assert {plan.get("drift") for plan in recorded.valid["replay_validate"]} >= {"event_not_retained"}
    assert len(recorded.changes_steps) == 3 and all("changes" in a for a, _ in recorded.changes_steps)
    assert "final_trace" in recorded.valid["close_page"][0]
