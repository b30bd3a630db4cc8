"""``ReplayPanel``: pick a retained event, validate or confirm it, read the ``ReplayPlan``
(the refresh plumbing is in ``widgets``). Build it with ``s.replay_panel()``."""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Any

import ipywidgets as w

from ._html import box, cell
from .export import TraceExport
from .replay import ReplayPlan
from .widgets import _bundle, _LiveSession, _LiveView


class ReplayPanel(_LiveView):
    """Pick a retained event, then Validate or Confirm; shows the ``ReplayPlan``. Never executes.

    Build it with ``s.replay_panel()``; its event list follows the session's trace. The
    buttons stay disabled until an event is picked (and once the session is closed).

    >>> panel = s.replay_panel()
    >>> panel.validate(2).result().status
    """

    def __init__(
        self, session: _LiveSession, loop: asyncio.AbstractEventLoop, poll_interval: float | None = None
    ) -> None:
        self.plan: ReplayPlan | None = None
        self._ended = False
        # Sized to its longest label (no fixed width cuts "12 · select_option · select · success").
        self.events = w.Dropdown(
            options=[],
            value=None,
            description="event",
            style={"description_width": "initial"},
            layout=w.Layout(width="auto", min_width="18em", max_width="100%"),
        )
        self.validate_button = w.Button(
            description="Validate", tooltip="replay_validate(sequence): checks only", disabled=True
        )
        self.confirm_button = w.Button(
            description="Confirm",
            button_style="warning",
            tooltip="replay_validate(sequence, confirmed=True): still never executes",
            disabled=True,
        )
        self.output = w.HTML("<i>pick an event, then press Validate</i>")
        self.validate_button.on_click(lambda _: self.validate(confirmed=False))
        self.confirm_button.on_click(lambda _: self.validate(confirmed=True))
        self.events.observe(lambda _: self._enable_buttons(), names="value")
        row = w.HBox(
            [self.events, self.validate_button, self.confirm_button],
            layout=w.Layout(flex_flow="row wrap", align_items="center"),
        )
        self.widget = w.VBox([row, self.output])
        super().__init__(session, loop, poll_interval)

    def _enable_buttons(self) -> None:
        idle = self._ended or self.events.value is None
        self.validate_button.disabled = self.confirm_button.disabled = idle

    async def _fetch(self) -> TraceExport:
        return await self._session.trace.export()

    def _apply(self, export: TraceExport) -> None:
        options = []
        for event in export.payload["events"]:
            target = f" on {event['target']['role']}" if "target" in event else ""
            options.append(
                (f"{event['sequence']} · {event['action']}{target} · {event['outcome']}", event["sequence"])
            )
        current = self.events.value
        self.events.options = options
        self.events.value = current if current in {value for _, value in options} else None
        self._enable_buttons()

    def _closed(self, reason: str) -> None:
        self.output.value = f"<i>{cell(reason)}</i>"
        self._ended = True
        self._enable_buttons()

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
