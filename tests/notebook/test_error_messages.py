"""What a notebook user reads when something goes wrong: the cause, a hint, no internal frames.

Fast: the real dispatcher over the scripted engine (the demo site's pages without a browser),
and real MCP connections (the SDK client over streamable HTTP and stdio) for the connection
errors. ``test_errors_in_kernel.py`` checks the same errors as a Jupyter kernel renders them.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
import sys
import traceback
import warnings
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import pytest
import pytest_asyncio
from hypothesis import given
from hypothesis import strategies as st

import plasmate_nb
import plasmate_nb.notebook as nb
from plasmate_nb import errors
from plasmate_nb._tracebacks import HintedError, user_frames
from plasmate_nb.browser.config import EnvironmentSettingError
from plasmate_nb.client import embedded
from plasmate_nb.client.base import ToolError, Transport
from plasmate_nb.client.mcp import HttpTransport, ServerConnectionError, StdioTransport, resolve_command
from plasmate_nb.demo_site import DemoSite
from plasmate_nb.notebook._html import counted
from plasmate_nb.notebook._session import SessionStateError, _with_http
from plasmate_nb.server import HttpServer, ServerConfigError
from plasmate_nb.tools import Dispatcher
from plasmate_nb.trace import TraceLog
from plasmate_nb.trace.origin import origin
from tests.scripted_engine import ScriptedEngine
from tests.support import wait_until

PACKAGE_DIR = Path(plasmate_nb.__file__).parent
TOKEN = "error-messages-" + "e" * 32


@pytest.fixture
def backend() -> str:
    """Only the scripted engine: the messages are the dispatcher's, the hints the notebook's."""
    return "scripted"


@pytest.fixture
def session(transport: Transport, login_url: str) -> Iterator[nb.Session]:
    with nb.Session(transport) as s:
        s.open(login_url)
        yield s


def _internal_frames(error: BaseException) -> list[str]:
    """The frames of ``error``'s traceback that run plasmate_nb code, as ``file:function``."""
    return [
        f"{Path(frame.filename).name}:{frame.name}"
        for frame in traceback.extract_tb(error.__traceback__)
        if Path(frame.filename).is_relative_to(PACKAGE_DIR)
    ]


# -- tool errors: the contract's text, a hint under it ---------------------------------------------


def test_a_wrong_element_id_keeps_the_contract_text_and_adds_a_hint(session: nb.Session) -> None:
    with pytest.raises(ToolError) as caught:
        session.click("e_doesnotexist")
    error = caught.value
    assert str(error) == error.message == "Element not found: e_doesnotexist"
    assert error.hint == errors.tool_error_hint(error.message) and "page.elements" in error.hint
    assert error.__notes__ == [f"hint: {error.hint}"]
    # Raised again at the public call: the background loop's frames and the core's are gone.
    assert _internal_frames(error) == ["session.py:call", "session.py:_run"]
    rendered = "".join(error._render_traceback_())  # outside IPython: plain text, user frames only
    assert str(PACKAGE_DIR) not in rendered and "hint: use an id" in rendered


def test_an_unknown_option_lists_what_the_select_offers_but_not_the_value(session: nb.Session) -> None:
    plan = session.page.find(label="Plan")
    with pytest.raises(ToolError) as caught:
        session.select_option(plan, "Platinum")
    error = caught.value
    assert error.message == "Option not found: value of 8 bytes"  # the contract's text, unchanged
    assert error.hint == errors.options_hint(
        [
            "'Free' (value 'free')",
            "'Pro' (value 'pro')",
            "'Team' (value 'team')",
            "'Enterprise' (value 'enterprise')",
        ]
    )
    assert "Platinum" not in error.hint


def test_an_unknown_option_of_a_long_select_lists_a_bounded_number() -> None:
    options = [{"text": f"Option {i}", "value": f"o{i}"} for i in range(30)]
    options[0]["disabled"] = True
    page = nb.Page(
        {"regions": [{"elements": [{"id": "e_s", "role": "select", "attrs": {"options": options}}]}]}
    )
    listed = page._select_options("e_s")
    assert len(listed) == nb.page.MAX_LISTED_OPTIONS + 1 and listed[-1] == "and 18 more"
    assert listed[0] == "'Option 0' (value 'o0') (disabled)"
    assert page._select_options("e_other") == []


def test_a_url_without_scheme_suggests_http_and_shows_only_its_origin(session: nb.Session) -> None:
    with pytest.raises(ToolError) as caught:
        session.navigate("localhost:8888/private/path?q=1")
    error = caught.value
    assert errors.scheme_not_allowed("localhost") in error.message  # the contract's words
    assert error.hint == errors.missing_scheme_hint("http://localhost:8888/…")
    assert "private" not in str(error) + error.hint


