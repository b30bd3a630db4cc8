"""The MCP server inside the notebook process, sharing the embedded engine.

An external agent connects to it over streamable HTTP while the analyst watches: every
session the agent opens is a session of the notebook's own engine, so ``attach(session_id)``
and the live dashboard see its trace as it grows. The server is started through the client
layer (``client.embedded.serve_embedded_http``); this module only presents it.
"""

from __future__ import annotations

import html
from typing import Any

import pandas as pd

from .._loop import run_sync
from ..client.base import Transport
from ..client.embedded import EmbeddedHttpServer, embedded_transport, serve_embedded_http

SESSION_COLUMNS = ["session_id", "title", "age_ms", "idle_ms", "has_page", "element_count"]


class EmbeddedServer:
    """The MCP server running inside this notebook, sharing its engine; made by ``serve()``.

    ``url`` and ``token`` (or ``client_config()``) are what an agent needs; ``sessions()``
    lists every live browser session, whoever opened it. The token never shows in a repr.

    >>> server = serve()
    >>> server.client_config()       # an mcpServers entry for the agent
    >>> server.sessions()
    >>> server.stop()
    """

    def __init__(self, server: EmbeddedHttpServer, transport: Transport) -> None:
        self._server = server
        self._transport = transport

    @property
    def url(self) -> str:
        """The streamable HTTP endpoint, e.g. ``http://127.0.0.1:<port>/mcp``.

        >>> HttpTransport(server.url, token=server.token)      # what an agent connects to
        """
        return self._server.url

    @property
    def token(self) -> str:
        """The bearer token an agent must send (a credential: shown only when asked for).

        >>> headers = {"Authorization": f"Bearer {server.token}"}
        """
        return self._server.token

    def client_config(self, name: str = "plasmate-nb") -> dict[str, Any]:
        """An ``mcpServers`` entry for MCP clients that speak streamable HTTP (it contains the token).

        >>> server.client_config()["mcpServers"]["plasmate-nb"]["url"]
        """
        return {"mcpServers": {name: {"type": "http", "url": self.url,
                                      "headers": {"Authorization": f"Bearer {self.token}"}}}}  # fmt: skip

    def sessions(self) -> pd.DataFrame:
        """The live browser sessions on the shared engine (any client's), one row each.

        >>> server.sessions()["session_id"].tolist()
        """
        status = run_sync(self._transport.call("session_status", {}))
        rows = status["sessions"]
        frame = pd.DataFrame(
            {col: [row.get(col) for row in rows] for col in SESSION_COLUMNS}, columns=SESSION_COLUMNS
        )
        return frame.astype({"session_id": "string", "title": "string", "age_ms": "Int64", "idle_ms": "Int64",
                             "has_page": "boolean", "element_count": "Int64"})  # fmt: skip

    def stop(self) -> None:
        """Stop serving; the engine and its browser sessions stay (they are the notebook's).

        >>> server.stop()
        """
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
    """Start the MCP server on loopback in this process, sharing the notebook's embedded engine.

    ``port=0`` picks a free port; without ``token`` one is generated. Agents connect over
    streamable HTTP; ``attach(session_id)`` then watches any session they open. Agents get
    ``replay_execute`` only if a ``Session(replay_execution=True)`` had turned it on before.

    >>> server = serve()
    >>> server.url, server.client_config()
    """

    async def start() -> EmbeddedServer:  # on the background loop, home of the embedded engine
        server = await serve_embedded_http(host=host, port=port, token=token, allowed_origins=allowed_origins)
        return EmbeddedServer(server, await embedded_transport())

    return run_sync(start())
