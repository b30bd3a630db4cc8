"""Faults give bounded, classified results and leave the session usable; the server survives
its browser: a killed Chromium fails affected calls clearly, their traces stay readable and
closable, and the next open_page relaunches the browser."""

from __future__ import annotations

import asyncio
import os
import signal

import psutil
import pytest

from plasmate_nb.trace.som_walk import iter_elements
from tests.reliability.support import (
    ERROR_CLASSES,
    assert_export_bounds,
    bounded,
    free_port,
    last_event,
    remote,
)


def _button(payload: dict) -> str:
    return next(e["id"] for e in iter_elements({"regions": payload["regions"]}) if e["role"] == "button")


# (name, page to open, tool and arguments of the faulty call, expected error class or None for success)
FAULTS = [
    ("never-loading page", "/index.html", "navigate_to", {"url": "/faults/slow"}, "timeout"),
    ("closed port", "/index.html", "navigate_to", {"url": "closed-port"}, "network"),
    ("HTTP 500", "/index.html", "navigate_to", {"url": "/faults/500"}, "network"),
    ("redirect loop", "/index.html", "navigate_to", {"url": "/faults/redirect-loop"}, "network"),
    ("download", "/index.html", "navigate_to", {"url": "/faults/download"}, "network"),
    ("dialog", "/faults/dialog.html", "click", {}, None),
    ("popup window", "/faults/popup.html", "click", {}, None),
    ("hanging script", "/faults/hang.html", "click", {}, "timeout"),
]


@pytest.mark.parametrize(
    ("page", "tool", "arguments", "error_class"), [pytest.param(*fault[1:], id=fault[0]) for fault in FAULTS]
)
async def test_fault_is_bounded_classified_and_the_session_stays_usable(
    fast_server, demo, page, tool, arguments, error_class
) -> None:
    async with remote(fast_server.url) as client:
        opened = await client.ok("open_page", url=demo.url(page), trace=True)
        sid = opened["session_id"]
        if tool == "click":
            arguments = {"element_id": _button(opened)}
        elif arguments["url"] == "closed-port":
            arguments = {"url": f"http://127.0.0.1:{free_port()}/"}
        else:
            arguments = {"url": demo.url(arguments["url"])}
        outcome = await client.call(tool, {"session_id": sid, **arguments})
        event = last_event(await client.ok("trace_export", session_id=sid))
        assert event["action"] == tool
        if error_class is None:
            assert outcome.ok, outcome.payload
            assert event["outcome"] == "success"
        else:
            assert not outcome.ok, "the fault must surface as a tool error"
            assert (event["outcome"], event["error_class"]) == ("error", error_class), outcome.payload
        after = await client.ok("navigate_to", session_id=sid, url=demo.url("/welcome.html"))
        assert after["title"] == "Welcome"
        assert await client.ok("evaluate", session_id=sid, expression="1 + 1") == {"result": 2}
        assert_export_bounds(await client.ok("trace_export", session_id=sid))
        await client.ok("close_page", session_id=sid)


async def test_popups_never_add_a_page_and_dialogs_never_wait(fast_server, demo) -> None:
    async with remote(fast_server.url) as client:
        opened = await client.ok("open_page", url=demo.url("/faults/dialog.html"))
        answered = await client.ok("click", session_id=opened["session_id"], element_id=_button(opened))
        assert "Dismissed" in str(answered["regions"])  # confirm() was answered "no" at once
        await client.ok("navigate_to", session_id=opened["session_id"], url=demo.url("/faults/popup.html"))
        popup = await client.ok(
            "evaluate",
            session_id=opened["session_id"],
            expression="(() => { const w = window.open('/welcome.html'); return w === null || w.closed; })()",
        )
        assert popup["result"] in (True, False)
        assert (
            await client.ok("evaluate", session_id=opened["session_id"], expression="document.title")
        ) == {"result": "Popup"}
        await client.ok("close_page", session_id=opened["session_id"])


def _kill(pids: list[int]) -> None:
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    psutil.wait_procs([psutil.Process(pid) for pid in pids if psutil.pid_exists(pid)], timeout=10)


async def test_server_survives_its_browser_being_killed(server_process, demo) -> None:
    async with remote(server_process.url) as client:
        traced = await client.ok("open_page", url=demo.url("/login.html"), trace=True)
        other = await client.ok("open_page", url=demo.url("/faults/hang.html"), trace=True)
        sid, hung = traced["session_id"], other["session_id"]
        pids = server_process.browser_pids()
        assert len(pids) == 1, f"expected one browser under the server, found {pids}"
        in_flight = asyncio.ensure_future(
            client.call("click", {"session_id": hung, "element_id": _button(other)})
        )
        await asyncio.sleep(0.3)  # the click is hanging in the page's script
        _kill(pids)
        interrupted = await bounded(in_flight, 30, "the in-flight click")
        assert not interrupted.ok
        later = await client.call("click", {"session_id": sid, "element_id": _button(traced)}, 30)
        assert not later.ok and "Browser connection lost" in later.payload
        for session_id in (sid, hung):
            status = await client.ok("trace_status", session_id=session_id)
            export = await client.ok("trace_export", session_id=session_id)
            assert_export_bounds(export)
            assert status["next_sequence"] == export["next_sequence"]
            event = last_event(export)
            assert event["outcome"] == "error" and event["error_class"] in ERROR_CLASSES
        classes = {
            last_event(await client.ok("trace_export", session_id=s))["error_class"] for s in (sid, hung)
        }
        closed = await client.ok("close_page", session_id=sid)
        assert closed["final_trace"]["events"][-1]["action"] == "close_page"
        await client.ok("close_page", session_id=hung)
        fresh = await client.ok("open_page", url=demo.url("/welcome.html"))
        assert fresh["title"] == "Welcome" and len(server_process.browser_pids()) == 1  # relaunched
        await client.ok("close_page", session_id=fresh["session_id"])
        assert classes <= ERROR_CLASSES