@pytest.mark.parametrize(
    ("url", "suggestion"),
    [
        ("localhost:8888/x", "http://localhost:8888/…"),
        ("example.com", "http://example.com/"),
        ("127.0.0.1:8765/login.html#top", "http://127.0.0.1:8765/…"),
        ("mailto:someone@example.test", None),
        ("/login.html", None),
        ("file:///etc/hostname", None),
        ("localhost:99999/x", None),
    ],
)
def test_with_http(url: str, suggestion: str | None) -> None:
    assert _with_http(url) == suggestion


@given(st.text(max_size=60))
def test_a_suggested_url_never_shows_more_than_an_origin(url: str) -> None:
    suggestion = _with_http(url)
    # Read back as a browser reads it, the suggestion is an origin: no "\\" or space lets a path pass for a host.
    assert suggestion is None or re.fullmatch(r"http://[^/\\?#@\s]+/(…)?", suggestion)
    assert suggestion is None or origin(suggestion) is not None


def test_every_hinted_tool_error_is_found_by_its_own_text() -> None:
    samples = [
        errors.element_not_found("e_1"), errors.element_does_not_support("type", "e_1"), errors.NOT_A_SELECT,
        errors.NOT_TOGGLEABLE, errors.option_not_found(3), errors.session_not_found("s_1"),
        errors.max_sessions_reached(10), errors.NO_PAGE_LOADED, errors.timeout_after(30),
        errors.http_error(404, "http://x/…"), errors.failed_to_fetch("http://x/…", "net::ERR_FAILED"),
        errors.missing_field("url"), errors.outbound_blocked(errors.scheme_not_allowed("ftp")),
        errors.outbound_blocked(errors.URL_HAS_CREDENTIALS),
        errors.failed_to_fetch("http://10.0.0.1/…", errors.outbound_blocked(errors.address_not_routable("10.0.0.1"))),
        errors.page_not_reloaded(errors.PAGE_CRASHED), errors.evaluate_javascript_error("TypeError: x is null"),
        errors.REPLAY_EXECUTION_DISABLED, errors.page_reloaded(errors.PAGE_CRASHED),
        errors.failed_to_fetch("http://x/…", errors.navigation_failed(errors.renderer_memory_passed(512))),
    ]  # fmt: skip
    hints = [errors.tool_error_hint(text) for text in samples]
    assert all(hints) and len(set(hints)) == len(hints)
    assert errors.tool_error_hint(errors.internal_error("click", "KeyError")) is None
    # Texts holding the words of two entries get the one that says what happened to them.
    memory, reloaded = hints[-1], hints[-2]
    assert memory is not None and "last good URL" in memory and "restart the kernel" in memory
    for during in (errors.action_failed("Click", errors.renderer_memory_passed(512)),
                   errors.pipeline_error(errors.renderer_memory_passed(512))):  # fmt: skip
        assert errors.tool_error_hint(during) == memory
    assert errors.tool_error_hint(errors.page_reloaded(errors.renderer_memory_passed(512))) == reloaded
    opening = errors.failed_to_fetch(
        "http://x/…", errors.navigation_failed(errors.renderer_memory_passed(512))
    )
    assert errors.tool_error_hint(opening, "open_page").startswith("nothing was opened; to allow more")


def test_an_expression_that_threw_is_told_in_words_under_the_contracts_json() -> None:
    """``evaluate``'s error text is the reference's JSON (clients parse it); a notebook reader gets
    the exception in words under it."""
    threw = errors.evaluate_javascript_error("TypeError: Cannot read properties of null (reading '…')")
    assert errors.tool_error_hint(threw) == (
        "the expression threw TypeError: Cannot read properties of null (reading '…'); "
        "the page is as it was: fix the expression and evaluate again"
    )
    bad = errors.evaluate_javascript_error("SyntaxError: Unexpected token ')'", compiling=True)
    assert errors.tool_error_hint(bad).startswith(
        "the expression did not compile: SyntaxError: Unexpected token ')';"
    )
    for other in ('{"containment_failure": {"message": "no"}}', "[1]", "null", '{"error": "x"}'):
        assert errors.tool_error_hint(other) is None


