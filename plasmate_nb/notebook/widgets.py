"""Live ipywidgets views of one session's trace: ``TraceDashboard`` and ``ReplayPanel``.

Both are fed by the tool contract only (trace_status, trace_export, replay_validate), so
they never show anything an export does not contain. They use only the session's public API
and refresh:
- on every ``session.subscribe`` notification: after each trace-changing call made through
  their session (awaited before that call returns, so the view is current when the cell
  finishes) and after other clients' calls that the transport hears (bursts coalesced);
- every ``poll_interval`` seconds, for transports that cannot notify (remote servers).
Outside a widget frontend they display as HTML / text snapshots.

Build them with ``s.trace.dashboard()`` and ``s.replay_panel()``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections import defaultdict
from collections.abc import Callable
from typing import Any, Protocol

import ipywidgets as w
import pandas as pd

from ..client.base import ToolError
from ._html import box, cell, gauge, table
from ._tables import events_frame
from .export import MAX_BYTES, MAX_EVENTS, FinalTraceOmitted, TraceExport, TraceStatus
from .replay import ReplayPlan

DASHBOARD_COLUMNS = (
    "sequence", "action", "outcome", "error_class", "duration_ms", "target_role", "before_origin",
    "state_changed", "url_changed", "redacted_fields", "redacted_bytes",
)  # fmt: skip


class _TraceTools(Protocol):
    async def status(self) -> TraceStatus: ...

    async def export(self) -> TraceExport: ...


class _LiveSession(Protocol):
    """What a live view uses of its session: ``AsyncSession``'s public API, nothing else.

    (A protocol rather than an import keeps ``_session`` -> ``widgets`` the only direction.)
    """

    @property
    def session_id(self) -> str | None: ...

    @property
    def trace_id(self) -> str | None: ...

    @property
    def final_trace(self) -> TraceExport | FinalTraceOmitted | None: ...

    @property
    def trace(self) -> _TraceTools: ...

    def subscribe(self, callback: Callable[[str], Any]) -> Callable[[], None]: ...

    async def replay_validate(self, sequence: int, confirmed: bool = False) -> ReplayPlan: ...


class _LiveView:
    """Refresh plumbing shared by the widgets: subscription, polling, ordering."""

    def __init__(
        self, session: _LiveSession, loop: asyncio.AbstractEventLoop, poll_interval: float | None
    ) -> None:
        self._session = session
        self._loop = loop
        self._session_id = session.session_id
        self._requested = 0  # refreshes are numbered; a result older than the last applied is dropped
        self._applied = 0
        self._scheduled: asyncio.Task[None] | None = None
        self._rerun = False
        self._stopped = False
        self._unsubscribe: Callable[[], None] | None = session.subscribe(self._trace_changed)
        self._poller = (
            asyncio.run_coroutine_threadsafe(self._poll(poll_interval), loop) if poll_interval else None
        )

    async def _fetch(self) -> Any:
        raise NotImplementedError

    def _apply(self, result: Any) -> None:
        raise NotImplementedError

    def _closed(self, reason: str) -> None:
        raise NotImplementedError

    async def arefresh(self) -> None:
        """Fetch and show the current state; a coroutine for the session's event loop.

        >>> await dashboard.arefresh()      # from code running on that loop
        """
        if self._stopped:
            return
        self._requested += 1
        ticket = self._requested
        try:
            result = await self._fetch()
        except (ToolError, RuntimeError) as error:
            if self._stopped:
                return  # closed meanwhile: the close has already said what happened
            gone = isinstance(error, ToolError) and error.message.startswith("Session not found")
            if not gone:
                self._closed(str(error))
                self.stop()
                return
            # Gone. If this very session is closing it, its close_page notification follows with
            # the final trace; so stop refreshing but keep listening for it.
            self._closed("browser session closed by another client")
            self._stopped = True
            if self._poller is not None:
                self._poller.cancel()
            return
        if ticket > self._applied:
            self._applied = ticket
            self._apply(result)

    def refresh(self) -> concurrent.futures.Future[None]:
        """Schedule a refresh from any thread; the returned future completes once it is shown.

        >>> dashboard.refresh().result(timeout=30)
        """
        return asyncio.run_coroutine_threadsafe(self.arefresh(), self._loop)

    async def _trace_changed(self, tool: str) -> None:
        # session.subscribe: runs on the session's loop; awaited for the session's own calls.
        if tool == "close_page" and self._session.session_id != self._session_id:
            self._session_closed()  # closed through this session: its final trace is known
            return
        if self._stopped:
            return
        if self._scheduled is None or self._scheduled.done():
            self._scheduled = asyncio.ensure_future(self._refresh_until_quiet())
        else:
            self._rerun = True  # coalesce bursts of calls into one more refresh
        await asyncio.shield(self._scheduled)

    def _session_closed(self) -> None:
        self._closed("browser session closed")
        self.stop()

    async def _refresh_until_quiet(self) -> None:
        self._rerun = True
        while self._rerun and not self._stopped:
            self._rerun = False
            await self.arefresh()

    async def _poll(self, interval: float) -> None:
        while not self._stopped:
            await asyncio.sleep(interval)
            await self.arefresh()

    def stop(self) -> None:
        """Stop live updates; the widgets keep showing their last state.

        >>> dashboard.stop()
        """
        self._stopped = True
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._poller is not None:
            self._poller.cancel()


def _counter(description: str) -> w.IntText:
    return w.IntText(value=0, description=description, disabled=True, style={"description_width": "7em"},
                     layout=w.Layout(width="14em"))  # fmt: skip


def _events_html(events: list[dict[str, Any]]) -> str:
    """The dashboard's events table: the readable columns (fingerprints are opaque, so left out)."""
    if not events:
        return "<i>no retained events</i>"
    shown = events_frame(events)[list(DASHBOARD_COLUMNS)]
    rows = [["" if pd.isna(value) else value for value in row] for row in shown.itertuples(index=False)]
    return table(DASHBOARD_COLUMNS, rows)


