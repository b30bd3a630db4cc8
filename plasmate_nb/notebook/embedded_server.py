"""The MCP server inside the notebook process, sharing the embedded engine.

An external agent connects to it over streamable HTTP while the analyst watches: every
session the agent opens is a session of the notebook's own engine, so ``attach(session_id)``
and the live dashboard see its trace as it grows.
"""

from __future__ import annotations

import html
from typing import Any

import pandas as pd

from plasmate_nb.client import InProcessTransport, embedded_dispatcher
from plasmate_nb.server import HttpServer

from .._loop import run_sync

SESSION_COLUMNS = ["session_id", "title", "age_ms", "idle_ms", "has_page", "element_count"]


class EmbeddedServer:
    """A running embedded MCP server. ``url`` and ``token`` are what an agent needs."""

    def __init__(self, server: HttpServer, transport: InProcessTransport) -> None:
        self._server = server
        self._transport = transport

    @property
    def url(self) -> str:
        return self._server.url

    @property
    def token(self) -> str:
        assert self._server.token is not None
        return self._server.token

    def client_config(self, name: str = "plasmate-nb") -> dict[str, Any]:
        """An ``mcpServers`` entry for MCP clients that speak streamable HTTP (contains the token)."""
        return {"mcpServers": {name: {"type": "http", "url": self.url,
                                      "headers": {"Authorization": f"Bearer {self.token}"}}}}  # fmt: skip

    def sessions(self) -> pd.DataFrame:
        """Live browser sessions on the shared engine (any client's), newest state."""
        status = run_sync(self._transport.call("session_status", {}))
        rows = status["sessions"]
        frame = pd.DataFrame({col: [row.get(col) for row in rows] for col in SESSION_COLUMNS}, columns=SESSION_COLUMNS)
        return frame.astype({"session_id": "string", "title": "string", "age_ms": "Int64", "idle_ms": "Int64",
                             "has_page": "boolean", "element_count": "Int64"})  # fmt: skip

    def stop(self) -> None:
        run_sync(self._server.stop())

    def __repr__(self) -> str:  # the token is a credential: shown only on request
        return f"EmbeddedServer(url={self.url!r}, token=<hidden; see .token>)"

    def _repr_html_(self) -> str:
        return (
            "<div><b>plasmate-nb MCP server</b> (sharing this notebook's engine)<br>"
            f"endpoint: <code>{html.escape(self.url)}</code><br>"
            "token: <i>hidden — read <code>.token</code> or <code>.client_config()</code></i></div>"
        )


def serve(port: int = 0, token: str | None = None, host: str = "127.0.0.1",
          allowed_origins: tuple[str, ...] = ()) -> EmbeddedServer:  # fmt: skip
    """Start the MCP server on loopback in this process, sharing the embedded engine.

    ``port=0`` picks a free port; without ``token`` one is generated.
    """

    async def start() -> EmbeddedServer:
        dispatcher = embedded_dispatcher()
        server = HttpServer(dispatcher, host=host, port=port, token=token, allowed_origins=allowed_origins)
        await server.start()
        return EmbeddedServer(server, InProcessTransport(dispatcher))

    return run_sync(start())
