"""The renderer memory bound: no page may grow its renderer process past ``renderer_memory_mb``.

Why: a page's memory grows with what it builds, not with what it sends. A gzip stream of a few
megabytes inflates to gigabytes of DOM: unguarded, Chromium passed 6 GB before the navigation
timed out, and on an analyst's machine that ends with the kernel's OOM killer choosing among the
notebook, its kernel and the browser. Chromium has no switch that bounds a renderer, and CDP's
network counters see only what the parser has consumed (a byte bound on them would have to be
tiny to hold memory), so the guard watches the processes themselves.

How: every ``INTERVAL_S`` it asks the browser for its renderer processes (CDP
``SystemInfo.getProcessInfo``) and reads each one's resident memory; one past the bound is
killed. The pages it rendered crash and are replaced at their last good URL, as after any crash.
A page that crashes within ``ATTRIBUTION_S`` of a stop is taken as stopped by it, so the call
that waited on it can say why (``reason``). Only a browser this process launched is guarded, and
only a renderer that descends from this process is ever killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
import weakref
from collections.abc import Mapping

import psutil
from playwright.async_api import Browser, BrowserContext, CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from plasmate_nb.errors import ErrorText, renderer_memory_passed

INTERVAL_S = 0.25  # a bomb grows a few hundred MB a second: the overshoot stays near 100 MB
ATTRIBUTION_S = 5.0  # a stopped renderer's pages report their crash within this
MB = 2**20


def renderers_over(sizes: Mapping[int, int], limit_mb: int) -> list[int]:
    """The pids in ``sizes`` (pid → resident bytes) past ``limit_mb``, in pid order."""
    return sorted(pid for pid, size in sizes.items() if size > limit_mb * MB)


class RendererMemoryGuard:
    """Watches one launched browser's renderers; ``stopped`` counts the ones it killed."""

    def __init__(self, browser: Browser, limit_mb: int) -> None:
        self.limit_mb = limit_mb
        self.stopped = 0
        self._browser = browser
        self._cdp: CDPSession | None = None
        self._task: asyncio.Task[None] | None = None
        self._last_stop = -float("inf")  # time.monotonic() of the last kill
        self._renderers: list[int] = []
        self._stopped_pages: weakref.WeakSet[Page] = weakref.WeakSet()

    def __repr__(self) -> str:
        return f"RendererMemoryGuard(limit_mb={self.limit_mb}, stopped={self.stopped})"

    async def start(self) -> None:
        self._cdp = await self._browser.new_browser_cdp_session()
        self._task = asyncio.create_task(self._watch())

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.wait({task})

    def watch(self, context: BrowserContext) -> None:
        """Attribute the crashes of ``context``'s pages (every page it will ever have)."""
        context.on("page", lambda page: page.on("crash", self._on_crash))

    def reason(self, page: Page) -> ErrorText | None:
        """Why ``page`` crashed, if the guard stopped its renderer; None otherwise."""
        return renderer_memory_passed(self.limit_mb) if page in self._stopped_pages else None

    def renderer_sizes(self) -> dict[int, int]:
        """Resident bytes of each renderer the last look found (those still running)."""
        sizes = {}
        for pid in self._renderers:
            with contextlib.suppress(psutil.Error):
                sizes[pid] = psutil.Process(pid).memory_info().rss
        return sizes

    @staticmethod
    def is_ours(pid: int) -> bool:
        """Whether ``pid`` is a Chromium renderer that descends from this process."""
        try:
            process = psutil.Process(pid)
            return "--type=renderer" in process.cmdline() and any(
                parent.pid == os.getpid() for parent in process.parents()
            )
        except psutil.Error:
            return False

    def _on_crash(self, page: Page) -> None:
        if time.monotonic() - self._last_stop <= ATTRIBUTION_S:
            self._stopped_pages.add(page)

    async def _watch(self) -> None:
        assert self._cdp is not None
        while True:
            try:
                info = await self._cdp.send("SystemInfo.getProcessInfo")
            except PlaywrightError:
                return  # the browser is gone: nothing left to guard
            self._renderers = [p["id"] for p in info.get("processInfo", []) if p.get("type") == "renderer"]
            for pid in renderers_over(self.renderer_sizes(), self.limit_mb):
                if self.is_ours(pid):
                    self._last_stop = time.monotonic()
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                        self.stopped += 1
            await asyncio.sleep(INTERVAL_S)
