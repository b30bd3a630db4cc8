"""Loading a URL into a page and waiting, bounded, for it to settle."""

from __future__ import annotations

import asyncio
import contextlib

from playwright.async_api import Dialog, Page
from playwright.async_api import Error as PlaywrightError

from plasmate_nb.browser.errors import ActionError
from plasmate_nb.browser.messages import describe, reduce_url
from plasmate_nb.browser.policy import BLOCKED_PREFIX, PolicyGuard, PolicyViolation, UrlPolicy

NEXT_FRAME = "() => new Promise(resolve => requestAnimationFrame(() => resolve(null)))"


async def goto(page: Page, url: str, *, policy: UrlPolicy, guard: PolicyGuard | None, timeout: float) -> None:
    """Navigate, or raise ``Failed to fetch <origin/…>: <reason>`` (reference §2.2)."""
    prefix = f"Failed to fetch {reduce_url(url)}: "
    try:
        await policy.check(url)
    except PolicyViolation as violation:
        raise ActionError(prefix + BLOCKED_PREFIX + str(violation)) from None
    if guard is not None:
        guard.take_blocked()
    try:
        response = await _goto_once_more_if_interrupted(page, url, timeout)
    except (PlaywrightError, TimeoutError) as error:
        blocked = guard.take_blocked() if guard is not None else None
        reason = BLOCKED_PREFIX + blocked if blocked else describe(error, timeout)
        if not reason.startswith(("Timeout", BLOCKED_PREFIX)):
            reason = "Navigation failed: " + reason
        raise ActionError(prefix + reason) from None
    if response is not None and response.status >= 400:
        raise ActionError(f"{prefix}HTTP error {response.status}: {reduce_url(page.url)}")


async def _goto_once_more_if_interrupted(page: Page, url: str, timeout: float):
    # A late error page from an earlier refused download or blocked request can cut into a
    # fresh navigation; one retry gets past it.
    try:
        return await page.goto(url, wait_until="load", timeout=timeout * 1000)
    except PlaywrightError as error:
        if "interrupted by another navigation" not in str(error):
            raise
    return await page.goto(url, wait_until="load", timeout=timeout * 1000)


async def settle(page: Page, guard: PolicyGuard | None, timeout: float) -> None:
    """Let the page finish what an action started: pending policy checks, the load state
    (a navigation may have begun), then one animation frame. Never longer than ``timeout``;
    a page that does not settle in time is taken as it is."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    for _ in range(2):  # a second round when a navigation replaced the document mid-wait
        if guard is not None:
            await guard.drain(max(0.0, deadline - loop.time()))
        remaining = max(0.001, deadline - loop.time())
        with contextlib.suppress(PlaywrightError, TimeoutError):
            await page.wait_for_load_state("load", timeout=remaining * 1000)
        remaining = max(0.001, deadline - loop.time())
        try:
            await asyncio.wait_for(page.evaluate(NEXT_FRAME), remaining)
            return
        except (PlaywrightError, TimeoutError):
            if loop.time() >= deadline:
                return


async def dismiss_dialog(dialog: Dialog) -> None:
    """Every alert/confirm/prompt is dismissed: an unattended page must never wait on a human."""
    with contextlib.suppress(PlaywrightError):
        await dialog.dismiss()
