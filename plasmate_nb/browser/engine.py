"""The engine: one Chromium (launched or connected), one context per session, all of its
traffic through one egress gate (docs/contract.md#browser-engine).

If the browser process goes away, its sessions stay registered (their traces remain
readable) but every action on them fails with ``Browser connection lost; …``; the next
``open`` relaunches (or reconnects to) the browser.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import sys
import uuid
from collections.abc import Awaitable
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import Browser, BrowserContext, Playwright, ProxySettings, async_playwright
from playwright.async_api import Error as PlaywrightError

from plasmate_nb.browser.config import EngineConfig
from plasmate_nb.browser.created import CLOSE_TIMEOUT_SECONDS, within
from plasmate_nb.browser.discovery import LAUNCH_ARGS, find_chromium
from plasmate_nb.browser.egress import (
    NOT_GATED,
    PROXY_BYPASS,
    SWITCHES_MISSING,
    SWITCHES_UNCHECKED,
    BrowserNotGated,
    EgressGate,
    chromium_args,
    missing_switches,
)
from plasmate_nb.browser.errors import EngineError
from plasmate_nb.browser.memory import RendererMemoryGuard
from plasmate_nb.browser.messages import describe
from plasmate_nb.browser.page_loads import PageLoads
from plasmate_nb.browser.policy import UrlPolicy
from plasmate_nb.browser.session import BrowserSession
from plasmate_nb.errors import failed_to_fetch, max_sessions_reached, reduce_url, session_not_found
from plasmate_nb.som import register_engine
from plasmate_nb.trace import TraceLog

LOCAL_ENDPOINT_NOTE = (
    "plasmate-nb: note: the browser at PLASMATE_NB_BROWSER_ENDPOINT sends its traffic through the egress "
    "gate (a per-context proxy); to leave it no way around the gate, launch it with: "
)
REMOTE_WARNING = (
    "plasmate-nb: warning: the browser at PLASMATE_NB_BROWSER_ENDPOINT is not on this machine, so it "
    "cannot reach the egress gate; the outbound URL policy is then the remote side's responsibility."
)


class Engine:
    def __init__(self, config: EngineConfig | None = None) -> None:
        self.config = config or EngineConfig()
        self.policy = UrlPolicy(
            self.config.allow_private_network,
            tuple(self.config.allowed_hosts),
            tuple(self.config.allowed_networks),
        )
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self.gate: EgressGate | None = None
        self._fetch_only_gate: EgressGate | None = None  # the engine's own fetches, browser not gated
        self.memory_guard: RendererMemoryGuard | None = None  # launched browsers with a bound
        self._context_proxy: ProxySettings | None = None  # per-context proxy (remote browsers)
        self._sessions: dict[str, BrowserSession] = {}
        self._opening = 0  # slots reserved by opens still creating their context
        self._start_lock = asyncio.Lock()
        self._reaper: asyncio.Task[None] | None = None
        self._noted: set[str] = set()  # notes to the operator already printed (not again per reconnect)
        self.page_loads = PageLoads(self.config.max_sessions)  # the stateless tools' loads at once

    def __repr__(self) -> str:
        return f"Engine(sessions={len(self._sessions)}, max_sessions={self.config.max_sessions})"

    # ----- browser lifecycle -------------------------------------------------------------------

    async def start(self) -> None:
        """Launch or connect the browser if it is not running (idempotent)."""
        async with self._start_lock:
            if self._browser is not None and self._browser.is_connected():
                return
            if self._playwright is None:
                self._playwright = await async_playwright().start()
            if self.gate is None and self._gated():
                self.gate = EgressGate(self.policy, resolver=self.config.resolver)
                await self.gate.start()
            browser = await self._connect_or_launch(self._playwright)
            await register_engine(browser)  # before any context: one made meanwhile could miss it
            if self.gate is not None:
                try:
                    await self._check_gated(browser)
                    if self.config.endpoint:  # not launched here: was it started as the gate needs?
                        await self._check_switches(browser)
                except BaseException:  # never a browser left running that goes around the gate
                    with contextlib.suppress(Exception):
                        async with asyncio.timeout(CLOSE_TIMEOUT_SECONDS):
                            await browser.close()
                    raise
            if self.memory_guard is not None:  # the last browser's, which went away
                await self.memory_guard.aclose()
                self.memory_guard = None
            limit = self.config.renderer_memory_mb
            if not self.config.endpoint and limit:
                guard = RendererMemoryGuard(browser, limit)
                try:
                    await guard.start()
                except BaseException:  # never a browser left running unguarded
                    await guard.aclose()
                    with contextlib.suppress(Exception):
                        async with asyncio.timeout(CLOSE_TIMEOUT_SECONDS):
                            await browser.close()
                    raise
                self.memory_guard = guard
            browser.on("disconnected", self._on_disconnected)
            self._browser = browser
            if self.config.idle_timeout and self._reaper is None:
                self._reaper = asyncio.create_task(self._reap_idle())

    async def fetch_gate(self) -> EgressGate:
        """The gate the engine's own HTTP fetches go through (docs/contract.md#small-document-fetches):
        the browser's, else one of their own. A browser on another machine cannot reach a gate here,
        but these fetches leave from this machine: they are gated whatever the browser is."""
        await self.start()
        if self.gate is not None:
            return self.gate
        async with self._start_lock:
            if self._fetch_only_gate is None:
                gate = EgressGate(self.policy, resolver=self.config.resolver)
                await gate.start()
                self._fetch_only_gate = gate
            return self._fetch_only_gate

    async def _connect_or_launch(self, playwright: Playwright) -> Browser:
        endpoint = self.config.endpoint
        if endpoint:
            gate = self.gate
            self._context_proxy = (
                {"server": gate.server, "bypass": PROXY_BYPASS} if gate is not None else None
            )
            if endpoint.startswith(("ws://", "wss://")):
                return await playwright.chromium.connect(endpoint)
            return await playwright.chromium.connect_over_cdp(endpoint)
        assert self.gate is not None
        executable = self.config.executable or find_chromium().executable
        return await playwright.chromium.launch(
            executable_path=executable,
            headless=self.config.headless,
            args=[*LAUNCH_ARGS, *chromium_args()],
            proxy={"server": self.gate.server, "bypass": PROXY_BYPASS},
        )

    async def _check_gated(self, browser: Browser) -> None:
        """:class:`BrowserNotGated` unless a page of ``browser`` reaches the gate. A launch wrapper,
        a flags file or a managed policy can set a proxy mode Chromium prefers to the one it was
        given (``--no-proxy-server``, a PAC script): nothing it sent would then be checked."""
        assert self.gate is not None
        token = uuid.uuid4().hex
        options: dict[str, Any] = {"proxy": self._context_proxy} if self._context_proxy is not None else {}
        context = await within(browser.new_context(**options), self.config.browser_timeout)
        try:
            page = await within(context.new_page(), self.config.browser_timeout)
            with contextlib.suppress(PlaywrightError):
                url, timeout = self.gate.probe_url(token), self.config.navigation_timeout * 1000
                await page.goto(url, wait_until="commit", timeout=timeout)  # the request is what counts
        finally:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(CLOSE_TIMEOUT_SECONDS):
                    await context.close()
        if not self.gate.probed(token):
            raise BrowserNotGated(NOT_GATED)

    async def _check_switches(self, browser: Browser) -> None:
        """:class:`BrowserNotGated` when a browser this engine did not launch lacks switches the
        gate relies on. Only a browser started with ``--enable-automation`` says how it was
        started (Playwright does not add it); for any other the operator is told it was not checked."""
        try:
            async with asyncio.timeout(self.config.browser_timeout):
                cdp = await browser.new_browser_cdp_session()
                try:
                    answer = await cdp.send("Browser.getBrowserCommandLine")
                finally:
                    with contextlib.suppress(PlaywrightError):
                        await cdp.detach()
        except (PlaywrightError, TimeoutError):  # it does not say, or does not answer
            self._note(SWITCHES_UNCHECKED)
            return
        missing = missing_switches(list(answer.get("arguments") or []))
        if missing:
            raise BrowserNotGated(SWITCHES_MISSING + " ".join(missing))

    def _gated(self) -> bool:
        """A launched browser is always gated. A remote one only when it runs on this machine
        (it can reach the gate on 127.0.0.1); otherwise its own egress controls apply."""
        endpoint = self.config.endpoint
        if not endpoint:
            return True
        if _is_loopback(urlsplit(endpoint).hostname):
            self._note(LOCAL_ENDPOINT_NOTE + " ".join(chromium_args()))
            return True
        self._note(REMOTE_WARNING)
        return False

    def _note(self, text: str) -> None:
        """Tell the operator ``text`` on stderr, once per engine: a reconnect repeats nothing."""
        if text not in self._noted:
            self._noted.add(text)
            print(text, file=sys.stderr)

    def _on_disconnected(self, browser: Browser) -> None:
        if browser is not self._browser:
            return
        self._browser = None
        for session in self._sessions.values():
            session.mark_lost()

    async def aclose(self) -> None:
        reaper, self._reaper = self._reaper, None
        if reaper is not None:
            # Python 3.11's wait_for drops a cancellation that arrives just as the call it awaits
            # completes (a session's close, say): the reaper also stops when it sees it is no
            # longer the engine's, and this wait is bounded either way.
            reaper.cancel()
            await asyncio.wait({reaper}, timeout=CLOSE_TIMEOUT_SECONDS)
        for session_id in list(self._sessions):
            await self.close_session(session_id)
        guard, self.memory_guard = self.memory_guard, None
        if guard is not None:
            await guard.aclose()
        browser, self._browser = self._browser, None
        if browser is not None:  # every step bounded: a wedged browser or driver must not hang us
            with contextlib.suppress(Exception):
                async with asyncio.timeout(CLOSE_TIMEOUT_SECONDS):
                    await browser.close()
        playwright, self._playwright = self._playwright, None
        if playwright is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(CLOSE_TIMEOUT_SECONDS):
                    await playwright.stop()
        for gate in (self.gate, self._fetch_only_gate):
            if gate is not None:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(CLOSE_TIMEOUT_SECONDS):
                        await gate.aclose()
        self.gate = self._fetch_only_gate = None

    async def __aenter__(self) -> Engine:
        await self.start()
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()

    # ----- contexts ------------------------------------------------------------------------------

    async def _new_context(self, **options: Any) -> BrowserContext:
        """A new context; ``options`` are extra Playwright context options (``java_script_enabled``, ``viewport``).

        ``TimeoutError`` after ``browser_timeout`` (a wedged browser; see :mod:`.created`)."""
        await self.start()
        assert self._browser is not None
        if self._context_proxy is not None:
            options["proxy"] = self._context_proxy
        browser = self._browser

        def create() -> Awaitable[BrowserContext]:
            return within(browser.new_context(accept_downloads=False, **options), self.config.browser_timeout)

        if self.memory_guard is not None:
            return await self.memory_guard.new_context(create, self.config.browser_timeout)
        return await create()

    # ----- sessions ------------------------------------------------------------------------------

    async def open(self, url: str, trace: bool = False) -> BrowserSession:
        """A new session at ``url``; a failed open leaves no session behind."""
        limit = self.config.max_sessions
        if len(self._sessions) + self._opening >= limit:
            raise EngineError(max_sessions_reached(limit))
        self._opening += 1
        try:
            context = await self._new_context()
            session = BrowserSession(
                session_id=str(uuid.uuid4()),
                trace=TraceLog(enabled=trace),
                context=context,
                config=self.config,
                policy=self.policy,
                gate=self.gate,
                memory_guard=self.memory_guard,
            )
            try:
                await session.start_page()
            except BaseException:
                await session.close()
                raise
            self._sessions[session.id] = session
        except EngineError:
            raise
        except Exception as error:
            raise EngineError(
                failed_to_fetch(reduce_url(url), describe(error, self.config.action_timeout))
            ) from None
        finally:
            self._opening -= 1
        try:
            await session.navigate(url)
        except BaseException:
            self._sessions.pop(session.id, None)
            await session.close()
            raise
        session.touch()
        return session

    def get(self, session_id: str) -> BrowserSession:
        session = self._sessions.get(session_id)
        if session is None:
            raise EngineError(session_not_found(session_id))
        session.touch()
        return session

    def sessions(self) -> list[BrowserSession]:
        return list(self._sessions.values())

    async def close_session(self, session_id: str) -> None:
        session = self._sessions.pop(session_id, None)
        if session is None:
            raise EngineError(session_not_found(session_id))
        await session.close()

    def status(self) -> dict[str, Any]:
        """The ``session_status`` payload (docs/contract.md#answers, field order). Does not touch sessions."""
        sessions = sorted(self._sessions.values(), key=lambda s: s.id)
        return {
            "active_sessions": len(sessions),
            "max_sessions": self.config.max_sessions,
            "available_sessions": max(0, self.config.max_sessions - len(sessions)),
            "oldest_session_age_ms": max((s.age_ms for s in sessions), default=None),
            "longest_idle_ms": max((s.idle_ms for s in sessions), default=None),
            "sessions": [_session_row(s) for s in sessions],
        }

    # ----- idle reaper ---------------------------------------------------------------------------

    async def _reap_idle(self) -> None:
        timeout = float(self.config.idle_timeout or 0)
        period = max(0.05, min(timeout / 2, 5.0))
        while True:
            await asyncio.sleep(period)
            task = asyncio.current_task()
            if self._reaper is not task or (task is not None and task.cancelling()):
                return  # aclose took it away, or a cancellation (at loop teardown, say) was lost
            for session in list(self._sessions.values()):
                # A session still opening (no page yet) is never idle.
                if session.som is None or session.idle_ms / 1000 <= timeout or session.lock.locked():
                    continue
                async with session.lock:
                    if session.idle_ms / 1000 > timeout and self._sessions.get(session.id) is session:
                        self._sessions.pop(session.id, None)
                        await session.close()


def _is_loopback(host: str | None) -> bool:
    if host in ("localhost", None):
        return host is not None
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _session_row(session: BrowserSession) -> dict[str, Any]:
    som = session.som.data if session.som is not None else None
    meta = (som or {}).get("meta") or {}
    has_page = som is not None
    return {
        "session_id": session.id,
        "url": session.url if has_page else None,
        "title": som.get("title") if som is not None else None,
        "age_ms": session.age_ms,
        "idle_ms": session.idle_ms,
        "has_page": has_page,
        "has_structured_data": bool(som and som.get("structured_data")),
        "has_effective_html": has_page,  # our "effective HTML" is the live DOM
        "node_count": meta.get("element_count") if has_page else None,
        "html_bytes": meta.get("html_bytes") if has_page else None,
        "effective_html_bytes": meta.get("html_bytes") if has_page else None,
        "som_bytes": len(session.som.text.encode()) if session.som is not None else None,
        "element_count": meta.get("element_count") if has_page else None,
        "interactive_count": meta.get("interactive_count") if has_page else None,
    }
