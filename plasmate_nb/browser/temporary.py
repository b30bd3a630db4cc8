"""One stateless page load in a temporary browser context (docs/contract.md#stateless-page-tools).

The stateless tools (``fetch_page``, ``extract_text``, ``extract_links``, ``inspect_page``,
``screenshot_page``) load their URL like ``fetch_page`` always did: a fresh context (no cookies, no
storage shared with any session), the egress gate for every byte, the same navigation checks and
messages (``Failed to fetch <where>: <reason>``). JavaScript on or off is the context's
``java_script_enabled``; the SOM compiler still runs (Playwright evaluates in the page even when
the page's own scripts are disabled). The context is closed when the ``async with`` ends.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from plasmate_nb.browser.created import close_quietly, within
from plasmate_nb.browser.errors import ActionError
from plasmate_nb.browser.memory import RendererMemoryGuard, stopped_reason
from plasmate_nb.browser.messages import describe, is_timeout
from plasmate_nb.browser.navigation import (
    NavigationWatch,
    answer_dialog,
    goto,
    off_the_web,
    same_document,
    settle,
)
from plasmate_nb.errors import (
    ErrorText,
    failed_to_fetch,
    navigation_failed,
    pipeline_error,
    reduce_url,
    screenshot_capture_failed,
    timeout_after,
)
from plasmate_nb.som import CompiledSom, compile_page, watch_crashes

if TYPE_CHECKING:
    from plasmate_nb.browser.engine import Engine

#: How long past its own timeout a screenshot may take before we stop waiting for Playwright.
SCREENSHOT_GRACE_S = 2.0


class PageFetchFailed(ActionError):
    """``Failed to fetch <where>: <reason>``, with the ``reason`` (an ErrorText) kept apart for
    tools that word the failure without the URL."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class CaptureFailed(Exception):
    """A screenshot could not be taken; ``timed_out`` tells a deadline from a failure."""

    def __init__(self, message: str, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


@dataclass
class LoadedPage:
    """A page loaded by :func:`temporary_page`."""

    page: Page
    url: str  # the final URL, after redirects
    # The body of the document the page shows, as Chromium received it; None when it is not
    # available, or the page is not on the document of a response (moved by history.pushState).
    source: bytes | None
    action_timeout: float
    memory_guard: RendererMemoryGuard | None = None

    async def _why(self, error: BaseException, timeout: float) -> str:
        """What went wrong: the memory bound when it stopped the page, else ``error`` described."""
        return await stopped_reason(self.memory_guard, self.page) or describe(error, timeout)

    async def effective_html(self) -> str:
        """The document as it stands now (after scripts, when they ran), serialised."""
        try:
            async with asyncio.timeout(self.action_timeout):
                return await self.page.content()
        except (PlaywrightError, TimeoutError) as error:
            raise ActionError(pipeline_error(await self._why(error, self.action_timeout))) from None

    async def compile(self) -> CompiledSom:
        try:
            return await compile_page(self.page, timeout=self.action_timeout)
        except Exception as error:  # SomCompileError, Playwright errors, timeouts
            raise ActionError(pipeline_error(await self._why(error, self.action_timeout))) from None

    async def screenshot(self, image_format: Literal["png", "jpeg", "webp"], timeout: float) -> bytes:
        """The viewport as ``png``, ``jpeg`` or ``webp`` bytes. Raises :class:`CaptureFailed`."""
        capture = self.page.screenshot(type=image_format, timeout=timeout * 1000, animations="disabled")
        try:  # Playwright's own timeout is not always kept (a capture during a navigation)
            async with asyncio.timeout(timeout + SCREENSHOT_GRACE_S):
                return await capture
        except (PlaywrightError, TimeoutError) as error:
            if is_timeout(error):
                raise CaptureFailed("timed out", timed_out=True) from None
            raise CaptureFailed(screenshot_capture_failed(await self._why(error, timeout))) from None


@contextlib.asynccontextmanager
async def temporary_page(
    engine: Engine, url: str, *, javascript: bool = True, viewport: tuple[int, int] | None = None
) -> AsyncIterator[LoadedPage]:
    """Load ``url`` in a fresh context; raise :class:`PageFetchFailed` when it cannot be loaded.

    At most ``max_sessions`` such loads run at once (``browser/page_loads.py``); more wait their turn."""
    async with engine.page_loads.turn(), _loaded(engine, url, javascript, viewport) as loaded:
        yield loaded


@contextlib.asynccontextmanager
async def _loaded(
    engine: Engine, url: str, javascript: bool, viewport: tuple[int, int] | None
) -> AsyncIterator[LoadedPage]:
    options: dict[str, Any] = {"java_script_enabled": javascript}
    if viewport is not None:
        options["viewport"] = {"width": viewport[0], "height": viewport[1]}
    try:
        context = await engine._new_context(**options)
    except TimeoutError:
        raise _timed_out(url, engine.config.browser_timeout) from None
    try:
        try:
            page = await within(context.new_page(), engine.config.browser_timeout)
        except TimeoutError:
            raise _timed_out(url, engine.config.browser_timeout) from None
        page.on("dialog", answer_dialog)
        watch_crashes(page)
        watch = NavigationWatch(page, engine.gate)
        try:
            response = await goto(
                page,
                url,
                policy=engine.policy,
                watch=watch,
                timeout=engine.config.navigation_timeout,
                memory_guard=engine.memory_guard,
            )
        except ActionError as error:
            message = error.args[0]
            reason = str(message).removeprefix(f"Failed to fetch {reduce_url(url)}: ")
            raise PageFetchFailed(message, _reason_of(message, reason)) from None
        await settle(page, engine.config.settle_timeout, watch)
        # After the load the page may have gone on (a meta refresh, a script) to where the gate
        # refused it, or to an error: the tool answers as for the first navigation, not with that page.
        refusal = watch.refusal()
        if refusal is not None:
            reason = navigation_failed(refusal) if refusal.startswith("net::") else refusal
            raise PageFetchFailed(failed_to_fetch(reduce_url(url), reason), reason)
        left = off_the_web(page.url)  # a script sent it to Chromium's error page, a blob: …
        if left is not None:
            raise PageFetchFailed(failed_to_fetch(reduce_url(url), left), left)
        # The page's own navigations after the load (a script, a meta refresh) may have replaced
        # the document the first response brought: the body must be of the one the page shows.
        document = watch.shown(page.url)
        if document is None and response is not None and same_document(response.url, page.url):
            document = response  # its event not heard yet
        source = None
        if document is not None:
            with contextlib.suppress(PlaywrightError, TimeoutError):
                async with asyncio.timeout(engine.config.action_timeout):
                    source = await document.body()
        yield LoadedPage(page, page.url, source, engine.config.action_timeout, engine.memory_guard)
    finally:
        await close_quietly(context)


def _timed_out(url: str, seconds: float) -> PageFetchFailed:
    reason = timeout_after(seconds)
    return PageFetchFailed(failed_to_fetch(reduce_url(url), reason), reason)


def _reason_of(message: Any, reason: str) -> str:
    """``reason`` as an ErrorText of the whole message's class (the URL adds no class of its own)."""
    error_class = getattr(message, "error_class", None)
    return ErrorText(reason, error_class) if error_class else reason
