"""The isolated JavaScript world the SOM compiler runs in, and the way back to Playwright.

Why: the page's main world belongs to the page. A page that replaces ``Map``,
``Array.prototype.push`` or ``Element.prototype.getAttribute`` there could hide its own
controls from the SOM, or shape the state fingerprint replay validation relies on. An
isolated world shares the DOM but has its own globals, prototypes and DOM wrappers, so
nothing the page's scripts do to them reaches code running there.

Which world: Playwright's own utility world of the main frame. It is the world where
Playwright runs content-script selector engines, and such an engine (``plasmate_som=``)
is the one tamper-proof way to hand Playwright a node: the engine returns the node from
our id→node map, Playwright adopts it by node identity and acts on it with its real input
and actionability checks. No attribute, no main-world global, nothing the page could forge.

How: a CDP session of ours listens to ``Runtime.executionContextCreated`` to learn that
world's ``executionContextId`` (a new one with every document) and runs the compiler there
with ``Runtime.evaluate``. When the context is unknown (a navigation, a crash, a world not
created yet) it re-reads the context list and, if needed, asks Playwright to create the
world by running a query through the engine.
"""

from __future__ import annotations

import asyncio
import re
import time
import weakref
from collections.abc import Awaitable
from typing import Any, TypeVar

from playwright.async_api import Browser, CDPSession, Locator, Page
from playwright.async_api import Error as PlaywrightError

from plasmate_nb.som.parse import ParsedSom

# The compiler object's name on the utility world's global object (the page cannot see it).
WORLD_GLOBAL = "__plasmate_som"
ENGINE_NAME = "plasmate_som"
# What a call answers in a world whose compiler object is gone (it is installed again).
MISSING = "__plasmate_som_missing__"
UTILITY_WORLD_PREFIX = "__playwright_utility_world_"  # Playwright's name for that world
WORLD_CREATION_SECONDS = 10.0
# Element ids are ours (e_<hex>[_n], e_summary_<n>); anything else is never looked up.
ELEMENT_ID = re.compile(r"[A-Za-z0-9_]{1,80}")

# What the engine throws for an id whose node is gone: a locator would otherwise wait for it
# to come back, which it never does (an id names one node). No page content in it.
NOT_CONNECTED = "plasmate_som: the element is no longer in the DOM"
# `plasmate_som=<key>/<id>`: the node kept under <id> by the compile <key>; key 0 matches
# nothing (prepare_actions), any other key without that node throws NOT_CONNECTED.
ENGINE_SOURCE = (
    "{ query(root, body) {"
    " const cut = body.indexOf('/');"
    " const key = cut > 0 ? +body.slice(0, cut) : 0;"
    " if (!(key > 0)) return null;"
    " const api = globalThis." + WORLD_GLOBAL + ";"
    " const node = api ? api.resolve(key, body.slice(cut + 1), []) : null;"
    " if (!node) throw new Error(" + repr(NOT_CONNECTED) + ");"
    " return node; },"
    " queryAll(root, body) { const n = this.query(root, body); return n ? [n] : []; } }"
)

# A frame, then a task or the next frame, whichever comes first: timers never fire on a page
# whose scripts are disabled, animation frames of an isolated world still do.
NEXT_FRAME_JS = (
    "new Promise(resolve => requestAnimationFrame(() => {"
    " setTimeout(resolve, 0); requestAnimationFrame(resolve); }))"
)

# Resolves once the document has loaded (its load event, or already past it): read in this world,
# where the page cannot redefine document.readyState. (A page that stops the load event's
# propagation can keep the listener waiting: the navigation's own timeout then decides.)
LOADED_JS = (
    "document.readyState === 'complete' ? 0 :"
    " new Promise(resolve => addEventListener('load', () => resolve(0), {once: true}))"
)

T = TypeVar("T")

_registered: weakref.WeakSet[Any] = weakref.WeakSet()
# Pages whose SOM waits end when they crash: a crashed renderer never answers, so a compile would
# otherwise wait out its whole deadline.
_crashes: weakref.WeakKeyDictionary[Page, _Crash] = weakref.WeakKeyDictionary()
PAGE_CRASHED = "the page crashed"


class _Crash:
    """A watched page's crash: when it came (``time.monotonic()``), and an event for waiters."""

    def __init__(self) -> None:
        self.at: float | None = None
        self.event = asyncio.Event()

    def __call__(self, _page: Page) -> None:
        self.at = time.monotonic()
        self.event.set()


