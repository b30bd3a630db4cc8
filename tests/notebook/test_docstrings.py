"""Help on every name a notebook user meets: each public name and member has a docstring whose
first line is a sentence and which shows a short ``>>>`` example; data constants carry a ``#:``
comment; ``TraceStatus`` fields complete with Tab (dir() and jedi, which IPython uses).

The walk covers everything ``plasmate_nb``, ``plasmate_nb.notebook`` and ``plasmate_nb.examples``
export, and the public methods and properties the project defines on each class (so the sync
``Session`` / ``Trace`` derived from ``AsyncSession`` / ``AsyncTrace`` too). That the sync and
async signatures match is checked in ``test_api_surface.py``.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Iterator
from typing import Any

import jedi
import pytest

import plasmate_nb as pnb
import plasmate_nb.examples as examples
import plasmate_nb.notebook as nb
from plasmate_nb.notebook.export import STATUS_FIELDS

PACKAGES = (pnb, nb, examples)


def _function(member: Any) -> Any:
    return member.__func__ if isinstance(member, classmethod | staticmethod) else member


def _members(cls: type) -> Iterator[tuple[str, Any]]:
    """Public methods and properties the project defines on ``cls`` or its project bases."""
    seen: set[str] = set()
    for klass in cls.__mro__:
        if not klass.__module__.startswith("plasmate_nb"):
            continue
        for name, member in vars(klass).items():
            if name.startswith("_") or name in seen:
                continue
            if isinstance(member, property | classmethod | staticmethod) or inspect.isfunction(member):
                seen.add(name)
                yield name, member


def _exported() -> dict[str, Any]:
    """Every exported name, once (``pnb.Session`` is ``nb.Session``), with its object."""
    found: dict[str, Any] = {}
    for package in PACKAGES:
        for name in package.__all__:
            found.setdefault(name, getattr(package, name))
    return dict(sorted(found.items()))


def _documented() -> Iterator[tuple[str, Any]]:
    for name, obj in _exported().items():
        if inspect.isclass(obj):
            yield name, obj
            for member_name, member in _members(obj):
                yield f"{name}.{member_name}", member
        elif callable(obj):
            yield name, obj


DOCUMENTED = list(_documented())
CONSTANTS = [(name, obj) for name, obj in _exported().items() if not callable(obj)]


def _doc(obj: Any) -> str:
    return inspect.getdoc(_function(obj) if not isinstance(obj, property) else obj) or ""


def _is_sentence(line: str) -> bool:
    return bool(re.match(r"^(``|[A-Z])", line)) and line.endswith(".")


@pytest.mark.parametrize(("name", "obj"), DOCUMENTED, ids=[name for name, _ in DOCUMENTED])
def test_every_public_name_has_a_docstring_whose_first_line_is_a_sentence(name: str, obj: Any) -> None:
    doc = _doc(obj)
    assert doc, f"{name} has no docstring"
    first = doc.splitlines()[0].strip()
    assert _is_sentence(first), f"{name}: first line is not a one-line sentence: {first!r}"


@pytest.mark.parametrize(("name", "obj"), DOCUMENTED, ids=[name for name, _ in DOCUMENTED])
def test_every_public_name_shows_a_short_example(name: str, obj: Any) -> None:
    examples_ = [line.strip() for line in _doc(obj).splitlines() if line.strip().startswith(">>> ")]
    assert examples_, f"{name}: the docstring has no '>>> ' example"
    assert len(examples_) <= 8, f"{name}: an example of {len(examples_)} lines is not short"
    assert all(len(line) > len(">>> ") for line in examples_)


def test_the_walk_covers_the_facades_and_their_members() -> None:
    names = {name for name, _ in DOCUMENTED}
    assert {
        "Session.open", "Session.trace", "Session.trace_id", "Trace.dashboard", "AsyncSession.subscribe",
        "AsyncTrace.status", "load_trace", "TraceStatus.retained_events", "TraceExport.session_id",
        "EmbeddedServer.sessions", "DemoSite.url", "ScriptedAgent.start", "ToolError",
    } <= names  # fmt: skip
    sync, core = dict(DOCUMENTED)["Session.close"], dict(DOCUMENTED)["AsyncSession.close"]
    assert _doc(sync) == _doc(core)  # the derived facade carries the core's help


@pytest.mark.parametrize(("name", "value"), CONSTANTS, ids=[name for name, _ in CONSTANTS])
def test_exported_constants_are_described_where_they_are_defined(name: str, value: Any) -> None:
    modules = [
        importlib.import_module(module)
        for package in PACKAGES
        for module, names in getattr(package, "_EXPORTS", {}).items()
        if name in names
    ]
    assert modules, f"{name}: not found in an export table"
    source = inspect.getsource(modules[0])
    assert re.search(rf"^#: .+\n{name}\b", source, flags=re.M), f"{name}: no '#: ' comment above it"


# -- Tab completion ------------------------------------------------------------------------------

STATUS = {
    "schema": "plasmate.trace.v1", "enabled": True, "trace_id": "t1", "retained_events": 1,
    "retained_bytes": 10, "max_events": 128, "max_bytes": 49_152, "next_sequence": 2,
    "evicted_events": 0, "oversized_events": 0, "cleared_events": 0, "retention": "bounded",
}  # fmt: skip


def _completions(code: str, namespace: dict[str, Any]) -> set[str]:
    """What jedi, IPython's completer, offers after ``code`` with the live ``namespace``."""
    return {completion.name for completion in jedi.Interpreter(code, [namespace]).complete()}


def test_trace_status_fields_complete_with_tab_and_have_help() -> None:
    status = nb.TraceStatus(dict(STATUS))
    assert set(STATUS_FIELDS) <= _completions("status.", {"status": status})
    assert _completions("status.retained_", {"status": status}) == {"retained_events", "retained_bytes"}
    for field, meaning in STATUS_FIELDS.items():
        attribute = inspect.getattr_static(nb.TraceStatus, field)
        assert isinstance(attribute, property), f"{field} comes from __getattr__, not a real attribute"
        assert meaning in (attribute.__doc__ or "") and f">>> s.trace.status().{field}" in attribute.__doc__
    extra = nb.TraceStatus({**STATUS, "vendor_field": 7})  # a server's extra field completes too
    assert "vendor_field" in _completions("extra.vendor", {"extra": extra})


def test_sync_session_members_complete_with_tab() -> None:
    session = pnb.Session()  # starts nothing until the first call
    offered = _completions("s.", {"s": session})
    public = {name for name in dir(pnb.AsyncSession) if not name.startswith("_")}
    assert public <= offered
    assert {"status", "events", "dashboard"} <= _completions("s.trace.", {"s": session})
