"""One browser session: an isolated context with exactly one live page, and its last good state.

Every action runs on the live page through Playwright's real input, bounded by the
configured timeouts, then waits (bounded) for the page to settle and recompiles the SOM.
On any failure the last good state (``url`` + ``som``) is kept and the session stays
usable; if the live page wandered off (a blocked or failed navigation), it is taken back
to the last good URL.

Hostile pages cannot hang a call: dialogs are dismissed, downloads refused, popups closed,
and when an action or ``evaluate`` times out on a page whose script no longer answers (an
endless loop), the page is replaced by a fresh one in the same context (cookies and storage
survive) which goes back to the last good URL. A crashed page is replaced the same way by the
next call; an action then refuses to act on the reloaded page its caller has not seen (once,
or until a navigation lands when it could not be loaded again).

Error texts (:mod:`plasmate_nb.errors`) and their check order follow docs/contract.md#messages-the-engine-produces: page
presence, the refusal after a crash, then ``Element not found: <id>`` (id not in the latest SOM, for every element
action), the element-kind checks, ``Element not found in DOM``, then execution. Privacy: see
:mod:`plasmate_nb.browser.messages`.

The tools layer holds :attr:`BrowserSession.lock` around each call; methods here never take it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import BrowserContext, Locator, Page
from playwright.async_api import Error as PlaywrightError

from plasmate_nb.browser import cookies as cookie_jar
from plasmate_nb.browser.config import EngineConfig
from plasmate_nb.browser.created import close_quietly, within
from plasmate_nb.browser.egress import EgressGate
from plasmate_nb.browser.errors import ActionError
from plasmate_nb.browser.evaluate_result import evaluate_answer_text, map_evaluate_result
from plasmate_nb.browser.memory import RendererMemoryGuard, stopped_reason
from plasmate_nb.browser.messages import (
    compile_error_detail,
    describe,
    describe_js_exception,
    is_closed,
    is_timeout,
)
from plasmate_nb.browser.navigation import (
    NavigationWatch,
    answer_dialog,
    goto,
    off_the_web,
    settle,
)
from plasmate_nb.browser.policy import UrlPolicy
from plasmate_nb.errors import (
    BROWSER_CONNECTION_LOST,
    ELEMENT_NOT_IN_DOM,
    NO_PAGE_LOADED,
    NOT_A_SELECT,
    NOT_TOGGLEABLE,
    PAGE_CLOSED,
    PAGE_CRASHED,
    PAGE_NOT_REOPENED,
    ErrorText,
    action_failed,
    cookie_operation_failed,
    element_does_not_support,
    element_not_found,
    evaluate_javascript_error,
    evaluate_result_too_large,
    navigation_failed,
    option_not_found,
    page_not_reloaded,
    page_reloaded,
    pipeline_error,
    timeout_after,
)
from plasmate_nb.som import (
    NOT_CONNECTED,
    CompiledSom,
    SomCompileError,
    compile_page,
    crashed_at,
    prepare_actions,
    watch_crashes,
)
from plasmate_nb.trace import PageState, TraceLog
from plasmate_nb.trace.compact import utf8_len
from plasmate_nb.trace.som_walk import find_element

SCROLL_SCRIPT = """([direction, pixels]) => {
  const root = document.scrollingElement || document.documentElement;
  if (direction === "top") window.scrollTo(0, 0);
  else if (direction === "bottom") window.scrollTo(0, root.scrollHeight);
  else window.scrollBy(0, direction === "up" ? -pixels : pixels);
}"""
SCROLL_POSITION = "() => (document.scrollingElement || document.documentElement).scrollTop || 0"
TOGGLE_KIND = """el => el.tagName === "DETAILS" ? "details"
  : el.tagName === "INPUT" && (el.type === "checkbox" || el.type === "radio") ? el.type : \"\""""
FLIP_DETAILS = "el => { el.open = !el.open; }"  # Chromium fires the `toggle` event itself
# The index of the option named ``wanted`` (-1: none), or null when the element is no <select>.
OPTION_INDEX = """(el, wanted) => {
  if (el.tagName !== "SELECT") return null;
  for (let i = 0; i < el.options.length; i++) {
    const o = el.options[i];
    if (o.value === wanted || o.text === wanted || o.label === wanted) return i;
  }
  return -1;
}"""
CARET_TO_END = """el => {
  el.focus();
  if (typeof el.value === "string") {
    try { el.setSelectionRange(el.value.length, el.value.length); return true; } catch (e) { return false; }
  }
  return false;
}"""
ANSWERS_PROBE_SECONDS = 1.0  # how long a page may take to answer "1" before it counts as hung