def test_a_failed_open_says_nothing_was_opened(transport: Transport, login_url: str) -> None:
    s = nb.Session(transport)
    with pytest.raises(ToolError) as caught:
        s.open("http://127.0.0.1:1/private/path")  # another origin: the connection is refused
    assert caught.value.message.startswith("Failed to fetch http://127.0.0.1:1/…: ")
    assert caught.value.hint == errors.OPEN_FAILED_HINT and (s.session_id, s.page) == (None, None)
    assert "unchanged" not in caught.value.hint  # there is no page: "the page is unchanged" was untrue
    s.open(login_url)  # "open again" works
    try:  # an action on an open page keeps the hint that says the page is unchanged
        with pytest.raises(ToolError) as navigating:
            s.navigate("http://127.0.0.1:1/private/path")
        assert navigating.value.hint == errors.tool_error_hint(navigating.value.message)
        assert "the page is unchanged" in navigating.value.hint
    finally:
        s.close()


def test_an_http_error_says_the_origin_is_shown_on_purpose(transport: Transport, site_url: str) -> None:
    s = nb.Session(transport)
    with pytest.raises(ToolError) as caught:
        s.open(f"{site_url}/no-such-page.html")
    assert errors.http_error(404, f"{site_url}/…") in caught.value.message
    hint = caught.value.hint or ""
    assert hint == errors.tool_error_hint(caught.value.message)
    assert "error status" in hint and "origin" in hint and "path you gave" in hint


def test_replay_execution_off_says_how_to_turn_it_on_and_hints_at_what_works_meanwhile(
    session: nb.Session,
) -> None:
    session.scroll("down", 0)
    with pytest.raises(ToolError) as caught:
        session.replay(2, confirmed=True)
    assert caught.value.message == errors.REPLAY_EXECUTION_DISABLED  # the contract's text, unchanged
    message, hint = caught.value.message, caught.value.hint or ""
    assert "pnb.Session(replay_execution=True)" in message and "--enable-replay-execution" in message
    assert hint == errors.REPLAY_EXECUTION_HINT and "replay_validate" in hint  # what works meanwhile
    assert session.replay_validate(2, confirmed=True).status == "validated"  # and it does


def test_every_tool_error_hint_is_one_short_line() -> None:
    # Read at 1000 px in JupyterLab, where a long line wraps mid-word.
    for hint in [*(hint for _words, hint in errors._TOOL_ERROR_HINTS), *errors._TOOL_HINTS.values()]:
        assert "\n" not in hint and len(hint) <= 120, hint


# -- settings the embedded engine reads ------------------------------------------------------------


def test_a_bad_renderer_memory_setting_is_a_short_error_saying_when_it_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # It used to show some 75 lines: run_sync, concurrent.futures, the dataclass's __init__...
    monkeypatch.setattr(embedded, "_dispatcher", None)  # as in a fresh kernel: no engine yet
    monkeypatch.setenv("PLASMATE_NB_RENDERER_MEMORY_MB", "lots")
    with pytest.raises(ValueError) as caught:  # a ValueError, as before
        nb.Session().open("http://127.0.0.1:9/")
    error = caught.value
    assert isinstance(error, EnvironmentSettingError) and isinstance(error, HintedError)
    assert str(error) == (
        "PLASMATE_NB_RENDERER_MEMORY_MB must be a whole number of megabytes, at least 256 (0: no bound)"
    )
    assert error.hint == errors.RENDERER_MEMORY_SETTING_HINT and "kernel restart" in error.hint
    assert error.__notes__ == [f"hint: {error.hint}"]
    assert error.__context__ is None and error.__cause__ is None
    assert _internal_frames(error) == ["session.py:call", "session.py:_run"]
    rendered = "".join(error._render_traceback_())  # outside IPython: plain text, user frames only
    assert str(PACKAGE_DIR) not in rendered and "concurrent" not in rendered
    assert rendered.count('File "') == 1 and rendered.endswith(f"hint: {error.hint}\n")
    # The engine has not started: corrected, the setting is read at the next use, no restart needed.
    monkeypatch.setenv("PLASMATE_NB_RENDERER_MEMORY_MB", "1024")
    assert embedded.embedded_dispatcher().engine.config.renderer_memory_mb == 1024


def test_a_server_reading_a_bad_setting_gets_it_without_the_notebooks_hint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PLASMATE_NB_RENDERER_MEMORY_MB", "100")
    with pytest.raises(EnvironmentSettingError) as caught:
        plasmate_nb.browser.EngineConfig()
    assert caught.value.hint is None  # `plasmate-nb serve` prints the message alone


# -- reading exports -------------------------------------------------------------------------------


