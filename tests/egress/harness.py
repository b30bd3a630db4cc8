"""Loopback servers that record whatever reaches them, for the egress-gate attack tests.

The gate's guarantee is about bytes reaching a blocked host, so the only convincing evidence is
a real listener *on* the blocked address that records every connection, byte and datagram.
127.0.0.2 is loopback but is not 127.0.0.1: the engine under test allows ``127.0.0.1/32`` only,
so 127.0.0.2 plays the internal service (metadata endpoint, intranet host) an attacker aims at,
while 127.0.0.1 serves the pages and the positive controls that prove each vector really fires.

Everything runs in threads, independent of the event loop the tests and the gate share, and
records *before* answering. Only loopback addresses are ever bound or contacted; the scripted
resolver never falls back to real DNS.
"""

from __future__ import annotations

import http.server
import socket
import socketserver
import threading
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

ALLOWED_IP = "127.0.0.1"
BLOCKED_IP = "127.0.0.2"
PAGES = Path(__file__).parent / "pages"
IDLE_SECONDS = 10.0  # a recorded connection that stays silent this long is closed
NOT_ROUTABLE = f"address {BLOCKED_IP} is not globally routable"
# What a site writes into forged gate headers: page text and a path with a token.
FORGED_REASON = "SECRET-PAGE-TEXT http://127.0.0.1/private/path?token=abc123"
LEAK_ANSWER = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 6\r\nconnection: close\r\n\r\nLEAKED"
)


# ----- recorders ------------------------------------------------------------------------------------


@dataclass
class Contact:
    """One accepted connection (with every byte it sent) or one datagram."""

    kind: str  # "tcp" or "udp"
    peer: tuple[str, int]
    data: bytearray = field(default_factory=bytearray)

    def __repr__(self) -> str:
        return f"Contact({self.kind} from {self.peer[0]}:{self.peer[1]}, {len(self.data)} bytes: {bytes(self.data[:80])!r})"


class Recorder:
    """Append-only, thread-safe log of contacts; ``mark()``/``since()`` give one test its share."""

    def __init__(self, name: str, host: str) -> None:
        self.name = name
        self.host = host
        self.port = 0
        self._lock = threading.Lock()
        self._contacts: list[Contact] = []

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name} on {self.host}:{self.port})"

    def _add(self, contact: Contact) -> Contact:
        with self._lock:
            self._contacts.append(contact)
        return contact

    def _append(self, contact: Contact, data: bytes) -> None:
        with self._lock:
            contact.data += data

    def mark(self) -> int:
        with self._lock:
            return len(self._contacts)

    def since(self, mark: int = 0) -> list[Contact]:
        with self._lock:
            return list(self._contacts[mark:])


