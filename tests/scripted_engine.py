"""A scripted engine: the engine/session protocol the real ``Dispatcher`` uses, without a browser.

Fast tests run the REAL dispatcher (``plasmate_nb.tools.Dispatcher``) over this engine, so the
trace wrapping, argument checks, payload shapes and error classes are the shipped code; only
what a browser would do is scripted here. Nothing in the shipped package depends on it.

What is borrowed, not re-implemented (so it cannot drift): ``Engine.get``, ``sessions``,
``close_session`` and ``status`` (the ``session_status`` payload), ``BrowserSession.page_state``,
``view``, ``touch``, ``age_ms`` and ``idle_ms``, the URL policy's form rules, the cookie jar's
shapes, the evaluate result mapping, and every error text (:mod:`plasmate_nb.errors`).

What is scripted: a site of in-memory pages (:mod:`tests.scripted_pages`, the bundled demo
site as the SOM compiler sees it) served at one origin, and a per-session document whose state
(typed values, ticked boxes, selected options) is rendered into a SOM in the compiler's exact
shape and serialisation, element ids included (``e_`` + SHA-256 of origin, role, name and DOM
path, as compiler.js computes them). ``tests/test_scripted_engine.py`` checks the protocol
against the dispatcher's source and the pages and answers against real Chromium.

Not scripted: JavaScript (``evaluate`` knows a few expressions, see :data:`EXPRESSIONS`), layout
(every page fits the viewport: scroll positions are 0), and the stateless page tools
(``fetch_page`` and friends load pages in a temporary Playwright context; over this engine they
answer ``Internal error``).
"""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import json
import re
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

from plasmate_nb.browser import ActionError, BrowserSession, Engine, EngineConfig, EngineError, UrlPolicy
from plasmate_nb.browser import cookies as cookie_jar
from plasmate_nb.browser.evaluate_result import map_evaluate_result
from plasmate_nb.browser.messages import describe_js_exception
from plasmate_nb.browser.policy import PolicyViolation
from plasmate_nb.errors import (
    NO_PAGE_LOADED,
    NOT_A_SELECT,
    NOT_TOGGLEABLE,
    action_failed,
    element_does_not_support,
    element_not_found,
    evaluate_javascript_error,
    evaluate_result_too_large,
    failed_to_fetch,
    http_error,
    max_sessions_reached,
    navigation_failed,
    option_not_found,
    outbound_blocked,
    reduce_url,
)
from plasmate_nb.som import ACTIONS_BY_ROLE, INTERACTIVE_ROLES
from plasmate_nb.trace import TraceLog, compact_json
from plasmate_nb.trace.compact import escape_surrogates, utf8_len
from plasmate_nb.trace.som_walk import find_element

DEFAULT_ORIGIN = "http://127.0.0.1:8765"
# What Chromium says when a host has no address, or nothing listens at an address.
NAME_NOT_RESOLVED = "net::ERR_NAME_NOT_RESOLVED"
CONNECTION_REFUSED = "net::ERR_CONNECTION_REFUSED"
# Playwright's own words when ``fill("")`` (the real ``clear``) meets an element it cannot fill.
NOT_FILLABLE = (
    "Error: Element is not an <input>, <textarea>, <select> or [contenteditable] "
    "and does not have a role allowing [aria-readonly]"
)
UNFILLABLE_INPUT = 'Error: Input of type "{}" cannot be filled'
# The HTML standard's "valid e-mail address", which Chromium's form validation applies.
EMAIL = re.compile(
    r"^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
    r"(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$"
)
TEXT_ROLES = ("text_input", "textarea")


# ----- pages: what the SOM compiler would see -------------------------------------------------


@dataclass(frozen=True)
class Element:
    """One SOM element of a page, with its DOM path (``"0/3/5/3"``: child indexes from ``<body>``).

    ``attrs`` are the static attributes; state-dependent ones (``value``, ``checked``, the
    ``selected`` option) are rendered from the document. ``options`` are a select's
    ``(text, value)`` pairs, ``selected`` its initial value. Behaviour: a ``link`` follows its
    ``href``, a button with ``submits`` submits its form region, ``navigates`` is a click
    handler's ``location.href = ...``.
    """

    role: str
    path: str
    text: str | None = None
    label: str | None = None
    html_id: str | None = None
    attrs: Mapping[str, Any] = field(default_factory=dict)
    hints: tuple[str, ...] = ()
    options: tuple[tuple[str, str], ...] = ()
    selected: str | None = None
    checked: bool = False
    submits: bool = False
    navigates: str | None = None


