"""Turning a tool result's text into the payload every backend returns."""

from __future__ import annotations

from typing import Any

from plasmate_nb.client.base import ToolError, parse_payload


def payload_or_raise(tool: str, text: str, is_error: bool) -> Any:
    """The parsed payload of a result; a :class:`ToolError` when it has ``isError``."""
    if is_error:
        raise ToolError(tool, text)
    return parse_payload(text)
