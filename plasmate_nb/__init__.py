"""plasmate_nb: inspect, teach and validate plasmate.trace.v1 browser sessions in Jupyter.

>>> import plasmate_nb as pnb
>>> s = pnb.Session()                                  # embedded engine, started lazily
>>> page = s.open("http://127.0.0.1:8765/login.html", trace=True)
>>> s.type_text(page.find(label="Password"), "hunter2")
>>> s.trace.events()                                   # one row per retained event
>>> s.replay_validate(2)                               # checks in order; never executes
>>> s.close()                                          # the final trace

The same ``Session`` drives any MCP server speaking this contract: ``Session.connect(url,
token=...)`` or ``Session.connect(command=[...])``.
"""

from plasmate_nb.client import FakeTransport, HttpTransport, StdioTransport, ToolError, Transport
from plasmate_nb.demo_site import DemoSite
from plasmate_nb.notebook import (
    AmbiguousElement,
    AsyncSession,
    Cookies,
    Element,
    ElementNotFound,
    FinalTraceOmitted,
    Page,
    ReplayPanel,
    ReplayPlan,
    Session,
    TraceCleared,
    TraceDashboard,
    TraceExport,
    TraceFormatError,
    TraceStatus,
    attach,
    load_trace,
    load_traces,
)
from plasmate_nb.notebook.embedded_server import EmbeddedServer, serve

__all__ = [
    "AmbiguousElement",
    "AsyncSession",
    "Cookies",
    "DemoSite",
    "Element",
    "ElementNotFound",
    "EmbeddedServer",
    "FakeTransport",
    "FinalTraceOmitted",
    "HttpTransport",
    "Page",
    "ReplayPanel",
    "ReplayPlan",
    "Session",
    "StdioTransport",
    "ToolError",
    "TraceCleared",
    "TraceDashboard",
    "TraceExport",
    "TraceFormatError",
    "TraceStatus",
    "Transport",
    "attach",
    "load_trace",
    "load_traces",
    "serve",
]
