"""``AsyncSession``: the one async core of the notebook layer, over the tool contract only.

Privacy: typed text, selected values, cookie values and URLs are passed to the transport
and dropped; they are never stored on the session. Tool errors that echo one of them
(``Option not found: <value>``, ``Failed to fetch <url>: ...``) are re-raised scrubbed and
without the transport's traceback (whose frames hold the arguments).
"""

from __future__ import annotations

import asyncio
import operator
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pandas as pd

from ..client.base import ToolError, Transport
from ._tables import STRING
from .cookies import Cookies
from .export import FinalTraceOmitted, TraceCleared, TraceExport, TraceStatus
from .page import Element, Page
from .page import element_id as _id_of
from .replay import ReplayPlan

if TYPE_CHECKING:
    from .widgets import ReplayPanel, TraceDashboard

#: Calls after which a trace may have changed (traceable actions and trace_clear).
TRACE_CHANGING_TOOLS = frozenset(
    {
        "open_page", "navigate_to", "click", "type_text", "select_option", "scroll", "toggle", "clear",
        "close_page", "evaluate", "set_cookies", "clear_cookies", "trace_clear",
    }
)  # fmt: skip
REDACTED = "[redacted]"

#: ``await hook(tool)`` after each trace-changing call made through this session.
CallHook = Callable[[str], Awaitable[None]]


def _url_secrets(url: Any) -> list[str]:
    """The parts of ``url`` beyond its origin, which traces replace by a keyed fingerprint."""
    if not isinstance(url, str):
        return []
    parts: list[str] = [url]
    try:
        split = urlsplit(url)
    except ValueError:
        return parts
    userinfo = split.netloc.rpartition("@")[0]
    parts += [userinfo, split.path, split.query, split.fragment, url.partition("#")[0]]
    return [p for p in parts if p and p != "/"]


def _scrubbed(error: ToolError, secrets: Iterable[str]) -> ToolError:
    message = error.message
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        message = message.replace(secret, REDACTED)
    return ToolError(error.tool, message)


REMOTE_POLL_SECONDS = 1.0


