"""A small threaded loopback HTTP server for the bundled demo pages.

Static files come from ``pages/``; a few routes are generated: ``POST /login`` (redirects to
the welcome page so the password never appears in a URL), ``/large?n=N`` (benchmark page),
``/redirect?to=URL`` (policy tests) and the ``/faults/*`` endpoints used by reliability tests.
"""

from __future__ import annotations

import http.server
import threading
from pathlib import Path
from types import TracebackType
from urllib.parse import parse_qs, urlsplit

PAGES = Path(__file__).parent / "pages"
LARGE_MAX_ELEMENTS = 100_000
ELEMENTS_PER_SECTION = 5  # h2, p, labelled input, button, link
SLOW_HOLD_SECONDS = 120.0  # "never" finishes, but a stuck handler thread still ends eventually


def large_page(n: int) -> str:
    """A page of ``n`` elements made of sections (h2, p, labelled input, button, link)."""
    sections = max(1, min(n, LARGE_MAX_ELEMENTS) // ELEMENTS_PER_SECTION)
    parts = [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        f"<title>Large page ({sections * ELEMENTS_PER_SECTION} elements)</title>",
        '<link rel="stylesheet" href="/style.css"></head><body><main>',
    ]
    for i in range(sections):
        parts.append(
            f"<section><h2>Heading {i}</h2><p>Paragraph {i} of the generated page.</p>"
            f'<label for="field{i}">Field {i}</label><input id="field{i}" name="field{i}" type="text">'
            f'<button type="button">Button {i}</button><a href="#s{i}">Link {i}</a></section>'
        )
    parts.append("</main></body></html>")
    return "".join(parts)


class _Handler(http.server.SimpleHTTPRequestHandler):
    server: _DemoHTTPServer

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, directory=str(PAGES), **kwargs)

    def log_message(self, format: str, *args: object) -> None:  # URLs may carry user data: log nothing
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def _send(
        self,
        status: int,
        body: str,
        content_type: str = "text/html; charset=utf-8",
        headers: dict[str, str] | None = None,
    ) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _redirect(self, location: str, status: int = 302) -> None:
        self._send(status, "", headers={"Location": location})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)  # drain and discard: the demo stores nothing
        if urlsplit(self.path).path == "/login":
            self._redirect("/welcome.html", 303)
        else:
            self._send(404, "<h1>Not found</h1>")

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        route = {
            "/": lambda: self._redirect("/index.html"),
            "/large": lambda: self._send(200, large_page(_int(query.get("n", ["100"])[0], 100))),
            "/redirect": lambda: self._redirect(query.get("to", ["/index.html"])[0]),
            "/faults/slow": self._slow,
            "/faults/500": lambda: self._send(500, "<h1>Internal Server Error</h1>"),
            "/faults/no-content": lambda: self._send(204, ""),
            "/faults/redirect-loop": lambda: self._redirect("/faults/redirect-loop"),
            "/faults/download": lambda: self._send(
                200, "a,b\n1,2\n", "text/csv", {"Content-Disposition": 'attachment; filename="report.csv"'}
            ),
        }.get(parts.path)
        if route is not None:
            route()
        else:
            super().do_GET()

    def _slow(self) -> None:
        """Start a page and never finish it (until the server stops or a long hold ends)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write(b"<!DOCTYPE html><html><head><title>Slow</title></head><body><p>Still loading")
        self.wfile.flush()
        self.server.stopping.wait(SLOW_HOLD_SECONDS)


def _int(text: str, default: int) -> int:
    try:
        return max(0, int(text))
    except ValueError:
        return default


class _DemoHTTPServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # a held /faults/slow connection must not block stop()

    def __init__(self, address: tuple[str, int]) -> None:
        super().__init__(address, _Handler)
        self.stopping = threading.Event()


class DemoSite:
    """The bundled demo site on a loopback port (``port=0`` picks a free one).

    >>> with DemoSite() as site:
    ...     site.url("/login.html")   # 'http://127.0.0.1:<port>/login.html'
    >>> site = DemoSite().start()     # or without ``with``: start, use, stop
    >>> site.url("/login.html")
    >>> site.stop()
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self.port = port
        self._server: _DemoHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` of the running site (RuntimeError when it is stopped).

        >>> site.base_url      # e.g. 'http://127.0.0.1:8765'
        """
        if self._server is None:
            raise RuntimeError("DemoSite is not started")
        return f"http://{self.host}:{self._server.server_address[1]}"

    def url(self, path: str = "/") -> str:
        """The full URL of ``path`` on the running site.

        >>> site.url("/login.html")
        """
        return self.base_url + (path if path.startswith("/") else "/" + path)

    def start(self) -> DemoSite:
        """Start serving (once; later calls do nothing) and return the site itself.

        >>> site = DemoSite().start()
        >>> site.url("/login.html"), site.base_url
        """
        if self._server is None:
            self._server = _DemoHTTPServer((self.host, self.port))
            self._thread = threading.Thread(target=self._server.serve_forever, name="demo-site", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and free the port (does nothing when already stopped).

        >>> site.stop()
        """
        if self._server is None:
            return
        self._server.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> DemoSite:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = self.base_url if self._server is not None else "stopped"
        return f"DemoSite({state})"


__all__ = ["PAGES", "DemoSite", "large_page"]