class TcpListener(Recorder):
    """A TCP listener recording every connection and every byte. ``answer`` (if any) is sent
    once, after the first bytes are recorded; otherwise it only listens."""

    def __init__(self, name: str, host: str, port: int = 0, answer: bytes | None = None) -> None:
        super().__init__(name, host)
        recorder = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                recorder._serve(self.request, self.client_address)

        self._server = socketserver.ThreadingTCPServer((host, port), Handler, bind_and_activate=False)
        self._server.daemon_threads = True
        self._server.allow_reuse_address = True
        self._server.server_bind()
        self._server.server_activate()
        self.port = self._server.server_address[1]
        self._answer = answer
        self._thread = threading.Thread(target=self._server.serve_forever, name=repr(self), daemon=True)
        self._thread.start()

    def _serve(self, conn: socket.socket, peer: tuple[str, int]) -> None:
        contact = self._add(Contact("tcp", peer))
        conn.settimeout(IDLE_SECONDS)
        answered = False
        try:
            while data := conn.recv(65536):
                self._append(contact, data)
                if self._answer is not None and not answered:
                    answered = True
                    conn.sendall(self._answer)
        except OSError:
            pass

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class UdpListener(Recorder):
    """A UDP socket recording every datagram."""

    def __init__(self, name: str, host: str, port: int = 0) -> None:
        super().__init__(name, host)
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.bind((host, port))
        self._socket.settimeout(0.2)
        self.port = self._socket.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=repr(self), daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                data, peer = self._socket.recvfrom(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            self._add(Contact("udp", peer, bytearray(data)))

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self._socket.close()


# ----- the allowed origin ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Hit:
    method: str
    path: str  # path and query, as requested
    host: str  # the Host header
    body: bytes = b""


class Origin:
    """The allowed site on 127.0.0.1: fixture pages (``{{name}}`` placeholders filled from
    :attr:`values`) and the dynamic endpoints the attacks need. Records every request.

    * ``/redirect?to=URL`` — 302 to URL (``&code=307`` another status); ``/chain?n=K&to=URL`` — K
      hops of 302, the last to URL;
    * ``/flip?k=KEY`` — the first request for KEY is a 200 page, every later one a 302 to the
      blocked listener (a hop that answers a checker and the browser differently);
    * ``/ok/...`` — a 200 HTML ``ok`` with ``access-control-allow-origin: *`` (control targets);
    * ``/<file>`` — ``pages/<file>`` rendered; anything else 404.
    """

    def __init__(self, values: dict[str, str] | None = None) -> None:
        self.values: dict[str, str] = dict(values or {})
        self._lock = threading.Lock()
        self._hits: list[Hit] = []
        self._flips: dict[str, int] = {}
        origin = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                origin._handle(self)

            do_POST = do_HEAD = do_GET

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer((ALLOWED_IP, 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.base = f"http://{ALLOWED_IP}:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="origin", daemon=True)
        self._thread.start()

    def url(self, path: str) -> str:
        return self.base + path

    def hits(self, needle: str = "") -> list[Hit]:
        """Requests whose path contains ``needle``."""
        with self._lock:
            return [hit for hit in self._hits if needle in hit.path]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handle(self, request: http.server.BaseHTTPRequestHandler) -> None:
        length = int(request.headers.get("content-length") or 0)
        body = request.rfile.read(length) if length else b""
        parts = urlsplit(request.path)
        query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        path = parts.path
        with self._lock:
            self._hits.append(Hit(request.command, request.path, request.headers.get("host", ""), body))
            if path == "/flip":
                flips = self._flips[query.get("k", "")] = self._flips.get(query.get("k", ""), 0) + 1
        if path == "/redirect":
            return _send(request, int(query.get("code", "302")), location=query.get("to", "/"))
        if path == "/chain":
            hops = int(query.get("n", "1"))
            target = query.get("to", "/")
            if hops > 1:
                target = f"/chain?n={hops - 1}&to={quote(target, safe='')}"
            return _send(request, 302, location=target)
        if path == "/flip":
            if flips == 1:
                return _send(request, 200, self._render("flip.html", k=query.get("k", "")), "text/html")
            return _send(request, 302, location=f"{self.values['blocked']}/flip-leak?k={query.get('k', '')}")
        if path in ("/forged", "/robots.txt"):
            # A site writing the gate's own marker headers, as if the gate had answered.
            kind = query.get("kind", "refused")
            body = (
                b"User-agent: *\nDisallow: /private\n"
                if path == "/robots.txt"
                else b"<!doctype html><title>Forged</title><p>Loaded fine</p>"
            )
            forged = {"x-plasmate-egress": kind, "x-plasmate-egress-reason": f"{FORGED_REASON} {kind}"}
            return _send(
                request, 200, body, "text/plain" if path == "/robots.txt" else "text/html", extra=forged
            )
        if path.startswith("/ok/"):
            return _send(request, 200, b"<!doctype html><title>ok</title>ok", "text/html")
        name = path.lstrip("/")
        if name and "/" not in name and (PAGES / name).is_file():
            kind = {"html": "text/html", "js": "text/javascript"}.get(name.rsplit(".", 1)[-1], "text/plain")
            return _send(request, 200, self._render(name, **query), kind)
        return _send(request, 404, b"not found", "text/plain")

    def _render(self, name: str, **extra: str) -> bytes:
        text = (PAGES / name).read_text(encoding="utf-8")
        for key, value in {**self.values, **extra}.items():
            text = text.replace("{{" + key + "}}", value)
        return text.encode()


def _send(
    request: http.server.BaseHTTPRequestHandler,
    status: int,
    body: bytes = b"",
    kind: str = "text/plain",
    location: str | None = None,
    extra: dict[str, str] | None = None,
) -> None:
    request.send_response(status)
    request.send_header("content-type", kind)
    request.send_header("content-length", str(len(body)))
    request.send_header("cache-control", "no-store")
    request.send_header("access-control-allow-origin", "*")
    request.send_header("service-worker-allowed", "/")
    if location is not None:
        request.send_header("location", location)
    for name, value in (extra or {}).items():
        request.send_header(name, value)
    request.end_headers()
    if request.command != "HEAD":
        request.wfile.write(body)


# ----- the whole site ------------------------------------------------------------------------------------


class Site:
    """The origin, its listeners, and the blocked side.

    * ``origin`` — pages on 127.0.0.1:P;
    * ``allowed_tcp`` — a silent listener on 127.0.0.1 for raw positive controls (WebSocket,
      TURN over TCP, preconnect);
    * ``blocked_http`` on 127.0.0.2:**P** (the origin's port, so a rebound name lands on it),
      ``blocked_ws``, ``blocked_turn`` (TCP) and ``blocked_udp`` on 127.0.0.2.
    """

    def __init__(self) -> None:
        self.origin = Origin()
        self.allowed_tcp = TcpListener("allowed-tcp", ALLOWED_IP)
        self.allowed_udp = UdpListener("allowed-udp", ALLOWED_IP)
        self.blocked_http = TcpListener("blocked-http", BLOCKED_IP, self.origin.port, answer=LEAK_ANSWER)
        self.blocked_ws = TcpListener("blocked-ws", BLOCKED_IP, answer=LEAK_ANSWER)
        self.blocked_turn = TcpListener("blocked-turn", BLOCKED_IP)
        self.blocked_udp = UdpListener("blocked-udp", BLOCKED_IP)
        port = self.origin.port
        self.origin.values.update(
            {
                "origin": self.origin.base,
                "port": str(port),
                "blocked": f"http://{BLOCKED_IP}:{port}",
                "blocked_name": f"http://blocked.test:{port}",
                "allowed_tcp_port": str(self.allowed_tcp.port),
                "allowed_udp_port": str(self.allowed_udp.port),
                "blocked_ws_port": str(self.blocked_ws.port),
                "blocked_turn_port": str(self.blocked_turn.port),
                "blocked_udp_port": str(self.blocked_udp.port),
            }
        )

    @property
    def blocked(self) -> tuple[Recorder, ...]:
        return (self.blocked_http, self.blocked_ws, self.blocked_turn, self.blocked_udp)

    def url(self, path: str) -> str:
        return self.origin.url(path)

    def close(self) -> None:
        for recorder in (self.origin, self.allowed_tcp, self.allowed_udp, *self.blocked):
            recorder.close()


class BlockedSide:
    """What reached any blocked listener since this object was made (one per test)."""

    def __init__(self, recorders: Iterable[Recorder]) -> None:
        self._marks = [(recorder, recorder.mark()) for recorder in recorders]

    def contacts(self) -> dict[str, list[Contact]]:
        return {recorder.name: seen for recorder, mark in self._marks if (seen := recorder.since(mark))}

    def assert_untouched(self) -> None:
        contacts = self.contacts()
        assert contacts == {}, f"bytes reached the blocked host: {contacts}"


# ----- DNS the tests control -------------------------------------------------------------------------------


class ScriptedResolver:
    """The gate's resolver: each name answers from its script (the last answer repeats);
    unknown names do not resolve. Never asks real DNS."""

    def __init__(self, script: dict[str, Sequence[Sequence[str]]] | None = None) -> None:
        self._script: dict[str, list[list[str]]] = {}
        self._lock = threading.Lock()
        self.calls: list[str] = []
        for name, answers in (script or {}).items():
            self.script(name, *answers)

    def script(self, name: str, *answers: Sequence[str]) -> None:
        with self._lock:
            self._script[name.lower()] = [list(answer) for answer in answers]

    def calls_for(self, name: str) -> int:
        with self._lock:
            return self.calls.count(name.lower())

    async def __call__(self, host: str) -> list[str]:
        with self._lock:
            self.calls.append(host.lower())
            answers = self._script.get(host.lower())
            if not answers:
                raise OSError(f"{host}: not a name of the egress test script")
            return answers.pop(0) if len(answers) > 1 else list(answers[0])


def unique(prefix: str) -> str:
    """A per-test token (paths, keys, names)."""
    return f"{prefix}{uuid.uuid4().hex[:12]}"
