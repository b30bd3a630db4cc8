"""A server's trace answers are checked before the notebook keeps them.

``Session.connect`` talks to any MCP server. Its ``trace_status``, ``trace_export``,
``trace_clear`` and ``close_page`` answers feed the trace objects, tables, plots and the live
dashboard; an answer that breaks the tool contract (a duration that is a string, counters that
disagree, a field missing) is refused where it arrives, with a ``ServerAnswerError`` that names
the path and never the value, and nothing of it is kept. The server here is the real dispatcher
over the scripted engine, behind a transport that rewrites one answer.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import plasmate_nb as pnb
import plasmate_nb.notebook as nb
from plasmate_nb._loop import background_loop
from plasmate_nb.client import InProcessTransport, LoopBoundTransport, ServerAnswerError, ToolError
from plasmate_nb.demo_site import DemoSite
from plasmate_nb.notebook.export import STATUS_FIELDS
from plasmate_nb.tools import Dispatcher
from tests.scripted_engine import ScriptedEngine
from tests.support import DelegatingTransport

SECRET = "SECRET-7f3a"  # a value a server sent: no message may repeat it


class _RewritingTransport(DelegatingTransport):
    """The real dispatcher, with ``rewrite(tool, payload)`` applied to every answer."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.rewrite: Callable[[str, Any], Any] = lambda tool, payload: payload
        self.calls: list[str] = []

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        self.calls.append(tool)
        return self.rewrite(tool, copy.deepcopy(await self.inner.call(tool, arguments)))


@pytest.fixture(scope="module")
def site() -> Iterator[DemoSite]:
    with DemoSite() as demo:
        yield demo


@pytest.fixture
def server(site: DemoSite) -> _RewritingTransport:
    engine = ScriptedEngine(site.base_url)
    return _RewritingTransport(LoopBoundTransport(InProcessTransport(Dispatcher(engine)), background_loop()))


@pytest.fixture
def session(server: _RewritingTransport, site: DemoSite) -> Iterator[nb.Session]:
    with nb.Session(server) as s:
        page = s.open(site.url("/login.html"))
        s.type_text(page.find(label="Email"), "analyst@example.test")
        yield s
        server.rewrite = lambda tool, payload: payload  # the closing answer as sent


def _answering(server: _RewritingTransport, tool: str, change: Callable[[Any], Any]) -> None:
    server.rewrite = lambda name, payload: change(payload) if name == tool else payload


def _refused(error: pytest.ExceptionInfo[ServerAnswerError], tool: str, path: str) -> str:
    message = str(error.value)
    assert isinstance(error.value, ToolError) and error.value.tool == tool
    assert f"the server's answer to {tool} does not follow the tool contract: at {path}" in message, message
    assert error.value.path == path and SECRET not in message, message
    assert error.value.hint and "does not answer as the tool contract says" in error.value.hint
    return message


def _set(path: tuple[Any, ...], value: Any) -> Callable[[Any], Any]:
    def change(payload: Any) -> Any:
        node = payload
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        return payload

    return change


# -- trace_export ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "value", "shown"),
    [
        (("events", 0, "duration_ms"), SECRET, "$.events[0].duration_ms"),
        (("events", 1, "action"), SECRET, "$.events[1].action"),
        (("events", 0, "sequence"), -1, "$.events[0].sequence"),
        (("retained_bytes",), SECRET, "$.retained_bytes"),
        (("trace_id",), "", "$.trace_id"),
        (("events",), {"0": SECRET}, "$.events"),
    ],
)
def test_an_export_answer_of_the_wrong_shape_is_refused_by_path(
    session: nb.Session, server: _RewritingTransport, path: tuple[Any, ...], value: Any, shown: str
) -> None:
    _answering(server, "trace_export", _set(path, value))
    with pytest.raises(ServerAnswerError) as error:
        session.trace.export()
    assert "not a plasmate.trace.v1 export" in _refused(error, "trace_export", shown)


def test_an_export_answer_whose_counters_disagree_is_refused(
    session: nb.Session, server: _RewritingTransport
) -> None:
    _answering(server, "trace_export", lambda p: {**p, "evicted_events": p["evicted_events"] + 1})
    with pytest.raises(ServerAnswerError) as error:
        session.trace.events()  # every reader of the export goes through the same check
    _refused(error, "trace_export", "$.next_sequence")


def test_an_export_answer_holding_a_tuple_for_an_array_is_refused(
    session: nb.Session, server: _RewritingTransport
) -> None:
    # A custom transport can hand over Python objects; the compiled validator takes a tuple for
    # an array, so its yes does not stand for them.
    _answering(server, "trace_export", lambda p: {**p, "events": tuple(p["events"])})
    with pytest.raises(ServerAnswerError) as error:
        session.trace.export()
    _refused(error, "trace_export", "$.events")


