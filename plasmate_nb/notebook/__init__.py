"""The notebook layer: sessions, pages, trace tables and widgets over the tool contract only.

``Session`` (sync, safe inside Jupyter's running loop) and ``AsyncSession`` share one async
core; every view shows only what a ``plasmate.trace.v1`` export contains.
"""

from ._session import AsyncSession, AsyncTrace
from .cookies import Cookies
from .export import (
    FinalTraceOmitted,
    TraceCleared,
    TraceExport,
    TraceFormatError,
    TraceStatus,
    load_trace,
    load_traces,
    schema,
)
from .page import AmbiguousElement, Element, ElementNotFound, Page
from .replay import CHECKS, DRIFT_EXPLANATIONS, Check, ReplayPlan
from .session import Session, Trace, attach
from .widgets import ReplayPanel, TraceDashboard

__all__ = [
    "CHECKS",
    "DRIFT_EXPLANATIONS",
    "AmbiguousElement",
    "AsyncSession",
    "AsyncTrace",
    "Check",
    "Cookies",
    "Element",
    "ElementNotFound",
    "FinalTraceOmitted",
    "Page",
    "ReplayPanel",
    "ReplayPlan",
    "Session",
    "Trace",
    "TraceCleared",
    "TraceDashboard",
    "TraceExport",
    "TraceFormatError",
    "TraceStatus",
    "attach",
    "load_trace",
    "load_traces",
    "schema",
]
