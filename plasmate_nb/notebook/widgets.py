"""The refresh plumbing the live ipywidgets views share (``TraceDashboard`` in ``dashboard``,
``ReplayPanel`` in ``replay_panel``).

Both views are fed by the tool contract only (trace_status, trace_export, replay_validate), so
they never show anything an export does not contain. They use only the session's public API
and refresh:
- on every ``session.subscribe`` notification: after each trace-changing call made through
  their session (awaited before that call returns, so the view is current when the cell
  finishes) and after other clients' calls that the transport hears (bursts coalesced);
- every ``poll_interval`` seconds, for transports that cannot notify (remote servers).
Outside a widget frontend they display as HTML / text snapshots.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable
from typing import Any, Protocol

import ipywidgets as w

from ..client.base import ToolError
from .export import FinalTraceOmitted, TraceExport, TraceStatus
from .replay import ReplayPlan, ReplayResult


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

    async def replay(
        self, sequence: int, confirmed: bool = False, value: str | None = None
    ) -> ReplayResult: ...


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


def _bundle(widget: w.Widget, html: str, text: str) -> dict[str, Any]:
    data = dict(widget._repr_mimebundle_() or {})
    data["text/html"] = html
    data["text/plain"] = text
    return data
