"""The harness can see a leak: without this, "the blocked listener saw nothing" proves nothing."""

from __future__ import annotations

import asyncio
import socket
import urllib.error
import urllib.request

import pytest

from tests.egress.harness import BLOCKED_IP, BlockedSide, ScriptedResolver, unique
from tests.support import wait_until


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object) -> None:
        return None


def _get(url: str) -> tuple[int, str | None]:
    """Status and Location of one request, redirects not followed (straight to the origin)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect)
    try:
        with opener.open(url, timeout=5) as response:
            return response.status, response.headers.get("location")
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("location")


async def test_blocked_listeners_record_connections_bytes_and_datagrams(site) -> None:
    side = BlockedSide(site.blocked)
    side.assert_untouched()
    with socket.create_connection((BLOCKED_IP, site.blocked_turn.port), timeout=5) as connection:
        connection.sendall(b"probe")
    with socket.create_connection((BLOCKED_IP, site.blocked_http.port), timeout=5):
        pass  # a bare connection without a byte is a contact too
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as datagram:
        datagram.sendto(b"ping", (BLOCKED_IP, site.blocked_udp.port))

    def all_three() -> dict[str, list]:
        found = side.contacts()
        complete = found.keys() == {"blocked-turn", "blocked-http", "blocked-udp"}
        return found if complete and bytes(found["blocked-turn"][0].data) == b"probe" else {}

    contacts = await wait_until(all_three, what="the three contacts")
    assert bytes(contacts["blocked-udp"][0].data) == b"ping"
    assert bytes(contacts["blocked-http"][0].data) == b""
    with pytest.raises(AssertionError, match="bytes reached the blocked host"):
        side.assert_untouched()


async def test_the_origin_serves_chains_and_a_hop_that_flips(site) -> None:
    key = unique("k")
    flip = site.url(f"/flip?k={key}")
    assert await asyncio.to_thread(_get, flip) == (200, None)
    assert await asyncio.to_thread(_get, flip) == (
        302,
        f"http://{BLOCKED_IP}:{site.origin.port}/flip-leak?k={key}",
    )
    assert len(site.origin.hits(f"/flip?k={key}")) == 2
    assert await asyncio.to_thread(_get, site.url("/chain?n=3&to=%2Fok%2Fend")) == (
        302,
        "/chain?n=2&to=%2Fok%2Fend",
    )
    assert await asyncio.to_thread(_get, site.url("/chain?n=1&to=%2Fok%2Fend")) == (302, "/ok/end")
    assert await asyncio.to_thread(_get, site.url("/blank.html")) == (200, None)


async def test_the_scripted_resolver_repeats_its_last_answer_and_knows_no_other_name() -> None:
    resolver = ScriptedResolver({"rebind.test": [["127.0.0.1"], ["127.0.0.2"]]})
    assert [await resolver("rebind.test") for _ in range(3)] == [["127.0.0.1"], ["127.0.0.2"], ["127.0.0.2"]]
    with pytest.raises(OSError):
        await resolver("unknown.test")
    assert resolver.calls_for("rebind.test") == 3