def test_a_missing_trace_file_says_so_first_and_stays_a_trace_format_error(tmp_path: Path) -> None:
    missing = tmp_path / "absent.json"
    with pytest.raises(nb.TraceFormatError) as caught:  # what callers caught before, a ValueError
        nb.load_trace(missing)
    error = caught.value
    assert str(error) == f"cannot read the file {missing} (No such file or directory)"
    assert error.detail == error.reason == "cannot read the file (No such file or directory)"
    assert isinstance(error, ValueError) and error.path == "$"
    assert error.hint == errors.TRACE_FILE_HINT and "os.getcwd()" in error.hint
    with pytest.raises(nb.TraceFormatError) as folder:
        nb.load_traces([missing])
    assert str(folder.value) == str(error)
    rendered = "".join(error._render_traceback_())  # the user's frame, the message, the hint
    assert str(PACKAGE_DIR) not in rendered and rendered.count('File "') == 1
    assert rendered.endswith(f"TraceFormatError: {error}\nhint: {error.hint}\n")


def test_a_document_that_is_not_an_export_says_where_in_it_and_what_one_is() -> None:
    with pytest.raises(nb.TraceFormatError) as whole:
        nb.load_trace('{"events": []}')
    assert str(whole.value) == (
        "not a plasmate.trace.v1 export in JSON text: the required field 'schema' is missing"
    )
    assert whole.value.path == "$" and whole.value.detail == "the required field 'schema' is missing"
    log = TraceLog(True)
    closed = log.closed_state()
    log.record("scroll", {"direction": "down", "pixels": 0, "targeted": False}, None, closed, closed, None, 1)
    document = log.export("s_1")
    document["events"][0]["sequence"] = 7
    with pytest.raises(nb.TraceFormatError) as inside:
        nb.load_trace(document)
    assert str(inside.value) == (
        "not a plasmate.trace.v1 export: at $.events[0].sequence: "
        "sequences must increase and stay below next_sequence"
    )
    for error in (whole.value, inside.value):
        assert error.hint == errors.TRACE_EXPORT_HINT and "to_json(path)" in error.hint
        assert _internal_frames(error) and str(PACKAGE_DIR) not in "".join(error._render_traceback_())


# -- the session's own state -----------------------------------------------------------------------


def test_after_close_the_error_points_to_the_final_trace(transport: Transport, login_url: str) -> None:
    s = nb.Session(transport)
    with pytest.raises(SessionStateError) as before:
        s.trace.status()
    assert before.value.hint == errors.OPEN_FIRST_HINT
    s.open(login_url)
    with pytest.raises(SessionStateError) as again:
        s.open(login_url)
    assert str(again.value) == errors.ALREADY_OPEN and again.value.hint == errors.ALREADY_OPEN_HINT
    s.close()
    with pytest.raises(RuntimeError) as after:
        s.trace.events()
    assert str(after.value) == "no open browser session: this session was closed"
    assert isinstance(after.value, SessionStateError) and "s.final_trace" in (after.value.hint or "")
    assert len(s.final_trace.events()) > 0  # where the hint points


def _not_found(page: nb.Page, **criteria: object) -> nb.ElementNotFound:
    with pytest.raises(LookupError) as caught:
        page.find(**criteria)  # type: ignore[arg-type]
    assert isinstance(caught.value, nb.ElementNotFound)
    return caught.value


def _page(*elements: dict[str, object]) -> nb.Page:
    return nb.Page({"regions": [{"role": "main", "elements": list(elements)}]})


def test_a_misspelled_label_says_did_you_mean_with_the_text_input_first(session: nb.Session) -> None:
    # The login page has a paragraph "Email" before the text input labelled "Email".
    error = _not_found(session.page, label="Emial")
    assert (
        error.hint
        == "did you mean page.find(label='Email')?"
        == errors.find_suggestion_hint(error.suggestion)
    )
    assert eval(error.suggestion, {"page": session.page}) == error.near[0]  # the call works as shown
    lines = str(error).splitlines()
    assert lines[0] == "no element matches label='Emial'; the nearest:"
    assert lines[1].split() == [error.near[0].id, "text_input", "label='Email'"]
    assert len(error.near) == 3 and len(lines) == 4 and all(len(line) <= 80 for line in lines)
    assert error.__notes__ == [f"hint: {error.hint}"]


@pytest.mark.parametrize(
    ("criteria", "suggestion"),
    [
        ({"label": "Pasword"}, "page.find(label='Password')"),
        ({"role": "button", "text": "Sing in"}, "page.find(role='button', text='Sign in')"),
        ({"role": "buton"}, "page.find(role='button')"),  # the role was misspelled
        ({"role": "link", "label": "Email"}, "page.find(role='text_input', label='Email')"),  # wrong role
        ({"text": "Sing in"}, "page.find(role='button', text='Sign in')"),  # the heading too: role added
        ({"text": "Emial"}, "page.find(label='Email')"),  # the control, not the paragraph
        ({"label": "remembr", "contains": True}, "page.find(label='Remember me', contains=True)"),
    ],
)
def test_find_suggests_the_closest_call_that_finds_it(
    session: nb.Session, criteria: dict[str, object], suggestion: str
) -> None:
    error = _not_found(session.page, **criteria)
    assert error.suggestion == suggestion and error.hint == f"did you mean {suggestion}?"
    assert eval(suggestion, {"page": session.page}) == error.near[0]


