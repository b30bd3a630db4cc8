"""A scripted loopback HTTP(S) server for the stateless tools' tests: a route table of canned
answers, and a log of every request (method, path, headers) it received."""

from __future__ import annotations

import http.server
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Answer:
    status: int = 200
    body: bytes | str = b""
    content_type: str | None = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


Route = Answer | Callable[[str], Answer]


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]


class ScriptedServer:
    def __init__(
        self, routes: dict[str, Route] | None = None, *, tls: tuple[Path, Path] | None = None
    ) -> None:
        self.routes: dict[str, Route] = dict(routes or {})
        self.seen: list[Seen] = []
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                owner.seen.append(Seen("GET", self.path, {k.lower(): v for k, v in self.headers.items()}))
                route = owner.routes.get(self.path.split("?", 1)[0])
                answer = (
                    Answer(404, "not found", "text/plain")
                    if route is None
                    else (route(self.path) if callable(route) else route)
                )
                if answer.delay:
                    time.sleep(answer.delay)
                body = answer.body.encode() if isinstance(answer.body, str) else answer.body
                self.send_response(answer.status)
                if answer.content_type is not None:
                    self.send_header("Content-Type", answer.content_type)
                self.send_header("Content-Length", str(len(body)))
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(str(tls[0]), str(tls[1]))
            self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self.scheme = "https" if tls is not None else "http"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        return f"{self.scheme}://{host}:{self.port}{path}"

    def start(self) -> ScriptedServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@contextmanager
def scripted(
    routes: dict[str, Route] | None = None, *, tls: tuple[Path, Path] | None = None
) -> Iterator[ScriptedServer]:
    server = ScriptedServer(routes, tls=tls).start()
    try:
        yield server
    finally:
        server.stop()


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for ``localhost`` and ``127.0.0.1`` (its own CA), by the openssl CLI."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key
