"""``PageLoads``: at most ``limit`` stateless page loads at once, and a cancelled wait (an agent's
call given up) never keeps a turn nor loses one."""

from __future__ import annotations

import asyncio

from plasmate_nb.browser.page_loads import PageLoads


async def _hold(loads: PageLoads, entered: asyncio.Event, release: asyncio.Event) -> None:
    async with loads.turn():
        entered.set()
        await release.wait()


async def test_a_wait_cancelled_before_its_turn_leaves_the_turns_to_the_others() -> None:
    loads = PageLoads(1)
    release = asyncio.Event()
    holder_in, cancelled_in, next_in = asyncio.Event(), asyncio.Event(), asyncio.Event()
    holder = asyncio.create_task(_hold(loads, holder_in, release))
    await holder_in.wait()
    cancelled = asyncio.create_task(_hold(loads, cancelled_in, release))
    after = asyncio.create_task(_hold(loads, next_in, release))
    while loads.waiting < 2:
        await asyncio.sleep(0)
    cancelled.cancel()
    while loads.waiting > 1:
        await asyncio.sleep(0)
    release.set()
    await asyncio.gather(holder, after)
    assert cancelled.cancelled() and not cancelled_in.is_set() and next_in.is_set()
    assert (loads.running, loads.waiting) == (0, 0)


async def test_a_wait_cancelled_just_as_its_turn_came_passes_the_turn_on() -> None:
    loads = PageLoads(1)
    release = asyncio.Event()
    holder_in, woken_in, next_in = asyncio.Event(), asyncio.Event(), asyncio.Event()
    waiters: list[asyncio.Task[None]] = []

    async def holder() -> None:
        async with loads.turn():
            holder_in.set()
            await release.wait()
        waiters[0].cancel()  # its turn was just handed over: it has not run since

    held = asyncio.create_task(holder())
    await holder_in.wait()
    waiters += [
        asyncio.create_task(_hold(loads, woken_in, release)),
        asyncio.create_task(_hold(loads, next_in, release)),
    ]
    while loads.waiting < 2:
        await asyncio.sleep(0)
    release.set()
    await asyncio.gather(held, waiters[1])
    assert waiters[0].cancelled() and not woken_in.is_set() and next_in.is_set()
    assert (loads.running, loads.waiting) == (0, 0)
