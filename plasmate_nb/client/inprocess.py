"""The in-process backend: calls go straight to a dispatcher on the same event loop.

Nothing is serialised beyond what the dispatcher produces, so the notebook sees exactly the
text an MCP agent would.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plasmate_nb.client._payload import payload_or_raise
from plasmate_nb.tools import Dispatcher


class InProcessTransport:
    #: Every client of the engine (the embedded server's agents too) goes through the dispatcher.
    observes_all_clients = True

    def __init__(self, dispatcher: Dispatcher) -> None:
        self.dispatcher = dispatcher

    def __repr__(self) -> str:
        return "InProcessTransport()"

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        result = await self.dispatcher.call(tool, arguments)
        images = [(block.data, block.mime_type) for block in result.blocks]
        return payload_or_raise(tool, result.text, result.is_error, images, result.text_block)

    async def list_tools(self) -> list[dict[str, Any]]:
        return [
            {"name": spec.name, "title": spec.title, "description": spec.description,
             "inputSchema": spec.input_schema, "annotations": spec.annotations}
            for spec in self.dispatcher.tools()
        ]  # fmt: skip

    def subscribe(self, callback: Callable[[str | None, str], None]) -> Callable[[], None]:
        return self.dispatcher.add_listener(callback)

    async def aclose(self) -> None:
        """The engine is shared (other clients and the embedded server use it): nothing to close."""
