"""``TraceDashboard``: one trace's counters, bound gauges, redaction panel and events table,
kept live (the refresh plumbing is in ``widgets``). Build it with ``s.trace.dashboard()``."""

from __future__ import annotations

import asyncio
from typing import Any

import ipywidgets as w
from IPython.display import DisplayHandle, display

from ._dashboard_card import (
    FIGURES,
    card_html,
    events_html,
    explanation,
    figures_html,
    gauges_html,
    levels,
    redaction_html,
    side_by_side,
)
from ._html import cell
from .export import MAX_BYTES, MAX_EVENTS, TraceExport
from .widgets import _bundle, _LiveSession, _LiveView


class TraceDashboard(_LiveView):
    """Counters, bound gauges, redaction panel and events table of one trace, kept live.

    Build it with ``s.trace.dashboard()``. ``widget`` is the ipywidgets view (one HTML card),
    ``export`` the last export shown, ``get_state()`` what each part shows. The gauges turn
    amber at 80 % of a bound and red once events were evicted or dropped. Displayed in a
    notebook, the output's HTML fallback follows the card too, in frontends that apply
    display updates (VS Code, Colab, nbclient); JupyterLab keeps the last state in a saved
    notebook when widget state saving is on (``make lab`` turns it on).

    >>> dashboard = s.trace.dashboard()
    >>> dashboard.get_state()["events_gauge"]
    {'value': 1, 'max': 128, 'level': 'ok'}
    """

    def __init__(
        self, session: _LiveSession, loop: asyncio.AbstractEventLoop, poll_interval: float | None = None
    ) -> None:
        self.export: TraceExport | None = None
        self.widget = w.HTML(layout=w.Layout(width="auto"))  # fills the output area, margins included
        self._bounds = (MAX_EVENTS, MAX_BYTES)
        self._bounds_known = False
        self._state_note = "live"
        self._parts: dict[str, dict[str, Any]] = {}
        self._displays: list[DisplayHandle] = []
        super().__init__(session, loop, poll_interval)
        self._render()

    async def _fetch(self) -> TraceExport:
        if not self._bounds_known:  # the bounds are in trace_status only, and never change
            status = await self._session.trace.status()
            self._bounds, self._bounds_known = (status.max_events, status.max_bytes), True
        return await self._session.trace.export()

    def _apply(self, export: TraceExport) -> None:
        self.export = export
        self._render()

    def _session_closed(self) -> None:
        final = self._session.final_trace
        if isinstance(final, TraceExport):
            self._applied = self._requested = self._requested + 1
            self.export = final
        self._closed("browser session closed; showing its final trace" if final else "browser session closed")
        self.stop()

    def _closed(self, reason: str) -> None:
        self._state_note = reason
        self._render()

    def _header_html(self) -> str:
        trace_id = self.export.trace_id if self.export else self._session.trace_id
        # Said so in the card itself: a saved notebook reopened without its kernel shows the last state.
        note = "live while its kernel runs" if self._state_note == "live" else self._state_note
        return (
            f"<b>Trace dashboard</b> · plasmate.trace.v1 · trace_id <code>{cell(trace_id)}</code> · "
            f"<i>{cell(note)}</i>"
        )

    def _render(self) -> None:
        """Show the current export (or the note alone) in the widget and in every displayed output."""
        header = self._header_html()
        self._parts = {"header": {"value": header}}
        if self.export is None:
            self.widget.value = card_html(header, "")
        else:
            p, (max_events, max_bytes) = self.export.payload, self._bounds
            level = levels(p, self._bounds)
            self._parts.update(
                events_gauge={"value": p["retained_events"], "max": max_events, "level": level["events"]},
                bytes_gauge={"value": p["retained_bytes"], "max": max_bytes, "level": level["bytes"]},
                **{name: {"value": p[name]} for name in FIGURES},
                explanation={"value": explanation(p, self._bounds)},
                redaction={"value": redaction_html(p)},
                events_table={"value": events_html(p["events"])},
            )
            body = (
                figures_html(p)
                + gauges_html(p, self._bounds)
                + side_by_side(self._parts["events_table"]["value"], self._parts["redaction"]["value"])
            )
            self.widget.value = card_html(header, body)
        for handle in self._displays:
            handle.update(self._repr_mimebundle_(), raw=True)

    def get_state(self) -> dict[str, dict[str, Any]]:
        """What each part of the card shows, by name (plain, JSON-serialisable dicts).

        Gauges give ``value``, ``max`` and ``level`` (``ok``, ``near`` from 80 % of the bound,
        ``dropping`` once events were evicted or dropped); counters, the explanation, the
        redaction panel and the events table give ``value``.

        >>> dashboard.get_state()["next_sequence"]["value"]
        2
        """
        return {name: dict(part) for name, part in self._parts.items()}

    def snapshot_html(self) -> str:
        """The dashboard's card as static HTML (the widget shows the same), for frontends without widgets.

        >>> html = dashboard.snapshot_html()
        """
        return str(self.widget.value)

    def __repr__(self) -> str:
        if self.export is None:
            return f"TraceDashboard({self._state_note})"
        p = self.export.payload
        return (
            f"TraceDashboard({self._state_note}: events={p['retained_events']}/{self._bounds[0]}, "
            f"bytes={p['retained_bytes']}/{self._bounds[1]}, next_sequence={p['next_sequence']}, "
            f"evicted={p['evicted_events']}, oversized={p['oversized_events']}, cleared={p['cleared_events']})"
        )

    def _ipython_display_(self) -> None:
        # Displayed with an id, so each refresh also replaces the output's HTML and text fallback:
        # what a saved notebook, nbconvert or a frontend without widgets shows is the last state.
        handle = display(self._repr_mimebundle_(), raw=True, display_id=True)
        if isinstance(handle, DisplayHandle):
            self._displays.append(handle)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return _bundle(self.widget, self.snapshot_html(), repr(self))
