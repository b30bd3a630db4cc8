"""The live dashboard and the replay panel: widget state before and after actions."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import plasmate_nb.notebook as nb
from plasmate_nb.client.base import Transport


async def _eventually(condition: Callable[[], bool], attempts: int = 500) -> None:
    for _ in range(attempts):  # bounded wait for a refresh scheduled on another loop/thread
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the widget did not update")


def _value(dashboard: nb.TraceDashboard, part: str) -> Any:
    return dashboard.get_state()[part]["value"]


def test_dashboard_counters_move_and_eviction_appears(transport: Transport, login_url: str) -> None:
    with nb.Session(transport) as s:
        page = s.open(login_url)
        dashboard = s.trace.dashboard()
        state = dashboard.get_state()
        assert state["events_gauge"]["max"] == 128 and state["bytes_gauge"]["max"] == 49_152
        assert (
            state["events_gauge"]["value"],
            state["next_sequence"]["value"],
            state["evicted_events"]["value"],
        ) == (1, 2, 0)
        s.type_text(page.find(label="Email"), "carol@example.com")
        assert _value(dashboard, "events_gauge") == 2 and _value(dashboard, "next_sequence") == 3
        assert "type_text" in _value(dashboard, "redaction") and "17" in _value(dashboard, "redaction")
        assert "evaluate_result" in _value(dashboard, "redaction")  # the omitted-field policy list
        for _ in range(140):
            s.scroll()
        status = s.trace.status()
        state = dashboard.get_state()
        assert state["evicted_events"]["value"] == status.evicted_events > 0
        assert state["events_gauge"]["value"] == status.retained_events < 142
        assert state["bytes_gauge"]["value"] == status.retained_bytes <= 49_152
        assert state["next_sequence"]["value"] == 143
        assert f"{status.retained_events} / 128" in state["events_label"]["value"]
        s.trace.clear()
        assert (
            _value(dashboard, "cleared_events") == status.retained_events
            and _value(dashboard, "events_gauge") == 0
        )
        final = s.close()
    assert "final trace" in _value(dashboard, "header")
    assert _value(dashboard, "next_sequence") == final.next_sequence == 144


async def test_dashboard_follows_an_external_agent(transport: Transport, login_url: str) -> None:
    s = nb.Session(transport)
    s.open(login_url)
    dashboard = s.trace.dashboard()
    await transport.call("scroll", {"session_id": s.session_id})  # another client of the same engine
    await _eventually(lambda: _value(dashboard, "events_gauge") == 2)
    await transport.call("trace_clear", {"session_id": s.session_id})
    await _eventually(lambda: _value(dashboard, "cleared_events") == 2)
    s.close()


class _SilentTransport:
    """A transport that cannot notify (like a remote server): only polling keeps views live."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        return await self.inner.call(tool, arguments)

    async def list_tools(self) -> list[dict[str, Any]]:
        return await self.inner.list_tools()

    def subscribe(self, callback: Any) -> Callable[[], None]:
        return lambda: None

    async def aclose(self) -> None:
        pass


async def test_dashboard_polls_transports_without_notifications(transport: Transport, login_url: str) -> None:
    async with nb.AsyncSession(_SilentTransport(transport)) as s:
        await s.open(login_url)
        dashboard = await s.trace.dashboard(poll_interval=0.02)
        await transport.call("scroll", {"session_id": s.session_id})
        await _eventually(lambda: _value(dashboard, "events_gauge") == 2)
        dashboard.stop()
        await transport.call("scroll", {"session_id": s.session_id})
        await asyncio.sleep(0.1)
        assert _value(dashboard, "events_gauge") == 2  # stopped: no more updates


def test_dashboard_degrades_to_html_and_text(transport: Transport, login_url: str) -> None:
    with nb.Session(transport) as s:
        s.open(login_url)
        dashboard = s.trace.dashboard()
        bundle = dashboard._repr_mimebundle_()
        assert "application/vnd.jupyter.widget-view+json" in bundle
        assert "<progress" in bundle["text/html"] and "open_page" in bundle["text/html"]
        assert bundle["text/plain"].startswith("TraceDashboard(live: events=1/128")
        json.dumps(dashboard.get_state())  # plain, serialisable widget state


def test_replay_panel(transport: Transport, login_url: str) -> None:
    with nb.Session(transport) as s:
        page = s.open(login_url)
        s.toggle(page.find(role="checkbox"))
        panel = s.replay_panel()
        state = panel.get_state()
        assert list(state["events"]["_options_labels"]) == [
            "1 · open_page · success",
            "2 · toggle · success · checkbox",
        ]
        assert state["validate"]["description"] == "Validate" and state["confirm"]["description"] == "Confirm"
        s.scroll()
        assert len(panel.get_state()["events"]["_options_labels"]) == 3  # follows the session
        plan = panel.validate(2).result(timeout=30)
        assert plan.drift == "state_drift" and "failed here" in panel.get_state()["output"]["value"]
        panel.events.value = 3
        panel.confirm_button.click()
        confirmed = _wait_for_plan(panel, 3)
        assert confirmed.status == "validated" and "execution_available" in panel.output.value
        assert "text/html" in panel._repr_mimebundle_()


def _wait_for_plan(panel: nb.ReplayPanel, sequence: int) -> nb.ReplayPlan:
    import time

    for _ in range(500):
        if panel.plan is not None and panel.plan.sequence == sequence:
            return panel.plan
        time.sleep(0.01)
    raise AssertionError("no plan")


async def test_dashboard_says_when_another_client_closed_the_session(
    transport: Transport, login_url: str
) -> None:
    opened = await transport.call("open_page", {"url": login_url, "trace": True})
    watcher = nb.attach(opened["session_id"], transport)
    dashboard = watcher.trace.dashboard()
    await transport.call("close_page", {"session_id": opened["session_id"]})  # someone else closes it
    dashboard.refresh().result(timeout=30)
    header = dashboard.get_state()["header"]["value"]
    assert "browser session closed by another client" in header and "Session not found" not in header
    dashboard.stop()
