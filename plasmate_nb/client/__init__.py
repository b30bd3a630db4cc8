"""Backends of the tool contract: ``call(tool, arguments) -> payload | ToolError``.

One interface, several transports (httpx style): the in-process engine, an MCP server over
stdio, an MCP server over streamable HTTP, and a fake for pure unit tests.
"""

from plasmate_nb.client.base import ToolError, Transport
from plasmate_nb.client.bound import LoopBoundTransport
from plasmate_nb.client.embedded import close_embedded, embedded_dispatcher, embedded_transport
from plasmate_nb.client.fake import FakeTransport
from plasmate_nb.client.inprocess import InProcessTransport
from plasmate_nb.client.mcp import HttpTransport, StdioTransport

__all__ = [
    "FakeTransport",
    "HttpTransport",
    "InProcessTransport",
    "LoopBoundTransport",
    "StdioTransport",
    "ToolError",
    "Transport",
    "close_embedded",
    "embedded_dispatcher",
    "embedded_transport",
]
