"""``FakeTransport``: an in-memory backend of the tool contract for pure notebook tests.

A tiny scripted site (one SOM dict per path, mirroring the bundled demo site's login flow)
stands in for the browser, and the real trace core records every call, so trace_status,
trace_export, trace_clear, replay_validate and close_page's final_trace are genuine
``plasmate.trace.v1`` payloads. Payloads pass through JSON, as over any real transport.
Like the real engine, input state lives in the SOM (a typed value appears in the text
input's ``attrs.value``; password inputs never carry one).
"""

from __future__ import annotations

import copy
import hashlib
import json
import time
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import urljoin, urlsplit

from plasmate_nb.client.base import CallListener, CallListeners, ToolError, session_id_of
from plasmate_nb.trace import (
    TRACEABLE_ACTIONS,
    InvalidArguments,
    PageState,
    TraceLog,
    compact_json,
    origin,
    parse_replay_request,
    parse_trace_handle,
    sanitize_parameters,
)
from plasmate_nb.trace.som_walk import find_element

DEFAULT_BASE_URL = "http://127.0.0.1:8765"
MAX_SESSIONS = 10


def _link(text: str, href: str) -> dict[str, Any]:
    return {"role": "link", "text": text, "actions": ["click"], "attrs": {"href": href}}


def _demo_site() -> dict[str, dict[str, Any]]:
    """Path -> SOM template (ids are added per origin when a page is served)."""
    nav = {"role": "navigation", "label": "Site", "elements": [_link("Home", "/index.html"), _link("Welcome", "/welcome.html")]}
    plan_options = [
        {"text": text, "value": value} | ({"selected": True} if value == "pro" else {})
        for text, value in (("Free", "free"), ("Pro", "pro"), ("Team", "team"), ("Enterprise", "enterprise"))
    ]
    login_form = {
        "role": "form", "label": "Sign in", "action": "/login", "method": "post",
        "elements": [
            {"role": "text_input", "html_id": "email", "label": "Email", "actions": ["type", "clear"],
             "attrs": {"input_type": "email", "name": "email", "placeholder": "you@example.com", "required": True}},
            {"role": "text_input", "html_id": "password", "label": "Password", "actions": ["type", "clear"],
             "attrs": {"input_type": "password", "name": "password", "required": True}},
            {"role": "select", "html_id": "plan", "label": "Plan", "text": "FreeProTeamEnterprise",
             "actions": ["select"], "attrs": {"name": "plan", "options": plan_options, "value": "pro"}},
            {"role": "checkbox", "html_id": "remember", "label": "Remember me", "actions": ["toggle"],
             "attrs": {"input_type": "checkbox", "name": "remember"}},
            {"role": "button", "html_id": "submit", "text": "Sign in", "actions": ["click"],
             "attrs": {"button_type": "submit"}},
        ],
    }  # fmt: skip
    return {
        "/index.html": {"title": "plasmate_nb demo", "regions": [nav, {"role": "main", "elements": [
            {"role": "heading", "text": "Demo site", "attrs": {"level": 1}}, _link("Sign in", "/login.html")]}]},
        "/login.html": {"title": "Sign in", "regions": [nav, {"role": "main", "elements": [
            {"role": "heading", "text": "Sign in", "attrs": {"level": 1}}]}, login_form]},
        "/welcome.html": {"title": "Welcome", "regions": [nav, {"role": "main", "elements": [
            {"role": "heading", "text": "Welcome back", "attrs": {"level": 1}}]}]},
    }  # fmt: skip


NOT_FOUND = {"title": "Not found", "regions": [{"role": "main", "elements": [{"role": "heading", "text": "Not found"}]}]}
#: Form actions answered by a redirect (as the demo server does for POST /login).
REDIRECTS = {"/login": "/welcome.html"}


def _with_ids(template: dict[str, Any], page_origin: str) -> dict[str, Any]:
    som = copy.deepcopy(template)
    for index, region in enumerate(som["regions"]):
        region["id"] = f"r_{region['role']}" + (f"_{index}" if index else "")
        for position, element in enumerate(region["elements"]):
            name = (element.get("label") or element.get("text") or "").strip().lower()[:100]
            seed = f"{page_origin}|{element['role']}|{name}|{region['id']}/{position}"
            element["id"] = "e_" + hashlib.sha256(seed.encode()).hexdigest()[:12]
    return som


