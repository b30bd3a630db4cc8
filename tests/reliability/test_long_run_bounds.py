"""Thousands of actions in one traced session over the real MCP server: retained events and
bytes never exceed the bounds, every event fits its limit, the counter invariant holds after
every step, sequences never rewind, and the server's memory stays flat (RSS is measured and
reported; only the soak run asserts a generous bound)."""

from __future__ import annotations

import contextlib
import itertools

import psutil

from plasmate_nb.trace import MAX_BYTES, MAX_EVENTS
from tests.reliability.support import (
    SIZED,
    Sizes,
    assert_counters,
    assert_export_bounds,
    record_figures,
    remote,
)
from tests.support import element_id

CLEAR_EVERY = 400
EXPORT_EVERY = 100
WARM_UP = 50
SOAK_RSS_BOUND_MB = 256


def _rss_mb(process: psutil.Process, tree: bool = False) -> float:
    processes = [process, *process.children(recursive=True)] if tree else [process]
    total = 0
    for proc in processes:
        with contextlib.suppress(psutil.Error):
            total += proc.memory_info().rss
    return total / 2**20


def _actions(page: dict) -> itertools.cycle:
    email, plan = element_id(page, "text_input", "Email"), element_id(page, "select", "Plan")
    remember = element_id(page, "checkbox", "Remember me")
    return itertools.cycle(
        [
            ("type_text", {"element_id": email, "text": "long-run-" * 3}),
            ("type_text", {"element_id": email, "text": "more", "append": True}),
            ("select_option", {"element_id": plan, "value": "team"}),
            ("toggle", {"element_id": remember}),
            ("scroll", {"direction": "down", "pixels": 50}),
            ("evaluate", {"expression": "document.querySelectorAll('input').length"}),
            ("clear", {"element_id": email}),
            ("select_option", {"element_id": plan, "value": "free"}),
            ("click", {"element_id": "e_missing"}),  # a traced failure
        ]
    )


@SIZED
async def test_long_traced_session_stays_within_bounds(server_process, demo, sizes: Sizes) -> None:
    process = server_process.psutil
    async with remote(server_process.url) as client:
        page = await client.ok("open_page", url=demo.url("/login.html"), trace=True)
        sid = page["session_id"]
        actions = _actions(page)
        previous = (await client.ok("trace_status", session_id=sid))["next_sequence"]
        peak_events = peak_bytes = errors = 0
        rss_start = tree_start = 0.0
        for step in range(1, sizes.long_run_actions + 1):
            tool, arguments = next(actions)
            outcome = await client.call(tool, {"session_id": sid, **arguments})
            errors += not outcome.ok
            status = await client.ok("trace_status", session_id=sid)
            assert_counters(status)
            assert status["next_sequence"] == previous + 1, (
                "one event per traced call; sequences never rewind"
            )
            previous = status["next_sequence"]
            peak_events = max(peak_events, status["retained_events"])
            peak_bytes = max(peak_bytes, status["retained_bytes"])
            if step % EXPORT_EVERY == 0:
                assert_export_bounds(await client.ok("trace_export", session_id=sid))
            if step % CLEAR_EVERY == 0:
                cleared = await client.ok("trace_clear", session_id=sid)
                assert (
                    cleared["status"]["retained_events"] == 0
                    and cleared["status"]["next_sequence"] == previous
                )
                assert_counters(cleared["status"])
            if step == WARM_UP:
                rss_start, tree_start = _rss_mb(process), _rss_mb(process, tree=True)
        final = await client.ok("close_page", session_id=sid)
    assert_export_bounds(final["final_trace"])
    assert final["final_trace"]["next_sequence"] == previous + 1
    assert peak_events <= MAX_EVENTS and peak_bytes <= MAX_BYTES
    growth, tree_growth = _rss_mb(process) - rss_start, _rss_mb(process, tree=True) - tree_start
    record_figures(
        sizes,
        "long_run",
        actions=sizes.long_run_actions,
        failed_actions=errors,
        peak_retained_events=peak_events,
        peak_retained_bytes=peak_bytes,
        evicted_events=final["final_trace"]["evicted_events"],
        cleared_events=final["final_trace"]["cleared_events"],
        server_rss_start_mb=round(rss_start, 1),
        server_rss_growth_mb=round(growth, 1),
        server_and_browser_rss_growth_mb=round(tree_growth, 1),
    )
    if sizes.name == "soak":
        assert growth < SOAK_RSS_BOUND_MB, (
            f"server RSS grew {growth:.0f} MB over {sizes.long_run_actions} actions"
        )
