"""The engine's own small-document fetches (``crawl_policy``, ``ard_discover``) with a browser on
another machine, which cannot use this machine's gate.

They used to check the URL policy first and then let the HTTP client resolve the name again, so a
name answering 127.0.0.1 to the check and 127.0.0.2 to the client was fetched from 127.0.0.2 —
from the server's own machine, whatever the remote browser's egress controls. DNS here is the
process's ``getaddrinfo``, scripted for one name: both the check and the client used it.
"""

from __future__ import annotations

import asyncio
import socket
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
