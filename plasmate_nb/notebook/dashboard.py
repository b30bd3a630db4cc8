"""``TraceDashboard``: one trace's counters, bound gauges, redaction panel and events table,
kept live (the refresh plumbing is in ``widgets``). Build it with ``s.trace.dashboard()``."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Any

import ipywidgets as w
import pandas as pd

from ._html import box, cell, gauge, table
from ._tables import events_frame
from .export import MAX_BYTES, MAX_EVENTS, TraceExport
from .widgets import _bundle, _LiveSession, _LiveView

DASHBOARD_COLUMNS = (
    "sequence", "action", "outcome", "error_class", "duration_ms", "target_role", "before_origin",
    "state_changed", "url_changed", "redacted_fields", "redacted_bytes",
)  # fmt: skip


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