def evaluate_wrapper(expression: str) -> str:
    """docs/contract.md#answers: objects come back JSON-stringified. Unlike the reference, a promise
    is awaited first (the page is live), so ``fetch(...).then(...)`` gives its value."""
    return (
        "(async function(){ var __r = await (" + expression + "); "
        "return typeof __r==='object' && __r!==null ? JSON.stringify(__r) : __r; })()"
    )


def _catching(script: str) -> str:
    """``script``, with an exception it throws (or a rejection) caught in the page and returned as
    ``{thrown, name, message}`` (docs/contract.md#javascript-exceptions-in-evaluate): a name and
    message only for an Error-like value, the message cut to 1,000 characters before it crosses
    the wire; ``thrown`` is the value's type. Reading a hostile value's properties cannot escape."""
    return (
        "(async function(){ try { return await (" + script + "); } catch (e) { "
        "var t = e === null ? 'null' : typeof e, n = null, m = null; "
        "try { if ((t === 'object' || t === 'function') && typeof e.name === 'string' "
        "&& typeof e.message === 'string') { n = e.name.slice(0, 100); m = e.message.slice(0, 1000); } } "
        "catch (_) { n = null; m = null; } "
        "return {thrown: t, name: n, message: m}; } })()"
    )


class BrowserSession:
    def __init__(
        self,
        *,
        session_id: str,
        trace: TraceLog,
        context: BrowserContext,
        config: EngineConfig,
        policy: UrlPolicy,
        gate: EgressGate | None,
        memory_guard: RendererMemoryGuard | None = None,
    ) -> None:
        self.id = session_id
        self.trace = trace
        self.lock = asyncio.Lock()
        self.url: str | None = None
        self.som: CompiledSom | None = None
        self.created_at = time.time()
        self._created_monotonic = time.monotonic()
        self.last_accessed = time.monotonic()
        self._context = context
        self._config = config
        self._policy = policy
        self._gate = gate
        self._memory_guard = memory_guard
        self._page: Page | None = None
        self._watch: NavigationWatch | None = None
        self._lost = False
        self._opening_page = False
        # What the next action answers instead of acting after the page crashed (page_reloaded or,
        # until a navigation lands, page_not_reloaded): its caller has not seen the page since.
        self._after_crash: ErrorText | None = None
        self._after_crash_reloaded = False
        context.on("page", self._on_new_page)

    def __repr__(self) -> str:  # no URL: paths and queries may be private
        return f"BrowserSession(id={self.id!r}, has_page={self.som is not None})"

    # ----- state -------------------------------------------------------------------------

    @property
    def age_ms(self) -> int:
        return int((time.monotonic() - self._created_monotonic) * 1000)

    @property
    def idle_ms(self) -> int:
        return int((time.monotonic() - self.last_accessed) * 1000)

    @property
    def lost(self) -> bool:
        return self._lost

    def touch(self) -> None:
        self.last_accessed = time.monotonic()

    def page_state(self) -> PageState:
        if self.som is None:
            return PageState(None, None, None)
        return PageState(self.url, self.som.text, self.som.data)

    def view(self) -> dict[str, Any]:
        data = self.som.data if self.som is not None else {}
        return {"regions": data.get("regions", []), "title": data.get("title", ""), "url": self.url}

    # ----- lifecycle (engine side) ---------------------------------------------------------

    async def start_page(self) -> None:
        self._opening_page = True  # our own page: the popup closer must leave it alone
        try:
            page = await within(self._context.new_page(), self._config.browser_timeout)
        finally:
            self._opening_page = False
        page.on("dialog", answer_dialog)
        watch_crashes(page)
        page.set_default_timeout(self._config.action_timeout * 1000)
        page.set_default_navigation_timeout(self._config.navigation_timeout * 1000)
        self._watch = NavigationWatch(page, self._gate)
        self._page = page

    def mark_lost(self) -> None:
        """The browser went away: keep the state readable, refuse every action."""
        self._lost = True

    async def close(self) -> None:
        som, self.som, self._page = self.som, None, None
        if som is not None:
            await som.dispose()  # never waits: a cancelled caller still reaches the closing below
        await close_quietly(self._context)

    async def _on_new_page(self, page: Page) -> None:
        if self._opening_page or page is self._page:
            return
        await close_quietly(page)  # popups and new tabs: one page per session

    # ----- actions -------------------------------------------------------------------------

    async def page_unchanged(self) -> bool:
        """Whether the live page still compiles to the SOM this session holds: the page's own
        scripts (timers, observers) may have changed it since the last action compiled it. Reads
        only: the held state, and so the trace's chain of states, stay as they are; a page that
        cannot be compiled now counts as changed."""
        self._require_som()
        page = self._page
        if page is None or crashed_at(page) is not None or self._after_crash is not None:
            # Not the page the held state was read from; the next action replaces it (the proof
            # replaces nothing, so the trace's chain of states stays whole).
            return False
        try:
            # A full walk, never an incremental one: this is the proof replay execution rests on,
            # so it must not depend on what the mutation observer saw.
            fresh = await compile_page(page, timeout=self._config.action_timeout, incremental=False)
        except (SomCompileError, PlaywrightError, TimeoutError):
            return False
        with contextlib.suppress(Exception):
            await fresh.dispose()
        return self.som is not None and fresh.text == self.som.text and page.url == self.url

    async def navigate(self, url: str) -> None:
        page = await self._live_page()
        try:
            await goto(
                page,
                url,
                policy=self._policy,
                watch=self._page_watch,
                timeout=self._config.navigation_timeout,
                memory_guard=self._memory_guard,
            )
        except ActionError:
            await self._restore(page)
            raise
        self._after_crash = None  # a new page: nothing of the lost one is acted on
        await self._commit(page)

    async def click(self, element_id: str) -> None:
        page, handle = await self._element(element_id)
        await self._perform(page, "Click", lambda: handle.click(timeout=self._action_ms))

    async def type_text(self, element_id: str, text: str, append: bool = False) -> None:
        page = await self._page_to_act_on()
        element = self._som_element(element_id)
        if "type" not in (element.get("actions") or []):
            raise ActionError(element_does_not_support("type", element_id))
        handle = await self._dom_node(element_id)

        async def type_in() -> None:
            if not append:
                await handle.fill(text, timeout=self._action_ms)
                return
            if not await handle.evaluate(CARET_TO_END, timeout=self._action_ms):
                await handle.press("End", timeout=self._action_ms)
            await page.keyboard.type(text)

        await self._perform(page, "Type", type_in, redact=(text,))

    async def select_option(self, element_id: str, value: str) -> None:
        page, handle = await self._element(element_id)
        index = await self._ask(handle, OPTION_INDEX, value)
        if index is None:
            raise ActionError(NOT_A_SELECT)
        if index < 0:
            raise ActionError(option_not_found(utf8_len(value)))
        await self._perform(
            page,
            "Select",
            lambda: handle.select_option(index=index, timeout=self._action_ms),
            redact=(value,),
        )

    async def scroll(
        self, direction: str = "down", pixels: int = 300, element_id: str | None = None
    ) -> float:
        if element_id is not None:
            page, handle = await self._element(element_id)
            await self._perform(
                page, "Scroll", lambda: handle.scroll_into_view_if_needed(timeout=self._action_ms)
            )
        else:
            page = await self._page_to_act_on()
            await self._perform(page, "Scroll", lambda: page.evaluate(SCROLL_SCRIPT, [direction, pixels]))
        try:
            async with asyncio.timeout(self._config.action_timeout):
                position = await page.evaluate(SCROLL_POSITION)
        except (PlaywrightError, TimeoutError):
            position = 0
        return float(position)

    async def toggle(self, element_id: str) -> None:
        page, handle = await self._element(element_id)
        kind = await self._ask(handle, TOGGLE_KIND)
        if kind == "checkbox":
            operation = lambda: handle.click(timeout=self._action_ms)  # noqa: E731
        elif kind == "radio":
            operation = lambda: handle.check(timeout=self._action_ms)  # noqa: E731
        elif kind == "details":
            operation = lambda: handle.evaluate(FLIP_DETAILS, timeout=self._action_ms)  # noqa: E731
        else:
            raise ActionError(NOT_TOGGLEABLE)
        await self._perform(page, "Toggle", operation)

    async def clear(self, element_id: str) -> None:
        page, handle = await self._element(element_id)
        await self._perform(page, "Clear", lambda: handle.fill("", timeout=self._action_ms))

    async def evaluate(self, expression: str) -> Any:
        page = await self._page_to_act_on()
        limit = self._config.evaluate_result_limit
        result: list[Any] = []

        async def run() -> None:
            script = self._refusing_oversize(_catching(evaluate_wrapper(expression)), limit)
            try:
                async with asyncio.timeout(self._config.evaluate_timeout):
                    value = await page.evaluate(script)
            except PlaywrightError as error:
                detail = compile_error_detail(error)
                if detail is None:
                    raise
                exception = describe_js_exception("SyntaxError", detail, expression)
                raise ActionError(evaluate_javascript_error(exception, compiling=True)) from None
            if isinstance(value, dict) and "thrown" in value:  # see _catching
                name = value.get("name") if isinstance(value.get("name"), str) else None
                message = value.get("message") if name is not None else value.get("thrown")
                message = message if isinstance(message, str) else None
                exception = describe_js_exception(name, message, expression)
                raise ActionError(evaluate_javascript_error(exception))
            result.append(value)

        await self._perform(page, "Evaluate", run, timeout=self._config.evaluate_timeout)
        refused = isinstance(
            result[0], dict
        )  # the wrapper turns every object into JSON text: a dict is the refusal
        value = None if refused else map_evaluate_result(result[0])
        # Measured as sent: JSON, UTF-8, a lone surrogate as its \uXXXX escape (server/app.py).
        if refused or len(evaluate_answer_text(value).encode("utf-8", "backslashreplace")) > limit:
            raise ActionError(evaluate_result_too_large(limit))
        return value

    @staticmethod
    def _refusing_oversize(script: str, limit: int) -> str:
        """``script``, with a string result far over ``limit`` replaced by an object in the page, so
        a huge value never crosses the wire. The page measures JS's JSON of the value, which can
        exceed the server's by number formatting (``0.00001`` against ``1e-05``), so it refuses
        only above 1.5 × ``limit``; the server measures exactly whatever comes back."""
        bound = limit * 3 // 2
        return (
            "(async function(){ var v = await (" + script + "); "
            f"if (typeof v !== 'string' || v.length * 3 <= {bound}) return v; "
            "var j; try { j = JSON.stringify(JSON.parse(v)); } catch (e) { j = JSON.stringify(v); } "
            f"return new TextEncoder().encode(j).length > {bound} ? {{refused: true}} : v; }})()"
        )

    async def get_cookies(self, url: str | None = None) -> list[dict[str, Any]]:
        self._check_connected()
        return await self._guarded(lambda: cookie_jar.get(self._context, url))

    async def set_cookies(self, items: list[Any]) -> int:
        self._check_connected()
        return await self._guarded(lambda: cookie_jar.set_many(self._context, items))

    async def clear_cookies(
        self, name: str | None = None, domain: str | None = None, url: str | None = None
    ) -> int:
        self._check_connected()
        return await self._guarded(lambda: cookie_jar.clear(self._context, name, domain, url))

    # ----- checks, in the reference's order ----------------------------------------------------

    @property
    def _page_watch(self) -> NavigationWatch:
        assert self._watch is not None, "start_page() comes first"
        return self._watch

    @property
    def _action_ms(self) -> float:
        return self._config.action_timeout * 1000

    def _check_connected(self) -> None:
        if self._lost:
            raise ActionError(BROWSER_CONNECTION_LOST)

    async def _live_page(self) -> Page:
        """The session page, replaced first if it crashed."""
        self._check_connected()
        if self._page is None or crashed_at(self._page) is not None:
            await self._replace_page()
        if self._page is None:
            raise ActionError(BROWSER_CONNECTION_LOST if self._lost else pipeline_error(PAGE_NOT_REOPENED))
        return self._page

    def _require_som(self) -> None:
        self._check_connected()
        if self.som is None or self.url is None:
            raise ActionError(NO_PAGE_LOADED)

    async def _page_with_som(self) -> Page:
        self._require_som()
        return await self._live_page()

    async def _page_to_act_on(self) -> Page:
        """``_page_with_som``, refusing after a crash: once when the page was reloaded (what its
        caller typed or changed there is gone), until a navigation lands when it could not be."""
        page = await self._page_with_som()
        refusal = self._after_crash
        if refusal is not None:
            if self._after_crash_reloaded:
                self._after_crash = None
            raise ActionError(refusal)
        return page

    def _som_element(self, element_id: str) -> dict[str, Any]:
        element = find_element(self.som.data if self.som is not None else None, element_id)
        if element is None:
            raise ActionError(element_not_found(element_id))
        return element

    async def _dom_node(self, element_id: str) -> Locator:
        assert self.som is not None
        try:
            async with asyncio.timeout(self._config.action_timeout):
                located = await self.som.locate(element_id)
        except (PlaywrightError, TimeoutError):
            located = None
        if located is None:
            raise ActionError(ELEMENT_NOT_IN_DOM)
        return located

    async def _element(self, element_id: str) -> tuple[Page, Locator]:
        page = await self._page_to_act_on()
        self._som_element(element_id)
        return page, await self._dom_node(element_id)

    async def _ask(self, handle: Locator, script: str, arg: Any = None) -> Any:
        """A quick read of an element's kind; a vanished node reads as ``Element not found in DOM``."""
        try:
            async with asyncio.timeout(self._config.action_timeout):
                return await handle.evaluate(script, arg, timeout=self._action_ms)
        except (PlaywrightError, TimeoutError) as error:
            if self._lost:
                raise ActionError(BROWSER_CONNECTION_LOST) from None
            if is_timeout(error):
                raise ActionError(timeout_after(self._config.action_timeout)) from None
            raise ActionError(ELEMENT_NOT_IN_DOM) from None

    # ----- execution ---------------------------------------------------------------------------

    async def _perform(
        self,
        page: Page,
        what: str,
        operation: Callable[[], Awaitable[Any]],
        *,
        timeout: float | None = None,
        redact: tuple[str, ...] = (),
    ) -> None:
        """Run one operation on the live page, then settle and recompile (or keep the last good state)."""
        limit = timeout if timeout is not None else self._config.action_timeout
        self._page_watch.forget_pending()
        try:
            # A second, outer bound: Playwright's own timeouts cannot fire while the driver waits on a hung renderer.
            async with asyncio.timeout(limit + 1.0):
                await operation()
        except ActionError:  # the operation's own verdict (evaluate's JS exception): nothing committed
            await self._restore(page)
            raise
        except (PlaywrightError, TimeoutError) as error:
            if self._lost:
                raise ActionError(BROWSER_CONNECTION_LOST) from None
            if NOT_CONNECTED in str(error):  # the node left while the action waited for it
                await self._restore(page)
                raise ActionError(ELEMENT_NOT_IN_DOM) from None
            reason = await stopped_reason(self._memory_guard, page) or describe(error, limit, redact)
            if is_timeout(error) and not await self._answers(page):
                await self._replace_page()
            else:
                await self._restore(page)
            raise ActionError(action_failed(what, reason)) from None
        await self._commit(page)

    async def _commit(self, page: Page) -> None:
        """Settle, refuse a blocked navigation, recompile; success replaces the last good state."""
        watch = self._page_watch
        await asyncio.gather(settle(page, self._config.settle_timeout, watch), self._prepare_actions(page))
        refusal = watch.refusal()
        watch.reset()
        # The page was replaced by what failed, at whatever URL it shows now: always go back.
        if refusal is not None:
            await self._restore(page, replaced=True)
            raise ActionError(navigation_failed(refusal))
        await self._refuse_off_the_web(page)
        try:
            fresh = await compile_page(page, timeout=self._config.action_timeout)
        except (SomCompileError, PlaywrightError, TimeoutError) as error:
            if self._lost or is_closed(error):
                raise ActionError(
                    BROWSER_CONNECTION_LOST if self._lost else pipeline_error(PAGE_CLOSED)
                ) from None
            reason = await stopped_reason(self._memory_guard, page) or describe(
                error, self._config.action_timeout
            )
            if not await self._answers(page):
                await self._replace_page()
            raise ActionError(pipeline_error(reason)) from None
        try:
            # It may have left while the SOM was compiled; the SOM names the page it was taken of.
            await self._refuse_off_the_web(page, fresh.data.get("url"))
        except ActionError:
            await fresh.dispose()
            raise
        previous, self.som, self.url = self.som, fresh, page.url
        if previous is not None:
            with contextlib.suppress(Exception):
                await previous.dispose()

    async def _refuse_off_the_web(self, page: Page, compiled_url: Any = None) -> None:
        urls = [page.url] + ([compiled_url] if isinstance(compiled_url, str) else [])
        reason = next((r for r in map(_not_a_session_page, urls) if r is not None), None)
        if reason is not None:
            await self._restore(page, replaced=True)
            raise ActionError(reason)

    async def _prepare_actions(self, page: Page) -> None:
        """Best effort and bounded: a page that navigates or hangs meanwhile is settle's business."""
        with contextlib.suppress(PlaywrightError, TimeoutError):
            async with asyncio.timeout(self._config.settle_timeout):
                await prepare_actions(page)

    async def _answers(self, page: Page) -> bool:
        try:
            async with asyncio.timeout(ANSWERS_PROBE_SECONDS):
                await page.evaluate("1")
            return True
        except (PlaywrightError, TimeoutError):
            return False

    async def _restore(self, page: Page, *, replaced: bool = False) -> None:
        """Take the live page back to the last good URL if it wandered off, or if ``replaced``
        (what failed replaced it, maybe at the same URL: a form posted to itself answering 500)."""
        if self._lost or self.url is None:
            return
        await settle(page, self._config.settle_timeout)  # let a late error page land first
        if replaced or page.url != self.url:
            await self._reload_last_good(page)

    async def _replace_page(self) -> None:
        """Drop a hung or crashed page; open a fresh one in the same context at the last good URL."""
        old, self._page = self._page, None
        crash: ErrorText | None = None
        if old is not None:
            if crashed_at(old) is not None:
                crash = await stopped_reason(self._memory_guard, old) or PAGE_CRASHED
            await close_quietly(old)
        try:
            await self.start_page()
        except (PlaywrightError, TimeoutError):
            return  # context or browser gone or wedged; the next action reports it
        assert self._page is not None
        reloaded = self.url is None or await self._reload_last_good(self._page)
        if crash is not None:
            self._after_crash = page_reloaded(crash) if reloaded else page_not_reloaded(crash)
            self._after_crash_reloaded = reloaded

    async def _reload_last_good(self, page: Page) -> bool:
        """Load the last good URL into ``page`` and take its SOM as the held state; False (the
        old state kept) when it does not land on a page of ours."""
        try:
            await goto(
                page,
                self.url or "about:blank",
                policy=self._policy,
                watch=self._page_watch,
                timeout=self._config.navigation_timeout,
            )
            await settle(page, self._config.settle_timeout, self._page_watch)
            watch = self._page_watch
            if watch.blocked is not None or watch.failed is not None or off_the_web(page.url) is not None:
                return False  # it went on from there to no page of ours: the next action finds out
            fresh = await compile_page(page, timeout=self._config.action_timeout)
        except (ActionError, SomCompileError, PlaywrightError, TimeoutError):
            return False  # the old state stays; element actions will report `Element not found in DOM`
        # Where the reload landed (the URL may redirect now): the URL and the SOM stay one page's.
        previous, self.som, self.url = self.som, fresh, page.url
        if previous is not None:
            with contextlib.suppress(Exception):
                await previous.dispose()
        return True

    async def _guarded(self, operation: Callable[[], Awaitable[Any]]) -> Any:
        try:
            async with asyncio.timeout(self._config.action_timeout):
                return await operation()
        except (PlaywrightError, TimeoutError) as error:
            if self._lost or is_closed(error):
                raise ActionError(BROWSER_CONNECTION_LOST) from None
            raise ActionError(cookie_operation_failed(describe(error, self._config.action_timeout))) from None


def _not_a_session_page(url: str) -> ErrorText | None:
    # A page replaced after a crash or a hang that could not load the last good URL again.
    return pipeline_error(PAGE_NOT_REOPENED) if url == "about:blank" else off_the_web(url)
