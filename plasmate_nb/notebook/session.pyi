# Generated from AsyncSession / AsyncTrace by `python -m plasmate_nb.notebook.session`; do not edit.
# tests/notebook/test_api_surface.py checks that it matches the runtime facade.

from collections.abc import Callable, Sequence
from typing import Any

from ..client.base import Transport
from ._session import AsyncTrace, TraceListener
from ._tables import ReadableFrame
from .cookies import Cookies
from .dashboard import TraceDashboard
from .export import FinalTraceOmitted, TraceCleared, TraceExport, TraceStatus
from .page import Element, Page
from .plots import TraceFigure
from .replay import ReplayPlan, ReplayResult
from .replay_panel import ReplayPanel
from .stateless import Screenshot

class Session:
    """One browser session, with plain (blocking) methods: the notebook's main object.

    By default it drives the process-wide embedded engine, started on first use; ``connect``
    reaches any MCP server speaking the contract and ``attach`` binds to a browser session
    someone else opened. Every method runs the ``AsyncSession`` core on one background event
    loop, so it works in scripts and inside Jupyter's running loop. ``with Session() as s:``
    closes the browser session on exit. ``Session(replay_execution=True)`` opts in to
    ``replay`` for the whole process (see ``AsyncSession``): every session, and the agents of a
    ``serve()`` started afterwards.

    >>> site = pnb.DemoSite().start()      # the bundled demo pages on 127.0.0.1
    >>> s = Session()
    >>> page = s.open(site.url("/login.html"), trace=True)
    >>> s.type_text(page.find(label="Email"), "analyst@example.test")
    >>> s.trace.events()
    >>> final = s.close()
    """
    def __init__(self, transport: Transport | None = ..., *, replay_execution: bool = ...) -> None: ...
    def __enter__(self) -> Session: ...
    def __exit__(self, *exc_info: object) -> None: ...
    @property
    def session_id(self) -> str | None:
        """The open browser session's id; None before ``open`` and after ``close``.

        >>> s.session_id      # a UUID, e.g. '3f2a9c1e-…'; give it to ``attach`` in another notebook
        """
    @property
    def trace_id(self) -> str | None:
        """The open browser session's trace id (stable for its whole life, even across clears).

        >>> s.trace_id == s.trace.status().trace_id
        True
        """
    @property
    def page(self) -> Page | None:
        """The page the last action left behind; None before the first ``open``.

        >>> s.page.find(label="Email")
        """
    @property
    def final_trace(self) -> TraceExport | FinalTraceOmitted | None:
        """What the last ``close()`` returned: the final export, an omitted marker, or None.

        >>> s.close()
        >>> s.final_trace.events()       # still there after the cell that closed the session
        """
    @property
    def trace(self) -> Trace:
        """The trace tools of this session: ``status``, ``export``, ``events``, ``clear``, ``dashboard``.

        >>> s.trace.events()  # one typed row per retained event
        """
    @classmethod
    def connect(cls, url: str | None = ..., *, token: str | None = ..., command: Sequence[str] | None = ...) -> Session:
        """A session over a remote MCP server: streamable HTTP at ``url`` or stdio ``command``.

        Give exactly one of ``url`` (with the server's bearer ``token``) or ``command``. Nothing
        connects until the first call; closing the session closes the connection, and a later
        ``open`` connects again to the same server. A server refuses private and loopback
        pages (such as ``DemoSite``'s) unless started with ``--allow-private-network``.

        >>> s = Session.connect("http://127.0.0.1:9272/mcp", token="...")
        >>> s = Session.connect(command=["plasmate-nb", "serve", "--allow-private-network"])
        """
    @classmethod
    def attach(cls, session_id: str, transport: Transport | None = ...) -> Session:
        """A session bound to an existing browser session, e.g. one an external agent opened.

        Its trace tools, replay checks and dashboard work as on a session you opened. Leaving
        its ``with`` block does not close the browser session; ``close()`` does.

        >>> watch = Session.attach(session_id)     # default: the embedded engine
        >>> watch.trace.dashboard()
        """
    def transport(self) -> Transport:
        """The ``Transport`` this session calls, creating the embedded engine's on first use.

        >>> s.transport()   # e.g. LoopBoundTransport(InProcessTransport())
        """
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
    def open(self, url: str, trace: bool = ..., som_answers: str = ...) -> Page:
        """Open ``url`` in a new browser session and return its page (traced unless ``trace=False``).

        Tracing is chosen here, once: it cannot be turned on later. One browser session per
        ``Session``; ``close()`` it before opening another. ``som_answers="changes"`` asks the
        server to answer later actions with only what changed; the session rebuilds each whole
        page from them, so pages look the same either way (the trace does too).

        >>> page = s.open(site.url("/login.html"), trace=True)   # site = pnb.DemoSite().start()
        >>> page = s.open(url, som_answers="changes")      # lighter answers on large pages
        """
    def navigate(self, url: str) -> Page:
        """Navigate the open page to ``url`` and return the new page.

        >>> s.navigate(site.url("/details.html")).title
        """
    def click(self, element: str | Element) -> Page:
        """Click ``element`` (an ``Element`` from ``page.find`` or its SOM id) and return the page after.

        >>> s.click(page.find(role="button", text="Sign in"))
        """
    def type_text(self, element: str | Element, text: str, append: bool = ...) -> Page:
        """Type ``text`` into an input (replacing its value unless ``append=True``); returns the page.

        The trace keeps only the text's UTF-8 byte length, never the text.

        >>> s.type_text(page.find(label="Email"), "analyst@example.test")
        """
    def select_option(self, element: str | Element, value: str) -> Page:
        """Select the option ``value`` (its value or visible text) of a select; returns the page.

        >>> s.select_option(page.find(label="Plan"), "Team")
        """
    def scroll(self, direction: str = ..., pixels: int = ..., element_id: str | Element | None = ...) -> Page:
        """Scroll the page by ``pixels`` in ``direction``, or bring ``element_id`` into view; returns the page.

        ``direction`` is ``"down"``, ``"up"``, ``"top"`` or ``"bottom"``; the tool takes any other
        as down, and the session warns when it is given one.

        >>> s.scroll("down", 600)
        >>> s.scroll(element_id=page.find(role="button", text="Sign in"))
        """
    def toggle(self, element: str | Element) -> Page:
        """Toggle a checkbox, check a radio button, or open or close a ``<details>``; returns the page.

        >>> s.toggle(page.find(role="checkbox", label="Remember me"))
        """
    def clear(self, element: str | Element) -> Page:
        """Empty an input's value; returns the page.

        >>> s.clear(page.find(label="Email"))
        """
    def evaluate(self, expression: str) -> Any:
        """Run a JavaScript expression in the page and return its JSON-serialised result.

        The trace records that an evaluation happened, never the expression or its result.

        >>> s.evaluate("document.title")
        'Sign in'
        """
    def screenshot(self, width: int | None = ..., height: int | None = ...) -> Screenshot:
        """A PNG ``Screenshot`` of the current page's URL (``screenshot_page``), shown inline in Jupyter.

        ``screenshot_page`` takes only a URL: it loads it afresh in a temporary browser context
        (``width`` x ``height`` viewport, default 1280 x 720), so the image shows the page as a
        first visit sees it, not this session's live state (typed values, clicks, cookies). The
        site sees that second visit: a URL that works once (a sign-in or reset link) may show its
        error page. Untraced: the session's trace is unchanged, and the pixels never go into a trace.

        >>> s.screenshot()                 # the last expression of a cell: shows the image
        >>> s.screenshot(800, 600).save("page.png")
        """
    def text(self, max_chars: int | None = ..., selector: str | None = ...) -> str:
        """The readable text of the current page's URL (``extract_text``), cut near ``max_chars`` when given.

        Text longer than ``max_chars`` is cut there and ends with ``...``.

        Like ``screenshot`` it reads a fresh visit of the URL, not the live session; untraced.
        ``selector`` narrows it (``"#id"``, a role such as ``"heading"``).

        >>> print(s.text(max_chars=500))
        """
    def links(self, selector: str | None = ...) -> list[str]:
        """The link targets (hrefs) of the current page's URL, in document order (``extract_links``).

        Like ``screenshot`` it reads a fresh visit of the URL, not the live session; untraced.

        >>> s.links()                      # as written in the page, not resolved: e.g. ['/index.html', ...]
        """
    def cookies(self, url: str | None = ...) -> Cookies:
        """The browser session's cookies (those sent to ``url`` when given); reprs show only a count.

        >>> jar = s.cookies()
        >>> jar[0]["name"]        # readable by indexing, never displayed
        """
    def set_cookies(self, cookies: Sequence[dict[str, Any]]) -> int:
        """Add cookies (dicts with ``name``, ``value`` and ``domain`` or ``url``); returns how many were set.

        >>> s.set_cookies([{"name": "sid", "value": "...", "domain": "127.0.0.1"}])
        1
        """
    def clear_cookies(self, name: str | None = ..., domain: str | None = ..., url: str | None = ...) -> int:
        """Remove cookies (all, or those matching every filter given); returns how many were removed.

        >>> s.clear_cookies(name="sid")
        1
        """
    def close(self) -> TraceExport | FinalTraceOmitted | None:
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
    def replay_validate(self, sequence: int, confirmed: bool = ..., *, trace_id: str | None = ...) -> ReplayPlan:
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
    def replay(self, sequence: int, confirmed: bool = ..., value: str | None = ..., *, trace_id: str | None = ...) -> ReplayResult:
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
    def replay_validate_all(self, confirmed: bool = ..., progress: bool = ...) -> ReadableFrame:
        """Validate every retained event; a table of sequence, action, status, drift and a summary in words.

        ``pnb.explain(code)`` says what a drift code means and what to do about it.

        >>> table = s.replay_validate_all(progress=False)
        >>> table.value_counts(["status", "drift"])
        """
    def replay_panel(self) -> ReplayPanel:
        """A widget to pick a retained event and validate or confirm its replay.

        Validating never executes. Only where the operator enabled replay execution
        (``Session(replay_execution=True)``, ``serve --enable-replay-execution``) does an
        Execute button appear, for a validated, confirmed plan (``ReplayPanel``).

        >>> s.replay_panel()      # the last expression of a cell: shows the widget
        """

