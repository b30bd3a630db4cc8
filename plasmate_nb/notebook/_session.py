"""``AsyncSession``: the one async core of the notebook layer, over the tool contract only.

The sync ``Session`` (``session.py``) is derived from this class: its methods, signatures and
docstrings are these, so the docstrings' examples are written the sync way (``s.open(url)``);
on an ``AsyncSession`` each method is awaited (``await s.open(url)``).

Privacy: typed text, selected values, cookie values and URLs are passed to the transport
and dropped; they are never stored on the session. Tool errors that echo one of them
(an action's failure quoting page text, ``Failed to fetch <url>: ...``) are re-raised scrubbed and
without the transport's traceback (whose frames hold the arguments).

Errors a user causes carry a hint on what to do (``plasmate_nb.errors``): a tool error's text
stays the contract's, the hint comes under it; an unknown option lists what the select offers,
read from the page's SOM (never the value asked for).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import operator
import threading
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pandas as pd

from .. import errors
from .._tracebacks import HintedError
from ..client.base import ToolError, Transport, parse_payload
from ..tools.catalogue import SCROLL_DIRECTIONS, TRACE_CHANGING_TOOLS
from ..tools.som_changes import ChangesMismatch, apply_to_regions, canonical_text, som_digest
from ..trace.compact import clean_text
from ..trace.constants import DRIFT_EVENT_NOT_RETAINED
from ..trace.origin import clean, origin, userinfo_and_rest
from . import _answers as answers
from ._caller_warnings import warn_caller
from ._sightings import Sightings
from ._tables import STRING, ReadableFrame
from .cookies import Cookies
from .export import FinalTraceOmitted, TraceCleared, TraceExport, TraceStatus, plotter
from .page import Element, Page
from .page import element_id as _id_of
from .replay import ReplayPlan, ReplayRefused, ReplayResult
from .stateless import Screenshot, call_stateless, scrubbed, take_screenshot, url_secrets

if TYPE_CHECKING:
    from .dashboard import TraceDashboard
    from .plots import TraceFigure
    from .replay_panel import ReplayPanel


#: ``callback(tool)`` after a call that may have changed a session's trace (may return an awaitable).
TraceListener = Callable[[str], Awaitable[None] | None]


REMOTE_POLL_SECONDS = 1.0


class SessionStateError(HintedError, RuntimeError):
    """The call needs a browser session in another state (none open yet, one already open, closed).

    >>> s.close()
    >>> s.trace.events()      # SessionStateError: no open browser session: this session was closed
    """


#: Refusals whose sequence names no event of this trace (so there is no action to look up).
_NO_EVENT_DRIFTS = ("cross_session", "event_not_retained")


class AsyncSession:
    """One browser session over a ``Transport``, with awaitable methods (the async core).

    The default transport is the process-wide embedded engine, started on first use; any MCP
    server speaking the contract works too (``AsyncSession.connect``). ``Session`` offers the
    same methods without ``await``; the method examples below are written that way.

    ``replay_execution=True`` (embedded engine only) is the operator's opt-in to
    ``replay_execute`` (``replay``). The embedded engine is the process's, so the opt-in is too:
    every session of this process can execute from then on, and so can the agents of a
    ``pnb.serve()`` started afterwards (one started before never offers it). It stays on until
    the process ends.

    >>> site = pnb.DemoSite().start()            # the bundled demo pages on 127.0.0.1
    >>> async with AsyncSession() as s:        # closes the browser session on exit
    ...     page = await s.open(site.url("/login.html"))
    ...     events = await s.trace.events()
    """

    def __init__(self, transport: Transport | None = None, *, replay_execution: bool = False) -> None:
        if replay_execution and transport is not None:
            raise ValueError(errors.REPLAY_EXECUTION_IS_THE_SERVERS)
        self._replay_execution = replay_execution
        self._transport = transport
        self._owns_transport = False
        self._reconnect: Callable[[], Transport] | None = None  # connect()'s: a new connection after close()
        self._close_on_exit = True
        self._loop: asyncio.AbstractEventLoop | None = None
        self._listeners: list[TraceListener] = []
        self._watch_lock = threading.Lock()
        self._unwatch: Callable[[], None] | None = None
        self._announcing: set[asyncio.Future[None]] = set()
        self._session_id: str | None = None
        self._trace_id: str | None = None
        self._page: Page | None = None
        self._final_trace: TraceExport | FinalTraceOmitted | None = None
        self._trace = AsyncTrace(self)

    # -- state ----------------------------------------------------------------------------

    @property
    def session_id(self) -> str | None:
        """The open browser session's id; None before ``open`` and after ``close``.

        >>> s.session_id      # a UUID, e.g. '3f2a9c1e-…'; give it to ``attach`` in another notebook
        """
        return self._session_id

    @property
    def trace_id(self) -> str | None:
        """The open browser session's trace id (stable for its whole life, even across clears).

        >>> s.trace_id == s.trace.status().trace_id
        True
        """
        return self._trace_id

    @property
    def page(self) -> Page | None:
        """The page the last action left behind; None before the first ``open``.

        >>> s.page.find(label="Email")
        """
        return self._page

    @property
    def final_trace(self) -> TraceExport | FinalTraceOmitted | None:
        """What the last ``close()`` returned: the final export, an omitted marker, or None.

        >>> s.close()
        >>> s.final_trace.events()       # still there after the cell that closed the session
        """
        return self._final_trace

    @property
    def trace(self) -> AsyncTrace:
        """The trace tools of this session: ``status``, ``export``, ``events``, ``clear``, ``dashboard``.

        >>> s.trace.events()  # one typed row per retained event
        """
        return self._trace

    # -- construction ---------------------------------------------------------------------

    @classmethod
    def connect(
        cls, url: str | None = None, *, token: str | None = None, command: Sequence[str] | None = None
    ) -> AsyncSession:
        """A session over a remote MCP server: streamable HTTP at ``url`` or stdio ``command``.

        Give exactly one of ``url`` (with the server's bearer ``token``) or ``command``. Nothing
        connects until the first call; closing the session closes the connection, and a later
        ``open`` connects again to the same server. A server refuses private and loopback
        pages (such as ``DemoSite``'s) unless started with ``--allow-private-network``.

        >>> s = Session.connect("http://127.0.0.1:9272/mcp", token="...")
        >>> s = Session.connect(command=["plasmate-nb", "serve", "--allow-private-network"])
        """
        session = cls(_remote_transport(url, token, command))
        session._owns_transport = True
        session._reconnect = lambda: _remote_transport(url, token, command)
        return session

    @classmethod
    async def attach(cls, session_id: str, transport: Transport | None = None) -> AsyncSession:
        """A session bound to an existing browser session, e.g. one an external agent opened.

        Its trace tools, replay checks and dashboard work as on a session you opened. Leaving
        its ``with`` block does not close the browser session; ``close()`` does.

        >>> watch = Session.attach(session_id)     # default: the embedded engine
        >>> watch.trace.dashboard()
        """
        session = cls(transport)
        status = answers.answered_status(
            await session._call("trace_status", {"session_id": session_id}), "trace_status"
        )
        session._session_id, session._trace_id = session_id, status.trace_id
        session._close_on_exit = False
        return session

    async def transport(self) -> Transport:
        """The ``Transport`` this session calls, creating the embedded engine's on first use.

        >>> s.transport()   # e.g. LoopBoundTransport(InProcessTransport())
        """
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        # connect()ed, then closed: the same server again
        if self._transport is None and self._reconnect is not None:
            self._transport = self._reconnect()
        if self._transport is None:
            from ..client.embedded import embedded_transport  # lazy: starts nothing until first use

            self._transport = await embedded_transport(replay_execution=self._replay_execution)
        self._watch_transport()
        return self._transport

    # -- change notifications -------------------------------------------------------------

    def subscribe(self, callback: TraceListener) -> Callable[[], None]:
        """Call ``callback(tool)`` after each tool call that may have changed this session's trace.

        Calls made through this session are announced before they return (an awaitable
        result is awaited), so what ``callback`` refreshes is current when the call is. Calls
        other clients make on the same browser session (an agent using the embedded server)
        are announced shortly after, when the transport hears them: the embedded engine does,
        a remote MCP server does not (poll instead). ``callback`` runs on this session's event
        loop (for ``Session``: its background loop), may be called more than once for one
        change, and must not block. Returns the function that unsubscribes.

        >>> unsubscribe = s.subscribe(lambda tool: print("trace changed by", tool))
        >>> unsubscribe()
        """
        self._listeners.append(callback)
        self._watch_transport()

        def unsubscribe() -> None:
            if callback in self._listeners:
                self._listeners.remove(callback)
            if not self._listeners:
                self._unwatch_transport()

        return unsubscribe

    def _watch_transport(self) -> None:
        # Listen to the transport (other clients' calls) while anyone listens to this session.
        with self._watch_lock:
            if (
                self._unwatch is None
                and self._listeners
                and self._transport is not None
                and self._loop is not None
            ):
                self._unwatch = self._transport.subscribe(self._heard)

    def _unwatch_transport(self) -> None:
        with self._watch_lock:
            unwatch, self._unwatch = self._unwatch, None
        if unwatch is not None:
            unwatch()

    def _heard(self, session_id: str | None, tool: str) -> None:
        # Any thread, any loop (the transport's): only hand over to this session's loop.
        loop = self._loop
        if (
            loop is None
            or session_id is None
            or session_id != self._session_id
            or tool not in TRACE_CHANGING_TOOLS
        ):
            return
        with contextlib.suppress(RuntimeError):  # the session's loop has closed: nobody left to tell
            loop.call_soon_threadsafe(self._announce, tool)

    def _announce(self, tool: str) -> None:
        for callback in list(self._listeners):
            result = callback(tool)
            if inspect.isawaitable(result):
                future = asyncio.ensure_future(result)
                self._announcing.add(future)  # held until done: a bare task may be collected
                future.add_done_callback(self._announcing.discard)

    # -- the tool contract ----------------------------------------------------------------

    async def _call(
        self, tool: str, arguments: dict[str, Any], secrets: Iterable[str] = (), *, notify: bool = True
    ) -> Any:
        transport = await self.transport()
        failure: ToolError | None = None
        try:
            payload = await transport.call(tool, arguments)
        except ToolError as error:
            failure = scrubbed(error, secrets)
            failure.with_hint(self._hint(tool, failure.message, arguments))
        if notify:
            await self._notify(tool)
        if failure is not None:
            raise failure  # raised outside the except block: no chained original, no transport frames
        return payload

    async def _notify(self, tool: str) -> None:
        if tool in TRACE_CHANGING_TOOLS:
            for callback in list(self._listeners):
                result = callback(tool)
                if inspect.isawaitable(result):
                    await result

    def _hint(self, tool: str, message: str, arguments: dict[str, Any]) -> str | None:
        """What to do about a tool error, from what this notebook knows (the tool, the page's SOM, the URL given)."""
        if errors.OPTION_NOT_FOUND_WORDS in message and self._page is not None:
            options = self._page._select_options(arguments.get("element_id"))
            if options:
                return errors.options_hint(options)
        if errors.UNSUPPORTED_SCHEME_WORDS in message or errors.RELATIVE_URL_WORDS in message:
            suggestion = _with_http(arguments.get("url"))
            if suggestion is not None:
                return errors.missing_scheme_hint(suggestion)
        return errors.tool_error_hint(message, tool)

    def _require_session(self) -> str:
        if self._session_id is None:
            closed = self._final_trace is not None
            hint = errors.FINAL_TRACE_HINT if closed else errors.OPEN_FIRST_HINT
            raise SessionStateError(errors.no_open_session(closed)).with_hint(hint)
        return self._session_id

    async def _act(self, tool: str, arguments: dict[str, Any], secrets: Iterable[str] = ()) -> Page:
        payload = await self._call(tool, {"session_id": self._require_session(), **arguments}, secrets)
        return await self._page_after(tool, payload)

    async def _page_after(self, tool: str, payload: Any) -> Page:
        """The page an action's answer describes (rebuilt whole from a changes answer); now current.
        An answer of the wrong shape is a ``ServerAnswerError`` and the current page stays."""
        root = "$"
        if "changes" in answers.answer_object(tool, payload):  # som_answers="changes": rebuild it here
            answers.changes_answer(tool, payload)
            payload = {**payload, **await self._rebuilt_model(payload["changes"], payload.get("som_digest"))}
            root = "$.changes, applied: $"
        answers.page_answer(tool, payload, root)
        self._page = Page(payload, self._transport, previous=self._page)
        return self._page

    async def _rebuilt_model(self, changes: dict[str, Any], digest: str | None) -> dict[str, Any]:
        """``regions`` (and ``som_digest``) of the page an answer describes: the previous page's
        regions with ``changes`` applied, or, when this session does not hold the page they apply
        to, the server's whole model (``page_som``) — checked against the answer's digest, since
        another client may have acted on the session since."""
        previous = self._page
        if previous is not None and previous.som_digest == changes.get("base_digest"):
            with contextlib.suppress(ChangesMismatch):
                return {"regions": apply_to_regions(previous.regions, changes)}
        som = await self._call("page_som", {"session_id": self._require_session()}, notify=False)
        answers.page_answer("page_som", som)
        read = som_digest(canonical_text(som))
        if read != digest:
            warn_caller(
                "the page changed again before its model could be fetched (another client acted on "
                "this session?): this Page shows the model read afterwards, not the one the action left"
            )
        return {"regions": list(som["regions"]), "som_digest": read}

    # -- actions --------------------------------------------------------------------------

    async def open(self, url: str, trace: bool = True, som_answers: str = "full") -> Page:
        """Open ``url`` in a new browser session and return its page (traced unless ``trace=False``).

        Tracing is chosen here, once: it cannot be turned on later. One browser session per
        ``Session``; ``close()`` it before opening another. ``som_answers="changes"`` asks the
        server to answer later actions with only what changed; the session rebuilds each whole
        page from them, so pages look the same either way (the trace does too).

        >>> page = s.open(site.url("/login.html"), trace=True)   # site = pnb.DemoSite().start()
        >>> page = s.open(url, som_answers="changes")      # lighter answers on large pages
        """
        if self._session_id is not None:
            raise SessionStateError(errors.ALREADY_OPEN).with_hint(errors.ALREADY_OPEN_HINT)
        arguments: dict[str, Any] = {"url": url, "trace": trace}
        if som_answers != "full":  # the default stays the reference's request, for any server
            arguments["som_answers"] = som_answers
        payload = answers.session_answer(
            "open_page", await self._call("open_page", arguments, url_secrets(url))
        )
        # All of the new session at once: an interrupted call below must not leave the last one's parts.
        self._session_id, self._trace_id, self._final_trace = payload["session_id"], None, None
        self._page = Page(payload, self._transport)
        status = answers.answered_status(
            await self._call("trace_status", {"session_id": self._session_id}), "trace_status"
        )
        self._trace_id = status.trace_id
        return self._page

    async def navigate(self, url: str) -> Page:
        """Navigate the open page to ``url`` and return the new page.

        >>> s.navigate(site.url("/details.html")).title
        """
        return await self._act("navigate_to", {"url": url}, url_secrets(url))

    async def click(self, element: str | Element) -> Page:
        """Click ``element`` (an ``Element`` from ``page.find`` or its SOM id) and return the page after.

        >>> s.click(page.find(role="button", text="Sign in"))
        """
        return await self._act("click", {"element_id": _id_of(element)})

    async def type_text(self, element: str | Element, text: str, append: bool = False) -> Page:
        """Type ``text`` into an input (replacing its value unless ``append=True``); returns the page.

        The trace keeps only the text's UTF-8 byte length, never the text.

        >>> s.type_text(page.find(label="Email"), "analyst@example.test")
        """
        return await self._act(
            "type_text", {"element_id": _id_of(element), "text": text, "append": append}, [text]
        )

    async def select_option(self, element: str | Element, value: str) -> Page:
        """Select the option ``value`` (its value or visible text) of a select; returns the page.

        >>> s.select_option(page.find(label="Plan"), "Team")
        """
        return await self._act("select_option", {"element_id": _id_of(element), "value": value}, [value])

    async def scroll(
        self, direction: str = "down", pixels: int = 300, element_id: str | Element | None = None
    ) -> Page:
        """Scroll the page by ``pixels`` in ``direction``, or bring ``element_id`` into view; returns the page.

        ``direction`` is ``"down"``, ``"up"``, ``"top"`` or ``"bottom"``; the tool takes any other
        as down, and the session warns when it is given one.

        >>> s.scroll("down", 600)
        >>> s.scroll(element_id=page.find(role="button", text="Sign in"))
        """
        arguments: dict[str, Any] = {"direction": direction, "pixels": pixels}
        if element_id is not None:
            arguments["element_id"] = _id_of(element_id)
        page = await self._act("scroll", arguments)  # any direction is sent: the contract's, and traced
        if element_id is None and direction not in SCROLL_DIRECTIONS:
            warn_caller(errors.unknown_scroll_direction(direction, SCROLL_DIRECTIONS))
        return page

    async def toggle(self, element: str | Element) -> Page:
        """Toggle a checkbox, check a radio button, or open or close a ``<details>``; returns the page.

        >>> s.toggle(page.find(role="checkbox", label="Remember me"))
        """
        return await self._act("toggle", {"element_id": _id_of(element)})

    async def clear(self, element: str | Element) -> Page:
        """Empty an input's value; returns the page.

        >>> s.clear(page.find(label="Email"))
        """
        return await self._act("clear", {"element_id": _id_of(element)})

    async def evaluate(self, expression: str) -> Any:
        """Run a JavaScript expression in the page and return its JSON-serialised result.

        The trace records that an evaluation happened, never the expression or its result.

        >>> s.evaluate("document.title")
        'Sign in'
        """
        payload = await self._call(
            "evaluate", {"session_id": self._require_session(), "expression": expression}
        )
        return answers.field_answer("evaluate", payload, "result")

    # -- stateless page tools (untraced: a fresh visit of the current URL) -----------------

    def _current_url(self) -> str:
        self._require_session()
        if self._page is None or not self._page.url:
            raise RuntimeError("the session has no current page URL")
        return self._page.url

    async def screenshot(self, width: int | None = None, height: int | None = None) -> Screenshot:
        """A PNG ``Screenshot`` of the current page's URL (``screenshot_page``), shown inline in Jupyter.

        ``screenshot_page`` takes only a URL: it loads it afresh in a temporary browser context
        (``width`` x ``height`` viewport, default 1280 x 720), so the image shows the page as a
        first visit sees it, not this session's live state (typed values, clicks, cookies). The
        site sees that second visit: a URL that works once (a sign-in or reset link) may show its
        error page. Untraced: the session's trace is unchanged, and the pixels never go into a trace.

        >>> s.screenshot()                 # the last expression of a cell: shows the image
        >>> s.screenshot(800, 600).save("page.png")
        """
        transport = await self.transport()
        return await take_screenshot(transport, self._current_url(), width, height)

    async def text(self, max_chars: int | None = None, selector: str | None = None) -> str:
        """The readable text of the current page's URL (``extract_text``), cut near ``max_chars`` when given.

        Text longer than ``max_chars`` is cut there and ends with ``...``.

        Like ``screenshot`` it reads a fresh visit of the URL, not the live session; untraced.
        ``selector`` narrows it (``"#id"``, a role such as ``"heading"``).

        >>> print(s.text(max_chars=500))
        """
        arguments: dict[str, Any] = {"url": self._current_url()}
        if max_chars is not None:
            arguments["max_chars"] = max_chars
        if selector is not None:
            arguments["selector"] = selector
        payload = await call_stateless(await self.transport(), "extract_text", arguments)
        # A lone surrogate (which print() could not send) shows as U+FFFD.
        return clean_text(answers.text_answer("extract_text", payload))

    async def links(self, selector: str | None = None) -> list[str]:
        """The link targets (hrefs) of the current page's URL, in document order (``extract_links``).

        Like ``screenshot`` it reads a fresh visit of the URL, not the live session; untraced.

        >>> s.links()                      # as written in the page, not resolved: e.g. ['/index.html', ...]
        """
        arguments: dict[str, Any] = {"url": self._current_url()}
        if selector is not None:
            arguments["selector"] = selector
        payload = await call_stateless(await self.transport(), "extract_links", arguments)
        return [
            clean_text(line) for line in answers.text_answer("extract_links", payload).splitlines() if line
        ]

    async def cookies(self, url: str | None = None) -> Cookies:
        """The browser session's cookies (those sent to ``url`` when given); reprs show only a count.

        >>> jar = s.cookies()
        >>> jar[0]["name"]        # readable by indexing, never displayed
        """
        arguments: dict[str, Any] = {"session_id": self._require_session()}
        if url is not None:
            arguments["url"] = url
        payload = await self._call("get_cookies", arguments, url_secrets(url))
        return Cookies(answers.cookies_answer("get_cookies", payload))

    async def set_cookies(self, cookies: Sequence[dict[str, Any]]) -> int:
        """Add cookies (dicts with ``name``, ``value`` and ``domain`` or ``url``); returns how many were set.

        >>> s.set_cookies([{"name": "sid", "value": "...", "domain": "127.0.0.1"}])
        1
        """
        secrets = [
            str(c.get(k))
            for c in cookies
            for k in ("name", "value", "path")
            if isinstance(c, dict) and c.get(k)
        ]
        secrets += [part for c in cookies if isinstance(c, dict) for part in url_secrets(c.get("url"))]
        payload = await self._call(
            "set_cookies", {"session_id": self._require_session(), "cookies": list(cookies)}, secrets
        )
        return answers.count_answer("set_cookies", payload, "set")

    async def clear_cookies(
        self, name: str | None = None, domain: str | None = None, url: str | None = None
    ) -> int:
        """Remove cookies (all, or those matching every filter given); returns how many were removed.

        >>> s.clear_cookies(name="sid")
        1
        """
        filters = {k: v for k, v in (("name", name), ("domain", domain), ("url", url)) if v is not None}
        payload = await self._call(
            "clear_cookies",
            {"session_id": self._require_session(), **filters},
            [*filters.values(), *url_secrets(url)],
        )
        return answers.count_answer("clear_cookies", payload, "cleared")

    async def close(self) -> TraceExport | FinalTraceOmitted | None:
        """Close the browser session and return its final trace (None when it was untraced).

        The final trace is a ``TraceExport`` ending with the ``close_page`` event, or a
        ``FinalTraceOmitted`` marker when it exceeded the server's response ceiling.

        Like Python's other ``close()`` methods it can be called again, without error: with no
        browser session open (already closed, or an ``open`` that failed) it only releases the
        connection this session made (a ``connect()``ed stdio server exits) and returns the
        final trace of the session it closed last (None when it never closed one).

        >>> final = s.close()
        >>> final.to_json("trace.json")
        >>> s.close() is final       # again: nothing left to close
        True
        """
        session_id = self._session_id
        if session_id is None:
            await self._release_transport()
            return self._final_trace
        try:
            try:
                payload = await self._call("close_page", {"session_id": session_id}, notify=False)
            finally:
                self._session_id = None
            self._final_trace = None
            try:  # the session is closed either way: an answer that breaks the contract is not kept
                final = answers.answer_object("close_page", payload).get("final_trace")
                if final is not None:
                    self._final_trace = answers.answered_final_trace(final)
            finally:
                await self._notify("close_page")  # after final_trace is set: live views show it
        finally:  # failed or interrupted too: a connection this session made must not outlive it
            await self._release_transport()
        return self._final_trace

    async def _release_transport(self) -> None:
        if not self._listeners:
            self._unwatch_transport()
        if self._owns_transport and self._transport is not None:
            transport, self._transport = self._transport, None
            await transport.aclose()

    # -- replay validation ----------------------------------------------------------------

    async def replay_validate(
        self, sequence: int, confirmed: bool = False, *, trace_id: str | None = None
    ) -> ReplayPlan:
        """Check whether retained event ``sequence`` could be replayed exactly now; never executes it.

        The checks run in the contract's order and the first failure names the drift.
        ``sequence`` may be any integer type (e.g. a numpy integer from a DataFrame column).
        ``trace_id`` defaults to this session's; give an export's to check that the trace was
        recorded here (another session's is refused as ``cross_session``).

        >>> plan = s.replay_validate(2)
        >>> plan.status, plan.drift          # e.g. ('refused', 'state_drift')
        >>> s.replay_validate(2, confirmed=True)
        >>> s.replay_validate(2, trace_id=pnb.load_trace("trace.json").trace_id)
        """
        return await self._replay_plan(operator.index(sequence), confirmed, trace_id, None)

    async def _replay_plan(
        self, sequence: int, confirmed: bool, trace_id: str | None, actions: dict[int, str] | None
    ) -> ReplayPlan:
        arguments = {
            "session_id": self._require_session(),
            "trace_id": self.trace_id if trace_id is None else trace_id,
            "sequence": sequence,
        }
        payload = await self._call("replay_validate", {**arguments, "confirmed": confirmed})
        return await self._plan_of("replay_validate", payload, sequence, actions)

    async def _plan_of(
        self, tool: str, payload: Any, asked: int, actions: dict[int, str] | None
    ) -> ReplayPlan:
        payload = answers.plan_answer(tool, payload, asked)
        sequence, drift = payload["sequence"], payload.get("drift")
        if drift == DRIFT_EVENT_NOT_RETAINED:  # the plan names the sequences that are retained now
            export = await self.trace.export()
            return ReplayPlan(payload, retained=[event["sequence"] for event in export.payload["events"]])
        if actions is None and "action" not in payload and drift not in _NO_EVENT_DRIFTS:
            export = await self.trace.export()  # a refusal omits the action; the trace records it
            actions = {event["sequence"]: event["action"] for event in export.payload["events"]}
        return ReplayPlan(payload, (actions or {}).get(sequence))

    async def replay(
        self, sequence: int, confirmed: bool = False, value: str | None = None, *, trace_id: str | None = None
    ) -> ReplayResult:
        """Execute retained event ``sequence`` again, on the live page, only if it validates now.

        The server runs replay_validate's checks and the execution in one critical section, so
        nothing can change the page in between; anything but a confirmed, validated plan raises
        ``ReplayRefused`` (with the plan) and executes nothing. Typed text, selected values and
        navigation URLs were never kept: pass them as ``value`` (same UTF-8 byte length; the same
        URL). The execution is traced as an ordinary call of that action. Needs a server whose
        operator enabled it: ``pnb.Session(replay_execution=True)`` or
        ``plasmate-nb serve --enable-replay-execution``.

        >>> s = pnb.Session(replay_execution=True)
        >>> s.replay_validate(2).status            # 'confirmation_required': review the plan
        >>> done = s.replay(2, confirmed=True)     # executes, traced as a new event
        >>> done.changes()
        >>> s.replay(3, confirmed=True, value="the text again")   # a type_text: same byte length
        """
        arguments: dict[str, Any] = {
            "trace_id": self.trace_id if trace_id is None else trace_id,
            "sequence": operator.index(sequence),
            "confirmed": confirmed,
        }
        if value is not None:
            arguments["value"] = value
        before = self._page
        try:
            answer = await self._call("replay_execute", {"session_id": self._require_session(), **arguments})
        except ToolError as error:
            if not error.message.startswith(errors.REPLAY_NOT_EXECUTED_PREFIX):
                # An action's own failure: scrubbed of the value like any typed text. (A refusal is
                # the server's plan, which holds no value; scrubbing it would mangle it.)
                secrets = () if value is None else (value, *url_secrets(value))
                raise scrubbed(error, secrets).with_hint(error.hint) from None
            refusal = parse_payload(error.message.removeprefix(errors.REPLAY_NOT_EXECUTED_PREFIX))
        else:
            answers.replayed_answer("replay_execute", answer, arguments["sequence"])
            page = await self._page_after("replay_execute", answer)
            return ReplayResult(before, page, answer["replayed_sequence"], answer["sequence"])
        # outside the except block: no chained original
        raise ReplayRefused(await self._plan_of("replay_execute", refusal, arguments["sequence"], None))

    async def replay_validate_all(self, confirmed: bool = False, progress: bool = True) -> ReadableFrame:
        """Validate every retained event; a table of sequence, action, status, drift and a summary in words.

        ``pnb.explain(code)`` says what a drift code means and what to do about it.

        >>> table = s.replay_validate_all(progress=False)
        >>> table.value_counts(["status", "drift"])
        """
        from tqdm.auto import tqdm

        export = await self.trace.export()
        actions = {event["sequence"]: event["action"] for event in export.payload["events"]}
        plans = [
            await self._replay_plan(sequence, confirmed, None, actions)
            for sequence in tqdm(actions, desc="replay_validate", unit="event", disable=not progress)
        ]
        return ReadableFrame(
            {
                "sequence": pd.array([p.sequence for p in plans], dtype="Int64"),
                **{
                    name: pd.array([getattr(p, name) for p in plans], dtype=STRING)
                    for name in ("action", "status", "drift", "summary")
                },
            }
        )

    async def replay_panel(self) -> ReplayPanel:
        """A widget to pick a retained event and validate or confirm its replay.

        Validating never executes. Only where the operator enabled replay execution
        (``Session(replay_execution=True)``, ``serve --enable-replay-execution``) does an
        Execute button appear, for a validated, confirmed plan (``ReplayPanel``).

        >>> s.replay_panel()      # the last expression of a cell: shows the widget
        """
        from .replay_panel import ReplayPanel  # lazy: ipywidgets only when a widget is built

        await self.transport()
        panel = ReplayPanel(self, self._loop)  # type: ignore[arg-type]
        await panel.arefresh()
        return panel

    # -- context manager ------------------------------------------------------------------

    async def __aenter__(self) -> AsyncSession:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._session_id is not None and self._close_on_exit:
            await self.close()
        await self._release_transport()

    def __repr__(self) -> str:
        state = (
            f"session_id={self._session_id!r}, trace_id={self._trace_id!r}" if self._session_id else "closed"
        )
        return f"{type(self).__name__}({state})"


class AsyncTrace:
    """``session.trace`` of an ``AsyncSession``: the trace tools of its browser session, awaitable.

    ``Trace`` (a ``Session``'s ``trace``) offers the same methods without ``await``.

    >>> status = await s.trace.status()
    """

    def __init__(self, session: AsyncSession) -> None:
        self._session = session
        self._sightings = Sightings()  # when this notebook saw what; never part of a trace

    async def _trace_call(self, tool: str) -> Any:
        return await self._session._call(tool, {"session_id": self._session._require_session()})

    async def status(self) -> TraceStatus:
        """The trace's mode, id, counters and bounds (``trace_status``).

        >>> st = s.trace.status()
        >>> st.retained_events, st.max_events, st.evicted_events
        """
        status = answers.answered_status(await self._trace_call("trace_status"), "trace_status")
        self._sightings.saw(status.payload)
        return status

    async def export(self) -> TraceExport:
        """A bounded export of the retained events (``trace_export``); nothing is written to disk.

        >>> s.trace.export().to_json("trace.json")
        """
        export = answers.answered_export(await self._trace_call("trace_export"))
        self._sightings.saw(export.payload)
        return export

    async def events(self, columns: str | Sequence[str] = "compact") -> ReadableFrame:
        """The retained events as a typed pandas table, one row per event.

        ``columns="compact"`` (the default) keeps what reads at a glance: sequence, action,
        outcome, error class, duration, target role, origins, what changed, what was redacted.
        ``columns="all"`` gives all 21 columns (also the target's keyed id, the ``has_page``
        flags and the sanitised parameters); a list of names picks columns.

        >>> s.trace.events()                                   # the compact table
        >>> s.trace.events(columns="all")                      # every column
        >>> s.trace.events(["sequence", "action", "direction", "pixels"])
        """
        return (await self.export()).events(columns)

    async def plot(self, x: str = "time") -> TraceFigure:
        """A matplotlib figure of this trace: retained bytes and events, drops marked, durations by action.

        It draws the counters as this notebook saw them (each status or export it received; a
        dashboard fetches one after every change), marking each eviction, clear and oversized
        drop, over the time the notebook saw them (``x="time"``, notebook wall-clock, never
        part of the trace) or over the sequence (``x="sequence"``); below, each retained
        event's duration by action, coloured by outcome. Needs matplotlib (``pip install
        'plasmate_nb[lab]'``). An export has no times: ``export.plot()`` draws over the sequence.

        >>> s.trace.plot()                    # the last expression of a cell: shows the figure
        >>> s.trace.plot(x="sequence").savefig("trace.png")
        """
        plot_trace = plotter()
        export = await self.export()
        return plot_trace(export.payload, self._sightings.of(export.trace_id), x)

    async def clear(self) -> TraceCleared:
        """Drop every retained event; sequence numbers continue and ``cleared_events`` counts them.

        >>> s.trace.clear().cleared_events
        """
        cleared = answers.answered_cleared(await self._trace_call("trace_clear"))
        self._sightings.saw(cleared.status.payload)
        return cleared

    async def dashboard(self, poll_interval: float | None = None) -> TraceDashboard:
        """A live ipywidgets dashboard of this trace: gauges, counters, redaction panel, events.

        It follows every change to the trace, whoever makes it. Over a transport that cannot
        hear other clients' calls (a remote server) it polls every ``REMOTE_POLL_SECONDS``
        seconds unless ``poll_interval`` says otherwise.

        >>> s.trace.dashboard()   # the last expression of a cell: shows the widget
        """
        from .dashboard import TraceDashboard  # lazy: ipywidgets only when a widget is built

        self._session._require_session()
        transport = await self._session.transport()
        if poll_interval is None and not getattr(transport, "observes_all_clients", False):
            poll_interval = REMOTE_POLL_SECONDS
        dashboard = TraceDashboard(self._session, self._session._loop, poll_interval)  # type: ignore[arg-type]
        await dashboard.arefresh()
        return dashboard


def _with_http(url: object) -> str | None:
    """``url`` with the ``http://`` it lacks, reduced to its origin (``/…`` for the rest), or None.

    Only when ``url`` starts with a host (``localhost:8888/x``, ``example.com/x``), not with
    another scheme (``mailto:``) or a path. The host is read as a browser (and the trace's
    ``origin``) reads it: a ``\\`` ends it like a ``/``, and text no browser takes for a host
    (a space, an encoded ``/``) gives no suggestion. The path, query and fragment are never
    shown: a trace keeps them secret.
    """
    if not isinstance(url, str) or "://" in url:
        return None
    text = clean(url)  # as a browser reads a URL
    if text.startswith(("/", "\\")):  # a path, not a host
        return None
    readable = origin("http://" + text)
    try:
        scheme = urlsplit(text).scheme
    except ValueError:
        return None
    if readable is None:
        return None
    host, _, port = readable.removeprefix("http://").rpartition(":")
    if scheme not in ("", host):
        return None
    rest = "/…" if userinfo_and_rest("http://" + text)[1].strip("/\\") else "/"
    return f"http://{host}{'' if port == '80' else f':{port}'}{rest}"


def _remote_transport(url: str | None, token: str | None, command: Sequence[str] | None) -> Transport:
    if (url is None) == (command is None):
        raise TypeError("connect() takes either url (streamable HTTP) or command= (stdio), not both")
    from ..client.mcp import HttpTransport, StdioTransport  # lazy: the remote backends pull in the MCP SDK

    if url is not None:
        return HttpTransport(url, token)
    return StdioTransport(list(command or ()))
