"""``Session``: the sync facade. Each method runs the ``AsyncSession`` core on the one
process-wide background loop, so it works in plain Python and inside Jupyter's running loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from .._loop import run_sync
from ..client.base import Transport
from ._session import AsyncSession
from .cookies import Cookies
from .export import FinalTraceOmitted, TraceCleared, TraceExport, TraceStatus
from .page import Element, Page
from .replay import ReplayPlan

if TYPE_CHECKING:
    from .widgets import ReplayPanel, TraceDashboard


class Session:
    """One browser session (default: on the embedded engine, started lazily).

    ``with Session() as s:`` closes the browser session on exit.
    """

    def __init__(self, transport: Transport | None = None, *, _core: AsyncSession | None = None) -> None:
        self._core = _core or AsyncSession(transport)
        self.trace = Trace(self._core)

    @classmethod
    def connect(
        cls, url: str | None = None, *, token: str | None = None, command: Sequence[str] | None = None
    ) -> Session:
        """A session over a remote MCP server: streamable HTTP at ``url`` or stdio ``command``."""

        async def build() -> AsyncSession:  # transports are built on the loop that will use them
            return AsyncSession.connect(url, token=token, command=command)

        return cls(_core=run_sync(build()))

    @classmethod
    def attach(cls, session_id: str, transport: Transport | None = None) -> Session:
        """A session bound to an existing browser session; leaving ``with`` does not close it."""
        return cls(_core=run_sync(AsyncSession.attach(session_id, transport)))

    session_id = property(lambda self: self._core.session_id)
    trace_id = property(lambda self: self._core.trace_id)
    page = property(lambda self: self._core.page)
    final_trace = property(lambda self: self._core.final_trace)

    def open(self, url: str, trace: bool = True) -> Page:
        return run_sync(self._core.open(url, trace))

    def navigate(self, url: str) -> Page:
        return run_sync(self._core.navigate(url))

    def click(self, element: str | Element) -> Page:
        return run_sync(self._core.click(element))

    def type_text(self, element: str | Element, text: str, append: bool = False) -> Page:
        return run_sync(self._core.type_text(element, text, append))

    def select_option(self, element: str | Element, value: str) -> Page:
        return run_sync(self._core.select_option(element, value))

    def scroll(self, direction: str = "down", pixels: int = 300, element_id: str | Element | None = None) -> Page:
        return run_sync(self._core.scroll(direction, pixels, element_id))

    def toggle(self, element: str | Element) -> Page:
        return run_sync(self._core.toggle(element))

    def clear(self, element: str | Element) -> Page:
        return run_sync(self._core.clear(element))

    def evaluate(self, expression: str) -> Any:
        return run_sync(self._core.evaluate(expression))

    def cookies(self, url: str | None = None) -> Cookies:
        return run_sync(self._core.cookies(url))

    def set_cookies(self, cookies: Sequence[dict[str, Any]]) -> int:
        return run_sync(self._core.set_cookies(cookies))

    def clear_cookies(self, name: str | None = None, domain: str | None = None, url: str | None = None) -> int:
        return run_sync(self._core.clear_cookies(name, domain, url))

    def close(self) -> TraceExport | FinalTraceOmitted | None:
        return run_sync(self._core.close())

    def replay_validate(self, sequence: int, confirmed: bool = False) -> ReplayPlan:
        return run_sync(self._core.replay_validate(sequence, confirmed))

    def replay_validate_all(self, confirmed: bool = False, progress: bool = True) -> pd.DataFrame:
        return run_sync(self._core.replay_validate_all(confirmed, progress))

    def replay_panel(self) -> ReplayPanel:
        return run_sync(self._core.replay_panel())

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc_info: object) -> None:
        run_sync(self._core.__aexit__(*exc_info))

    def __repr__(self) -> str:
        return repr(self._core).replace("AsyncSession", "Session", 1)


class Trace:
    """``session.trace`` (sync): status, export, events table, clear and the live dashboard."""

    def __init__(self, core: AsyncSession) -> None:
        self._trace = core.trace

    def status(self) -> TraceStatus:
        return run_sync(self._trace.status())

    def export(self) -> TraceExport:
        return run_sync(self._trace.export())

    def events(self) -> pd.DataFrame:
        return run_sync(self._trace.events())

    def clear(self) -> TraceCleared:
        return run_sync(self._trace.clear())

    def dashboard(self, poll_interval: float | None = None) -> TraceDashboard:
        return run_sync(self._trace.dashboard(poll_interval))


def attach(session_id: str, transport: Transport | None = None) -> Session:
    """A ``Session`` bound to an existing browser session (e.g. an external agent's)."""
    return Session.attach(session_id, transport)
