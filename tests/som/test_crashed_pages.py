"""A compile on a page whose renderer crashed ends with the crash, not at its deadline: a crashed
renderer never answers, so without the watch a compile waited out its whole budget."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

import pytest
from playwright.async_api import Error as PlaywrightError

from plasmate_nb.som import SomCompileError, compile_page, watch_crashes
from tests.reliability.support import bounded


async def _crash(page) -> None:
    session = await page.context.new_cdp_session(page)
    with contextlib.suppress(PlaywrightError, TimeoutError):
        await asyncio.wait_for(session.send("Page.crash"), 2)


async def test_a_compile_under_way_ends_when_the_page_crashes(browser, page) -> None:
    """The page's script never yields, so the compile waits; then its renderer is killed (a
    renderer this busy never takes CDP's ``Page.crash``)."""
    watch_crashes(page)
    await page.set_content("<p>Hello</p><script>setTimeout(() => { for (;;) {} })</script>")
    compiling = asyncio.create_task(compile_page(page, timeout=120))
    cdp = await browser.new_browser_cdp_session()
    processes = (await cdp.send("SystemInfo.getProcessInfo"))["processInfo"]
    await cdp.detach()
    for renderer in (p["id"] for p in processes if p["type"] == "renderer"):  # only this test's page has one
        with contextlib.suppress(ProcessLookupError):
            os.kill(renderer, signal.SIGKILL)
    with pytest.raises(SomCompileError, match=r"^SOM compile failed: the page crashed$"):
        await bounded(compiling, 30)


async def test_a_compile_of_a_page_that_already_crashed_fails_at_once(page) -> None:
    watch_crashes(page)
    await page.set_content("<p>Hello</p>")
    await _crash(page)
    with pytest.raises(SomCompileError, match=r"^SOM compile failed: the page crashed$"):
        await bounded(compile_page(page, timeout=120), 30)
