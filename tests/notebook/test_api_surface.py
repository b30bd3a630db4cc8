"""The public surface: the sync facade is the async core's (members, signatures, docstrings), and
``dir()`` of the packages shows only public names. Help on every name: ``test_docstrings.py``."""

from __future__ import annotations

import importlib
import inspect
import re
import types
from pathlib import Path
from typing import Any

import pytest

import plasmate_nb as pnb
import plasmate_nb.notebook as nb
import plasmate_nb.notebook.export as export_module
from plasmate_nb.notebook import AsyncSession, AsyncTrace, Session, Trace

FACADES = [(AsyncSession, Session), (AsyncTrace, Trace)]
SYNC_NAME = {"AsyncSession": "Session", "AsyncTrace": "Trace"}


def _public(cls: type) -> dict[str, Any]:
    return {name: member for name, member in vars(cls).items() if not name.startswith("_")}


def _function(member: Any) -> Any:
    return member.__func__ if isinstance(member, classmethod | staticmethod) else member


def _sync_return(annotation: Any) -> Any:
    if not isinstance(annotation, str):
        return annotation
    return re.sub(r"\b(AsyncSession|AsyncTrace)\b", lambda m: SYNC_NAME[m.group(1)], annotation)


@pytest.mark.parametrize(("async_cls", "sync_cls"), FACADES, ids=lambda c: c.__name__)
def test_sync_facade_has_the_async_members_signatures_and_docstrings(async_cls: type, sync_cls: type) -> None:
    async_members = _public(async_cls)
    assert async_members, "nothing to mirror"
    assert set(_public(sync_cls)) == set(async_members)  # nothing missing, nothing extra
    for name, member in async_members.items():
        counterpart = vars(sync_cls)[name]
        assert type(counterpart) is type(member), name  # property / classmethod / function alike
        doc = inspect.getdoc(member)
        assert doc and inspect.getdoc(counterpart) == doc, name
        if isinstance(member, property):
            continue
        async_sig = inspect.signature(_function(member))
        sync_sig = inspect.signature(_function(counterpart))
        assert list(sync_sig.parameters.values()) == list(async_sig.parameters.values()), name
        assert sync_sig.return_annotation == _sync_return(async_sig.return_annotation), name
        assert not inspect.iscoroutinefunction(_function(counterpart)), name
        bound_async = getattr(async_cls, name) if isinstance(member, classmethod) else None
        if bound_async is not None:  # classmethods: the bound signatures agree too
            assert list(inspect.signature(getattr(sync_cls, name)).parameters) == list(
                inspect.signature(bound_async).parameters
            )
    if sync_cls is Session:  # Trace is made by Session.trace, never by hand
        assert inspect.signature(Session.__init__) == inspect.signature(AsyncSession.__init__)


def test_sync_facade_wraps_async_results() -> None:
    s = Session()  # the embedded engine starts on first call, not here
    assert isinstance(s.trace, Trace) and s.session_id is None and s.page is None and s.final_trace is None
    assert repr(s) == "Session(closed)"
    assert "Session" in inspect.signature(Session.connect).return_annotation
    help_text = Session.replay_validate.__doc__ or ""
    assert "never executes" in help_text and "confirmed=True" in help_text


# -- dir() ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "package", ["plasmate_nb", "plasmate_nb.notebook", "plasmate_nb.client", "plasmate_nb.server"]
)
def test_dir_shows_only_public_names(package: str) -> None:
    module = importlib.import_module(package)
    for name in set(dir(module)) - set(module.__all__):
        is_dunder = name.startswith("__") and name.endswith("__")
        value = getattr(module, name)
        is_submodule = isinstance(value, types.ModuleType) and value.__name__ == f"{package}.{name}"
        assert is_dunder or is_submodule, f"{package}: {name!r} in dir()"
    assert not {"Any", "annotations", "importlib", "TYPE_CHECKING"} & set(vars(module))
    for name in module.__all__:
        assert getattr(module, name) is not None


def test_pnb_reaches_its_subpackages() -> None:
    assert pnb.client.ToolError is pnb.ToolError and pnb.notebook.Session is pnb.Session
    with pytest.raises(AttributeError):
        pnb.no_such_name  # noqa: B018


def test_trace_status_fields_complete_with_tab() -> None:
    payload = {
        "schema": "plasmate.trace.v1", "enabled": True, "trace_id": "t1", "retained_events": 1,
        "retained_bytes": 10, "max_events": 128, "max_bytes": 49_152, "next_sequence": 2,
        "evicted_events": 0, "oversized_events": 0, "cleared_events": 0, "retention": "bounded",
    }  # fmt: skip
    status = nb.TraceStatus(payload)
    assert set(payload) <= set(dir(status))
    assert set(nb.TraceStatus.__annotations__) == set(
        export_module.STATUS_FIELDS
    )  # typed for static tools too
    assert set(nb.TraceExport.__annotations__) == set(export_module.EXPORT_FIELDS)
    assert (status.retained_events, status.max_bytes, status.enabled) == (1, 49_152, True)
    assert isinstance(inspect.getattr_static(nb.TraceStatus, "retained_events"), property)
    extra = nb.TraceStatus({**payload, "vendor_field": 7})  # a server may add fields
    assert extra.vendor_field == 7 and "vendor_field" in dir(extra)
    with pytest.raises(AttributeError):
        extra.missing  # noqa: B018


def test_typing_stub_is_the_derived_facade() -> None:
    import plasmate_nb.notebook.session as session_module

    stub = Path(session_module.__file__).with_suffix(".pyi")
    assert stub.read_text(encoding="utf-8") == session_module._render_stub(), (
        "regenerate it: python -m plasmate_nb.notebook.session"
    )
