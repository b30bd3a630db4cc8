"""The live dashboard and the replay panel: widget state before and after actions."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from fractions import Fraction
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import nbformat
import pytest
from hypothesis import given
from hypothesis import strategies as st
from nbclient import NotebookClient

import plasmate_nb.notebook as nb
from plasmate_nb.client.base import Transport
from plasmate_nb.notebook import _dashboard_card as card
from tests.support import DelegatingTransport

ROOT = Path(__file__).resolve().parents[2]


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
        assert state["events_gauge"]["level"] == state["bytes_gauge"]["level"] == "dropping"
        assert f"<b>{status.retained_events}</b> / 128" in dashboard.widget.value
        assert "evicted" in state["explanation"]["value"]
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


class _SilentTransport(DelegatingTransport):
    """A transport that cannot notify (like a remote server): only polling keeps views live."""

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
        assert bundle["text/html"] == dashboard.widget.value  # the fallback is the card the widget shows
        assert "role='progressbar'" in bundle["text/html"] and "open_page" in bundle["text/html"]
        assert bundle["text/plain"].startswith("TraceDashboard(live: events=1/128")
        # A saved notebook reopened without its kernel shows this card: it says when it is live.
        assert "live while its kernel runs" in bundle["text/html"]
        json.dumps(dashboard.get_state())  # plain, serialisable widget state


def test_replay_panel(transport: Transport, login_url: str) -> None:
    with nb.Session(transport) as s:
        page = s.open(login_url)
        s.toggle(page.find(role="checkbox"))
        panel = s.replay_panel()
        state = panel.get_state()
        assert list(state["events"]["_options_labels"]) == [
            "1 · open_page · success",
            "2 · toggle on checkbox · success",
        ]
        assert state["validate"]["description"] == "Validate" and state["confirm"]["description"] == "Confirm"
        s.scroll()
        assert len(panel.get_state()["events"]["_options_labels"]) == 3  # follows the session
        plan = panel.validate(2).result(timeout=30)
        assert plan.drift == "state_drift" and "Refused: the page" in panel.get_state()["output"]["value"]
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


# -- the card: gauge levels, explanation, table, fingerprints, escaping ---------------------------


def _text_and_titles(html: str) -> tuple[str, list[str]]:
    """The text a reader sees, and the hover texts (title attributes), of an HTML fragment."""

    class Reader(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.text: list[str] = []
            self.titles: list[str] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.titles += [value or "" for name, value in attrs if name == "title"]

        def handle_data(self, data: str) -> None:
            self.text.append(data)

    reader = Reader()
    reader.feed(html)
    return " ".join(reader.text), reader.titles


@given(maximum=st.integers(1, 100_000), share=st.fractions(0, 1), dropping=st.booleans())
def test_gauge_level_is_amber_from_80_percent_and_red_once_events_are_dropped(
    maximum: int, share: Fraction, dropping: bool
) -> None:
    value = int(maximum * share)
    level = card.gauge_level(value, maximum, dropping)
    if dropping:
        assert level == "dropping"
    else:
        assert level == ("near" if Fraction(value, maximum) >= Fraction(80, 100) else "ok")
        assert card.gauge_level(value + 1, maximum, dropping) in {level, "near"}  # never back to ok


def test_gauge_level_at_exactly_80_percent_of_each_bound() -> None:
    for bound in (128, 49_152, 100):
        exact = bound * 4 // 5
        at, below = card.gauge_level(exact, bound, False), card.gauge_level(exact - 1, bound, False)
        assert (at, below) == (("near", "ok") if exact * 5 == bound * 4 else ("ok", "ok")), bound
        assert card.gauge_level(-(-bound * 4 // 5), bound, False) == "near"  # the first value >= 80 %


@pytest.mark.parametrize("backend", ["scripted"])
def test_dashboard_turns_amber_near_a_bound_then_red_on_eviction(
    transport: Transport, login_url: str
) -> None:
    with nb.Session(transport) as s:
        s.open(login_url)
        dashboard = s.trace.dashboard()
        seen: list[tuple[str, int, int]] = []
        while dashboard.get_state()["evicted_events"]["value"] == 0:
            state = dashboard.get_state()
            seen.append(
                (state["bytes_gauge"]["level"], state["bytes_gauge"]["value"], state["events_gauge"]["value"])
            )
            assert len(seen) < 200, "no eviction"
            s.scroll()
        levels = [level for level, _, _ in seen]
        first_near = levels.index("near")  # amber before anything was lost ...
        assert set(levels[:first_near]) == {"ok"} and set(levels[first_near:]) == {"near"}
        assert seen[first_near][1] * 100 >= 80 * 49_152 > seen[first_near - 1][1] * 100
        state = dashboard.get_state()
        assert state["bytes_gauge"]["level"] == state["events_gauge"]["level"] == "dropping"  # ... red after
        assert "data-level='dropping'" in dashboard.widget.value
        line = state["explanation"]["value"]
        assert (
            line.startswith("Events are being lost")
            and f"oldest {state['evicted_events']['value']} event" in line
        )
        near = card.explanation({**s.trace.export().payload, "evicted_events": 0}, (128, 49_152))
        assert near.startswith("Nearly full:") and "49,152-byte bound" in near


@pytest.mark.parametrize("backend", ["scripted"])
def test_card_explains_each_state_and_turns_red_after_an_oversized_drop(
    transport: Transport, login_url: str
) -> None:
    with nb.Session(transport) as s:
        s.open(login_url)
        payload = s.trace.export().payload
        bounds = (128, 49_152)
        assert card.explanation(payload, bounds) == "Within bounds: every event recorded so far is retained."
        assert card.levels(payload, bounds) == {"events": "ok", "bytes": "ok"}
        s.scroll()
        s.trace.clear()
        s.scroll()
        cleared = s.trace.export().payload
        line = card.explanation(cleared, bounds)
        assert "since the last clear" in line and "(2 events cleared)" in line
        dropped = {**cleared, "oversized_events": 1}  # what an export says after a too-large event
        assert card.levels(dropped, bounds) == {"events": "dropping", "bytes": "dropping"}
        assert "1 event too large to keep dropped" in card.explanation(dropped, bounds)
        red = f"color:{card.LEVEL_COLOURS['dropping']}"
        oversized = (
            card.figures_html(dropped).split("data-counter='oversized_events'", 1)[1].split("</div>")[0]
        )
        assert red in oversized and oversized.endswith(">1")  # the count, in red
        assert red not in card.figures_html(cleared)


@pytest.mark.parametrize("backend", ["scripted"])
def test_events_table_is_bounded_newest_first_with_short_fingerprints(
    transport: Transport, login_url: str
) -> None:
    with nb.Session(transport) as s:
        page = s.open(login_url)
        s.type_text(page.find(label="Email"), "carol@example.com")
        for _ in range(30):
            s.scroll()
        dashboard = s.trace.dashboard()
        events = s.trace.export().payload["events"]
        table = dashboard.get_state()["events_table"]["value"]
        assert f"max-height:{card.TABLE_MAX_HEIGHT};overflow:auto" in table
        sequences = [int(number) for number in re.findall(r"<tr><td[^>]*>(\d+)</td>", table)]
        assert sequences == [e["sequence"] for e in reversed(events)]  # newest first, every one
        assert "newest first" in table and "position:sticky" in table
        text, titles = _text_and_titles(dashboard.widget.value)
        fingerprints = {e["after"]["fingerprint"] for e in events}
        assert fingerprints <= set(titles)  # the whole value on hover ...
        for fingerprint in fingerprints:
            assert fingerprint not in text  # ... never in the text, which shows its first hex digits
            assert fingerprint.rsplit(":", 1)[1][: card.FINGERPRINT_SHOWN] + "…" in text
        assert all(f" {header} " in text for header in card.EVENT_COLUMNS)  # readable headers, apart
        assert "text (17 B)" in text  # the typed value's length, never the value
        assert "carol@example.com" not in dashboard.widget.value


@pytest.mark.parametrize("backend", ["scripted"])
def test_card_escapes_everything_that_came_from_the_payload(transport: Transport, login_url: str) -> None:
    with nb.Session(transport) as s:
        s.open(login_url)
        payload = json.loads(json.dumps(s.trace.export().payload))
    hostile = "<img src=x onerror=alert(1)>'\""
    event = payload["events"][0]
    event.update(action=hostile, outcome="error", error_class=hostile)
    event["after"].update(origin=hostile, fingerprint="plasmate-state:v1:" + hostile)
    event["redaction"]["redacted_fields"] = [hostile]
    event["redaction"]["omitted_fields"] = [hostile]
    payload["redaction_policy"] = hostile
    html = card.card_html(
        card.figures_html(payload), card.events_html(payload["events"]) + card.redaction_html(payload)
    )
    assert "<img" not in html and "onerror=alert(1)>" not in html
    text, titles = _text_and_titles(html)
    assert text.count(hostile) >= 5 and "plasmate-state:v1:" + hostile in titles


# -- a real kernel: the saved output shows the last state ------------------------------------------

KERNEL_SETUP = """
import plasmate_nb.notebook as nb
from plasmate_nb._loop import background_loop
from plasmate_nb.client import InProcessTransport, LoopBoundTransport
from plasmate_nb.tools import Dispatcher
from tests.scripted_engine import ScriptedEngine