def test_find_without_a_close_match_lists_the_nearest_and_points_to_page_elements(
    session: nb.Session,
) -> None:
    error = _not_found(session.page, label="Zzyzx")
    assert error.suggestion is None and error.hint == errors.FIND_HINT
    assert str(error).startswith("no element matches label='Zzyzx'; the nearest:\n")
    assert len(str(error).splitlines()) == 4
    empty = _not_found(_page(), label="Email")
    assert str(empty) == "no element matches label='Email'; the page has no labelled elements"


def test_an_ambiguous_find_lists_its_matches_one_short_line_each_and_counts_the_rest() -> None:
    long_text = "Read more about " + "this long story " * 20
    links = [
        {"id": f"e_{n:02}", "role": "link", "text": f"{long_text} {n}", "actions": ["click"]}
        for n in range(14)
    ]
    with pytest.raises(LookupError) as caught:
        _page(*links).find(role="link")
    error = caught.value
    assert isinstance(error, nb.AmbiguousElement) and len(error.matches) == 14
    first, *listed, more = str(error).splitlines()
    assert first == "14 elements match role='link'; add label= or text= to narrow it:"  # what was not given
    assert [line.split()[0] for line in listed] == [f"e_{n:02}" for n in range(10)]
    assert all(len(line) <= 80 and "link" in line.split() for line in listed)
    assert more == "  … and 4 more (error.matches has them all)"
    with pytest.raises(LookupError) as two:
        _page(*links[:2]).find(role="link")
    assert len(str(two.value).splitlines()) == 3 and "error.matches" not in str(two.value)  # all shown
    twins = [
        {"id": f"e_{n}", "role": "button", "label": "Buy", "text": "Buy", "actions": ["click"]}
        for n in (1, 2)
    ]
    with pytest.raises(LookupError) as alike:
        _page(*twins).find(role="button", label="Buy", text="Buy")
    assert str(alike.value).splitlines()[0].endswith("; pick one by its id:")
    buys = [
        {"id": f"e_{c}", "role": "button", "label": "Buy", "text": f"Buy the {c} one", "actions": ["click"]}
        for c in ("red", "blue")
    ]
    with pytest.raises(LookupError) as by_label:
        _page(*buys).find(label="Buy")
    lines = str(by_label.value).splitlines()
    assert lines[0] == "2 elements match label='Buy'; add role= or text= to narrow it:"
    assert [line.split(None, 2)[2] for line in lines[1:]] == [
        "text='Buy the red one'",
        "text='Buy the blue one'",
    ]
    assert by_label.value.hint == errors.AMBIGUOUS_FIND_HINT  # type: ignore[attr-defined]
    assert [e.id for e in by_label.value.matches] == ["e_red", "e_blue"]  # type: ignore[attr-defined]


def test_find_keeps_long_page_text_to_one_short_line_and_one_line_hint() -> None:
    long_text = "Terms and conditions " + "lorem ipsum dolor sit amet " * 20
    page = _page(
        {"id": "e_p", "role": "paragraph", "text": long_text},
        {"id": "e_b", "role": "button", "text": long_text + " I agree", "actions": ["click"]},
        {"id": "e_i", "role": "text_input", "label": "Email", "actions": ["type"]},
    )
    error = _not_found(page, role="button", text="Terms and condtions " + "lorem ipsum dolor sit amet " * 20)
    first, *nearest = str(error).splitlines()
    assert len(first) <= 100 and all(len(line) <= 80 for line in nearest) and "…" in str(error)
    assert error.hint and "\n" not in error.hint and len(error.hint) <= 120
    assert error.suggestion is not None and eval(error.suggestion, {"page": page}).id == "e_b"


def test_find_never_shows_a_typed_value() -> None:
    # A live SOM carries a text input's typed value as its text; find never reads it.
    page = _page(
        {
            "id": "e_i",
            "role": "text_input",
            "label": "Email",
            "text": "typed-secret-value",
            "actions": ["type"],
        },
        {"id": "e_p", "role": "paragraph", "text": "Contact"},
    )
    for criteria in ({"text": "typed-secret-valu"}, {"label": "typed-secret-valu"}, {"role": "text_inptu"}):
        error = _not_found(page, **criteria)
        assert "typed-secret-value" not in str(error) + (error.hint or ""), criteria


