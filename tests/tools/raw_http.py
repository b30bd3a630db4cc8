"""A loopback TCP server that answers every connection with whatever bytes a test writes: dripped
heads, endless bodies, broken status lines, lies about lengths — what no HTTP server library sends.

``answer(connection, stopping)`` runs in a thread per connection after the request head was read;
``stopping`` is set when the server stops, so an answer that never ends (a drip) waits on it
instead of sleeping, and every thread ends with the server.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress

Answer = Callable[[socket.socket, threading.Event], None]
MAX_HEAD = 64 * 1024


class RawServer:
    def __init__(self, answer: Answer) -> None:
        self._answer = answer
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.stopping = threading.Event()
        self.requests: list[bytes] = []  # each request head, as received
        self._connections: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self._acceptor = threading.Thread(target=self._accept, daemon=True)
        self._acceptor.start()

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}{path}"

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self._connections.append(connection)
            thread = threading.Thread(target=self._serve, args=(connection,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _serve(self, connection: socket.socket) -> None:
        with connection, suppress(OSError):
            head = b""
            while b"\r\n\r\n" not in head and len(head) < MAX_HEAD:
                chunk = connection.recv(4096)
                if not chunk:
                    return
                head += chunk
            self.requests.append(head)
            self._answer(connection, self.stopping)

    def stop(self) -> None:
        """End every answer at once: the caller may be the event loop whose gate would otherwise
        have to read the rest of an endless answer before a blocked send returns."""
        self.stopping.set()
        self._listener.close()
        for connection in self._connections:
            with suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        for thread in [self._acceptor, *self._threads]:
            thread.join(timeout=5)


@contextmanager
def raw_server(answer: Answer) -> Iterator[RawServer]:
    server = RawServer(answer)
    try:
        yield server
    finally:
        server.stop()


def drip(data: bytes, interval: float = 0.05) -> Answer:
    """Send ``data`` one byte per ``interval``, then hold the connection open until the server stops."""

    def answer(connection: socket.socket, stopping: threading.Event) -> None:
        for byte in data:
            if stopping.wait(interval):
                return
            connection.sendall(bytes([byte]))
        stopping.wait()

    return answer


def send(data: bytes, *, then_hold: bool = False) -> Answer:
    """Send ``data`` at once, then close (or hold the connection open until the server stops)."""

    def answer(connection: socket.socket, stopping: threading.Event) -> None:
        connection.sendall(data)
        if then_hold:
            stopping.wait()

    return answer
