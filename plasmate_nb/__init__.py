"""plasmate_nb: inspect, teach and validate plasmate.trace.v1 browser sessions in Jupyter.

>>> import plasmate_nb as pnb
>>> site = pnb.DemoSite().start()                      # bundled demo pages on 127.0.0.1
>>> s = pnb.Session()                                  # embedded engine, started lazily
>>> page = s.open(site.url("/login.html"), trace=True)
>>> s.type_text(page.find(label="Password"), "hunter2")
>>> s.trace.events()                                   # one row per retained event
>>> s.replay_validate(2)                               # checks in order; never executes
>>> s.close()                                          # the final trace

The same ``Session`` drives any MCP server speaking this contract: ``Session.connect(url,
token=...)`` or ``Session.connect(command=[...])``.
"""

import typing as _typing

from plasmate_nb._lazy import lazy_exports as _lazy_exports

# Public names and the modules that define them. They load on first use (PEP 562), so that
# `import plasmate_nb.trace` stays pure and `load_trace` starts no browser, MCP SDK or widgets.
_EXPORTS = {
    "plasmate_nb.analysis": ("AuditReport", "Comparison", "Fleet", "audit", "compare", "fleet"),
    "plasmate_nb.browser.config": ("EnvironmentSettingError",),
    "plasmate_nb.client": ("HttpTransport", "ServerAnswerError", "StdioTransport", "ToolError", "Transport"),
    "plasmate_nb.demo_site": ("DemoSite",),
    "plasmate_nb.notebook": (
        "AmbiguousElement", "AsyncSession", "Cookies", "Element", "ElementNotFound", "FinalTraceOmitted",
        "MissingCriteria", "Page", "ReplayPanel", "ReplayPlan", "ReplayRefused", "ReplayResult", "Screenshot", "Session",
        "SessionStateError", "TraceCleared", "TraceDashboard", "TraceExport", "TraceFormatError", "TraceStatus",
        "UnknownReplayCode", "afetch", "attach", "explain", "fetch", "load_trace", "load_traces",
    ),
    "plasmate_nb.notebook.embedded_server": ("EmbeddedServer", "serve"),
    "plasmate_nb.server.http": ("ServerConfigError",),
}  # fmt: skip
_SUBPACKAGES = (
    "analysis",
    "browser",
    "client",
    "demo_site",
    "errors",
    "examples",
    "notebook",
    "server",
    "som",
    "tools",
    "trace",
)
__all__, __getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, _SUBPACKAGES)

if _typing.TYPE_CHECKING:  # the same names for static tools (tests/test_lean_imports.py keeps them equal)
    from plasmate_nb.analysis import AuditReport as AuditReport
    from plasmate_nb.analysis import Comparison as Comparison
    from plasmate_nb.analysis import Fleet as Fleet
    from plasmate_nb.analysis import audit as audit
    from plasmate_nb.analysis import compare as compare
    from plasmate_nb.analysis import fleet as fleet
    from plasmate_nb.browser.config import EnvironmentSettingError as EnvironmentSettingError
    from plasmate_nb.client import HttpTransport as HttpTransport
    from plasmate_nb.client import ServerAnswerError as ServerAnswerError
    from plasmate_nb.client import StdioTransport as StdioTransport
    from plasmate_nb.client import ToolError as ToolError
    from plasmate_nb.client import Transport as Transport
    from plasmate_nb.demo_site import DemoSite as DemoSite
    from plasmate_nb.notebook import AmbiguousElement as AmbiguousElement
    from plasmate_nb.notebook import AsyncSession as AsyncSession
    from plasmate_nb.notebook import Cookies as Cookies
    from plasmate_nb.notebook import Element as Element
    from plasmate_nb.notebook import ElementNotFound as ElementNotFound
    from plasmate_nb.notebook import FinalTraceOmitted as FinalTraceOmitted
    from plasmate_nb.notebook import MissingCriteria as MissingCriteria
    from plasmate_nb.notebook import Page as Page
    from plasmate_nb.notebook import ReplayPanel as ReplayPanel
    from plasmate_nb.notebook import ReplayPlan as ReplayPlan
    from plasmate_nb.notebook import ReplayRefused as ReplayRefused
    from plasmate_nb.notebook import ReplayResult as ReplayResult
    from plasmate_nb.notebook import Screenshot as Screenshot
    from plasmate_nb.notebook import Session as Session
    from plasmate_nb.notebook import SessionStateError as SessionStateError
    from plasmate_nb.notebook import TraceCleared as TraceCleared
    from plasmate_nb.notebook import TraceDashboard as TraceDashboard
    from plasmate_nb.notebook import TraceExport as TraceExport
    from plasmate_nb.notebook import TraceFormatError as TraceFormatError
    from plasmate_nb.notebook import TraceStatus as TraceStatus
    from plasmate_nb.notebook import UnknownReplayCode as UnknownReplayCode
    from plasmate_nb.notebook import afetch as afetch
    from plasmate_nb.notebook import attach as attach
    from plasmate_nb.notebook import explain as explain
    from plasmate_nb.notebook import fetch as fetch
    from plasmate_nb.notebook import load_trace as load_trace
    from plasmate_nb.notebook import load_traces as load_traces
    from plasmate_nb.notebook.embedded_server import EmbeddedServer as EmbeddedServer
    from plasmate_nb.notebook.embedded_server import serve as serve
    from plasmate_nb.server.http import ServerConfigError as ServerConfigError
