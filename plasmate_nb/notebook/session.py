"""``Session`` and ``Trace``: the sync facade, derived from ``AsyncSession`` and ``AsyncTrace``.

Nothing here is written twice. For each public member of the async class the facade defines
its counterpart once, at import:

- a coroutine method becomes a method that runs it on the one process-wide background loop
  (``run_sync``), so it works in plain Python and inside Jupyter's running loop;
- a plain method is delegated as is; a property is mirrored;
- a classmethod constructor runs on that loop too (transports belong to the loop that uses them);
- an ``AsyncSession`` or ``AsyncTrace`` in a result is wrapped in ``Session`` or ``Trace``.

Each counterpart keeps the async member's name, parameters and docstring (``functools.wraps``);
its return annotation names the sync class. ``tests/notebook/test_api_surface.py`` checks this.

An error a user caused (a :class:`~plasmate_nb._tracebacks.HintedError`) is raised again here,
at the public call, with the background loop's frames dropped: the user sees their call and
the cause, not ``run_sync``, ``concurrent.futures`` and the core's internals.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import re
from collections.abc import Callable, Coroutine
from typing import Any

from .._loop import run_sync
from .._tracebacks import HintedError
from ..client.base import Transport
from ._caller_warnings import collecting, warn_collected
from ._session import AsyncSession, AsyncTrace

#: Async facade class name -> sync class name, for return annotations.
_SYNC_NAMES = {"AsyncSession": "Session", "AsyncTrace": "Trace"}
_ASYNC_NAME = re.compile(r"\b(" + "|".join(_SYNC_NAMES) + r")\b")


def _to_sync(value: Any) -> Any:
    """``value`` with an async facade object replaced by its sync wrapper."""
    if isinstance(value, AsyncSession):
        return Session._wrap(value)
    if isinstance(value, AsyncTrace):
        return Trace._wrap(value)
    return value


def _sync_annotation(annotation: Any) -> Any:
    if isinstance(annotation, str):  # postponed annotations (from __future__ import annotations)
        return _ASYNC_NAME.sub(lambda m: _SYNC_NAMES[m.group(1)], annotation)
    return annotation


def _sync_signature(function: Callable[..., Any]) -> inspect.Signature:
    signature = inspect.signature(function)
    return signature.replace(return_annotation=_sync_annotation(signature.return_annotation))


def _adopt(wrapper: Callable[..., Any], original: Callable[..., Any], owner: type) -> Callable[..., Any]:
    """``functools.wraps`` plus the sync owner's names and a sync return annotation."""
    functools.update_wrapper(wrapper, original)
    wrapper.__qualname__ = f"{owner.__qualname__}.{original.__name__}"
    wrapper.__module__ = owner.__module__
    wrapper.__annotations__ = {k: _sync_annotation(v) for k, v in original.__annotations__.items()}
    wrapper.__signature__ = _sync_signature(original)  # type: ignore[attr-defined]
    return wrapper