def test_find_without_criteria_names_them_and_stays_a_type_error() -> None:
    page = nb.Page({"regions": [{"elements": [{"id": "e_1", "role": "button", "text": "Go"}]}]})
    with pytest.raises(TypeError) as caught:
        page.find()
    error = caught.value
    assert (
        isinstance(error, HintedError) and str(error) == "find() needs at least one of role=, label=, text="
    )
    assert error.hint == errors.FIND_CRITERIA_HINT and "page.find(label=" in error.hint
    rendered = "".join(error._render_traceback_())  # no page.py frame, with its source and docstring
    assert str(PACKAGE_DIR) not in rendered and rendered.count('File "') == 1


def test_explain_of_an_unknown_code_says_where_codes_come_from_and_stays_a_value_error() -> None:
    with pytest.raises(ValueError) as caught:
        nb.explain("no_such_code")
    error = caught.value
    assert isinstance(error, HintedError) and str(error).startswith(
        "unknown replay code 'no_such_code': explain() knows cross_session, "
    )
    assert error.hint == errors.EXPLAIN_HINT and "replay_validate_all()" in error.hint
    rendered = "".join(error._render_traceback_())
    assert str(PACKAGE_DIR) not in rendered and rendered.count('File "') == 1


def test_user_frames_stop_at_the_first_package_frame() -> None:
    def user_callback() -> None:
        raise HintedError("from a user's callback")

    try:
        list(map(lambda _: user_callback(), [0]))  # a user frame, then a builtin, then the user again
    except HintedError as error:
        kept = traceback.extract_tb(user_frames(error.__traceback__))
    assert [frame.name for frame in kept] == ["test_user_frames_stop_at_the_first_package_frame", "<lambda>",
                                               "user_callback"]  # fmt: skip
    with pytest.raises(ToolError) as caught:
        nb.Session(_Refusing()).attach("s_1")
    assert [frame.name for frame in traceback.extract_tb(user_frames(caught.value.__traceback__))] == [
        "test_user_frames_stop_at_the_first_package_frame"
    ]


class _Refusing:
    """A transport whose every call is refused (``attach`` fails on its first call)."""

    async def call(self, tool: str, arguments: dict[str, object]) -> object:
        raise ToolError(tool, errors.session_not_found("s_1"))

    def subscribe(self, callback: object) -> object:
        return lambda: None


# -- counts and the demo site ----------------------------------------------------------------------


@pytest.mark.parametrize(("count", "text"), [(0, "0 cookies"), (1, "1 cookie"), (2, "2 cookies")])
def test_counts_are_plural_unless_one(count: int, text: str) -> None:
    assert counted(count, "cookie") == text
    assert repr(nb.Cookies([{"name": "n", "value": "v"}] * count)).startswith(f"Cookies({text} (")


def test_demo_site_start_returns_the_site() -> None:
    site = DemoSite().start()
    try:
        assert isinstance(site, DemoSite) and site.start() is site
        assert site.url("/login.html") == site.base_url + "/login.html"
    finally:
        site.stop()
    assert repr(site) == "DemoSite(stopped)"


# -- connecting to an MCP server -------------------------------------------------------------------


@pytest_asyncio.fixture
async def mcp_url() -> AsyncIterator[str]:
    """A real MCP server over streamable HTTP on the scripted engine (on this test's loop)."""
    server = HttpServer(Dispatcher(ScriptedEngine()), port=0, token=TOKEN)
    await server.start()
    try:
        yield server.url
    finally:
        await server.stop()


async def _connect_error(transport: HttpTransport | StdioTransport) -> ServerConnectionError:
    try:
        with pytest.raises(ServerConnectionError) as caught:
            await transport.call("session_status", {})
    finally:
        await transport.aclose()
    assert isinstance(caught.value, ConnectionError)
    return caught.value


async def test_a_wrong_or_missing_token_is_named(mcp_url: str) -> None:
    wrong = await _connect_error(HttpTransport(mcp_url, token="w" * 40))
    assert str(wrong) == errors.connect_failed(mcp_url, errors.token_refused(True))
    assert wrong.hint == errors.TOKEN_HINT and "w" * 40 not in str(wrong) + wrong.hint
    missing = await _connect_error(HttpTransport(mcp_url))
    assert str(missing) == errors.connect_failed(mcp_url, errors.token_refused(False))
    assert missing.hint == errors.TOKEN_HINT
    # A server started in the notebook prints nothing: its token is server.token.
    assert "server.token" in errors.TOKEN_HINT and "pnb.serve()" in errors.TOKEN_HINT
    assert "\n" not in errors.TOKEN_HINT and len(errors.TOKEN_HINT) <= 120


