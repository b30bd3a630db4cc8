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

from __future__ import annotations

import importlib
from typing import Any

# Public names and the modules that define them. They load on first use (PEP 562), so that
# `import plasmate_nb.trace` stays pure: no browser, no pandas, no MCP SDK.
_EXPORTS = {
    "plasmate_nb.client": ("FakeTransport", "HttpTransport", "StdioTransport", "ToolError", "Transport"),
    "plasmate_nb.demo_site": ("DemoSite",),
    "plasmate_nb.notebook": (
        "AmbiguousElement", "AsyncSession", "Cookies", "Element", "ElementNotFound", "FinalTraceOmitted",
        "Page", "ReplayPanel", "ReplayPlan", "Session", "TraceCleared", "TraceDashboard", "TraceExport",
        "TraceFormatError", "TraceStatus", "attach", "load_trace", "load_traces",
    ),
    "plasmate_nb.notebook.embedded_server": ("EmbeddedServer", "serve"),
}  # fmt: skip
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'plasmate_nb' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