def _run(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """``run_sync(coroutine)``; a user's error comes out with its traceback starting here, and
    what the call warned is warned at the user's line once it has returned."""
    __tracebackhide__ = True  # IPython: not a frame for the user
    context, collected = collecting(coroutine)
    try:
        result = run_sync(coroutine, context)
    except HintedError as error:
        failure = error
    except BaseException:  # interrupted (or our own bug): what the call had warned is still said
        with contextlib.suppress(Warning):
            warn_collected(collected)
        raise
    else:
        warn_collected(collected)  # once the call has returned (a failed call says its error only)
        return result
    finally:
        collected.closed = True  # a call interrupted and still running warns at once from now on
    raise failure.with_traceback(None)  # outside the except block: no chained copy of itself


async def _on_loop(result: Any) -> Any:
    """Await ``result`` if it is awaitable (run on the background loop)."""
    return await result if inspect.isawaitable(result) else result


def _sync_member(owner: type, name: str, member: Any) -> Any:
    """The sync counterpart of ``member``, a public attribute of an async facade class."""
    if isinstance(member, property):
        getter = member.fget
        assert getter is not None

        def get(self: Any) -> Any:
            return _to_sync(getter(self._core))

        return property(_adopt(get, getter, owner), doc=member.__doc__)
    if isinstance(member, classmethod):
        function = member.__func__

        def construct(cls: type, *args: Any, **kwargs: Any) -> Any:
            __tracebackhide__ = True

            async def build() -> Any:  # built on the loop that will use its transport
                return await _on_loop(function(cls._ASYNC, *args, **kwargs))

            return _to_sync(_run(build()))

        return classmethod(_adopt(construct, function, owner))
    if inspect.iscoroutinefunction(member):

        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            __tracebackhide__ = True
            coroutine: Coroutine[Any, Any, Any] = getattr(self._core, name)(*args, **kwargs)
            return _to_sync(_run(coroutine))

        return _adopt(call, member, owner)
    if inspect.isfunction(member):

        def delegate(self: Any, *args: Any, **kwargs: Any) -> Any:
            return _to_sync(getattr(self._core, name)(*args, **kwargs))

        return _adopt(delegate, member, owner)
    raise TypeError(f"{owner.__name__} cannot mirror {name!r} ({type(member).__name__})")


def _derive(owner: type) -> type:
    """Class decorator: give ``owner`` a sync counterpart of every public member of ``owner._ASYNC``."""
    source: type = owner._ASYNC  # type: ignore[attr-defined]
    for name, member in vars(source).items():
        if not name.startswith("_") and name not in vars(owner):
            setattr(owner, name, _sync_member(owner, name, member))
    return owner


@_derive
class Session:
    """One browser session, with plain (blocking) methods: the notebook's main object.

    By default it drives the process-wide embedded engine, started on first use; ``connect``
    reaches any MCP server speaking the contract and ``attach`` binds to a browser session
    someone else opened. Every method runs the ``AsyncSession`` core on one background event
    loop, so it works in scripts and inside Jupyter's running loop. ``with Session() as s:``
    closes the browser session on exit. ``Session(replay_execution=True)`` opts in to
    ``replay`` for the whole process (see ``AsyncSession``): every session, and the agents of a
    ``serve()`` started afterwards.

    >>> site = pnb.DemoSite().start()      # the bundled demo pages on 127.0.0.1
    >>> s = Session()
    >>> page = s.open(site.url("/login.html"), trace=True)
    >>> s.type_text(page.find(label="Email"), "analyst@example.test")
    >>> s.trace.events()
    >>> final = s.close()
    """

    _ASYNC = AsyncSession
    _core: AsyncSession

    def __init__(self, transport: Transport | None = None, *, replay_execution: bool = False) -> None:
        self._core = AsyncSession(transport, replay_execution=replay_execution)

    @classmethod
    def _wrap(cls, core: AsyncSession) -> Session:
        session = cls.__new__(cls)
        session._core = core
        return session

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc_info: object) -> None:
        _run(self._core.__aexit__(*exc_info))

    def __repr__(self) -> str:
        return repr(self._core).replace("AsyncSession", "Session", 1)


@_derive
class Trace:
    """``session.trace`` of a ``Session``: status, export, events table, clear and the live dashboard.

    >>> s.trace.status()
    >>> s.trace.events()
    >>> s.trace.dashboard()
    """

    _ASYNC = AsyncTrace
    _core: AsyncTrace

    def __init__(self, core: AsyncTrace) -> None:
        self._core = core

    @classmethod
    def _wrap(cls, core: AsyncTrace) -> Trace:
        return cls(core)


def attach(session_id: str, transport: Transport | None = None) -> Session:
    """A ``Session`` bound to an existing browser session, e.g. one an external agent opened.

    Same as ``Session.attach``: trace tables, dashboard and replay checks of that session;
    leaving ``with`` does not close it. The default transport is the embedded engine, the one
    ``pnb.serve()`` shares with agents.

    >>> watch = attach(session_id)
    >>> watch.trace.dashboard()
    """
    return Session.attach(session_id, transport)


# -- the typing stub: the same derivation, written out for static tools --------------------------