class TraceDashboard(_LiveView):
    """Counters, bound gauges, redaction panel and events table of one trace, kept live.

    Build it with ``s.trace.dashboard()``. ``widget`` is the ipywidgets tree and ``export``
    the last export shown; ``get_state()`` gives each part's widget state.

    >>> dashboard = s.trace.dashboard()
    >>> dashboard.get_state()["events_gauge"]["value"]
    """

    def __init__(
        self, session: _LiveSession, loop: asyncio.AbstractEventLoop, poll_interval: float | None = None
    ) -> None:
        self.export: TraceExport | None = None
        self.header = w.HTML()
        self.events_gauge = w.IntProgress(value=0, min=0, max=MAX_EVENTS, description="events")
        self.events_label = w.Label()
        self.bytes_gauge = w.IntProgress(value=0, min=0, max=MAX_BYTES, description="bytes")
        self.bytes_label = w.Label()
        self.counters = {
            "next_sequence": _counter("next sequence"),
            "evicted_events": _counter("evicted"),
            "oversized_events": _counter("oversized"),
            "cleared_events": _counter("cleared"),
        }
        self.redaction = w.HTML()
        self.events_table = w.HTML()
        self.widget = w.VBox(
            [
                self.header,
                w.HBox([self.events_gauge, self.events_label]),
                w.HBox([self.bytes_gauge, self.bytes_label]),
                w.HBox(list(self.counters.values())),
                self.redaction,
                self.events_table,
            ]
        )
        self._bounds = (MAX_EVENTS, MAX_BYTES)
        self._bounds_known = False
        self._state_note = "live"
        super().__init__(session, loop, poll_interval)

    async def _fetch(self) -> TraceExport:
        if not self._bounds_known:  # the bounds are in trace_status only, and never change
            status = await self._session.trace.status()
            self._bounds, self._bounds_known = (status.max_events, status.max_bytes), True
        return await self._session.trace.export()

    def _apply(self, export: TraceExport) -> None:
        self.export = export
        p = export.payload
        max_events, max_bytes = self._bounds
        self.header.value = self._header_html()
        self.events_gauge.max, self.events_gauge.value = max_events, p["retained_events"]
        self.events_label.value = f"{p['retained_events']} / {max_events} retained events"
        self.bytes_gauge.max, self.bytes_gauge.value = max_bytes, p["retained_bytes"]
        self.bytes_label.value = f"{p['retained_bytes']:,} / {max_bytes:,} retained bytes"
        for name, widget in self.counters.items():
            widget.value = p[name]
        self.redaction.value = redaction_html(p)
        self.events_table.value = _events_html(p["events"])

    def _session_closed(self) -> None:
        final = self._session.final_trace
        if isinstance(final, TraceExport):
            self._applied = self._requested = self._requested + 1
            self._apply(final)
        self._closed("browser session closed; showing its final trace" if final else "browser session closed")
        self.stop()

    def _closed(self, reason: str) -> None:
        self._state_note = reason
        self.header.value = self._header_html()

    def _header_html(self) -> str:
        trace_id = self.export.trace_id if self.export else self._session.trace_id
        return f"<b>plasmate.trace.v1</b> · trace_id <code>{cell(trace_id)}</code> · <i>{cell(self._state_note)}</i>"

    def get_state(self) -> dict[str, dict[str, Any]]:
        """The ipywidgets state of each part, by name (plain, JSON-serialisable dicts).

        >>> dashboard.get_state()["next_sequence"]["value"]
        """
        parts = {
            "header": self.header,
            "events_gauge": self.events_gauge,
            "events_label": self.events_label,
            "bytes_gauge": self.bytes_gauge,
            "bytes_label": self.bytes_label,
            "redaction": self.redaction,
            "events_table": self.events_table,
            **self.counters,
        }
        return {name: widget.get_state() for name, widget in parts.items()}

    def snapshot_html(self) -> str:
        """The dashboard's current content as static HTML, for frontends without widgets.

        >>> html = dashboard.snapshot_html()
        """
        if self.export is None:
            return box("Trace dashboard", f"<div>{cell(self._state_note)}</div>")
        p = self.export.payload
        max_events, max_bytes = self._bounds
        body = (
            f"<div>{self._header_html()}</div>"
            + gauge("retained events", p["retained_events"], max_events)
            + gauge("retained bytes", p["retained_bytes"], max_bytes)
            + table(("counter", "value"), [(name, p[name]) for name in self.counters])
            + self.redaction.value
            + self.events_table.value
        )
        return box("Trace dashboard", body)

    def __repr__(self) -> str:
        if self.export is None:
            return f"TraceDashboard({self._state_note})"
        p = self.export.payload
        return (
            f"TraceDashboard({self._state_note}: events={p['retained_events']}/{self._bounds[0]}, "
            f"bytes={p['retained_bytes']}/{self._bounds[1]}, next_sequence={p['next_sequence']}, "
            f"evicted={p['evicted_events']}, oversized={p['oversized_events']}, cleared={p['cleared_events']})"
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return _bundle(self.widget, self.snapshot_html(), repr(self))


def redaction_html(payload: dict[str, Any]) -> str:
    """Per action: events, redacted fields, values redacted and their byte lengths; the omitted list."""
    by_action: dict[str, dict[str, Any]] = defaultdict(lambda: {"events": 0, "fields": set(), "lengths": []})
    omitted: set[str] = set()
    for event in payload["events"]:
        row = by_action[event["action"]]
        row["events"] += 1
        row["fields"].update(event["redaction"]["redacted_fields"])
        value = event["parameters"].get("value")
        if isinstance(value, dict):
            row["lengths"].append(value["byte_length"])
        omitted.update(event["redaction"]["omitted_fields"])
    rows = [
        (
            action,
            r["events"],
            ", ".join(sorted(r["fields"])) or "—",
            len(r["lengths"]),
            ", ".join(map(str, r["lengths"])) or "—",
        )
        for action, r in sorted(by_action.items())
    ]
    body = table(("action", "events", "redacted fields", "values redacted", "byte lengths"), rows)
    policy = f"<div>omitted by policy: {cell(', '.join(sorted(omitted)) or '(no retained events)')}</div>"
    return f"<div><b>Redaction</b> — {cell(payload['redaction_policy'])}</div>{body}{policy}"


def _bundle(widget: w.Widget, html: str, text: str) -> dict[str, Any]:
    data = dict(widget._repr_mimebundle_() or {})
    data["text/html"] = html
    data["text/plain"] = text
    return data


class ReplayPanel(_LiveView):
    """Pick a retained event, then Validate or Confirm; shows the ``ReplayPlan``. Never executes.

    Build it with ``s.replay_panel()``; its event list follows the session's trace.

    >>> panel = s.replay_panel()
    >>> panel.validate(2).result().status
    """

    def __init__(
        self, session: _LiveSession, loop: asyncio.AbstractEventLoop, poll_interval: float | None = None
    ) -> None:
        self.plan: ReplayPlan | None = None
        self.events = w.Dropdown(options=[], description="event")
        self.validate_button = w.Button(description="Validate", tooltip="replay_validate(confirmed=False)")
        self.confirm_button = w.Button(
            description="Confirm",
            button_style="warning",
            tooltip="replay_validate(confirmed=True); still never executes",
        )
        self.output = w.HTML("<i>pick an event and press Validate</i>")
        self.validate_button.on_click(lambda _: self.validate(confirmed=False))
        self.confirm_button.on_click(lambda _: self.validate(confirmed=True))
        self.widget = w.VBox([w.HBox([self.events, self.validate_button, self.confirm_button]), self.output])
        super().__init__(session, loop, poll_interval)

    async def _fetch(self) -> TraceExport:
        return await self._session.trace.export()

    def _apply(self, export: TraceExport) -> None:
        options = []
        for event in export.payload["events"]:
            target = f" · {event['target']['role']}" if "target" in event else ""
            options.append(
                (f"{event['sequence']} · {event['action']} · {event['outcome']}{target}", event["sequence"])
            )
        current = self.events.value
        self.events.options = options
        if current in {value for _, value in options}:
            self.events.value = current

    def _closed(self, reason: str) -> None:
        self.output.value = f"<i>{cell(reason)}</i>"
        self.validate_button.disabled = self.confirm_button.disabled = True

    def validate(
        self, sequence: int | None = None, confirmed: bool = False
    ) -> concurrent.futures.Future[ReplayPlan]:
        """Validate ``sequence`` (default: the selected event) from any thread; the future yields the plan.

        >>> plan = panel.validate(2, confirmed=True).result(timeout=30)
        """
        return asyncio.run_coroutine_threadsafe(self._validate(sequence, confirmed), self._loop)

    async def _validate(self, sequence: int | None, confirmed: bool) -> ReplayPlan:
        chosen = self.events.value if sequence is None else sequence
        if chosen is None:
            raise LookupError("no retained event to validate")
        self.plan = await self._session.replay_validate(chosen, confirmed)
        self.output.value = self.plan._repr_html_()
        return self.plan

    def get_state(self) -> dict[str, dict[str, Any]]:
        """The ipywidgets state of each part (events, validate, confirm, output), by name.

        >>> panel.get_state()["events"]["_options_labels"]
        """
        parts = {
            "events": self.events,
            "validate": self.validate_button,
            "confirm": self.confirm_button,
            "output": self.output,
        }
        return {name: widget.get_state() for name, widget in parts.items()}

    def __repr__(self) -> str:
        return f"ReplayPanel(events={len(self.events.options)}, plan={self.plan!r})"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        html = box("Replay panel", self.plan._repr_html_() if self.plan else "<i>no plan yet</i>")
        return _bundle(self.widget, html, repr(self))
