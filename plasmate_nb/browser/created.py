"""New browser contexts and pages within a deadline, and letting them go.

Playwright gives ``new_context`` and ``new_page`` no deadline: a browser that stops answering
(wedged, not dead) would hang the call for good. Past ``seconds`` the call fails with
``TimeoutError``; a context or page the browser still creates later belongs to no one, so it is
closed when it arrives instead of living as long as the browser. Closing is bounded too, and
runs to its end when the caller is cancelled meanwhile: a client that gave up on a call (the MCP
SDK then cancels every wait of the call, its clean-up included) must not leave its context open.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any, TypeVar

from playwright.async_api import BrowserContext, Page

CLOSE_TIMEOUT_SECONDS = 5.0
Created = TypeVar("Created", BrowserContext, Page)
_closing: set[asyncio.Task[None]] = set()  # the loop keeps only weak references to tasks


async def within(creating: Coroutine[Any, Any, Created], seconds: float) -> Created:
    """``await creating`` for at most ``seconds`` (``TimeoutError``); what arrives later is closed.

    >>> page = await within(context.new_page(), config.browser_timeout)
    """
    task = asyncio.ensure_future(creating)
    try:  # asyncio.timeout: Python 3.11's wait_for can drop our caller's cancellation
        async with asyncio.timeout(seconds):
            return await asyncio.shield(task)
    except (TimeoutError, asyncio.CancelledError):  # our caller gave up, or its own caller did
        task.add_done_callback(_close_late)
        raise


def _close_late(task: asyncio.Future[Any]) -> None:
    if task.cancelled() or task.exception() is not None:  # reading it: nothing left unretrieved
        return
    _start_closing(task.result())


async def close_quietly(target: BrowserContext | Page) -> None:
    """Close ``target`` within ``CLOSE_TIMEOUT_SECONDS``, whatever fails: it is being let go of.
    A page's ``beforeunload`` does not run (a page could keep itself open with it). Cancelling
    the caller stops its wait, never the closing."""
    await asyncio.shield(_start_closing(target))


def _start_closing(target: BrowserContext | Page) -> asyncio.Task[None]:
    closing = asyncio.ensure_future(_close(target))
    _closing.add(closing)
    closing.add_done_callback(_closing.discard)
    return closing


async def _close(target: BrowserContext | Page) -> None:
    closing = target.close(run_before_unload=False) if isinstance(target, Page) else target.close()
    with contextlib.suppress(Exception):
        async with asyncio.timeout(CLOSE_TIMEOUT_SECONDS):
            await closing