class AsyncSession:
    """One browser session over a ``Transport`` (default: the embedded engine, started lazily).

    ``async with AsyncSession() as s:`` closes the browser session on exit.
    """

    def __init__(self, transport: Transport | None = None) -> None:
        self._transport = transport
        self._owns_transport = False
        self._close_on_exit = True
        self._loop: asyncio.AbstractEventLoop | None = None
        self._hooks: list[CallHook] = []
        self.session_id: str | None = None
        self.trace_id: str | None = None
        self.page: Page | None = None
        self.final_trace: TraceExport | FinalTraceOmitted | None = None
        self.trace = AsyncTrace(self)

    # -- construction ---------------------------------------------------------------------

    @classmethod
    def connect(
        cls, url: str | None = None, *, token: str | None = None, command: Sequence[str] | None = None
    ) -> AsyncSession:
        """A session over a remote MCP server: streamable HTTP at ``url`` or stdio ``command``."""
        session = cls(_remote_transport(url, token, command))
        session._owns_transport = True
        return session

    @classmethod
    async def attach(cls, session_id: str, transport: Transport | None = None) -> AsyncSession:
        """A session bound to an existing browser session (e.g. one an external agent opened).

        Leaving its ``async with`` block does not close it; ``close()`` does.
        """
        session = cls(transport)
        status = await session._call("trace_status", {"session_id": session_id})
        session.session_id, session.trace_id = session_id, status["trace_id"]
        session._close_on_exit = False
        return session

    async def transport(self) -> Transport:
        """The transport, creating the embedded engine's on first use."""
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        if self._transport is None:
            from ..client import embedded_transport  # lazy: starts nothing until first use

            self._transport = await embedded_transport()
        return self._transport

    # -- the tool contract ----------------------------------------------------------------

    async def _call(
        self, tool: str, arguments: dict[str, Any], secrets: Iterable[str] = (), *, notify: bool = True
    ) -> Any:
        transport = await self.transport()
        failure: ToolError | None = None
        try:
            payload = await transport.call(tool, arguments)
        except ToolError as error:
            failure = _scrubbed(error, secrets)
        if notify:
            await self._notify(tool)
        if failure is not None:
            raise failure  # raised outside the except block: no chained original, no transport frames
        return payload

    async def _notify(self, tool: str) -> None:
        if tool in TRACE_CHANGING_TOOLS:
            for hook in list(self._hooks):
                await hook(tool)

    def _require_session(self) -> str:
        if self.session_id is None:
            raise RuntimeError("no open browser session: call open(url) first")
        return self.session_id

    async def _act(self, tool: str, arguments: dict[str, Any], secrets: Iterable[str] = ()) -> Page:
        payload = await self._call(tool, {"session_id": self._require_session(), **arguments}, secrets)
        self.page = Page(payload)
        return self.page

    # -- actions --------------------------------------------------------------------------

    async def open(self, url: str, trace: bool = True) -> Page:
        """Open ``url`` in a new browser session (traced unless ``trace=False``)."""
        if self.session_id is not None:
            raise RuntimeError("this session already has an open browser session; close() it or start a new one")
        payload = await self._call("open_page", {"url": url, "trace": trace}, _url_secrets(url))
        self.session_id = payload["session_id"]
        self.final_trace = None
        status = await self._call("trace_status", {"session_id": self.session_id})
        self.trace_id = status["trace_id"]
        self.page = Page(payload)
        return self.page

    async def navigate(self, url: str) -> Page:
        return await self._act("navigate_to", {"url": url}, _url_secrets(url))

    async def click(self, element: str | Element) -> Page:
        return await self._act("click", {"element_id": _id_of(element)})

    async def type_text(self, element: str | Element, text: str, append: bool = False) -> Page:
        return await self._act("type_text", {"element_id": _id_of(element), "text": text, "append": append}, [text])

    async def select_option(self, element: str | Element, value: str) -> Page:
        return await self._act("select_option", {"element_id": _id_of(element), "value": value}, [value])

    async def scroll(self, direction: str = "down", pixels: int = 300, element_id: str | Element | None = None) -> Page:
        arguments: dict[str, Any] = {"direction": direction, "pixels": pixels}
        if element_id is not None:
            arguments["element_id"] = _id_of(element_id)
        return await self._act("scroll", arguments)

    async def toggle(self, element: str | Element) -> Page:
        return await self._act("toggle", {"element_id": _id_of(element)})

    async def clear(self, element: str | Element) -> Page:
        return await self._act("clear", {"element_id": _id_of(element)})

    async def evaluate(self, expression: str) -> Any:
        """Run a JavaScript expression in the page; returns its JSON-serialised result."""
        payload = await self._call("evaluate", {"session_id": self._require_session(), "expression": expression})
        return payload["result"]

    async def cookies(self, url: str | None = None) -> Cookies:
        arguments: dict[str, Any] = {"session_id": self._require_session()}
        if url is not None:
            arguments["url"] = url
        payload = await self._call("get_cookies", arguments)
        return Cookies(payload["cookies"])

    async def set_cookies(self, cookies: Sequence[dict[str, Any]]) -> int:
        """Inject cookies; returns how many the server accepted."""
        secrets = [str(c.get(k)) for c in cookies for k in ("name", "value") if isinstance(c, dict) and c.get(k)]
        payload = await self._call("set_cookies", {"session_id": self._require_session(), "cookies": list(cookies)}, secrets)
        return payload["set"]

    async def clear_cookies(self, name: str | None = None, domain: str | None = None, url: str | None = None) -> int:
        """Clear cookies (all, or those matching the filters); returns how many were removed."""
        filters = {k: v for k, v in (("name", name), ("domain", domain), ("url", url)) if v is not None}
        payload = await self._call("clear_cookies", {"session_id": self._require_session(), **filters}, filters.values())
        return payload["cleared"]

    async def close(self) -> TraceExport | FinalTraceOmitted | None:
        """Close the browser session; returns its final trace (None when it was untraced)."""
        session_id = self._require_session()
        try:
            payload = await self._call("close_page", {"session_id": session_id}, notify=False)
        finally:
            self.session_id = None
        final = payload.get("final_trace") if isinstance(payload, dict) else None
        if final is None:
            self.final_trace = None
        elif final.get("omitted") is True:
            self.final_trace = FinalTraceOmitted(final)
        else:
            self.final_trace = TraceExport(final)
        await self._notify("close_page")  # after final_trace is set: live views show it
        await self._release_transport()
        return self.final_trace

    async def _release_transport(self) -> None:
        if self._owns_transport and self._transport is not None:
            transport, self._transport = self._transport, None
            await transport.aclose()

    # -- replay validation ----------------------------------------------------------------

    async def replay_validate(self, sequence: int, confirmed: bool = False) -> ReplayPlan:
        """Validate retained event ``sequence`` for replay. Never executes anything.

        ``sequence`` may be any integer type (e.g. a numpy integer from a DataFrame column).
        """
        sequence = operator.index(sequence)
        arguments = {"session_id": self._require_session(), "trace_id": self.trace_id, "sequence": sequence}
        payload = await self._call("replay_validate", {**arguments, "confirmed": confirmed})
        return ReplayPlan(payload)

    async def replay_validate_all(self, confirmed: bool = False, progress: bool = True) -> pd.DataFrame:
        """replay_validate for every retained event: sequence, action, status, drift, message."""
        from tqdm.auto import tqdm

        export = await self.trace.export()
        events = export.payload["events"]
        columns: dict[str, list[Any]] = {k: [] for k in ("sequence", "action", "status", "drift", "message")}
        for event in tqdm(events, desc="replay_validate", unit="event", disable=not progress):
            plan = await self.replay_validate(event["sequence"], confirmed)
            columns["sequence"].append(event["sequence"])
            columns["action"].append(event["action"])
            columns["status"].append(plan.status)
            columns["drift"].append(plan.drift)
            columns["message"].append(plan.message)
        return pd.DataFrame({k: pd.array(v, dtype="Int64" if k == "sequence" else STRING) for k, v in columns.items()})

    async def replay_panel(self) -> ReplayPanel:
        """A widget to pick a retained event and validate / confirm its replay."""
        from .widgets import ReplayPanel

        await self.transport()
        panel = ReplayPanel(self, self._loop)  # type: ignore[arg-type]
        await panel.arefresh()
        return panel

    # -- context manager ------------------------------------------------------------------

    async def __aenter__(self) -> AsyncSession:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self.session_id is not None and self._close_on_exit:
            await self.close()
        await self._release_transport()

    def __repr__(self) -> str:
        state = f"session_id={self.session_id!r}, trace_id={self.trace_id!r}" if self.session_id else "closed"
        return f"{type(self).__name__}({state})"


