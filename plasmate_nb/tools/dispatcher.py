"""The traced dispatcher: the one place where a tool call becomes an engine call plus a trace event.

The MCP server and the in-process client both call :meth:`Dispatcher.call`, so a notebook sees
exactly what an MCP agent sees. The wrapping follows docs/contract.md#how-a-call-becomes-an-event:

- one lock per browser session is held from capturing ``before``, through the action, to
  appending the event, so two calls on one session never interleave and sequence order is
  execution order;
- exactly one event per traced call whose ``session_id`` resolves, failures included;
- ``open_page`` is recorded after success with a closed ``before``, and never writes into
  another session's trace whatever its arguments carry;
- ``close_page`` answers with ``final_trace`` built from a pre-close copy of the log.

Which method runs a tool, whether it acts on a session and whether it is traced all come from
the catalogue (:mod:`plasmate_nb.tools.catalogue`). Nothing here raises to the caller: every
failure is a :class:`ToolResult` with ``is_error``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from plasmate_nb.browser import ActionError, BrowserSession, Engine, EngineError
from plasmate_nb.browser.evaluate_result import evaluate_answer_text
from plasmate_nb.errors import (
    NO_PAGE_LOADED,
    REPLAY_EXECUTION_DISABLED,
    internal_error,
    replay_not_executed,
    session_not_found,
    unknown_tool,
)
from plasmate_nb.tools import crawl_policy, discovery, inspection, screenshot, text_tools
from plasmate_nb.tools.arguments import check_arguments
from plasmate_nb.tools.catalogue import (
    COARSE_TOOLS,
    DEFAULT_TOOLS,
    TOOLS,
    TOOLS_BY_NAME,
    TRACED_TOOLS,
    ToolSpec,
)
from plasmate_nb.tools.som_answers import SomAnswers
from plasmate_nb.tools.som_cache import SomCache
from plasmate_nb.tools.som_selector import select_som
from plasmate_nb.trace import (
    InvalidArguments,
    TraceLog,
    compact_json,
    parse_execute_request,
    parse_replay_request,
    parse_trace_handle,
    sanitize_parameters,
)
from plasmate_nb.trace.constants import DRIFT_STATE, STATUS_VALIDATED
from plasmate_nb.trace.replay import execution_arguments, execution_refusal, supplied_value_refusal

log = logging.getLogger("plasmate_nb.tools")

WEBMCP_EMPTY = {"contract_version": "plasmate.webmcp.v1", "tools": []}

Listener = Callable[[str | None, str], None]
Handler = Callable[[Any, BrowserSession | None], Awaitable[Any]]


@dataclass(frozen=True)
class ImageBlock:
    """An image content block: base64 ``data`` and its ``mime_type``."""

    data: str
    mime_type: str


@dataclass(frozen=True)
class ToolResult:
    """``text`` is the first content block unless ``text_block`` is false; ``blocks`` follow it."""

    text: str
    is_error: bool = False
    blocks: tuple[ImageBlock, ...] = ()
    text_block: bool = True

    @classmethod
    def payload(cls, value: Any) -> ToolResult:
        return cls(compact_json(value))

    @classmethod
    def image(cls, data_base64: str, mime_type: str) -> ToolResult:
        """One image block; ``text`` is only a summary for callers that read text."""
        summary = compact_json({"encodedBytes": len(data_base64), "mimeType": mime_type})
        return cls(summary, blocks=(ImageBlock(data_base64, mime_type),), text_block=False)

    @classmethod
    def error(cls, message: str) -> ToolResult:
        return cls(str(message), is_error=True)


@dataclass
class _Attempt:
    """What a traced call captured under the session lock before its handler ran."""

    parameters: dict[str, Any]
    target: dict[str, Any] | None
    before: dict[str, Any]
    detached: TraceLog | None  # close_page only: the log as it was, for final_trace


class Dispatcher:
    """Runs tool calls on ``engine``. ``replay_execution`` enables the opt-in ``replay_execute``
    tool (docs/contract.md#supervised-replay-execution); off, it is unlisted and refuses."""

    def __init__(self, engine: Engine, *, replay_execution: bool = False) -> None:
        self.engine = engine
        self.replay_execution = replay_execution
        self._listeners: list[Listener] = []
        self.som_cache = (
            SomCache()
        )  # one per dispatcher, shared by its callers (docs/contract.md#the-som-cache)
        self.som_answers = SomAnswers()  # whole page models or changes, per session
        self._handlers: dict[str, Handler] = {spec.name: getattr(self, spec.handler) for spec in TOOLS}

    # -- public surface ---------------------------------------------------------------

    def tools(self) -> tuple[ToolSpec, ...]:
        """The tools this dispatcher lists: the catalogue, opt-in tools only when enabled."""
        return TOOLS if self.replay_execution else DEFAULT_TOOLS

    def add_listener(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(session_id, tool)`` after every call; returns the unsubscriber."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    async def call(self, name: str, arguments: Any = None) -> ToolResult:
        spec = TOOLS_BY_NAME.get(name)
        if spec is None:
            return ToolResult.error(unknown_tool(name))
        arguments = {} if arguments is None else arguments
        session = self._resolve(spec, arguments)
        try:
            if session is None:
                return await self._run(name, arguments, None)
            async with session.lock:
                return await self._run_traced(name, arguments, session)
        finally:
            self._notify(session.id if session else None, name)

    # -- the traced wrapper -----------------------------------------------------------

    def _resolve(self, spec: ToolSpec, arguments: Any) -> BrowserSession | None:
        """The live session a call is about, if its ``session_id`` resolves (else ``None``)."""
        if not spec.session or not isinstance(arguments, dict):
            return None
        session_id = arguments.get("session_id")
        if not isinstance(session_id, str):
            return None
        try:
            return self.engine.get(session_id)
        except EngineError:
            return None

    async def _run_traced(self, name: str, arguments: dict[str, Any], session: BrowserSession) -> ToolResult:
        traced = name in TRACED_TOOLS and session.trace.enabled
        attempt = self._prepare(name, arguments, session) if traced else None
        started = time.perf_counter()
        result = await self._run(name, arguments, session)
        duration_ms = int((time.perf_counter() - started) * 1000)
        if attempt is None:
            return result
        error = result.text if result.is_error else None
        if self._is_live(session):
            after = session.trace.state(session.page_state())
            session.trace.record(
                name, attempt.parameters, attempt.target, attempt.before, after, error, duration_ms
            )
            return result
        if name == "close_page" and attempt.detached is not None:
            detached = attempt.detached
            detached.record(
                name, attempt.parameters, None, attempt.before, detached.closed_state(), error, duration_ms
            )
            return self._with_final_trace(result, detached, session.id)
        return result  # closed concurrently by something else: the event has no trace to go to

    def _prepare(self, name: str, arguments: dict[str, Any], session: BrowserSession) -> _Attempt:
        page = session.page_state()
        element_id = arguments.get("element_id")
        return _Attempt(
            parameters=sanitize_parameters(name, arguments),
            # A coarse action never names a target, whatever stray element_id its call carries.
            target=session.trace.target(page, element_id)
            if isinstance(element_id, str) and name not in COARSE_TOOLS
            else None,
            before=session.trace.state(page),
            detached=session.trace.detached_copy() if name == "close_page" else None,
        )

    def _is_live(self, session: BrowserSession) -> bool:
        try:
            return self.engine.get(session.id) is session
        except EngineError:
            return False

    @staticmethod
    def _with_final_trace(result: ToolResult, detached: TraceLog, session_id: str) -> ToolResult:
        if result.is_error:
            return result  # a plain-text close error never carries final_trace
        payload = json.loads(result.text)
        payload["final_trace"] = detached.final_export(session_id)
        # The reference re-serialises the whole payload with sorted keys, final_trace's and its
        # events' included (docs/contract.md#trace-envelopes); the lengths are unchanged.
        return ToolResult(json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False))

    async def _run(self, name: str, arguments: Any, session: BrowserSession | None) -> ToolResult:
        try:
            value = await self._handlers[name](arguments, session)
            return value if isinstance(value, ToolResult) else ToolResult.payload(value)
        except (InvalidArguments, EngineError, ActionError) as exc:
            return ToolResult.error(str(exc))
        except Exception as exc:  # a bug or an engine surprise must not take the server down
            log.warning("tool %s failed unexpectedly: %s", name, type(exc).__name__)
            return ToolResult.error(internal_error(name, type(exc).__name__))

    def _notify(self, session_id: str | None, name: str) -> None:
        for listener in list(self._listeners):
            try:
                listener(session_id, name)
            except Exception as exc:  # a broken observer must not break the call
                log.warning("trace listener failed: %s", type(exc).__name__)

    def _page_payload(
        self, session: BrowserSession, *, new_document: bool = False, **extra: Any
    ) -> dict[str, Any]:
        """An action response: the page model (``regions``, or ``changes`` in a session that asked for
        them; tools/som_answers.py), title, url, the empty webmcp catalog and ``extra``, keys sorted."""
        view = session.view()
        model = self.som_answers.model(session, new_document=new_document)
        payload = {"title": view["title"], "url": view["url"], **model, "webmcp": WEBMCP_EMPTY, **extra}
        return dict(sorted(payload.items()))

    # -- handlers -----------------------------------------------------------------------

    def _session(
        self, name: str, arguments: Any, session: BrowserSession | None
    ) -> tuple[dict[str, Any], BrowserSession]:
        """Check arguments, then the session: the reference's order (parse, then lookup)."""
        arguments = check_arguments(TOOLS_BY_NAME[name], arguments)
        if session is None:
            raise EngineError(session_not_found(arguments["session_id"]))
        return arguments, session

    async def _fetch_page(self, arguments: Any, _: BrowserSession | None) -> Any:
        return await text_tools.fetch_page(self.engine, self.som_cache, arguments)

    # The other stateless page tools (docs/contract.md#stateless-page-tools): untraced, no session.

    async def _extract_text(self, arguments: Any, _: BrowserSession | None) -> ToolResult:
        return ToolResult(await text_tools.extract_text(self.engine, self.som_cache, arguments))

    async def _extract_links(self, arguments: Any, _: BrowserSession | None) -> ToolResult:
        return ToolResult(await text_tools.extract_links(self.engine, self.som_cache, arguments))

    async def _cache_status(self, arguments: Any, _: BrowserSession | None) -> ToolResult:
        return ToolResult(text_tools.cache_status(self.som_cache))

    async def _screenshot_page(self, arguments: Any, _: BrowserSession | None) -> ToolResult:
        return ToolResult.image(*await screenshot.screenshot_page(self.engine, arguments))

    async def _crawl_policy(self, arguments: Any, _: BrowserSession | None) -> ToolResult:
        return ToolResult(await crawl_policy.crawl_policy(self.engine, arguments))

    async def _inspect_page(self, arguments: Any, _: BrowserSession | None) -> ToolResult:
        text, image = await inspection.inspect_page(self.engine, arguments)
        return ToolResult(text, blocks=(ImageBlock(image, "image/png"),) if image else ())

    async def _ard_discover(self, arguments: Any, _: BrowserSession | None) -> ToolResult:
        return ToolResult(await discovery.ard_discover(self.engine, arguments))

    async def _session_status(self, arguments: Any, _: BrowserSession | None) -> Any:
        return self.engine.status()

    @staticmethod
    def _trace_session(session: BrowserSession | None, session_id: str) -> BrowserSession:
        if session is None or session.id != session_id:
            raise EngineError(session_not_found(session_id))
        return session

    async def _trace_status(self, arguments: Any, session: BrowserSession | None) -> Any:
        return self._trace_session(session, parse_trace_handle(arguments)).trace.status()

    async def _trace_export(self, arguments: Any, session: BrowserSession | None) -> Any:
        session_id = parse_trace_handle(arguments)
        return self._trace_session(session, session_id).trace.export(session_id)

    async def _trace_clear(self, arguments: Any, session: BrowserSession | None) -> Any:
        trace = self._trace_session(session, parse_trace_handle(arguments)).trace
        cleared = trace.clear()
        return {"cleared_events": cleared, "status": dict(sorted(trace.status().items()))}

    async def _replay_validate(self, arguments: Any, session: BrowserSession | None) -> Any:
        request = parse_replay_request(arguments)
        live = self._trace_session(session, request.session_id)
        plan = live.trace.replay_validate(request, live.page_state())
        if self.replay_execution:  # the one documented deviation, only when execution exists
            plan["execution_available"] = True
        return plan

    async def _replay_execute(self, arguments: Any, session: BrowserSession | None) -> Any:
        """Validate and execute in one critical section: ``call`` holds the session lock from
        before the checks until the re-executed action's event is appended."""
        if not self.replay_execution:
            raise EngineError(REPLAY_EXECUTION_DISABLED)
        request = parse_execute_request(arguments)
        replay = request.replay
        live = self._trace_session(session, replay.session_id)
        plan, element_id = live.trace.replay_plan(replay, live.page_state())
        if plan["status"] == STATUS_VALIDATED and not await live.page_unchanged():
            # The checks saw the state the last action left; the page changed itself since.
            plan = execution_refusal(replay, DRIFT_STATE)
        if plan["status"] == STATUS_VALIDATED:
            refusal = supplied_value_refusal(
                plan["action"], plan["parameters"], request.value, live.trace.key.url_fingerprint
            )
            if refusal is not None:
                plan = execution_refusal(replay, refusal)
        plan["execution_available"] = True
        if plan["status"] != STATUS_VALIDATED:
            return ToolResult.error(replay_not_executed(compact_json(plan)))
        action = plan["action"]
        call = execution_arguments(action, plan["parameters"], live.id, element_id, request.value)
        result = await self._run_traced(action, call, live)
        if result.is_error:
            return result  # the action's own error, traced like any failed call of it
        payload = json.loads(result.text)
        payload.update(replayed_sequence=replay.sequence, sequence=live.trace.next_sequence - 1)
        return dict(sorted(payload.items()))

    async def _open_page(self, arguments: Any, _: BrowserSession | None) -> Any:
        arguments = check_arguments(TOOLS_BY_NAME["open_page"], arguments)
        som_answers = self.som_answers.mode(arguments)
        started = time.perf_counter()
        session = await self.engine.open(arguments["url"], trace=arguments.get("trace") is True)
        self.som_answers.opened(session, som_answers)
        duration_ms = int((time.perf_counter() - started) * 1000)
        async with session.lock:
            if session.trace.enabled:
                trace = session.trace
                parameters = sanitize_parameters("open_page", arguments)
                after = trace.state(session.page_state())
                trace.record("open_page", parameters, None, trace.closed_state(), after, None, duration_ms)
            return self._page_payload(session, new_document=True, cache_restored=False, session_id=session.id)

    async def _navigate_to(self, arguments: Any, session: BrowserSession | None) -> Any:
        arguments, session = self._session("navigate_to", arguments, session)
        await session.navigate(arguments["url"])
        return self._page_payload(session, new_document=True, cache_restored=False, session_id=session.id)

    async def _click(self, arguments: Any, session: BrowserSession | None) -> Any:
        arguments, session = self._session("click", arguments, session)
        await session.click(arguments["element_id"])
        return self._page_payload(session)

    async def _type_text(self, arguments: Any, session: BrowserSession | None) -> Any:
        arguments, session = self._session("type_text", arguments, session)
        await session.type_text(arguments["element_id"], arguments["text"], arguments.get("append", False))
        return self._page_payload(session)

    async def _select_option(self, arguments: Any, session: BrowserSession | None) -> Any:
        arguments, session = self._session("select_option", arguments, session)
        await session.select_option(arguments["element_id"], arguments["value"])
        return self._page_payload(session)

    async def _scroll(self, arguments: Any, session: BrowserSession | None) -> Any:
        arguments, session = self._session("scroll", arguments, session)
        position = await session.scroll(
            arguments.get("direction", "down"), arguments.get("pixels", 300), arguments.get("element_id")
        )
        return self._page_payload(session, scroll_position=float(position))

    async def _toggle(self, arguments: Any, session: BrowserSession | None) -> Any:
        arguments, session = self._session("toggle", arguments, session)
        await session.toggle(arguments["element_id"])
        return self._page_payload(session)

    async def _clear(self, arguments: Any, session: BrowserSession | None) -> Any:
        arguments, session = self._session("clear", arguments, session)
        await session.clear(arguments["element_id"])
        return self._page_payload(session)

    async def _page_som(self, arguments: Any, session: BrowserSession | None) -> ToolResult:
        arguments, session = self._session("page_som", arguments, session)
        if session.som is None:
            raise ActionError(NO_PAGE_LOADED)
        selector = arguments.get("selector")
        if selector is None:
            return ToolResult(session.som.text)  # the compiler's own bytes: what som_digest hashes
        return ToolResult.payload(select_som(session.som.data, selector))

    async def _evaluate(self, arguments: Any, session: BrowserSession | None) -> Any:
        arguments, session = self._session("evaluate", arguments, session)
        return ToolResult(evaluate_answer_text({"result": await session.evaluate(arguments["expression"])}))

    async def _close_page(self, arguments: Any, session: BrowserSession | None) -> Any:
        arguments, session = self._session("close_page", arguments, session)
        await self.engine.close_session(session.id)
        return {"closed": True, "session_id": session.id}

    async def _get_cookies(self, arguments: Any, session: BrowserSession | None) -> Any:
        arguments, session = self._session("get_cookies", arguments, session)
        cookies = await session.get_cookies(arguments.get("url"))
        return {"cookies": cookies, "count": len(cookies)}

    async def _set_cookies(self, arguments: Any, session: BrowserSession | None) -> Any:
        arguments, session = self._session("set_cookies", arguments, session)
        return {"session_id": session.id, "set": await session.set_cookies(arguments["cookies"])}

    async def _clear_cookies(self, arguments: Any, session: BrowserSession | None) -> Any:
        arguments, session = self._session("clear_cookies", arguments, session)
        cleared = await session.clear_cookies(
            arguments.get("name"), arguments.get("domain"), arguments.get("url")
        )
        return {"cleared": cleared, "session_id": session.id}