#: Where each name an annotation may use is imported from, in the stub.
_STUB_IMPORTS = {
    "Callable": "collections.abc",
    "Sequence": "collections.abc",
    "Any": "typing",
    "pd": "pandas",
    "Transport": "..client.base",
    "AsyncSession": "._session",
    "AsyncTrace": "._session",
    "TraceListener": "._session",
    "Cookies": ".cookies",
    "FinalTraceOmitted": ".export",
    "TraceCleared": ".export",
    "TraceExport": ".export",
    "TraceStatus": ".export",
    "Element": ".page",
    "Page": ".page",
    "ReplayPlan": ".replay",
    "ReplayResult": ".replay",
    "ReadableFrame": "._tables",
    "TraceFigure": ".plots",
    "Screenshot": ".stateless",
    "ReplayPanel": ".replay_panel",
    "TraceDashboard": ".dashboard",
}
_STUB_DUNDERS = ("__init__", "__enter__", "__exit__")


def _stub_doc(doc: str | None, indent: str) -> list[str]:
    if not doc:
        return []
    text = inspect.cleandoc(doc)
    assert '"""' not in text and "\\" not in text, "a docstring the stub cannot quote"
    lines = text.splitlines()
    if len(lines) == 1:
        return [f'{indent}"""{lines[0]}"""']
    return [f'{indent}"""{lines[0]}', *[f"{indent}{line}".rstrip() for line in lines[1:]], f'{indent}"""']


def _stub_def(name: str, function: Callable[..., Any], indent: str, doc: str | None) -> list[str]:
    signature = inspect.signature(function)
    parts: list[str] = []
    star = False
    for parameter in signature.parameters.values():
        if parameter.kind is parameter.KEYWORD_ONLY and not star:
            parts.append("*")
        star = star or parameter.kind in (parameter.KEYWORD_ONLY, parameter.VAR_POSITIONAL)
        prefix = {parameter.VAR_POSITIONAL: "*", parameter.VAR_KEYWORD: "**"}.get(parameter.kind, "")
        text = prefix + parameter.name
        if parameter.annotation is not parameter.empty:
            text += f": {parameter.annotation}"
        if parameter.default is not parameter.empty:
            text += " = ..."
        parts.append(text)
    returns = "" if signature.return_annotation is signature.empty else f" -> {signature.return_annotation}"
    head = f"{indent}def {name}({', '.join(parts)}){returns}:"
    body = _stub_doc(doc, indent + "    ")
    return [head, *body] if body else [head[:-1] + ": ..."]


def _stub_class(cls: type) -> list[str]:
    lines = [f"class {cls.__name__}:", *_stub_doc(cls.__doc__, "    ")]
    for name, member in vars(cls).items():
        if name.startswith("_") and name not in _STUB_DUNDERS:
            continue
        if isinstance(member, property):
            assert member.fget is not None
            lines += ["    @property", *_stub_def(name, member.fget, "    ", member.__doc__)]
        elif isinstance(member, classmethod):
            lines += ["    @classmethod", *_stub_def(name, member.__func__, "    ", member.__doc__)]
        else:
            lines += _stub_def(name, member, "    ", member.__doc__ if not name.startswith("_") else None)
    return lines


def _render_stub() -> str:
    """The text of ``session.pyi``: Session, Trace and attach as derived here, for type checkers."""
    body = [
        *_stub_class(Session),
        "",
        *_stub_class(Trace),
        "",
        *_stub_def("attach", attach, "", attach.__doc__),
    ]
    signatures = "\n".join(line for line in body if line.lstrip().startswith("def "))
    used = set(re.findall(r"\w+", signatures))
    modules: dict[str, list[str]] = {}
    for name, module in _STUB_IMPORTS.items():
        if name in used:
            modules.setdefault(module, []).append(name)
    stdlib = [
        f"from {m} import {', '.join(sorted(n))}"
        for m, n in sorted(modules.items())
        if m in ("collections.abc", "typing")
    ]
    third = ["import pandas as pd"] if "pandas" in modules else []
    local = [
        f"from {m} import {', '.join(sorted(n))}" for m, n in sorted(modules.items()) if m.startswith(".")
    ]
    header = [
        "# Generated from AsyncSession / AsyncTrace by `python -m plasmate_nb.notebook.session`; do not edit.",
        "# tests/notebook/test_api_surface.py checks that it matches the runtime facade.",
        "",
    ]
    imports = [*stdlib, *([""] if stdlib else []), *third, *([""] if third else []), *local]
    return "\n".join([*header, *imports, "", *body]) + "\n"


if __name__ == "__main__":
    from pathlib import Path

    Path(__file__).with_suffix(".pyi").write_text(_render_stub(), encoding="utf-8")