class Trace:
    """``session.trace`` of a ``Session``: status, export, events table, clear and the live dashboard.

    >>> s.trace.status()
    >>> s.trace.events()
    >>> s.trace.dashboard()
    """
    def __init__(self, core: AsyncTrace) -> None: ...
    def status(self) -> TraceStatus:
        """The trace's mode, id, counters and bounds (``trace_status``).

        >>> st = s.trace.status()
        >>> st.retained_events, st.max_events, st.evicted_events
        """
    def export(self) -> TraceExport:
        """A bounded export of the retained events (``trace_export``); nothing is written to disk.

        >>> s.trace.export().to_json("trace.json")
        """
    def events(self, columns: str | Sequence[str] = ...) -> ReadableFrame:
        """The retained events as a typed pandas table, one row per event.

        ``columns="compact"`` (the default) keeps what reads at a glance: sequence, action,
        outcome, error class, duration, target role, origins, what changed, what was redacted.
        ``columns="all"`` gives all 21 columns (also the target's keyed id, the ``has_page``
        flags and the sanitised parameters); a list of names picks columns.

        >>> s.trace.events()                                   # the compact table
        >>> s.trace.events(columns="all")                      # every column
        >>> s.trace.events(["sequence", "action", "direction", "pixels"])
        """
    def plot(self, x: str = ...) -> TraceFigure:
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
    def clear(self) -> TraceCleared:
        """Drop every retained event; sequence numbers continue and ``cleared_events`` counts them.

        >>> s.trace.clear().cleared_events
        """
    def dashboard(self, poll_interval: float | None = ...) -> TraceDashboard:
        """A live ipywidgets dashboard of this trace: gauges, counters, redaction panel, events.

        It follows every change to the trace, whoever makes it. Over a transport that cannot
        hear other clients' calls (a remote server) it polls every ``REMOTE_POLL_SECONDS``
        seconds unless ``poll_interval`` says otherwise.

        >>> s.trace.dashboard()   # the last expression of a cell: shows the widget
        """

def attach(session_id: str, transport: Transport | None = ...) -> Session:
    """A ``Session`` bound to an existing browser session, e.g. one an external agent opened.

    Same as ``Session.attach``: trace tables, dashboard and replay checks of that session;
    leaving ``with`` does not close it. The default transport is the embedded engine, the one
    ``pnb.serve()`` shares with agents.

    >>> watch = attach(session_id)
    >>> watch.trace.dashboard()
    """