class AsyncTrace:
    """``session.trace``: the trace tools of the session's browser session."""

    def __init__(self, session: AsyncSession) -> None:
        self._session = session

    async def _trace_call(self, tool: str) -> Any:
        return await self._session._call(tool, {"session_id": self._session._require_session()})

    async def status(self) -> TraceStatus:
        return TraceStatus(await self._trace_call("trace_status"))

    async def export(self) -> TraceExport:
        return TraceExport(await self._trace_call("trace_export"))

    async def events(self) -> pd.DataFrame:
        return (await self.export()).events()

    async def clear(self) -> TraceCleared:
        return TraceCleared(await self._trace_call("trace_clear"))

    async def dashboard(self, poll_interval: float | None = None) -> TraceDashboard:
        """A live ipywidgets dashboard of this trace (see ``TraceDashboard``).

        Over a transport that cannot hear other clients' calls (a remote server), it polls
        every ``REMOTE_POLL_SECONDS`` unless ``poll_interval`` says otherwise.
        """
        from .widgets import TraceDashboard

        self._session._require_session()
        transport = await self._session.transport()
        if poll_interval is None and not getattr(transport, "observes_all_clients", False):
            poll_interval = REMOTE_POLL_SECONDS
        dashboard = TraceDashboard(self._session, self._session._loop, poll_interval)  # type: ignore[arg-type]
        await dashboard.arefresh()
        return dashboard


def _remote_transport(url: str | None, token: str | None, command: Sequence[str] | None) -> Transport:
    if (url is None) == (command is None):
        raise TypeError("connect() takes either url (streamable HTTP) or command= (stdio), not both")
    from .. import client  # lazy: the remote backends pull in the MCP SDK

    if url is not None:
        return client.HttpTransport(url, token)
    return client.StdioTransport(list(command or ()))