@pytest.mark.parametrize("path", ["", "/", "/api"])
async def test_a_url_without_mcp_says_did_you_mean(mcp_url: str, path: str) -> None:
    origin = mcp_url.removesuffix("/mcp")
    error = await _connect_error(HttpTransport(origin + path, token=TOKEN))
    assert str(error) == errors.connect_failed(origin + path, errors.not_an_mcp_endpoint(404))
    assert error.hint == errors.mcp_path_hint(mcp_url)


async def test_nothing_listening_says_how_to_start_the_server() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    error = await _connect_error(HttpTransport(f"http://127.0.0.1:{port}/mcp", token=TOKEN))
    assert str(error) == errors.connect_failed(f"http://127.0.0.1:{port}/mcp", errors.NOTHING_LISTENS)
    assert error.hint == errors.start_server_hint(port) and f"--port {port}" in error.hint


@pytest.mark.parametrize(
    ("url", "where"),
    [
        ("http://127.0.0.1:99999/mcp?token=SECRET", "http://127.0.0.1:99999/mcp"),  # port out of range
        ("http://[::1/mcp?token=SECRET", "an unparseable URL"),  # unclosed IPv6 bracket
    ],
)
async def test_a_malformed_url_fails_at_once_without_its_query(url: str, where: str) -> None:
    # Describing the failure used to raise too, which left the call waiting forever.
    error = await asyncio.wait_for(_connect_error(HttpTransport(url, token=TOKEN)), timeout=60)
    assert str(error).startswith(errors.connect_failed(where, ""))
    assert "SECRET" not in str(error) + (error.hint or "")


def test_an_http_transport_shows_its_endpoint_without_the_urls_credentials() -> None:
    """Its errors name the endpoint without user info, query or fragment (they may hold
    credentials); its repr, which ``s.transport()`` shows, once gave the whole URL."""
    url = "http://user:SECRET-password@127.0.0.1:9272/mcp?token=SECRET-query#SECRET-fragment"
    transport = HttpTransport(url, token="SECRET-token")
    assert repr(transport) == "HttpTransport(url='http://127.0.0.1:9272/mcp')"
    assert transport.url == url  # still the URL it connects to


async def test_a_failed_connection_is_tried_again_on_the_next_call(mcp_url: str) -> None:
    transport = HttpTransport(mcp_url, token=TOKEN)
    transport._headers = {"Authorization": "Bearer " + "w" * 40}  # refused once...
    with pytest.raises(ServerConnectionError):
        await transport.call("session_status", {})
    transport._headers = {"Authorization": f"Bearer {TOKEN}"}  # ...then the right token
    try:
        assert (await transport.call("session_status", {}))["active_sessions"] == 0
    finally:
        await transport.aclose()


async def test_a_missing_command_says_what_to_run_instead() -> None:
    error = await _connect_error(StdioTransport(["plasmate-nb-missing", "serve"]))
    assert str(error) == errors.command_not_found("plasmate-nb-missing", str(Path(sys.executable).parent))
    assert error.hint == errors.COMMAND_HINT


async def test_a_server_that_never_answers_fails_the_call_and_is_stopped() -> None:
    # A process that starts but never answers initialize: the SDK client alone waits forever.
    silent = "import time; time.sleep(600)  # a silent MCP server"
    transport = StdioTransport([sys.executable, "-c", silent])
    transport.connect_timeout = 1.0
    calls = [asyncio.create_task(transport.call("session_status", {})) for _ in range(2)]
    try:
        outcomes = await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), 30)
    finally:
        await transport.aclose()
    expected = errors.connect_failed(repr(sys.executable), errors.no_answer_within(1.0))
    assert [type(outcome) for outcome in outcomes] == [ServerConnectionError] * 2
    assert {str(outcome) for outcome in outcomes} == {expected}
    await wait_until(lambda: not _children_running(silent), 15, "the silent server's process to end")


