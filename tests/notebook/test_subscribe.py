"""``subscribe``: "this session's trace may have changed", for own calls and other clients' calls."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

import plasmate_nb.notebook as nb
from plasmate_nb.client.base import Transport


async def _eventually(condition: Callable[[], bool], attempts: int = 500) -> None:
    for _ in range(attempts):  # bounded wait for a notification handed over between loops
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("no notification arrived")


async def test_own_calls_are_announced_before_they_return(transport: Transport, login_url: str) -> None:
    async with nb.AsyncSession(transport) as s:
        seen: list[str] = []

        async def on_change(tool: str) -> None:
            seen.append(tool)

        unsubscribe = s.subscribe(on_change)
        await s.open(login_url)
        assert "open_page" in seen
        await s.scroll()
        assert "scroll" in seen
        await asyncio.sleep(0.05)  # the transport may announce our own calls once more, later
        seen.clear()
        await s.trace.status()
        await s.trace.export()
        await asyncio.sleep(0.05)
        assert seen == []  # reading the trace changes nothing
        await s.trace.clear()
        assert "trace_clear" in seen
        unsubscribe()
        seen.clear()
        await s.scroll()
        await asyncio.sleep(0.05)
        assert seen == []


async def test_other_clients_calls_on_this_session_are_announced(
    transport: Transport, login_url: str
) -> None:
    async with nb.AsyncSession(transport) as s:
        await s.open(login_url)
        other = await transport.call("open_page", {"url": login_url, "trace": True})
        seen: list[str] = []
        s.subscribe(seen.append)  # a plain callback works too
        await transport.call("scroll", {"session_id": other["session_id"]})  # another session: not ours
        await transport.call(
            "toggle", {"session_id": s.session_id, "element_id": s.page.find(role="checkbox").id}
        )
        await _eventually(lambda: "toggle" in seen)
        assert "scroll" not in seen
        await transport.call("close_page", {"session_id": other["session_id"]})


def test_sync_session_subscribe_runs_callbacks_on_the_background_loop(
    transport: Transport, login_url: str
) -> None:
    threads: list[str] = []
    with nb.Session(transport) as s:
        unsubscribe = s.subscribe(lambda tool: threads.append(threading.current_thread().name))
        s.open(login_url)
        unsubscribe()
    assert threads and set(threads) == {"plasmate-nb-loop"}