@dataclass(frozen=True)
class Region:
    id: str
    role: str
    elements: tuple[Element, ...]
    label: str | None = None
    form: tuple[str, str] | None = None  # (action, method) of a form region


@dataclass(frozen=True)
class Page:
    title: str
    regions: tuple[Region, ...]
    html_bytes: int  # the document's outerHTML size (the compiler's meta.html_bytes)
    lang: str = "en"
    structured_data: Mapping[str, Any] | None = None

    def elements(self) -> list[tuple[Region, Element]]:
        return [(region, element) for region in self.regions for element in region.elements]


@dataclass(frozen=True)
class Site:
    """Pages by path, plus the server's redirects (GET) and form handlers (POST path -> redirect)."""

    pages: Mapping[str, Page]
    redirects: Mapping[str, str] = field(default_factory=dict)
    posts: Mapping[str, str] = field(default_factory=dict)


class _LoadFailed(Exception):
    """A page could not be loaded; ``reason`` is the message's tail, ``blocked`` a policy refusal."""

    def __init__(self, reason: str, blocked: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.blocked = blocked


def page_origin(url: str) -> str:
    """``location.origin`` as the compiler reads it: no userinfo, no default port."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    shown = f"[{host}]" if ":" in host else host
    default = {"http": 80, "https": 443}.get(parts.scheme)
    port = parts.port
    return f"{parts.scheme}://{shown}" + (f":{port}" if port is not None and port != default else "")


def _id_name(name: str) -> str:
    return name.strip().lower()[:100]


# ----- the document of one page load and its compiled SOM ----------------------------------------


class ScriptedSom:
    """``CompiledSom``-compatible: ``text`` (canonical JSON), ``data``, ``resolve``, ``dispose``."""

    def __init__(self, text: str, data: dict[str, Any], nodes: dict[str, Element]) -> None:
        self.text = text
        self.data = data
        self._nodes = nodes
        self.disposed = False

    def __repr__(self) -> str:
        return f"ScriptedSom(bytes={len(self.text.encode())})"

    async def resolve(self, element_id: str) -> Element | None:
        return None if self.disposed else self._nodes.get(element_id)

    async def dispose(self) -> None:
        self.disposed = True


class Document:
    """One loaded page and its live state: what a real page's DOM would hold."""

    def __init__(self, page: Page, url: str) -> None:
        self.page = page
        self.url = url
        self.values: dict[str, str] = {}
        self.checked = {element.path for _, element in page.elements() if element.checked}
        self.selected = {element.path: element.selected for _, element in page.elements() if element.options}

    def compile(self) -> ScriptedSom:
        """The SOM as compiler.js would serialise it now (field order, sorted attrs, ids)."""
        origin = page_origin(self.url)
        nodes: dict[str, Element] = {}
        seen: dict[str, int] = {}
        regions = []
        counts = {"elements": 0, "interactive": 0}
        for region in self.page.regions:
            out: dict[str, Any] = {"id": region.id, "role": region.role}
            if region.label is not None:
                out["label"] = region.label
            if region.form is not None:
                out["action"], out["method"] = region.form
            elements = []
            for element in region.elements:
                name = element.label if element.label is not None else element.text or ""
                raw = (
                    "e_"
                    + hashlib.sha256(
                        f"{origin}|{element.role}|{_id_name(name)}|{element.path}".encode()
                    ).hexdigest()[:12]
                )
                element_id = raw if raw not in seen else f"{raw}_{seen[raw] + 1}"
                seen[raw] = seen.get(raw, 0) + 1
                nodes[element_id] = element
                elements.append(self._element(element_id, element))
                counts["elements"] += 1
                counts["interactive"] += element.role in INTERACTIVE_ROLES
            out["elements"] = elements
            regions.append(out)
        data: dict[str, Any] = {
            "som_version": "0.1", "url": self.url, "title": self.page.title, "lang": self.page.lang,
            "regions": regions,
            "meta": {"html_bytes": self.page.html_bytes, "som_bytes": 0, "element_count": counts["elements"],
                     "interactive_count": counts["interactive"]},
        }  # fmt: skip
        if self.page.structured_data is not None:
            data["structured_data"] = json.loads(json.dumps(self.page.structured_data))
        # compiler.js counts its own som_bytes number as one character: the size with a 0 there. It
        # writes a lone surrogate (typed text can hold one) as its escape: the text is UTF-8.
        data["meta"]["som_bytes"] = len(escape_surrogates(compact_json(data)).encode())
        text = escape_surrogates(compact_json(data))
        return ScriptedSom(text, data, nodes)

    def _element(self, element_id: str, element: Element) -> dict[str, Any]:
        out: dict[str, Any] = {"id": element_id, "role": element.role}
        if element.html_id is not None:
            out["html_id"] = element.html_id
        if element.text is not None:
            out["text"] = element.text
        if element.label is not None:
            out["label"] = element.label
        if element.role in ACTIONS_BY_ROLE:
            out["actions"] = list(ACTIONS_BY_ROLE[element.role])
        attrs = json.loads(json.dumps(dict(element.attrs)))
        value = self.values.get(element.path, "")
        if element.role in TEXT_ROLES and value and attrs.get("input_type") != "password":
            attrs["value"] = value  # never a password's value, as the compiler
        if element.path in self.checked:
            attrs["checked"] = True
        if element.options:
            chosen = self.selected.get(element.path)
            attrs["options"] = [
                {"selected": True, "text": text, "value": option}
                if option == chosen
                else {"text": text, "value": option}
                for text, option in element.options
            ]
            attrs["value"] = chosen
        if attrs:
            out["attrs"] = dict(sorted(attrs.items()))
        if element.hints:
            out["hints"] = list(element.hints)
        return out

    def form_of(self, element: Element) -> Region | None:
        return next((r for r, e in self.page.elements() if e is element and r.form is not None), None)

    def form_is_valid(self, form: Region) -> bool:
        """Chromium's constraint validation for what the demo forms use: required, type=email."""
        for element in form.elements:
            value = self.values.get(element.path, "")
            if element.attrs.get("required") and element.role in TEXT_ROLES and not value:
                return False
            if element.attrs.get("input_type") == "email" and value and not EMAIL.match(value):
                return False
        return True

    def by_html_id(self, html_id: str) -> Element | None:
        return next((e for _, e in self.page.elements() if e.html_id == html_id), None)


# ----- the session --------------------------------------------------------------------------------


class _Thrown(Exception):
    """The expression threw ``name: message`` in the page."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name


def _property_of(doc: Document, html_id: str, name: str) -> Any:
    element = doc.by_html_id(html_id)
    if element is None:
        raise _Thrown("TypeError", f"Cannot read properties of null (reading '{name}')")
    if name == "checked":
        return element.path in doc.checked
    return doc.selected.get(element.path) if element.options else doc.values.get(element.path, "")


#: The JavaScript the scripted engine can run: (pattern, what it evaluates to in the document).
EXPRESSIONS: tuple[tuple[re.Pattern[str], Callable[[Document, re.Match[str]], Any]], ...] = (
    (re.compile(r"^document\.title$"), lambda doc, m: doc.page.title),
    (re.compile(r"^(?:window\.)?location\.href$"), lambda doc, m: doc.url),
    (re.compile(r"""^document\.getElementById\((['"])([^'"]+)\1\)\.(value|checked)$"""),
     lambda doc, m: _property_of(doc, m.group(2), m.group(3))),
)  # fmt: skip
NO_SCRIPT = "the scripted engine has no script for this expression"


class ScriptedSession:
    """``BrowserSession``'s protocol over a :class:`Document`; the browser-free parts are its own code."""

    page_state = BrowserSession.page_state
    view = BrowserSession.view
    touch = BrowserSession.touch
    age_ms = BrowserSession.age_ms
    idle_ms = BrowserSession.idle_ms
    __repr__ = BrowserSession.__repr__

    def __init__(self, engine: ScriptedEngine, trace: bool) -> None:
        self.id = str(uuid.uuid4())
        self.trace = TraceLog(enabled=trace)
        self.lock = asyncio.Lock()
        self.url: str | None = None
        self.som: ScriptedSom | None = None
        self.created_at = time.time()
        self._created_monotonic = time.monotonic()
        self.last_accessed = time.monotonic()
        self._engine = engine
        self._document: Document | None = None
        self._cookies: list[dict[str, Any]] = []

    async def close(self) -> None:
        som, self.som, self._document = self.som, None, None
        if som is not None:
            await som.dispose()

    async def page_unchanged(self) -> bool:
        """Scripted pages run no scripts of their own: the page is what the last action left."""
        return self.som is not None and self._document is not None

    # ----- actions, each with the real engine's checks in its order ----------------------------

    async def navigate(self, url: str) -> None:
        try:
            document = self._engine.load(url)
        except _LoadFailed as failure:
            raise ActionError(failed_to_fetch(reduce_url(url), failure.reason)) from None
        self._commit(document)

    async def click(self, element_id: str) -> None:
        document, element = self._element(element_id)
        if element.role == "link" and element.attrs.get("href"):
            self._follow(urljoin(document.url, element.attrs["href"]))
        elif element.navigates is not None:
            self._follow(urljoin(document.url, element.navigates))
        elif element.submits and (form := document.form_of(element)) is not None:
            if document.form_is_valid(form):  # an invalid form shows a bubble and stays
                self._follow(urljoin(document.url, form.form[0]), post=form.form[1].upper() == "POST")  # type: ignore[index]
        elif element.role in ("checkbox", "radio"):
            self._tick(document, element)
        self._commit(self._document)

    async def type_text(self, element_id: str, text: str, append: bool = False) -> None:
        document = self._loaded()
        element_data = self._som_element(element_id)
        if "type" not in (element_data.get("actions") or []):
            raise ActionError(element_does_not_support("type", element_id))
        element = self._node(element_id)
        document.values[element.path] = (document.values.get(element.path, "") if append else "") + text
        self._commit(document)

    async def select_option(self, element_id: str, value: str) -> None:
        document, element = self._element(element_id)
        if not element.options:
            raise ActionError(NOT_A_SELECT)
        chosen = next((option for text, option in element.options if value in (option, text)), None)
        if chosen is None:
            raise ActionError(option_not_found(utf8_len(value)))
        document.selected[element.path] = chosen
        self._commit(document)

    async def scroll(
        self, direction: str = "down", pixels: int = 300, element_id: str | None = None
    ) -> float:
        if element_id is not None:
            self._element(element_id)
        else:
            self._loaded()
        self._commit(self._document)
        return 0.0  # every scripted page fits the viewport

    async def toggle(self, element_id: str) -> None:
        document, element = self._element(element_id)
        if element.role not in ("checkbox", "radio", "details"):
            raise ActionError(NOT_TOGGLEABLE)
        self._tick(document, element)
        self._commit(document)

    async def clear(self, element_id: str) -> None:
        document, element = self._element(element_id)
        kind = element.attrs.get("input_type")
        if element.role in ("checkbox", "radio") and isinstance(kind, str):
            raise ActionError(action_failed("Clear", UNFILLABLE_INPUT.format(kind)))
        if element.role not in TEXT_ROLES:
            raise ActionError(action_failed("Clear", NOT_FILLABLE))
        document.values[element.path] = ""
        self._commit(document)

    async def evaluate(self, expression: str) -> Any:
        document = self._loaded()
        try:
            raw = _run_script(document, expression.strip())
        except _Thrown as thrown:
            exception = describe_js_exception(thrown.name, str(thrown), expression)
            raise ActionError(evaluate_javascript_error(exception)) from None
        value = map_evaluate_result(json.dumps(raw) if isinstance(raw, dict | list) else raw)
        limit = self._engine.config.evaluate_result_limit
        if (
            len(
                json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode(
                    "utf-8", "backslashreplace"
                )
            )
            > limit
        ):
            raise ActionError(evaluate_result_too_large(limit))
        self._commit(document)
        return value

    async def get_cookies(self, url: str | None = None) -> list[dict[str, Any]]:
        jar = [c for c in self._cookies if url is None or cookie_jar._matches_url(c, url)]
        return [cookie_jar._public_shape(dict(c)) for c in jar]

    async def set_cookies(self, items: list[Any]) -> int:
        accepted = 0
        for item in items if isinstance(items, list) else []:
            cookie = cookie_jar.to_playwright(item)
            if cookie is None or (cookie["sameSite"] == "None" and not cookie["secure"]):
                continue  # Chromium drops SameSite=None without Secure
            if cookie.get("expires", time.time() + 1) <= time.time():
                continue  # and an expiry in the past
            if cookie["domain"] == ".localhost":
                cookie["domain"] = "localhost"
            key = (cookie["name"], cookie["domain"], cookie["path"])
            self._cookies = [c for c in self._cookies if (c["name"], c["domain"], c["path"]) != key] + [
                cookie
            ]
            accepted += 1
        return accepted

    async def clear_cookies(
        self, name: str | None = None, domain: str | None = None, url: str | None = None
    ) -> int:
        doomed = [
            c for c in self._cookies
            if (name is None or c.get("name") == name)
            and (domain is None or cookie_jar._domains_overlap(str(c.get("domain", "")), domain))
            and (url is None or cookie_jar._matches_url(c, url))
        ]  # fmt: skip
        self._cookies = [c for c in self._cookies if c not in doomed]
        return len(doomed)

    # ----- checks and state ----------------------------------------------------------------------

    def _loaded(self) -> Document:
        if self.som is None or self.url is None or self._document is None:
            raise ActionError(NO_PAGE_LOADED)
        return self._document

    def _som_element(self, element_id: str) -> dict[str, Any]:
        element = find_element(self.som.data if self.som is not None else None, element_id)
        if element is None:
            raise ActionError(element_not_found(element_id))
        return element

    def _node(self, element_id: str) -> Element:
        assert self.som is not None
        node = self.som._nodes.get(element_id)
        assert node is not None, "the latest SOM always resolves its own ids"
        return node

    def _element(self, element_id: str) -> tuple[Document, Element]:
        document = self._loaded()
        self._som_element(element_id)
        return document, self._node(element_id)

    def _tick(self, document: Document, element: Element) -> None:
        if element.role == "radio":
            group = element.attrs.get("name")
            for _, other in document.page.elements():
                if other.role == "radio" and other.attrs.get("name") == group:
                    document.checked.discard(other.path)
            document.checked.add(element.path)
        else:
            document.checked ^= {element.path}

    def _follow(self, url: str, post: bool = False) -> None:
        """A navigation an action started: on failure the last good state stays."""
        try:
            self._document = self._engine.load(url, post=post)
        except _LoadFailed as failure:
            reason = failure.reason
            if not failure.blocked and reason.startswith("Navigation failed: "):
                raise ActionError(reason) from None
            raise ActionError(navigation_failed(reason)) from None

    def _commit(self, document: Document | None) -> None:
        """Recompile: success replaces the last good state."""
        assert document is not None
        self._document = document
        previous, self.som, self.url = self.som, document.compile(), document.url
        if previous is not None:
            previous.disposed = True


def _run_script(document: Document, text: str) -> Any:
    for pattern, script in EXPRESSIONS:
        match = pattern.match(text)
        if match is not None:
            return script(document, match)
    if text == "undefined":
        return None
    try:
        return json.loads(text)  # a literal evaluates to itself
    except ValueError:
        raise _Thrown("ReferenceError", NO_SCRIPT) from None


# ----- the engine ---------------------------------------------------------------------------------


class ScriptedEngine:
    """``Engine``'s protocol over a scripted :class:`Site` at ``origin``; no browser, no network."""

    get = Engine.get
    sessions = Engine.sessions
    close_session = Engine.close_session
    status = Engine.status

    def __init__(
        self, origin: str = DEFAULT_ORIGIN, site: Site | None = None, config: EngineConfig | None = None
    ) -> None:
        from tests.scripted_pages import DEMO_SITE

        self.origin = page_origin(origin)
        self.site = site if site is not None else DEMO_SITE
        self.config = config or EngineConfig()
        self.policy = UrlPolicy(
            self.config.allow_private_network,
            tuple(self.config.allowed_hosts),
            tuple(self.config.allowed_networks),
        )
        self._sessions: dict[str, ScriptedSession] = {}

    def __repr__(self) -> str:
        return f"ScriptedEngine(sessions={len(self._sessions)}, max_sessions={self.config.max_sessions})"

    async def start(self) -> None:
        """Nothing to launch."""

    async def aclose(self) -> None:
        for session_id in list(self._sessions):
            await self.close_session(session_id)

    async def open(self, url: str, trace: bool = False) -> ScriptedSession:
        """A new session at ``url``; a failed open leaves no session behind."""
        limit = self.config.max_sessions
        if len(self._sessions) >= limit:
            raise EngineError(max_sessions_reached(limit))
        session = ScriptedSession(self, trace)
        self._sessions[session.id] = session
        try:
            await session.navigate(url)
        except BaseException:
            self._sessions.pop(session.id, None)
            await session.close()
            raise
        session.touch()
        return session

    def load(self, url: str, post: bool = False) -> Document:
        """A fresh document for ``url``, following the site's redirects; raises :class:`_LoadFailed`."""
        try:
            self.policy.check_form(url)
        except PolicyViolation as violation:
            raise _LoadFailed(outbound_blocked(str(violation)), blocked=True) from None
        for _ in range(20):
            parts = urlsplit(url)
            if page_origin(url) != self.origin:
                raise _LoadFailed(
                    navigation_failed(CONNECTION_REFUSED if _is_ip(parts.hostname) else NAME_NOT_RESOLVED)
                )
            path = parts.path or "/"
            target = self.site.posts.get(path) if post else self.site.redirects.get(path)
            if target is None:
                break
            url, post = urljoin(url, target), False
        else:
            raise _LoadFailed(navigation_failed("net::ERR_TOO_MANY_REDIRECTS"))
        page = None if post else self.site.pages.get(path)
        if page is None:
            raise _LoadFailed(http_error(404, reduce_url(url)))
        if not parts.path:
            url = urljoin(url, "/")
        return Document(page, url)


def _is_ip(host: str | None) -> bool:
    try:
        ipaddress.ip_address((host or "").strip("[]"))
    except ValueError:
        return False
    return True
