"""The tool catalogue and the traced dispatcher shared by every caller.

The catalogue is pure and loads at once; the dispatcher (which needs Playwright) loads on first
use (PEP 562), so that reading the catalogue, as the notebook layer does, starts no browser code.
"""

from __future__ import annotations

import importlib
from typing import Any

from plasmate_nb.tools.catalogue import (
    COARSE_TOOLS,
    DEFAULT_TOOLS,
    SESSION_TOOLS,
    TOOLS,
    TOOLS_BY_NAME,
    TRACE_CHANGING_TOOLS,
    TRACED_TOOLS,
    ToolSpec,
)

_DISPATCHER_NAMES = ("Dispatcher", "ToolResult")

__all__ = [
    "COARSE_TOOLS",
    "DEFAULT_TOOLS",
    "SESSION_TOOLS",
    "TOOLS",
    "TOOLS_BY_NAME",
    "TRACED_TOOLS",
    "TRACE_CHANGING_TOOLS",
    "Dispatcher",
    "ToolResult",
    "ToolSpec",
]


def __getattr__(name: str) -> Any:
    if name not in _DISPATCHER_NAMES:
        raise AttributeError(f"module 'plasmate_nb.tools' has no attribute {name!r}")
    value = getattr(importlib.import_module("plasmate_nb.tools.dispatcher"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
