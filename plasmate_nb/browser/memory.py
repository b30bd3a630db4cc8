"""The renderer memory bound: no renderer process may grow past ``renderer_memory_mb``.

Why: a page's memory grows with what it builds, not with what it sends. A gzip stream of a few
megabytes inflates to gigabytes of DOM: unguarded, Chromium passed 6 GB before the navigation
timed out, and on an analyst's machine that ends with the kernel's OOM killer choosing among the
notebook, its kernel and the browser. Chromium has no switch that bounds a renderer, and CDP's
network counters see only what the parser has consumed (a byte bound on them would have to be
tiny to hold memory), so the guard watches the processes themselves.

How: every ``INTERVAL_S`` it asks the browser for its renderer processes (CDP
``SystemInfo.getProcessInfo``) and reads each one's resident memory; one past the bound is
killed. The pages it rendered crash and are replaced at their last good URL, as after any crash.
Which session that was: Chromium reports each target of the killed process as crashed with
status ``killed`` (target discovery on the browser's CDP session), and each target names its
browser context; the guard learns each of our contexts' ids from its first page. A page that
crashes within ``ATTRIBUTION_S`` of its context's targets being killed so was stopped by the
guard, and the call that waited on it can say why (``reason``); any other crash is a crash.
Only a browser this process launched is guarded, and only a renderer that descends from this
process is ever killed.

What it does not bound (docs/contract.md#renderer-memory-bound): each renderer is bounded on its
own, so a page whose cross-site frames run in several renderers may hold the bound in each; and
memory a page makes other processes hold (its context's in-memory storage, blobs, WebGL in the
GPU process) is not a renderer's.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
import weakref
from collections.abc import Mapping
from typing import Any

import psutil
from playwright.async_api import Browser, BrowserContext, CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from plasmate_nb.errors import ErrorText, renderer_memory_passed

INTERVAL_S = 0.25
ATTRIBUTION_S = 2.0  # a killed renderer's targets and pages report their crash within this
MB = 2**20
KILLED = "killed"  # Target.targetCrashed's status for a renderer ended by a signal


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
        self._renderers: list[int] = []
        self._last_kill = -float("inf")  # time.monotonic() of the last kill
        self._target_contexts: dict[str, str] = {}  # targetId → browserContextId, from discovery
        self._killed_contexts: dict[str, float] = {}  # browserContextId → when its targets were killed
        self._context_ids: weakref.WeakKeyDictionary[BrowserContext, str] = weakref.WeakKeyDictionary()
        self._crashes: weakref.WeakKeyDictionary[Page, float] = weakref.WeakKeyDictionary()
        self._lookups: set[asyncio.Task[None]] = set()
        self._news = asyncio.Event()  # set (and replaced) by _tell

    def __repr__(self) -> str:
        return f"RendererMemoryGuard(limit_mb={self.limit_mb}, stopped={self.stopped})"

    async def start(self) -> None:
        cdp = self._cdp = await self._browser.new_browser_cdp_session()
        cdp.on("Target.targetCreated", self._on_target)
        cdp.on("Target.targetInfoChanged", self._on_target)
        cdp.on("Target.targetDestroyed", self._on_target_destroyed)
        cdp.on("Target.targetCrashed", self._on_target_crashed)
        await cdp.send("Target.setDiscoverTargets", {"discover": True})
        self._task = asyncio.create_task(self._watch())

    async def aclose(self) -> None:
        tasks = [t for t in (self._task, *self._lookups) if t is not None]
        self._task = None
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
        cdp, self._cdp = self._cdp, None
        if cdp is not None:
            with contextlib.suppress(PlaywrightError):
                await cdp.detach()

    def watch(self, context: BrowserContext) -> None:
        """Attribute the crashes of ``context``'s pages (every page it will ever have)."""
        context.on("page", self._on_page)

    async def reason(self, page: Page) -> ErrorText | None:
        """Why ``page`` crashed, if the guard stopped its renderer; None otherwise.

        The page's crash and its targets' reach us on two CDP sessions in either order, so a
        crash near a kill waits (``ATTRIBUTION_S`` at most) for its context's news."""
        crashed = self._crashes.get(page)
        if crashed is None or abs(crashed - self._last_kill) > ATTRIBUTION_S:
            return None  # no crash, or no kill near it: never ours
        deadline = time.monotonic() + ATTRIBUTION_S
        while not self._stopped(page, crashed):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._news.wait(), remaining)
        return renderer_memory_passed(self.limit_mb)

    def _stopped(self, page: Page, crashed: float) -> bool:
        context = self._context_ids.get(page.context)
        killed = self._killed_contexts.get(context) if context is not None else None
        return killed is not None and abs(crashed - killed) <= ATTRIBUTION_S

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

    # ----- events and the watch -----------------------------------------------------------------

    def _on_page(self, page: Page) -> None:
        page.on("crash", self._on_crash)
        if page.context not in self._context_ids:
            task = asyncio.create_task(self._learn_context_id(page))
            self._lookups.add(task)
            task.add_done_callback(self._lookups.discard)

    async def _learn_context_id(self, page: Page) -> None:
        with contextlib.suppress(PlaywrightError):  # a page closed at once: nothing to attribute
            session = await page.context.new_cdp_session(page)
            try:
                info = await session.send("Target.getTargetInfo")
            finally:
                with contextlib.suppress(PlaywrightError):
                    await session.detach()
            self._context_ids[page.context] = info["targetInfo"]["browserContextId"]
            self._tell()  # a reason() may be waiting for this very context

    def _tell(self) -> None:
        """Wake every reason() waiting for news."""
        news, self._news = self._news, asyncio.Event()
        news.set()

    def _on_crash(self, page: Page) -> None:
        self._crashes[page] = time.monotonic()

    def _on_target(self, event: dict[str, Any]) -> None:
        info = event.get("targetInfo") or {}
        if "targetId" in info and "browserContextId" in info:
            self._target_contexts[info["targetId"]] = info["browserContextId"]

    def _on_target_destroyed(self, event: dict[str, Any]) -> None:
        self._target_contexts.pop(event.get("targetId", ""), None)

    def _on_target_crashed(self, event: dict[str, Any]) -> None:
        now = time.monotonic()
        context = self._target_contexts.get(event.get("targetId", ""))
        if event.get("status") == KILLED and now - self._last_kill <= ATTRIBUTION_S and context is not None:
            self._killed_contexts[context] = now
        self._tell()

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
                    self._last_kill = time.monotonic()
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                        self.stopped += 1
            await asyncio.sleep(INTERVAL_S)
