"""The notebook layer: sessions, pages, trace tables and widgets over the tool contract only.

``Session`` (sync, safe inside Jupyter's running loop) and ``AsyncSession`` share one async
core; every view shows only what a ``plasmate.trace.v1`` export contains. Names load on first
use (PEP 562): ``load_trace`` / ``load_traces`` need neither a browser nor ipywidgets.
"""

import typing as _typing

from plasmate_nb._lazy import lazy_exports as _lazy_exports

_EXPORTS = {
    "plasmate_nb.notebook._session": ("AsyncSession", "AsyncTrace", "SessionStateError"),
    "plasmate_nb.notebook.cookies": ("Cookies",),
    "plasmate_nb.notebook.export": (
        "FinalTraceOmitted", "TraceCleared", "TraceExport", "TraceFormatError", "TraceStatus", "load_trace",
        "load_traces", "schema",
    ),
    "plasmate_nb.notebook.page": ("AmbiguousElement", "Element", "ElementNotFound", "MissingCriteria", "Page"),
    "plasmate_nb.notebook.replay": (
        "CHECKS", "DRIFT_EXPLANATIONS", "Check", "ReplayPlan", "ReplayRefused", "ReplayResult", "UnknownReplayCode",
        "explain",
    ),
    "plasmate_nb.notebook.session": ("Session", "Trace", "attach"),
    "plasmate_nb.notebook.fetching": ("afetch", "fetch"),
    "plasmate_nb.notebook.stateless": ("Screenshot",),
    "plasmate_nb.notebook.dashboard": ("TraceDashboard",),
    "plasmate_nb.notebook.replay_panel": ("ReplayPanel",),
}  # fmt: skip
__all__, __getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS)

if _typing.TYPE_CHECKING:  # the same names for static tools (tests/test_lean_imports.py keeps them equal)
    from plasmate_nb.notebook._session import AsyncSession as AsyncSession
    from plasmate_nb.notebook._session import AsyncTrace as AsyncTrace
    from plasmate_nb.notebook._session import SessionStateError as SessionStateError
    from plasmate_nb.notebook.cookies import Cookies as Cookies
    from plasmate_nb.notebook.dashboard import TraceDashboard as TraceDashboard
    from plasmate_nb.notebook.export import FinalTraceOmitted as FinalTraceOmitted
    from plasmate_nb.notebook.export import TraceCleared as TraceCleared
    from plasmate_nb.notebook.export import TraceExport as TraceExport
    from plasmate_nb.notebook.export import TraceFormatError as TraceFormatError
    from plasmate_nb.notebook.export import TraceStatus as TraceStatus
    from plasmate_nb.notebook.export import load_trace as load_trace
    from plasmate_nb.notebook.export import load_traces as load_traces
    from plasmate_nb.notebook.export import schema as schema
    from plasmate_nb.notebook.fetching import afetch as afetch
    from plasmate_nb.notebook.fetching import fetch as fetch
    from plasmate_nb.notebook.page import AmbiguousElement as AmbiguousElement
    from plasmate_nb.notebook.page import Element as Element
    from plasmate_nb.notebook.page import ElementNotFound as ElementNotFound
    from plasmate_nb.notebook.page import MissingCriteria as MissingCriteria
    from plasmate_nb.notebook.page import Page as Page
    from plasmate_nb.notebook.replay import CHECKS as CHECKS
    from plasmate_nb.notebook.replay import DRIFT_EXPLANATIONS as DRIFT_EXPLANATIONS
    from plasmate_nb.notebook.replay import Check as Check
    from plasmate_nb.notebook.replay import ReplayPlan as ReplayPlan
    from plasmate_nb.notebook.replay import ReplayRefused as ReplayRefused
    from plasmate_nb.notebook.replay import ReplayResult as ReplayResult
    from plasmate_nb.notebook.replay import UnknownReplayCode as UnknownReplayCode
    from plasmate_nb.notebook.replay import explain as explain
    from plasmate_nb.notebook.replay_panel import ReplayPanel as ReplayPanel
    from plasmate_nb.notebook.session import Session as Session
    from plasmate_nb.notebook.session import Trace as Trace
    from plasmate_nb.notebook.session import attach as attach
    from plasmate_nb.notebook.stateless import Screenshot as Screenshot