def _invalid(message: str) -> ToolError:
    return ToolError("", f"Invalid arguments: {message}")


def _string(arguments: dict[str, Any], name: str) -> str:
    if name not in arguments:
        raise _invalid(f"missing field `{name}`")
    value = arguments[name]
    if not isinstance(value, str):
        raise _invalid(f"invalid type: {type(value).__name__}, expected a string")
    return value


class _FakeBrowserSession:
    def __init__(self, trace: bool) -> None:
        self.id = str(uuid.uuid4())
        self.log = TraceLog(trace)
        self.url: str | None = None
        self.som: dict[str, Any] | None = None
        self.scroll_position = 0.0
        self.cookies: list[dict[str, Any]] = []

    def page_state(self) -> PageState:
        return PageState(self.url, None if self.som is None else compact_json(self.som), self.som)

    def element(self, element_id: str) -> dict[str, Any]:
        found = find_element(self.som, element_id) if self.som is not None else None
        if found is None:
            raise ToolError("", f"Element not found: {element_id}")
        return found


class FakeTransport:
    """In-memory ``Transport``: scripted pages at ``base_url``, the real trace recorder."""

    observes_all_clients = True  # one in-memory engine: every call goes through it

    def __init__(self, base_url: str = DEFAULT_BASE_URL, site: dict[str, dict[str, Any]] | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.site = site if site is not None else _demo_site()
        self._sessions: dict[str, _FakeBrowserSession] = {}
        self._listeners = CallListeners()
        self._handlers: dict[str, Callable[[dict[str, Any]], Any]] = {
            name: getattr(self, f"_{name}") for name in TOOLS
        }

    def __repr__(self) -> str:
        return f"FakeTransport(base_url={self.base_url!r}, sessions={len(self._sessions)})"

    # -- Transport ------------------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        handler = self._handlers.get(tool)
        if handler is None:
            raise ToolError(tool, f"Unknown tool: {tool}")
        arguments = arguments if isinstance(arguments, dict) else {}
        session = self._sessions.get(session_id_of(arguments) or "")
        attempt = self._prepare_trace(tool, arguments, session)
        started = time.perf_counter()
        error: ToolError | None = None
        payload: Any = None
        try:
            payload = handler(arguments)
        except ToolError as exc:
            error = ToolError(tool, exc.message)
        duration_ms = (time.perf_counter() - started) * 1000
        if tool == "open_page" and error is None and arguments.get("trace") is True:
            opened = self._sessions[payload["session_id"]]
            opened.log.record("open_page", sanitize_parameters("open_page", arguments), None,
                              opened.log.closed_state(), opened.log.state(opened.page_state()), None, duration_ms)  # fmt: skip
        if attempt is not None:
            payload = self._finish_trace(tool, attempt, payload, error, duration_ms)
        self._listeners.notify(session_id_of(arguments), tool)
        if error is not None:
            raise error
        return json.loads(compact_json(payload))  # exactly what would cross a real transport

    async def list_tools(self) -> list[dict[str, Any]]:
        return [{"name": name, "inputSchema": {"type": "object"}} for name in TOOLS]

    def subscribe(self, callback: CallListener) -> Callable[[], None]:
        return self._listeners.add(callback)

    async def aclose(self) -> None:
        self._sessions.clear()

    # -- the dispatcher's trace wrapping (reference §3.5) ---------------------------------

    def _prepare_trace(self, tool: str, arguments: dict[str, Any], session: _FakeBrowserSession | None) -> Any:
        if tool not in TRACEABLE_ACTIONS or tool == "open_page" or session is None or not session.log.enabled:
            return None
        page = session.page_state()
        return (
            session,
            sanitize_parameters(tool, arguments),
            session.log.target(page, arguments.get("element_id")),
            session.log.state(page),
            session.log.detached_copy() if tool == "close_page" else None,
        )

    def _finish_trace(self, tool: str, attempt: Any, payload: Any, error: ToolError | None, duration_ms: float) -> Any:
        session, parameters, target, before, detached = attempt
        message = None if error is None else error.message
        if session.id in self._sessions:
            after = session.log.state(session.page_state())
            session.log.record(tool, parameters, target, before, after, message, duration_ms)
        elif tool == "close_page" and detached is not None:
            detached.record(tool, parameters, target, before, detached.closed_state(), message, duration_ms)
            if isinstance(payload, dict):
                payload = {**payload, "final_trace": detached.final_export(session.id)}
        return payload

    # -- page model -----------------------------------------------------------------------

    def _session(self, arguments: dict[str, Any]) -> _FakeBrowserSession:
        session_id = _string(arguments, "session_id")
        session = self._sessions.get(session_id)
        if session is None:
            raise ToolError("", f"Session not found: {session_id}")
        return session

    def _load(self, session: _FakeBrowserSession, url: str) -> None:
        try:
            parts = urlsplit(url)
        except ValueError:
            parts = None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise ToolError("", f"Failed to fetch {url}: Outbound URL blocked: only http and https are permitted")
        if f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}" != self.base_url:
            raise ToolError("", f"Failed to fetch {url}: Navigation failed: connection refused")
        template = self.site.get(parts.path, NOT_FOUND)
        session.url = url
        session.som = _with_ids(template, origin(url) or "")
        session.scroll_position = 0.0

    def _view(self, session: _FakeBrowserSession, **extra: Any) -> dict[str, Any]:
        if session.som is None:
            raise ToolError("", "No page loaded in session")
        view = {"regions": session.som["regions"], "title": session.som["title"], "url": session.url}
        return dict(sorted({**view, **extra, "webmcp": {"contract_version": "plasmate.webmcp.v1", "tools": []}}.items()))

    # -- tools ----------------------------------------------------------------------------

    def _open_page(self, arguments: dict[str, Any]) -> dict[str, Any]:
        url = _string(arguments, "url")
        if len(self._sessions) >= MAX_SESSIONS:
            raise ToolError("", f"Maximum sessions ({MAX_SESSIONS}) reached. Close a session first.")
        session = _FakeBrowserSession(arguments.get("trace") is True)
        self._load(session, url)  # a failed open leaves no session (the known boundary)
        self._sessions[session.id] = session
        return self._view(session, cache_restored=False, session_id=session.id)

    def _navigate_to(self, arguments: dict[str, Any]) -> dict[str, Any]:
        session = self._session(arguments)
        self._load(session, _string(arguments, "url"))
        return self._view(session, cache_restored=False, session_id=session.id)

    def _click(self, arguments: dict[str, Any]) -> dict[str, Any]:
        session = self._session(arguments)
        element = session.element(_string(arguments, "element_id"))
        href = (element.get("attrs") or {}).get("href")
        region = next((r for r in session.som["regions"] if element in r["elements"]), {})  # type: ignore[index]
        if href:
            self._load(session, urljoin(session.url or "", href))
        elif element["role"] == "button" and region.get("action"):
            target = REDIRECTS.get(region["action"], region["action"])
            self._load(session, urljoin(session.url or "", target))
        return self._view(session)

    def _type_text(self, arguments: dict[str, Any]) -> dict[str, Any]:
        session = self._session(arguments)
        element_id = _string(arguments, "element_id")
        text = _string(arguments, "text")
        element = session.element(element_id)
        if "type" not in element.get("actions", []):
            raise ToolError("", f"Element does not support type: {element_id}")
        attrs = element.setdefault("attrs", {})
        if attrs.get("input_type") != "password":  # like the real SOM: never a password value
            attrs["value"] = (attrs.get("value", "") if arguments.get("append") is True else "") + text
        return self._view(session)

    def _select_option(self, arguments: dict[str, Any]) -> dict[str, Any]:
        session = self._session(arguments)
        element = session.element(_string(arguments, "element_id"))
        value = _string(arguments, "value")
        if element["role"] != "select":
            raise ToolError("", "Element is not a <select>")
        options = element["attrs"]["options"]
        chosen = next((o for o in options if value in (o["value"], o["text"])), None)
        if chosen is None:
            raise ToolError("", f"Option not found: {value}")
        for option in options:
            option.pop("selected", None)
        chosen["selected"] = True
        element["attrs"]["value"] = chosen["value"]
        return self._view(session)

    def _scroll(self, arguments: dict[str, Any]) -> dict[str, Any]:
        session = self._session(arguments)
        if isinstance(arguments.get("element_id"), str):
            session.element(arguments["element_id"])
        else:
            direction, pixels = arguments.get("direction", "down"), arguments.get("pixels", 300)
            pixels = pixels if isinstance(pixels, int) else 300
            if direction == "top":
                session.scroll_position = 0.0
            elif direction == "bottom":
                session.scroll_position = 10_000.0
            else:
                step = -pixels if direction == "up" else pixels
                session.scroll_position = max(0.0, session.scroll_position + step)
        return self._view(session, scroll_position=session.scroll_position)

    def _toggle(self, arguments: dict[str, Any]) -> dict[str, Any]:
        session = self._session(arguments)
        element = session.element(_string(arguments, "element_id"))
        if element["role"] not in ("checkbox", "radio", "details"):
            raise ToolError("", "Element is not a checkbox, radio button, or details element")
        attrs = element.setdefault("attrs", {})
        if attrs.pop("checked", False) is not True:
            attrs["checked"] = True
        return self._view(session)

    def _clear(self, arguments: dict[str, Any]) -> dict[str, Any]:
        session = self._session(arguments)
        element = session.element(_string(arguments, "element_id"))
        element.get("attrs", {}).pop("value", None)
        return self._view(session)

    def _close_page(self, arguments: dict[str, Any]) -> dict[str, Any]:
        session = self._session(arguments)
        del self._sessions[session.id]
        return {"closed": True, "session_id": session.id}

    def _evaluate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        session = self._session(arguments)
        expression = _string(arguments, "expression")
        if session.som is None:
            raise ToolError("", "No page loaded in session")
        return {"result": session.som["title"] if expression.strip() == "document.title" else None}

    def _get_cookies(self, arguments: dict[str, Any]) -> dict[str, Any]:
        session = self._session(arguments)
        return {"cookies": [dict(c) for c in session.cookies], "count": len(session.cookies)}

    def _set_cookies(self, arguments: dict[str, Any]) -> dict[str, Any]:
        session = self._session(arguments)
        items = arguments.get("cookies")
        if not isinstance(items, list):
            raise _invalid("missing field `cookies`")
        accepted = 0
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not isinstance(item.get("value"), str):
                continue
            domain = item.get("domain") or urlsplit(str(item.get("url", ""))).hostname
            if not domain:
                continue
            session.cookies = [c for c in session.cookies if c["name"] != item["name"]]
            session.cookies.append({
                "domain": domain if domain.startswith(".") else f".{domain}", "expires": item.get("expires"),
                "httpOnly": bool(item.get("httpOnly")), "name": item["name"], "path": item.get("path", "/"),
                "sameSite": item.get("sameSite", "Lax"), "secure": bool(item.get("secure")),
                "size": len(item["name"]) + len(item["value"]), "value": item["value"],
            })  # fmt: skip
            accepted += 1
        return {"session_id": session.id, "set": accepted}

    def _clear_cookies(self, arguments: dict[str, Any]) -> dict[str, Any]:
        session = self._session(arguments)
        name = arguments.get("name")
        before = len(session.cookies)
        session.cookies = [c for c in session.cookies if name is not None and c["name"] != name]
        return {"cleared": before - len(session.cookies), "session_id": session.id}

    def _traced_session(self, arguments: dict[str, Any]) -> _FakeBrowserSession:
        try:
            session_id = parse_trace_handle(arguments)
        except InvalidArguments as exc:
            raise ToolError("", str(exc)) from None
        return self._session({"session_id": session_id})

    def _trace_status(self, arguments: dict[str, Any]) -> dict[str, Any]:
        return self._traced_session(arguments).log.status()

    def _trace_export(self, arguments: dict[str, Any]) -> dict[str, Any]:
        session = self._traced_session(arguments)
        return session.log.export(session.id)

    def _trace_clear(self, arguments: dict[str, Any]) -> dict[str, Any]:
        log = self._traced_session(arguments).log
        cleared = log.clear()
        return {"cleared_events": cleared, "status": dict(sorted(log.status().items()))}

    def _replay_validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            request = parse_replay_request(arguments)
        except InvalidArguments as exc:
            raise ToolError("", str(exc)) from None
        session = self._session({"session_id": request.session_id})
        return session.log.replay_validate(request, session.page_state())

    def _session_status(self, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"active_sessions": len(self._sessions), "max_sessions": MAX_SESSIONS,
                "sessions": [{"session_id": s.id, "url": s.url} for s in self._sessions.values()]}  # fmt: skip


TOOLS = (
    "open_page", "navigate_to", "click", "type_text", "select_option", "scroll", "toggle", "clear",
    "close_page", "evaluate", "get_cookies", "set_cookies", "clear_cookies",
    "trace_status", "trace_export", "trace_clear", "replay_validate", "session_status",
)  # fmt: skip