async def test_a_call_after_a_silent_start_connects_afresh(tmp_path: Path) -> None:
    # Silent the first time it starts; slow (3 s) and then a real server after that. The attempt
    # given up on ends (its process stopped within about 2 s) while the next one is connecting,
    # and must touch neither that attempt nor the connection it makes.
    marker = tmp_path / "started-once"
    script = (
        "import os, pathlib, sys, time\n"
        f"marker = pathlib.Path({str(marker)!r})\n"
        "if not marker.exists():\n"
        "    marker.touch()\n"
        "    time.sleep(600)\n"
        "time.sleep(3)\n"
        "os.execv(sys.executable, [sys.executable, '-m', 'plasmate_nb', 'serve'])\n"
    )
    transport = StdioTransport([sys.executable, "-c", script])
    transport.connect_timeout = 1.0
    try:
        with pytest.raises(ServerConnectionError, match=r"the server did not answer within 1 s$"):
            await transport.call("session_status", {})
        transport.connect_timeout = 60.0
        status = await asyncio.wait_for(transport.call("session_status", {}), 90)
        assert status["active_sessions"] == 0
        await wait_until(lambda: not _children_running("time.sleep(600)"), 15, "the silent start's end")
        assert (await transport.call("session_status", {}))["active_sessions"] == 0
    finally:
        await transport.aclose()


def _children_running(marker: str) -> bool:
    """Whether a child process of this one has ``marker`` in its command line."""
    for process in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if marker in " ".join(process.cmdline()):
                return True
    return False


def test_a_port_in_use_is_named_and_the_notebook_keeps_working() -> None:
    # uvicorn ends the process on a port in use: in a notebook that ended the background loop,
    # and serve() (and every later call) waited forever.
    with socket.create_server(("127.0.0.1", 0)) as taken, ThreadPoolExecutor(1) as pool:
        port = taken.getsockname()[1]
        with pytest.raises(ServerConfigError) as caught:
            pool.submit(plasmate_nb.serve, port=port).result(timeout=30)
    assert str(caught.value) == (
        f"cannot listen on 127.0.0.1:{port}: Address already in use; choose another port (0 picks a free one)"
    )
    server = plasmate_nb.serve()
    try:
        assert server.sessions().empty
    finally:
        server.stop()


def test_a_bare_command_is_found_beside_this_python(monkeypatch: pytest.MonkeyPatch) -> None:
    here = Path(sys.executable).parent
    monkeypatch.setenv("PATH", "/nonexistent")  # a kernel started without the environment's bin
    assert resolve_command(Path(sys.executable).name) == str(here / Path(sys.executable).name)
    assert resolve_command("plasmate-nb-missing") == "plasmate-nb-missing"
    assert resolve_command("/bin/sh") == "/bin/sh"
    monkeypatch.setenv("PATH", str(here))
    assert resolve_command(Path(sys.executable).name) == Path(sys.executable).name


async def test_plasmate_nb_runs_from_a_path_without_its_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    if not (Path(sys.executable).parent / "plasmate-nb").is_file():
        pytest.skip("plasmate_nb is not installed with its console script beside this Python")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    transport = StdioTransport(["plasmate-nb", "serve"])
    try:
        assert (await transport.call("session_status", {}))["active_sessions"] == 0
    finally:
        await transport.aclose()


def _scroll_y(session: nb.Session) -> int:
    return int(session.evaluate("window.scrollY"))


def test_an_unknown_scroll_direction_warns_at_the_users_call_and_still_scrolls_down(
    real_backends, site_url: str
) -> None:
    with nb.Session(real_backends.get("embedded")) as s:  # a real page: it scrolls
        s.open(f"{site_url}/large?n=400")
        with pytest.warns(UserWarning) as said:
            s.scroll("sideways", 200)
        (warning,) = said
        assert str(warning.message) == (
            "scroll direction 'sideways' is not one of down, up, top, bottom: the page is scrolled down"
        )
        assert warning.filename == __file__  # the user's line, not asyncio's on the loop thread
        scrolled = s.trace.export().payload["events"][-1]
        assert (scrolled["action"], scrolled["parameters"]["direction"]) == ("scroll", "sideways")  # as sent
        assert _scroll_y(s) == 200  # the tool's behaviour is unchanged: any other direction is down
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the four known directions, and an element, warn nothing
            for direction in ("down", "up", "top", "bottom"):
                s.scroll(direction, 10)
            s.scroll("nowhere", element_id=s.page.find(role="button", text="Button 3"))


def test_a_long_unknown_scroll_direction_is_named_by_its_start_and_length(session: nb.Session) -> None:
    with pytest.warns(UserWarning) as said:
        session.scroll("x" * 5000, 0)
    message = str(said[0].message)
    assert message.startswith("scroll direction 'xxxxxxxxxxxx'… (5,000 characters) is not one of")
    assert len(message) <= 120


async def test_an_async_session_warns_an_unknown_scroll_direction_at_the_awaiting_line(
    transport: Transport, login_url: str
) -> None:
    async with nb.AsyncSession(transport) as s:
        await s.open(login_url)
        with pytest.warns(UserWarning, match="'sideways' is not one of") as said:
            await s.scroll("sideways", 0)
        assert [w.filename for w in said] == [__file__]