engine = ScriptedEngine("http://127.0.0.1:9")
s = nb.Session(LoopBoundTransport(InProcessTransport(Dispatcher(engine)), background_loop()))
s.open("http://127.0.0.1:9/login.html")
"""


def test_a_saved_notebook_keeps_the_dashboards_last_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    sources = [
        KERNEL_SETUP,
        "dashboard = s.trace.dashboard()\ndashboard",
        "for _ in range(3):\n    s.scroll()",
        "final = s.close()",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in sources])
    client = NotebookClient(notebook, timeout=60, kernel_name="python3", store_widget_state=True,
                            resources={"metadata": {"path": str(ROOT)}})  # fmt: skip
    client.execute()
    assert [o for cell in notebook.cells for o in cell.outputs if o["output_type"] == "error"] == []
    (output,) = notebook.cells[1].outputs  # the displayed dashboard, updated after every later cell
    data = output["data"]
    assert data["text/plain"].startswith(
        "TraceDashboard(browser session closed; showing its final trace: events=5/128"
    )
    html = data["text/html"]
    assert "data-counter='next_sequence'" in html and "final trace" in html and "close_<wbr>page" in html
    # The saved widget state is the same last card, for frontends that restore widgets.
    model_id = data["application/vnd.jupyter.widget-view+json"]["model_id"]
    state = notebook.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    assert state[model_id]["state"]["value"] == html
