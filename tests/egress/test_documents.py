"""The engine's own small-document fetches (``crawl_policy``, ``ard_discover``) with a browser on
another machine, which cannot use this machine's gate.

They used to check the URL policy first and then let the HTTP client resolve the name again, so a
name answering 127.0.0.1 to the check and 127.0.0.2 to the client was fetched from 127.0.0.2 —
from the server's own machine, whatever the remote browser's egress controls. DNS here is the
process's ``getaddrinfo``, scripted for one name: both the check and the client used it.
"""

from __future__ import annotations

import asyncio
import http.server
import socket
import threading
from collections.abc import Iterator

import pytest

from plasmate_nb.browser import Engine, EngineConfig
from plasmate_nb.browser.documents import fetch_document
from tests.egress.harness import ALLOWED_IP, BLOCKED_IP, unique


class RemoteBrowserEngine(Engine):
    """An engine whose browser is on another machine (so not behind the gate); connecting to it
    is left out: fetching a document needs no browser."""

    async def start(self) -> None:
        assert not self._gated()


@pytest.fixture
def rebinding_name(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A name whose first DNS answer is 127.0.0.1 and every later one 127.0.0.2."""
    name = unique("rebind-doc-") + ".test"
    answers = [ALLOWED_IP, BLOCKED_IP]
    real = socket.getaddrinfo

    def scripted(host, port, *args, **kwargs):  # type: ignore[no-untyped-def]
        text = host.decode() if isinstance(host, bytes) else str(host)
        if text.rstrip(".").lower() != name:
            return real(host, port, *args, **kwargs)
        address = answers.pop(0) if len(answers) > 1 else answers[0]
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, port or 0))]

    monkeypatch.setattr(socket, "getaddrinfo", scripted)
    yield name


async def test_a_document_fetch_is_not_rebound_with_a_remote_browser(
    site, blocked, rebinding_name, capsys
) -> None:
    config = EngineConfig(
        endpoint="ws://browsers.example.test:3000/",
        allow_private_network=False,
        allowed_networks=(f"{ALLOWED_IP}/32",),
    )
    engine = RemoteBrowserEngine(config)
    try:
        url = f"http://{rebinding_name}:{site.origin.port}/robots.txt"
        deadline = asyncio.get_running_loop().time() + 10
        document = await fetch_document(
            engine, url, max_bytes=65536, max_redirects=2, deadline=deadline, user_agent="probe"
        )
    finally:
        await engine.aclose()
    blocked.assert_untouched()
    assert document.body.startswith(b"User-agent: *")  # the origin's robots.txt, from 127.0.0.1
    assert "remote side's responsibility" in capsys.readouterr().err


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Answers with ``self.server.answer(path)``: ("redirect", location) or ("body", text); records
    each request's path and Authorization header."""

    def do_GET(self) -> None:
        self.server.seen.append((self.path, self.headers.get("Authorization")))  # type: ignore[attr-defined]
        kind, value = self.server.answer(self.path)  # type: ignore[attr-defined]
        body = b"" if kind == "redirect" else value.encode()
        self.send_response(302 if kind == "redirect" else 200)
        if kind == "redirect":
            self.send_header("Location", value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def _recorder(answer) -> http.server.ThreadingHTTPServer:  # type: ignore[no-untyped-def]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    server.seen, server.answer = [], answer  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


async def test_a_redirect_with_a_backslash_is_fetched_where_the_policy_checked_it() -> None:
    # A browser (and the policy) read "http://A\@B/" as host A with a path; an HTTP client that
    # reads it as user info "A\" at host B would go elsewhere, with credentials.
    other = _recorder(lambda path: ("body", "User-agent: *\nDisallow: /other\n"))
    site = _recorder(
        lambda path: (
            ("body", "User-agent: *\nDisallow: /site\n")
            if path != "/robots.txt"
            else (
                "redirect",
                f"http://127.0.0.1:{site.server_port}\\@127.0.0.1:{other.server_port}/robots.txt",
            )
        )
    )
    engine = Engine(EngineConfig())
    try:
        deadline = asyncio.get_running_loop().time() + 10
        document = await fetch_document(
            engine, f"http://127.0.0.1:{site.server_port}/robots.txt", max_bytes=65536, max_redirects=2,
            deadline=deadline, user_agent="probe",
        )  # fmt: skip
    finally:
        await engine.aclose()
        for server in (site, other):
            server.shutdown()
            server.server_close()
    assert other.seen == []  # never reached
    assert site.seen == [("/robots.txt", None), (f"/@127.0.0.1:{other.server_port}/robots.txt", None)]
    assert document.body.endswith(b"Disallow: /site\n")