def test_an_export_answer_that_is_the_omitted_marker_is_refused(
    session: nb.Session, server: _RewritingTransport
) -> None:
    marker = {"schema": "plasmate.trace.v1", "omitted": True, "reason": "too large"}
    _answering(server, "trace_export", lambda p: marker)
    with pytest.raises(ServerAnswerError) as error:
        session.trace.export()
    assert "only close_page's final_trace may be omitted" in _refused(error, "trace_export", "$.omitted")


def test_a_valid_export_answer_is_kept_as_sent(session: nb.Session) -> None:
    export = session.trace.export()
    assert [e["action"] for e in export.payload["events"]] == ["open_page", "type_text"]
    assert export == pnb.load_trace(export.payload)


def test_the_dashboard_shows_the_refusal_and_stops(session: nb.Session, server: _RewritingTransport) -> None:
    _answering(server, "trace_export", _set(("events", 0, "duration_ms"), SECRET))
    dashboard = session.trace.dashboard()
    try:
        dashboard.refresh().result(timeout=30)
        html = dashboard.snapshot_html()
    finally:
        dashboard.stop()
    assert "does not follow the tool contract" in html and SECRET not in html
    assert dashboard.export is None  # nothing of the answer is shown


# -- trace_status and trace_clear --------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.just(SECRET),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.just(SECRET), inner, max_size=1),
    max_leaves=3,
)


def _fits(name: str, value: Any) -> bool:
    """Whether ``value`` is what the contract allows for status field ``name``."""
    if name == "schema":
        return value == "plasmate.trace.v1"
    if name == "enabled":
        return type(value) is bool
    if name in ("trace_id", "retention"):
        return type(value) is str and (value != "" or name == "retention")
    whole = type(value) is int or (type(value) is float and value.is_integer())
    return whole and 0 <= int(value) < 2**63  # a count: a whole number within 64 bits


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(list(STATUS_FIELDS)), value=JSON_VALUES)
def test_a_status_answer_checks_every_field_of_the_contract(
    session: nb.Session, server: _RewritingTransport, name: str, value: Any
) -> None:
    _answering(server, "trace_status", _set((name,), value))
    if _fits(name, value):
        assert getattr(session.trace.status(), name) == value
        return
    with pytest.raises(ServerAnswerError) as error:
        session.trace.status()
    _refused(error, "trace_status", f"$.{name}")


def test_a_status_answer_missing_a_field_says_which(session: nb.Session, server: _RewritingTransport) -> None:
    _answering(server, "trace_status", lambda p: {k: v for k, v in p.items() if k != "max_bytes"})
    with pytest.raises(ServerAnswerError) as error:
        session.trace.status()
    assert "got nothing (the field is missing)" in _refused(error, "trace_status", "$.max_bytes")


def test_a_status_answer_that_is_no_object_says_what_it_is(
    session: nb.Session, server: _RewritingTransport
) -> None:
    _answering(server, "trace_status", lambda p: [SECRET])
    with pytest.raises(ServerAnswerError) as error:
        session.trace.status()
    assert "expected an object, got an array" in _refused(error, "trace_status", "$")


def test_a_status_answer_may_add_fields(session: nb.Session, server: _RewritingTransport) -> None:
    _answering(server, "trace_status", lambda p: {**p, "region": "eu"})
    assert session.trace.status().region == "eu"


def test_a_clear_answer_checks_its_count_and_its_status(
    session: nb.Session, server: _RewritingTransport
) -> None:
    _answering(server, "trace_clear", _set(("cleared_events",), SECRET))
    with pytest.raises(ServerAnswerError) as error:
        session.trace.clear()
    _refused(error, "trace_clear", "$.cleared_events")
    _answering(server, "trace_clear", _set(("status", "enabled"), SECRET))
    with pytest.raises(ServerAnswerError) as error:
        session.trace.clear()
    _refused(error, "trace_clear", "$.status.enabled")


def test_open_refuses_a_status_answer_without_a_trace_id(server: _RewritingTransport, site: DemoSite) -> None:
    _answering(server, "trace_status", lambda p: {**p, "trace_id": 7})
    with nb.Session(server) as s:
        with pytest.raises(ServerAnswerError) as error:
            s.open(site.url("/login.html"))
        _refused(error, "trace_status", "$.trace_id")
        server.rewrite = lambda tool, payload: payload


# -- close_page -----------------------------------------------------------------------------------


def test_a_final_trace_that_breaks_the_contract_is_not_kept(
    session: nb.Session, server: _RewritingTransport
) -> None:
    _answering(server, "close_page", _set(("final_trace", "events", 0, "duration_ms"), SECRET))
    with pytest.raises(ServerAnswerError) as error:
        session.close()
    _refused(error, "close_page", "$.final_trace.events[0].duration_ms")
    # The browser session is closed all the same; a second close asks nothing and has no trace.
    calls = len(server.calls)
    assert session.session_id is None and session.final_trace is None
    assert session.close() is None and len(server.calls) == calls
