"""The renderer memory bound: no renderer process may grow past ``renderer_memory_mb``.

Why: a page's memory grows with what it builds, not with what it sends. A gzip stream of a few
megabytes inflates to gigabytes of DOM: unguarded, Chromium passed 6 GB before the navigation
timed out, and on an analyst's machine that ends with the kernel's OOM killer choosing among the
notebook, its kernel and the browser. Chromium has no switch that bounds a renderer, and CDP's
network counters see only what the parser has consumed (a byte bound on them would have to be
tiny to hold memory), so the guard watches the processes themselves.

How: every ``INTERVAL_S`` it asks the browser for its renderer processes (CDP
``SystemInfo.getProcessInfo``) and reads each one's resident memory; one past the bound is
killed (SIGTERM, then SIGKILL if it lingers). The pages it rendered crash and are replaced at their last good URL, as after any crash.
Which session that was: Chromium reports each target of the killed process as crashed with
status ``killed`` and the signal (target discovery on the browser's CDP session), each target
names its browser context, and a renderer serves one context, so each kill claims the first
context reported killed by its signal after it. Each of our contexts' ids is the one Chromium's context list gained while it
was made. A page whose crash comes within ``ATTRIBUTION_S`` of its context's claimed kill was
stopped by the guard, and the call that waited on it can say why (``reason``); any other crash
(another status, another's kill) is a crash. Only a browser this process launched is guarded,
and only a renderer that descends from this process is ever killed.

What it does not bound (docs/contract.md#renderer-memory-bound): each renderer is bounded on its
own, so a page whose cross-site frames run in several renderers may hold the bound in each; and
memory a page makes other processes hold (its context's in-memory storage, blobs, WebGL in the
GPU process) is not a renderer's.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import signal
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import psutil
from playwright.async_api import Browser, BrowserContext, CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from plasmate_nb.errors import ErrorText, renderer_memory_passed
from plasmate_nb.som import crashed_at

INTERVAL_S = 0.25
ATTRIBUTION_S = 2.0  # a killed renderer's targets and pages report their crash within this
MB = 2**20
KILLED = "killed"  # Target.targetCrashed's status for a renderer ended by a signal
KILLS_KEPT = 64
ESCALATE_S = 1.0


async def stopped_reason(guard: RendererMemoryGuard | None, page: Page) -> ErrorText | None:
    """``guard.reason(page)``, or None when there is no guard (a browser behind an endpoint, no bound)."""
    return await guard.reason(page) if guard is not None else None


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
        # Each kill, newest last, as [when, the context it claimed, the signal]: a renderer serves
        # one context, so the first context reported killed by that signal after it is that kill's.
        self._kills: collections.deque[list[Any]] = collections.deque(maxlen=KILLS_KEPT)
        self._terminated: dict[int, float] = {}  # pid → when it was sent SIGTERM
        self._target_contexts: dict[str, str] = {}  # targetId → browserContextId, from discovery
        self._reports: dict[str, tuple[float, bool]] = {}  # browserContextId → (when, killed by us)
        self._context_ids: weakref.WeakKeyDictionary[BrowserContext, str] = weakref.WeakKeyDictionary()
        self._creating = asyncio.Lock()
        self._news = asyncio.Event()  # set (and replaced) by every crash report

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
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.wait({task})
        cdp, self._cdp = self._cdp, None
        if cdp is not None:
            with contextlib.suppress(PlaywrightError):
                await cdp.detach()

    async def new_context(
        self, create: Callable[[], Awaitable[BrowserContext]], timeout: float
    ) -> BrowserContext:
        """``create()``'s context, watched: its id is the one Chromium's context list gained
        meanwhile (asked of the browser, never of a renderer that may be too busy to answer).
        ``TimeoutError`` when the browser does not answer within ``timeout``, as ``create`` does."""
        async with contextlib.AsyncExitStack() as held:
            async with asyncio.timeout(timeout):  # a wedged browser: waiting in line counts too
                await held.enter_async_context(self._creating)
                before = await self._context_list()
            context = await create()
            gained: set[str] = set()
            with contextlib.suppress(TimeoutError, PlaywrightError):  # then its crashes are plain crashes
                async with asyncio.timeout(timeout):
                    gained = (await self._context_list()) - before
        if len(gained) == 1:
            self._context_ids[context] = gained.pop()
        return context

    async def reason(self, page: Page) -> ErrorText | None:
        """Why ``page`` crashed, if the guard stopped its renderer; None otherwise.

        The page's crash and its context's report reach us on two CDP sessions in either order,
        so a crash near a kill waits (``ATTRIBUTION_S`` at most) for the report. The page's crash
        is known when the engine watched it (``som.watch_crashes``: every page it makes)."""
        crashed = crashed_at(page)
        context = self._context_ids.get(page.context)
        if (
            crashed is None
            or context is None
            or not any(abs(crashed - k[0]) <= ATTRIBUTION_S for k in self._kills)
        ):
            return None  # no crash, an unknown context, or no kill near the crash: never ours
        deadline = time.monotonic() + ATTRIBUTION_S
        while True:
            when, killed = self._reports.get(context, (-float("inf"), False))
            if abs(crashed - when) <= ATTRIBUTION_S:
                return renderer_memory_passed(self.limit_mb) if killed else None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(remaining):
                    await self._news.wait()

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

    async def _context_list(self) -> set[str]:
        assert self._cdp is not None
        return set((await self._cdp.send("Target.getBrowserContexts")).get("browserContextIds", []))

    def _on_target(self, event: dict[str, Any]) -> None:
        info = event.get("targetInfo") or {}
        if "targetId" in info and "browserContextId" in info:
            self._target_contexts[info["targetId"]] = info["browserContextId"]

    def _on_target_destroyed(self, event: dict[str, Any]) -> None:
        self._target_contexts.pop(event.get("targetId", ""), None)

    def _on_target_crashed(self, event: dict[str, Any]) -> None:
        now = time.monotonic()
        context = self._target_contexts.get(event.get("targetId", ""))
        if context is not None:
            killed = event.get("status") == KILLED and self._claim(context, now, event.get("errorCode"))
            self._reports[context] = (now, killed)
        news, self._news = self._news, asyncio.Event()
        news.set()

    def _claim(self, context: str, now: float, signo: Any) -> bool:
        """Whether a kill of ours, made just before, is this context's (claiming it if unclaimed)."""
        recent = [kill for kill in self._kills if now - kill[0] <= ATTRIBUTION_S and kill[2] == signo]
        if any(kill[1] == context for kill in recent):
            return True  # another target of the same renderer
        unclaimed = next((kill for kill in recent if kill[1] is None), None)
        if unclaimed is None:
            return False  # killed, but not by us
        unclaimed[1] = context
        return True

    async def _watch(self) -> None:
        assert self._cdp is not None
        while True:
            try:
                info = await self._cdp.send("SystemInfo.getProcessInfo")
            except PlaywrightError:
                return  # the browser is gone: nothing left to guard
            self._renderers = [p["id"] for p in info.get("processInfo", []) if p.get("type") == "renderer"]
            self._terminated = {pid: t for pid, t in self._terminated.items() if pid in self._renderers}
            for pid in renderers_over(self.renderer_sizes(), self.limit_mb):
                if self.is_ours(pid):
                    self._stop(pid)
            await asyncio.sleep(INTERVAL_S)

    def _stop(self, pid: int) -> None:
        """SIGTERM first: the kernel's OOM killer and operators kill with SIGKILL, so Chromium's
        report (its errorCode is the signal) tells our stops from theirs. SIGKILL when a
        renderer outlives its SIGTERM by ``ESCALATE_S``."""
        now = time.monotonic()
        terminated = self._terminated.get(pid)
        if terminated is not None and now - terminated < ESCALATE_S:
            return
        signo = signal.SIGTERM if terminated is None else signal.SIGKILL
        self._kills.append([now, None, int(signo)])
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signo)
            if terminated is None:
                self.stopped += 1
                self._terminated[pid] = now