def watch_crashes(page: Page) -> None:
    """Make compiles on ``page`` end when it crashes, and :func:`crashed_at` know when (call it
    as soon as the page is made)."""
    page.on("crash", _crashes.setdefault(page, _Crash()))


def crashed_at(page: Page) -> float | None:
    """When the watched ``page`` crashed (``time.monotonic()``); None if it has not."""
    crash = _crashes.get(page)
    return crash.at if crash is not None else None


async def unless_crashed(page: Page, work: Awaitable[T]) -> T:
    """``await work``, or PlaywrightError(PAGE_CRASHED) as soon as ``page`` crashes (pages given
    to :func:`watch_crashes`; others just await)."""
    crash = _crashes.get(page)
    task = asyncio.ensure_future(work)
    if crash is None:
        return await task
    watch = asyncio.ensure_future(crash.event.wait())
    try:
        await asyncio.wait({task, watch}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watch.cancel()
        finished = task.done()
        if not finished:
            task.cancel()
    if not finished:
        raise PlaywrightError(PAGE_CRASHED)
    return task.result()


async def ensure_engine(page: Page) -> None:
    """Register the ``plasmate_som`` content-script engine with the page's Playwright (once)."""
    browser = page.context.browser
    if browser is None:
        raise PlaywrightError("the SOM needs a page of a Browser (no persistent contexts)")
    await register_engine(browser)


async def register_engine(browser: Browser) -> None:
    """Register the ``plasmate_som`` engine with ``browser``'s Playwright (once). Best before its
    first context: a context made while the registration is on its way can miss it."""
    # playwright-python offers no public way from a browser to its Playwright object's selectors.
    selectors = browser.browser_type._impl_obj._playwright.selectors
    if selectors in _registered:
        return
    try:
        await selectors.register(ENGINE_NAME, ENGINE_SOURCE, None, True)
    except PlaywrightError as error:
        if "already registered" not in str(error):
            raise
    _registered.add(selectors)


class IsolatedWorld:
    """The main frame's utility world of one page, reached over a CDP session of ours."""

    def __init__(self, page: Page, cdp: CDPSession, frame_id: str) -> None:
        self._page = weakref.ref(page)
        self._cdp = cdp
        self._frame_id = frame_id
        # uniqueId, not id: ids restart in a new renderer process (a cross-site navigation)
        self._context: str | None = None
        self._installed: str | None = None  # the context the compiler object was installed in
        self._created = asyncio.Event()
        self.released: list[int] = []  # compile keys whose maps the next call drops
        # The last incremental compile's key and text: the next one answers as a change to it.
        self.last_key = 0
        self.last_text: str | None = None
        self.last_parse: ParsedSom | None = None  # of last_text, for the next one to reuse
        cdp.on("Runtime.executionContextCreated", self._on_created)
        cdp.on("Runtime.executionContextDestroyed", self._on_destroyed)
        cdp.on("Runtime.executionContextsCleared", self._on_cleared)

    def __repr__(self) -> str:
        return f"IsolatedWorld(context={self._context})"

    def _on_created(self, event: dict[str, Any]) -> None:
        context = event.get("context") or {}
        aux = context.get("auxData") or {}
        name = context.get("name")
        if (
            aux.get("frameId") == self._frame_id
            and isinstance(name, str)
            and name.startswith(UTILITY_WORLD_PREFIX)
        ):
            self._context = context.get("uniqueId")
            self._created.set()

    def _on_destroyed(self, event: dict[str, Any]) -> None:
        if event.get("executionContextUniqueId") == self._context:
            self._context = None

    def _on_cleared(self, _event: dict[str, Any]) -> None:
        self._context = None

    def take_released(self) -> str:
        keys, self.released = self.released, []
        return ",".join(map(str, keys))

    async def _context_id(self) -> str:
        if self._context is None:
            # Re-enabling replays every live context before it answers.
            await self._cdp.send("Runtime.disable")
            await self._cdp.send("Runtime.enable")
        while self._context is None:
            page = self._page()
            if page is None:
                raise PlaywrightError("page closed")
            self._created.clear()
            await prepare_actions(page)  # Playwright creates the world for it
            if self._context is None:
                # Bounded: should Playwright ever stop creating its utility world, compiles fail
                # (and say so) instead of hanging. asyncio.timeout, not wait_for: on Python 3.11
                # wait_for can drop the cancellation of an outer deadline (the compile's).
                async with asyncio.timeout(WORLD_CREATION_SECONDS):
                    await self._created.wait()
        return self._context

    async def evaluate(self, expression: str, install: str) -> Any:
        """``expression``'s value in the world, after ``install`` in a context that lacks it.

        A context that vanishes under the call (a navigation) is looked up again; a
        context that lost the compiler object (``MISSING``) gets it installed.
        """
        for attempt in range(3):
            context = await self._context_id()
            source = expression if self._installed == context else install + ";\n" + expression
            try:
                answer = await self._cdp.send(
                    "Runtime.evaluate",
                    {"expression": source, "uniqueContextId": context, "returnByValue": True},
                )
            except PlaywrightError:
                if attempt == 2:
                    raise
                if self._context == context:  # gone before its event came: look again
                    self._context = None
                continue
            if "exceptionDetails" in answer:
                return {"error": "internal error"}
            value = answer.get("result", {}).get("value")
            if value == MISSING and source is expression:
                self._installed = None
                continue
            self._installed = context
            return value
        raise PlaywrightError("the isolated world kept vanishing")

    async def next_frame(self) -> None:
        """Resolve after the page's next animation frame, then a task or the frame after it
        (``NEXT_FRAME_JS``), timed from this world: a page that replaces ``requestAnimationFrame``
        or ``setTimeout`` in its own world cannot stall or skip the wait. Raises PlaywrightError
        when the document goes meanwhile."""
        await self._awaited(NEXT_FRAME_JS, "the frame wait")

    async def loaded(self) -> None:
        """Resolve once the document has loaded (``LOADED_JS``); PlaywrightError when it goes first."""
        await self._awaited(LOADED_JS, "the load wait")

    async def _awaited(self, promise: str, what: str) -> None:
        context = await self._context_id()
        try:
            answer = await self._cdp.send(
                "Runtime.evaluate", {"expression": promise, "uniqueContextId": context, "awaitPromise": True}
            )
        except PlaywrightError:
            if self._context == context:  # gone before its event came: look it up next time
                self._context = None
            raise
        if "exceptionDetails" in answer:
            raise PlaywrightError(f"{what} failed in the isolated world")

    async def locate(self, key: int, element_id: str) -> Locator | None:
        """A locator for the element kept under ``element_id`` by compile ``key`` (None for a
        malformed id). A click or fill through it resolves the node inside Playwright's own
        action, no element handle to fetch and adopt first; a node that is gone fails the action
        at once with ``NOT_CONNECTED``."""
        page = self._page()
        if page is None or not ELEMENT_ID.fullmatch(element_id):
            return None
        await ensure_engine(page)
        return page.main_frame.locator(f"{ENGINE_NAME}={key}/{element_id}")


_worlds: weakref.WeakKeyDictionary[Page, IsolatedWorld] = weakref.WeakKeyDictionary()
_opening: weakref.WeakKeyDictionary[Page, asyncio.Lock] = weakref.WeakKeyDictionary()


async def world_of(page: Page) -> IsolatedWorld:
    """The page's isolated world (its CDP session is opened on first use)."""
    world = _worlds.get(page)
    if world is not None:
        return world
    lock = _opening.setdefault(page, asyncio.Lock())
    async with lock:
        world = _worlds.get(page)
        if world is None:
            await ensure_engine(page)
            cdp = await page.context.new_cdp_session(page)
            tree = await cdp.send("Page.getFrameTree")
            world = IsolatedWorld(page, cdp, tree["frameTree"]["frame"]["id"])
            await cdp.send("Runtime.enable")
            _worlds[page] = world
    return world


async def prepare_actions(page: Page) -> None:
    """Have Playwright set up its utility world and its own script there for the current
    document: a query through our engine that matches nothing. The first action on a new
    document would otherwise pay for that setup (tens of milliseconds); run while the page
    settles, it costs no wall time."""
    await ensure_engine(page)
    await page.main_frame.query_selector(f"{ENGINE_NAME}=0/-")


async def next_frame(page: Page) -> None:
    """Wait for the page's next animation frame and a task after it, out of the page's reach
    (``IsolatedWorld.next_frame``)."""
    await (await world_of(page)).next_frame()


async def document_loaded(page: Page) -> None:
    """Wait until the page's document has loaded, out of the page's reach (``IsolatedWorld.loaded``)."""
    await (await world_of(page)).loaded()
