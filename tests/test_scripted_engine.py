"""The scripted engine (tests/scripted_engine.py) against what it stands in for.

1. It has everything the real dispatcher touches on ``Engine``, ``BrowserSession`` and
   ``CompiledSom``, with the same parameters: the list is derived from the dispatcher's source
   (``ast``), so a new engine call in the dispatcher fails here before it fails elsewhere.
2. Its pages are the compiler's: the SOM text of each served page, before and after input,
   is byte for byte what real Chromium compiles from the bundled demo site.
3. The same flow through the real dispatcher over both engines gives the same answers (payloads
   and error texts), once per-session randomness (ids, keyed fingerprints) and timings are
   masked.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from plasmate_nb.browser import BrowserSession, Engine, EngineConfig
from plasmate_nb.som import CompiledSom
from plasmate_nb.tools import Dispatcher
from plasmate_nb.tools import dispatcher as dispatcher_module
from plasmate_nb.trace.som_walk import iter_elements
from tests.scripted_engine import ScriptedEngine, ScriptedSession, ScriptedSom

REAL = {"Engine": Engine, "BrowserSession": BrowserSession, "CompiledSom": CompiledSom}


# ----- 1. the protocol, derived from the dispatcher's source ------------------------------------


def _type_named(annotation: Any) -> str | None:
    text = annotation if isinstance(annotation, str) else ast.unparse(annotation) if annotation else ""
    return next((name for name in REAL if re.search(rf"\b{name}\b", text)), None)


def _is_self_engine(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "engine"
            and isinstance(node.value, ast.Name) and node.value.id == "self")  # fmt: skip


def _returned_type(call: ast.AST) -> str | None:
    """The type a call returns, for calls on ``self.engine`` and on the dispatcher itself."""
    call = call.value if isinstance(call, ast.Await) else call
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
        return None
    owner = Engine if _is_self_engine(call.func.value) else None
    if isinstance(call.func.value, ast.Name) and call.func.value.id == "self":
        owner = dispatcher_module.Dispatcher
    member = getattr(owner, call.func.attr, None) if owner is not None else None
    return _type_named(inspect.signature(member).return_annotation) if callable(member) else None


def dispatcher_protocol() -> tuple[dict[str, set[str]], set[str]]:
    """What the dispatcher uses of each engine type, and the handlers that hand the engine on."""
    tree = ast.parse(inspect.getsource(dispatcher_module))
    used: dict[str, set[str]] = {name: set() for name in REAL}
    delegating: set[str] = set()
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        arguments = function.args.posonlyargs + function.args.args + function.args.kwonlyargs
        typed = {a.arg: t for a in arguments if (t := _type_named(a.annotation)) is not None}
        for node in ast.walk(function):
            is_assignment = isinstance(node, ast.Assign) and len(node.targets) == 1
            if is_assignment and isinstance(node.targets[0], ast.Name) and (t := _returned_type(node.value)):
                typed[node.targets[0].id] = t
        for node in ast.walk(function):
            if isinstance(node, ast.Attribute):
                if _is_self_engine(node.value):
                    used["Engine"].add(node.attr)
                elif isinstance(node.value, ast.Name) and node.value.id in typed:
                    used[typed[node.value.id]].add(node.attr)
            elif isinstance(node, ast.Call) and any(_is_self_engine(a) for a in node.args):
                delegating.add(function.name)
    return used, delegating


def test_the_protocol_is_derived_from_the_dispatcher() -> None:
    used, _ = dispatcher_protocol()
    assert {"get", "open", "close_session", "status"} <= used["Engine"]
    assert {"id", "lock", "trace", "page_state", "view", "navigate", "click", "type_text"} <= used[
        "BrowserSession"
    ]


async def test_the_scripted_engine_has_what_the_dispatcher_uses() -> None:
    used, _ = dispatcher_protocol()
    engine = ScriptedEngine()
    session = await engine.open("http://127.0.0.1:8765/login.html", trace=True)
    scripted = {"Engine": engine, "BrowserSession": session, "CompiledSom": session.som}
    assert isinstance(session, ScriptedSession) and isinstance(session.som, ScriptedSom)
    for kind, names in used.items():
        for name in sorted(names):
            assert hasattr(scripted[kind], name), (
                f"the scripted {kind} lacks {name!r}, which the dispatcher uses"
            )
            real = inspect.getattr_static(REAL[kind], name, None)
            if inspect.isfunction(real):  # same parameters, same order and defaults
                ours = getattr(type(scripted[kind]), name)
                assert (
                    inspect.signature(ours).parameters.keys() == inspect.signature(real).parameters.keys()
                ), name
                assert inspect.iscoroutinefunction(ours) == inspect.iscoroutinefunction(real), name
    await engine.aclose()


async def test_tools_that_need_a_browser_context_answer_an_error_not_a_crash() -> None:
    _, delegating = dispatcher_protocol()  # e.g. fetch_page: a temporary Playwright context
    dispatcher = Dispatcher(ScriptedEngine())
    for tool in sorted(spec.name for spec in dispatcher.tools() if spec.handler in delegating):
        result = await dispatcher.call(tool, {"url": "http://127.0.0.1:8765/login.html"})
        assert result.is_error, tool


# ----- 2. and 3. against real Chromium -----------------------------------------------------------


@pytest_asyncio.fixture
async def engines(demo) -> AsyncIterator[tuple[Dispatcher, Dispatcher]]:
    real = Dispatcher(Engine(EngineConfig()))
    scripted = Dispatcher(ScriptedEngine(demo.base_url))
    try:
        yield real, scripted
    finally:
        await real.engine.aclose()
        await scripted.engine.aclose()


def _id(payload: dict[str, Any], role: str, name: str) -> str:
    return next(
        e["id"]
        for e in iter_elements(payload)
        if e["role"] == role and name in (e.get("label"), e.get("text"))
    )


@pytest.mark.parametrize("path", ["/login.html", "/welcome.html", "/index.html", "/"])
async def test_pages_are_what_the_compiler_makes(engines, demo, path: str) -> None:
    texts = []
    for dispatcher in engines:
        session = await dispatcher.engine.open(demo.url(path))
        states = [session.som.text]
        if path == "/login.html":  # input state shows in the SOM: typed values, ticks, selections
            data = session.som.data
            await session.type_text(_id(data, "text_input", "Email"), "a@b.test")
            await session.type_text(_id(data, "text_input", "Email"), "-more", append=True)
            await session.type_text(_id(data, "text_input", "Password"), "never-shown")
            await session.select_option(_id(data, "select", "Plan"), "Team")
            await session.toggle(_id(data, "checkbox", "Remember me"))
            states.append(session.som.text)
            await session.clear(_id(data, "text_input", "Email"))
            states.append(session.som.text)
        texts.append(states)
    assert texts[0] == texts[1]


_MASKS = [
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<uuid>"),
    (re.compile(r"plasmate-[a-z-]+:v1:[0-9a-f]+"), "<keyed>"),
]
_TIMING = {"duration_ms", "age_ms", "idle_ms", "oldest_session_age_ms", "longest_idle_ms", "retained_bytes"}


def _masked(value: Any) -> Any:
    """``value`` with per-session randomness and timings replaced by placeholders."""
    if isinstance(value, dict):
        masked = {k: ("<n>" if k in _TIMING and isinstance(v, int) else _masked(v)) for k, v in value.items()}
        if isinstance(masked.get("sessions"), list):  # session_status orders rows by (random) session id
            masked["sessions"] = sorted(masked["sessions"], key=json.dumps)
        return masked
    if isinstance(value, list | tuple):
        return type(value)(_masked(v) for v in value)
    if isinstance(value, str):
        for pattern, placeholder in _MASKS:
            value = pattern.sub(placeholder, value)
    return value


def _difference(real: Any, scripted: Any, path: str = "$") -> str:
    """Where two answers first differ, and how."""
    if isinstance(real, dict | list | tuple) and type(real) is type(scripted):
        keys = list(real) if isinstance(real, dict) else range(len(real))
        if isinstance(real, dict) and list(real) != list(scripted):
            return f"{path}: keys {list(real)} (real) != {list(scripted)} (scripted)"
        if not isinstance(real, dict) and len(real) != len(scripted):
            return f"{path}: length {len(real)} (real) != {len(scripted)} (scripted)"
        for key in keys:
            if real[key] != scripted[key]:
                return _difference(real[key], scripted[key], f"{path}[{key!r}]")
    return f"{path}: {real!r} (real) != {scripted!r} (scripted)"


class _Flow:
    """Runs one call on both dispatchers and checks that they answer alike."""

    def __init__(self, real: Dispatcher, scripted: Dispatcher) -> None:
        self.dispatchers = (real, scripted)
        self.sids: list[str] = []
        self.last: list[Any] = [None, None]

    async def __call__(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        element: tuple[str, str] | None = None,
        session: bool = True,
        each: dict[str, list[Any]] | None = None,
    ) -> Any:
        """``each``: arguments whose value differs per engine (real's first)."""
        answers = []
        for index, dispatcher in enumerate(self.dispatchers):
            own = dict(arguments) | {name: values[index] for name, values in (each or {}).items()}
            if session and self.sids:
                own.setdefault("session_id", self.sids[index])
            if element is not None:
                own["element_id"] = _id(self.last[index], *element)
            result = await dispatcher.call(tool, own)
            answers.append((result.is_error, result.text if result.is_error else json.loads(result.text)))
        real, scripted = _masked(answers[0]), _masked(answers[1])
        assert scripted == real, f"{tool} {arguments} {element or ''}: {_difference(real, scripted)}"
        for index, (is_error, payload) in enumerate(answers):
            if not is_error and isinstance(payload, dict) and "regions" in payload:
                self.last[index] = payload
        return answers


async def test_the_same_flow_gets_the_same_answers(engines, demo) -> None:
    flow = _Flow(*engines)
    opened = await flow("open_page", {"url": demo.url("/login.html"), "trace": True})
    flow.sids = [payload["session_id"] for _, payload in opened]
    base = demo.base_url
    for url in (
        f"{base}/login.html/nope",
        base.replace("://", "://user:pw@") + "/login.html",
        "ftp://x/",
        "not a url",
        "http://unreachable.invalid/x?q=1",
        f"{base}/login.html?token=1#part",
    ):
        await flow("navigate_to", {"url": url})
    await flow("session_status", {}, session=False)
    await flow("click", {"element_id": "e_missing"})
    await flow("click", {})
    await flow("click", {"element_id": 5})
    await flow("type_text", {"text": "x"}, element=("button", "Sign in"))
    await flow("type_text", {"text": "a@b"}, element=("text_input", "Email"))
    await flow("type_text", {"text": ".test", "append": True}, element=("text_input", "Email"))
    await flow("select_option", {"value": "nope"}, element=("select", "Plan"))
    await flow("select_option", {"value": "team"}, element=("text_input", "Email"))
    await flow("select_option", {"value": "Enterprise"}, element=("select", "Plan"))
    await flow("toggle", {}, element=("text_input", "Email"))
    await flow("toggle", {}, element=("checkbox", "Remember me"))
    await flow("clear", {}, element=("button", "Sign in"))
    await flow("clear", {}, element=("checkbox", "Remember me"))
    for expression in (
        "document.title",
        "location.href",
        "document.getElementById('email').value",
        "document.getElementById('remember').checked",
        "document.getElementById('plan').value",
        "document.getElementById('missing').value",
        "42",
        '"text"',
        "undefined",
    ):
        await flow("evaluate", {"expression": expression})
    await flow("scroll", {"direction": "down", "pixels": 200})
    await flow("scroll", {"direction": "bottom"})
    await flow("scroll", {}, element=("button", "Sign in"))
    await flow(
        "set_cookies",
        {
            "cookies": [
                {"name": "sid", "value": "v", "domain": "127.0.0.1"},
                {"name": "x"},
                {"name": "n", "value": "w", "url": base},
            ]
        },
    )
    await flow("get_cookies", {})
    await flow("get_cookies", {"url": f"{base}/login.html"})
    await flow("clear_cookies", {"name": "sid"})
    await flow("clear_cookies", {})
    status = await flow("trace_status", {})
    trace_ids = [payload["trace_id"] for _, payload in status]
    for sequence in (1, 2, 11, 14, 99):
        await flow("replay_validate", {"sequence": sequence}, each={"trace_id": trace_ids})
        await flow("replay_validate", {"sequence": sequence, "confirmed": True}, each={"trace_id": trace_ids})
    await flow("replay_validate", {"sequence": 2}, each={"trace_id": trace_ids[::-1]})
    await flow("click", {}, element=("button", "Sign in"))  # the password is empty: the form stays
    await flow("clear", {}, element=("text_input", "Email"))
    await flow("type_text", {"text": "not an address"}, element=("text_input", "Email"))
    await flow("type_text", {"text": "pw"}, element=("text_input", "Password"))
    await flow("click", {}, element=("button", "Sign in"))  # not a valid e-mail address: stays
    await flow("type_text", {"text": "analyst@example.test"}, element=("text_input", "Email"))
    await flow("click", {}, element=("button", "Sign in"))  # POST /login, 303 to the welcome page
    await flow("click", {}, element=("button", "Sign out"))
    await flow("click", {}, element=("link", "Welcome"))
    await flow("click", {}, element=("link", "Home"))
    await flow("navigate_to", {"url": f"{base}/"})
    second = await flow("open_page", {"url": demo.url("/welcome.html")}, session=False)
    await flow("session_status", {}, session=False)
    for index, (_, payload) in enumerate(second):
        assert not (
            await flow.dispatchers[index].call("close_page", {"session_id": payload["session_id"]})
        ).is_error
    await flow("trace_clear", {})
    await flow("scroll", {})
    await flow("trace_export", {})
    await flow("close_page", {})
    await flow("trace_status", {})
    await flow("scroll", {})
