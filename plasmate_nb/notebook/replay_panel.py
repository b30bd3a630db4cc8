"""``ReplayPanel``: pick a retained event, validate or confirm it, read the ``ReplayPlan``, and
(where the operator enabled it) execute it (the refresh plumbing is in ``widgets``). Build it
with ``s.replay_panel()``.

The panel never takes a value to type or select: a text field would keep it in widget state,
which a saved notebook stores. Replays that need one are done with ``s.replay(..., value=...)``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Any

import ipywidgets as w

from ..trace.constants import STATUS_VALIDATED, SUPPLIED_VALUE_ARGUMENT
from ._html import box, cell
from .export import TraceExport
from .replay import ReplayPlan, ReplayRefused, ReplayResult
from .widgets import _bundle, _LiveSession, _LiveView


class ReplayPanel(_LiveView):
    """Pick a retained event, then Validate or Confirm; shows the ``ReplayPlan``.

    Build it with ``s.replay_panel()``; its event list follows the session's trace. The
    buttons stay disabled until an event is picked (and once the session is closed). An
    Execute button appears only when the server offers replay execution (the plan says
    ``execution_available``) and is enabled only for the picked event's validated, confirmed
    plan; it then shows the page before and after and what changed.

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
        self.execute_button = w.Button(
            description="Execute",
            button_style="danger",
            tooltip="replay(sequence, confirmed=True): checks again, then executes, in one step",
            disabled=True,
            layout=w.Layout(display="none"),  # shown once the server says it can execute
        )
        self.result: ReplayResult | None = None
        self.output = w.HTML("<i>pick an event, then press Validate</i>")
        self.validate_button.on_click(lambda _: self._pressed(self.validate(confirmed=False)))
        self.confirm_button.on_click(lambda _: self._pressed(self.validate(confirmed=True)))
        self.execute_button.on_click(lambda _: self._pressed(self.execute()))
        self.events.observe(lambda _: self._enable_buttons(), names="value")
        row = w.HBox(
            [self.events, self.validate_button, self.confirm_button, self.execute_button],
            layout=w.Layout(flex_flow="row wrap", align_items="center"),
        )
        self.widget = w.VBox([row, self.output])
        super().__init__(session, loop, poll_interval)

    def _pressed(self, work: concurrent.futures.Future[Any]) -> None:
        """A button's work runs on the session's loop, where its failure would reach no one (the
        button would seem to do nothing): it is shown in the output instead."""
        work.add_done_callback(self._show_failure)

    def _show_failure(self, work: concurrent.futures.Future[Any]) -> None:
        error = None if work.cancelled() else work.exception()
        if error is None:
            return
        hint = getattr(error, "hint", None)
        said = f"<div>{cell(str(error))}</div>" + (f"<div><i>{cell(hint)}</i></div>" if hint else "")
        self.output.value = box(type(error).__name__, said)
        self._enable_buttons()

    def _enable_buttons(self) -> None:
        idle = self._ended or self.events.value is None
        self.validate_button.disabled = self.confirm_button.disabled = idle
        self.execute_button.disabled = idle or not self._executable()

    def _executable(self) -> bool:
        """The picked event's plan is validated and confirmed, here execution exists, and the
        action needs no value (the panel never takes one)."""
        plan = self.plan
        return (
            plan is not None
            and plan.execution_available
            and plan.status == STATUS_VALIDATED
            and plan.sequence == self.events.value
            and plan.action not in SUPPLIED_VALUE_ARGUMENT
        )

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
        self.output.value = self.plan._repr_html_() + self._value_note()
        if self.plan.execution_available:
            self.execute_button.layout.display = None
        self._enable_buttons()
        return self.plan

    def _value_note(self) -> str:
        plan = self.plan
        if plan is None or not plan.execution_available or plan.action not in SUPPLIED_VALUE_ARGUMENT:
            return ""
        return (
            f"<p><i>{cell(plan.action)} needs the value the trace never kept: run "
            f"<code>s.replay({plan.sequence}, confirmed=True, value=...)</code> in a cell.</i></p>"
        )

    def execute(self) -> concurrent.futures.Future[ReplayResult | None]:
        """Execute the picked event's validated, confirmed plan from any thread.

        The future yields the ``ReplayResult`` (``None`` when the server refused: the output
        then shows why).

        >>> panel.validate(2, confirmed=True).result(timeout=30)
        >>> panel.execute().result(timeout=30).changes()
        """
        return asyncio.run_coroutine_threadsafe(self._execute(), self._loop)

    async def _execute(self) -> ReplayResult | None:
        if not self._executable():
            raise LookupError("validate and confirm the picked event first (execution must be available)")
        assert self.plan is not None
        self.execute_button.disabled = True
        try:
            self.result = await self._session.replay(self.plan.sequence, confirmed=True)
        except ReplayRefused as refused:  # the page changed since the plan was shown
            self.plan, self.result = refused.plan, None
            self.output.value = refused.plan._repr_html_()
            return None
        self.plan = None  # spent: a new plan is needed for another execution
        before = self.result.before.title if self.result.before is not None else "—"
        self.output.value = (
            f"<p>Before: <b>{cell(before or '')}</b> → after: <b>{cell(self.result.page.title or '')}</b></p>"
            + self.result._repr_html_()
        )
        self._enable_buttons()
        return self.result

    def get_state(self) -> dict[str, dict[str, Any]]:
        """The ipywidgets state of each part (events, validate, confirm, execute, output), by name.

        >>> panel.get_state()["events"]["_options_labels"]
        """
        parts = {
            "events": self.events,
            "validate": self.validate_button,
            "confirm": self.confirm_button,
            "execute": self.execute_button,
            "output": self.output,
        }
        return {name: widget.get_state() for name, widget in parts.items()}

    def __repr__(self) -> str:
        return f"ReplayPanel(events={len(self.events.options)}, plan={self.plan!r})"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        html = box("Replay panel", self.plan._repr_html_() if self.plan else "<i>no plan yet</i>")
        return _bundle(self.widget, html, repr(self))
