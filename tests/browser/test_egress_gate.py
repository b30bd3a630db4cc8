"""The egress gate at the protocol level: raw clients and hostile or flaky destinations.

Chromium-level vectors (redirects, prefetch, WebSocket, WebRTC, workers) are in tests/egress/.
Here every destination is a loopback listener that records each connection and every byte,
so "refused" always means: the destination saw nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

import h11
import pytest
import pytest_asyncio

from plasmate_nb.browser import EgressGate, GateLimits, UrlPolicy, egress
from plasmate_nb.browser.egress import MARKER, REASON
from tests.support import wait_until

ALLOWED, BLOCKED = "127.0.0.1", "127.0.0.2"
LIMITS = GateLimits(client_idle=1.0, upstream_idle=1.0, upstream_connect=1.0)
RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
OK = b"\r\n\r\nok"  # the end of RESPONSE as relayed (h11 writes header names in lower case)


class Destination:
    """A listener that records connections and bytes, answering each request with ``answer``."""

    def __init__(self, host: str, answer: Callable[[int], bytes | None] = lambda _n: RESPONSE) -> None:
        self.host = host
        self.answer = answer
        self.connections = 0
        self.closed = 0  # connections that ended (the gate's side closed, or ours)
        self.received = b""
        self.port = 0
        self._server: asyncio.Server | None = None

    async def start(self, port: int = 0) -> Destination:
        self._server = await asyncio.start_server(self._serve, self.host, port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        requests = 0
        try:
            with contextlib.suppress(OSError):
                while data := await reader.read(65536):
                    self.received += data
                    while b"\r\n\r\n" in data:  # one answer per request head (bodies here are small)
                        data = data.split(b"\r\n\r\n", 1)[1]
                        requests += 1
                        reply = self.answer(requests)
                        if reply is None:
                            return
                        writer.write(reply)
        finally:
            writer.close()
            self.closed += 1


async def exchange(
    gate: EgressGate, raw: bytes, *, until: bytes = b"\r\n\r\n", timeout: float = 5.0
) -> bytes:
    """Send ``raw`` to the gate and read until ``until`` (or the gate closes)."""
    port = int(gate.server.rsplit(":", 1)[1])
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(raw)
        await writer.drain()
        answer = b""
        async with asyncio.timeout(timeout):
            while until not in answer or (until == b"\r\n\r\n" and not _body_complete(answer)):
                chunk = await reader.read(65536)
                if not chunk:
                    break
                answer += chunk
        return answer
    finally:
        writer.close()


def _body_complete(answer: bytes) -> bool:
    head, _, body = answer.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return len(body) >= int(line.split(b":", 1)[1])
    return True


@pytest_asyncio.fixture
async def destinations() -> AsyncIterator[tuple[Destination, Destination]]:
    allowed = await Destination(ALLOWED).start()
    blocked = await Destination(BLOCKED).start(allowed.port)  # same port, other address
    yield allowed, blocked
    await allowed.stop()
    await blocked.stop()


async def make_gate(resolver=None, **limits) -> EgressGate:
    policy = UrlPolicy(allow_private_network=False, allowed_networks=(f"{ALLOWED}/32",))
    gate = EgressGate(policy, resolver=resolver, limits=GateLimits(**{**LIMITS.__dict__, **limits}))
    await gate.start()
    return gate


async def test_a_refused_request_reaches_nothing_and_says_why(destinations):
    _allowed, blocked = destinations
    gate = await make_gate()
    try:
        answer = await exchange(
            gate,
            f"GET http://{BLOCKED}:{blocked.port}/latest/meta-data HTTP/1.1\r\n"
            f"Host: {BLOCKED}:{blocked.port}\r\n\r\n".encode(),
        )
        assert answer.startswith(b"HTTP/1.1 403 ")
        assert f"{MARKER}: refused".encode() in answer
        assert (
            f"{REASON}: Outbound URL blocked: address {BLOCKED} is not globally routable".encode() in answer
        )
        assert b"meta-data" not in answer  # the path is nobody's business
        assert (blocked.connections, blocked.received) == (0, b"")
        assert [(r.host, r.port) for r in gate.refusals()] == [(BLOCKED, blocked.port)]
    finally:
        await gate.aclose()


async def test_a_refused_tunnel_reaches_nothing(destinations):
    _allowed, blocked = destinations
    gate = await make_gate()
    try:
        answer = await exchange(
            gate,
            f"CONNECT {BLOCKED}:{blocked.port} HTTP/1.1\r\nHost: {BLOCKED}:{blocked.port}\r\n\r\n".encode(),
        )
        assert answer.startswith(b"HTTP/1.1 403 ")
        assert (blocked.connections, blocked.received) == (0, b"")
    finally:
        await gate.aclose()


async def test_a_tunnel_to_an_allowed_address_carries_bytes_both_ways(destinations):
    allowed, _blocked = destinations
    gate = await make_gate()
    try:
        answer = await exchange(
            gate,
            f"CONNECT {ALLOWED}:{allowed.port} HTTP/1.1\r\nHost: x\r\n\r\n"
            f"GET / HTTP/1.1\r\nHost: x\r\n\r\n".encode(),
            until=b"ok",
        )
        assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(RESPONSE)
        assert allowed.received == b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"  # the tunnel adds nothing
    finally:
        await gate.aclose()


async def test_a_name_is_resolved_once_per_request_and_only_the_checked_address_is_used(destinations):
    allowed, blocked = destinations
    answers = iter([[ALLOWED], [BLOCKED], [ALLOWED, BLOCKED]])
    asked: list[str] = []

    async def rebinding(host: str) -> list[str]:
        asked.append(host)
        return next(answers)

    gate = await make_gate(resolver=rebinding)
    try:
        request = (
            f"GET http://rebind.test:{allowed.port}/ HTTP/1.1\r\nHost: rebind.test:{allowed.port}\r\n\r\n"
        )
        first = await exchange(gate, request.encode())
        second = await exchange(gate, request.encode())
        mixed = await exchange(gate, request.encode())
        assert first.endswith(OK) and b"host: rebind.test" in allowed.received.lower()
        assert second.startswith(b"HTTP/1.1 403 ") and mixed.startswith(
            b"HTTP/1.1 403 "
        )  # every address checked
        assert asked == ["rebind.test"] * 3
        assert (blocked.connections, blocked.received) == (0, b"")
    finally:
        await gate.aclose()


async def test_one_proxy_connection_checks_every_request_on_it(destinations):
    allowed, blocked = destinations
    gate = await make_gate()
    try:
        two = (
            f"GET http://{ALLOWED}:{allowed.port}/a HTTP/1.1\r\nHost: a\r\n\r\n"
            f"GET http://{BLOCKED}:{blocked.port}/b HTTP/1.1\r\nHost: b\r\n\r\n"
        ).encode()
        answer = await exchange(gate, two, until=b"is not globally routable\n")
        assert answer.startswith(b"HTTP/1.1 200 ") and b"HTTP/1.1 403 " in answer
        assert (blocked.connections, blocked.received) == (0, b"")
    finally:
        await gate.aclose()


async def test_upstream_connections_are_kept_alive_and_a_stale_one_is_replaced(destinations):
    allowed, _blocked = destinations
    gate = await make_gate()
    try:
        request = f"GET http://{ALLOWED}:{allowed.port}/ HTTP/1.1\r\nHost: a\r\n\r\n".encode()
        for _ in range(3):
            assert (await exchange(gate, request)).endswith(OK)
        assert allowed.connections == 1  # one upstream connection served three client connections
        allowed.answer = lambda n: None  # from now on the destination drops a connection on its next request
        dropped = await exchange(gate, request)
        # The kept-alive connection failed, so the request went once more on a fresh one (which failed too).
        assert allowed.connections == 2
        assert dropped.startswith(b"HTTP/1.1 502 ") and dropped.endswith(b"net::ERR_EMPTY_RESPONSE\n")
        allowed.answer = lambda n: RESPONSE
        assert (await exchange(gate, request)).endswith(OK)
    finally:
        await gate.aclose()


async def test_half_a_request_is_dropped_after_the_idle_bound(destinations):
    allowed, _blocked = destinations
    gate = await make_gate(client_idle=0.3)
    try:
        answer = await exchange(gate, f"GET http://{ALLOWED}:{allowed.port}/ HTTP/1.1\r\nHo".encode())
        assert answer == b""  # closed, nothing forwarded
        assert allowed.connections == 0
    finally:
        await gate.aclose()


async def test_a_destination_that_never_answers_is_bounded(destinations):
    allowed, _blocked = destinations
    allowed.answer = lambda n: b""  # reads the request, answers nothing, keeps the connection open
    gate = await make_gate(upstream_idle=0.3)
    try:
        answer = await exchange(
            gate, f"GET http://{ALLOWED}:{allowed.port}/ HTTP/1.1\r\nHost: a\r\n\r\n".encode()
        )
        assert answer.startswith(b"HTTP/1.1 502 ") and answer.endswith(b"net::ERR_TIMED_OUT\n")
    finally:
        await gate.aclose()


@pytest.mark.parametrize(
    ("answer", "left_after"),
    [
        (b"", b""),  # the destination is still thinking: Chromium leaves before any answer
        (b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789", b"0123456789"),  # mid-body
    ],
    ids=["before-the-answer", "during-the-body"],
)
async def test_a_client_that_leaves_takes_the_destinations_connection_with_it(
    destinations, answer, left_after
):
    allowed, _blocked = destinations
    allowed.answer = lambda n: answer
    gate = await make_gate(upstream_idle=60.0, client_idle=60.0)  # only the client leaving can end it
    try:
        port = int(gate.server.rsplit(":", 1)[1])
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"GET http://{ALLOWED}:{allowed.port}/slow HTTP/1.1\r\nHost: a\r\n\r\n".encode())
        await writer.drain()
        await wait_until(lambda: allowed.connections == 1, what="the request to reach the destination")
        received = b""
        async with asyncio.timeout(5):
            while not received.endswith(left_after):
                received += await reader.read(65536)
        writer.close()  # how Chromium ends a request it no longer wants: a stopped load, a closed context
        await wait_until(lambda: allowed.closed == 1, timeout=5, what="the destination's connection to close")
        allowed.answer = lambda n: RESPONSE
        again = await exchange(
            gate, f"GET http://{ALLOWED}:{allowed.port}/ HTTP/1.1\r\nHost: a\r\n\r\n".encode()
        )
        assert again.startswith(b"HTTP/1.1 200 ")  # the gate serves on
    finally:
        await gate.aclose()


async def test_a_request_sent_while_the_last_one_is_answered_is_answered_too():
    first_arrived, answer_first = asyncio.Event(), asyncio.Event()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for number in (1, 2):
            await reader.readuntil(b"\r\n\r\n")
            if number == 1:
                first_arrived.set()
                await answer_first.wait()
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n" + str(number).encode())
        writer.close()

    destination = await asyncio.start_server(serve, ALLOWED, 0)
    port = destination.sockets[0].getsockname()[1]
    gate = await make_gate(upstream_idle=10.0)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", int(gate.server.rsplit(":", 1)[1]))
        request = f"GET http://{ALLOWED}:{port}/ HTTP/1.1\r\nHost: a\r\n\r\n".encode()
        writer.write(request)
        await writer.drain()
        async with asyncio.timeout(5):
            await first_arrived.wait()
        writer.write(request)  # while the gate waits on the destination (and watches this side)
        await writer.drain()
        answer_first.set()
        received = b""
        async with asyncio.timeout(5):
            while received.count(b"HTTP/1.1 200 ") < 2 or not received.endswith(b"2"):
                chunk = await reader.read(65536)
                assert chunk, f"the gate closed after {received!r}"
                received += chunk
        replies = received.split(b"HTTP/1.1 200 ")
        assert [reply[-1:] for reply in replies[1:]] == [b"1", b"2"]
        writer.close()
    finally:
        await gate.aclose()
        destination.close()


@pytest.mark.parametrize(
    "raw",
    [
        b"GET http://127.0.0.1:1/ HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"GET /relative HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET http://127.0.0.1:1/ HTTP/1.1\r\nHost: a\r\nX-Big: " + b"a" * (400 * 1024) + b"\r\n\r\n",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 64,  # TLS straight at the proxy
    ],
)
async def test_malformed_requests_are_answered_or_closed_never_forwarded(destinations, raw):
    allowed, blocked = destinations
    gate = await make_gate()
    try:
        answer = await exchange(gate, raw)
        assert answer == b"" or answer.startswith(b"HTTP/1.1 400 ")
        assert allowed.connections == blocked.connections == 0
        assert gate.server  # still serving
        ok = await exchange(
            gate, f"GET http://{ALLOWED}:{allowed.port}/ HTTP/1.1\r\nHost: a\r\n\r\n".encode()
        )
        assert ok.endswith(OK)
    finally:
        await gate.aclose()


async def test_an_unreachable_destination_reads_as_the_network_error_chromium_would_give():
    gate = await make_gate()
    try:
        probe = await Destination(ALLOWED).start()
        port = probe.port
        await probe.stop()  # nothing listens there any more
        answer = await exchange(gate, f"GET http://{ALLOWED}:{port}/ HTTP/1.1\r\nHost: a\r\n\r\n".encode())
        assert answer.startswith(b"HTTP/1.1 502 ")
        assert f"{MARKER}: unreachable".encode() in answer and b"net::ERR_CONNECTION_REFUSED" in answer
    finally:
        await gate.aclose()


async def test_request_and_response_bodies_are_reframed_not_passed_through(destinations):
    allowed, _blocked = destinations
    allowed.answer = lambda n: b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n"
    gate = await make_gate()
    try:
        raw = (
            f"POST http://{ALLOWED}:{allowed.port}/form HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n"
            "Proxy-Connection: keep-alive\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
        ).encode()
        answer = await exchange(gate, raw, until=b"0\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 200 ") and b"hi" in answer
        assert allowed.received.startswith(b"POST /form HTTP/1.1\r\n")  # origin-form upstream
        assert b"abc" in allowed.received and b"proxy-connection" not in allowed.received.lower()
    finally:
        await gate.aclose()


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (lambda n: b"SSH-2.0-OpenSSH_9.2\r\n\r\n", b"net::ERR_INVALID_HTTP_RESPONSE"),
        (lambda n: None, b"net::ERR_EMPTY_RESPONSE"),
    ],
)
async def test_a_destination_that_does_not_speak_http_reads_as_a_network_error(destinations, reply, error):
    allowed, _blocked = destinations
    allowed.answer = reply
    gate = await make_gate()
    try:
        answer = await exchange(
            gate, f"GET http://{ALLOWED}:{allowed.port}/ HTTP/1.1\r\nHost: a\r\n\r\n".encode()
        )
        assert answer.startswith(b"HTTP/1.1 502 ") and answer.endswith(error + b"\n")
    finally:
        await gate.aclose()


async def open_tunnel(
    gate: EgressGate, port: int, then: bytes = b""
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A raw client that sends ``CONNECT`` (and ``then`` right behind it) and keeps the socket."""
    reader, writer = await asyncio.open_connection("127.0.0.1", int(gate.server.rsplit(":", 1)[1]))
    writer.write(f"CONNECT {ALLOWED}:{port} HTTP/1.1\r\nHost: x\r\n\r\n".encode() + then)
    await writer.drain()
    return reader, writer


async def test_a_connect_beyond_the_cap_waits_unconnected_for_a_slot(destinations):
    allowed, _blocked = destinations
    # Which tunnels' bytes reached the destination, and whether the first tunnel was closed by then.
    first_closed = asyncio.Event()
    seen: list[bool] = []

    def record(_n: int) -> bytes:
        seen.append(first_closed.is_set())
        return RESPONSE

    allowed.answer = record
    barrier = await Destination(ALLOWED).start()  # plain requests elsewhere, so `seen` is tunnels only
    gate = await make_gate(max_tunnels=2)
    held: list[asyncio.StreamWriter] = []
    try:
        for _ in range(2):  # up to the cap: each answered and held open (the destination never closes)
            reader, writer = await open_tunnel(gate, allowed.port)
            held.append(writer)
            async with asyncio.timeout(5):
                assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 200 ")

        # One more: its request rides right behind the CONNECT, so it reaches the destination only
        # once the gate has let the tunnel through.
        reader3, writer3 = await open_tunnel(gate, allowed.port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        held.append(writer3)
        # A whole plain-HTTP round trip through the gate gives the third CONNECT every chance to be
        # answered; it is not, and the gate keeps serving others meanwhile.
        plain = f"GET http://{ALLOWED}:{barrier.port}/ HTTP/1.1\r\nHost: a\r\n\r\n".encode()
        assert (await exchange(gate, plain)).endswith(OK)
        assert seen == [] and not reader3.at_eof()
        assert allowed.connections == 2  # the waiting CONNECT has not even connected upstream

        first_closed.set()
        held[0].close()  # one tunnel ends: its slot goes to the waiting one
        async with asyncio.timeout(5):
            answer = await reader3.readuntil(b"ok")
        assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(RESPONSE)
        assert seen == [True]  # held until the slot was free, never refused
    finally:
        for writer in held:
            writer.close()
        await barrier.stop()
        await gate.aclose()


async def test_closing_ends_a_connection_that_lost_its_cancellation(destinations, monkeypatch):
    """Python 3.11's wait_for can drop a cancellation that arrives as its read completes; such a
    connection must still end when the gate closes, and hand nothing back to the pool."""
    allowed, _blocked = destinations
    real_next_event = egress._next_event
    waits_for_a_request: list[int] = []

    async def deaf_to_cancellation(connection, *args, **kwargs):
        if connection.our_role is h11.SERVER and connection.their_state is h11.IDLE:
            waits_for_a_request.append(1)
        while True:
            try:
                return await real_next_event(connection, *args, **kwargs)
            except asyncio.CancelledError:
                continue  # the cancellation is lost; the read goes on

    monkeypatch.setattr(egress, "_next_event", deaf_to_cancellation)
    gate = await make_gate(client_idle=60.0, upstream_idle=60.0)
    port = int(gate.server.rsplit(":", 1)[1])
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(f"GET http://{ALLOWED}:{allowed.port}/ HTTP/1.1\r\nHost: a\r\n\r\n".encode())
        await writer.drain()
        async with asyncio.timeout(5):
            answer = await reader.readuntil(b"ok")
        assert answer.startswith(b"HTTP/1.1 200 ")
        await wait_until(lambda: len(waits_for_a_request) == 2, what="the gate to wait for a second request")
        await gate.aclose()
        async with asyncio.timeout(5):
            assert await reader.read() == b""  # the gate's side closed
        await wait_until(lambda: not gate._tasks, what="the connection to end")
        await wait_until(lambda: allowed.closed == allowed.connections == 1, what="the upstream to close")
        assert not gate._pool
    finally:
        writer.close()


async def test_bytes_a_client_sends_past_the_watch_limit_wait_in_the_socket_none_are_lost():
    """A client that pipelines more than the watch keeps (a large POST) has not left: the first
    answer goes on, and every byte of what follows is still there for the next request."""
    client = h11.Connection(h11.SERVER)
    client.receive_data(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
    assert isinstance(client.next_event(), h11.Request) and isinstance(client.next_event(), h11.EndOfMessage)
    pipelined = b"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 40\r\n\r\n" + b"y" * 40
    reader = asyncio.StreamReader()
    reader.feed_data(pipelined)
    limit = 32

    class Upstream:
        def close(self) -> None:
            raise AssertionError("the destination's connection was closed, yet the client stayed")

    async def answer_once_the_watch_is_full() -> str:
        await wait_until(lambda: len(client.trailing_data[0]) == limit, what="the watch to fill")
        return "answered"

    answer = await egress._unless_client_leaves(
        client, reader, Upstream(), answer_once_the_watch_is_full(), limit
    )
    assert answer == "answered"
    assert client.trailing_data[0] + await reader.read(len(pipelined)) == pipelined


async def test_closing_ends_an_exchange_whose_wait_for_the_destination_lost_its_cancellation(
    destinations, monkeypatch
):
    allowed, _blocked = destinations
    allowed.answer = lambda n: b""  # the destination never answers
    real_next_event = egress._next_event

    async def deaf_upstream_reads(connection, *args, **kwargs):
        while True:
            try:
                return await real_next_event(connection, *args, **kwargs)
            except asyncio.CancelledError:
                if connection.our_role is h11.SERVER:
                    raise
                continue  # a read from the destination whose cancellation is lost

    monkeypatch.setattr(egress, "_next_event", deaf_upstream_reads)
    gate = await make_gate(client_idle=60.0, upstream_idle=60.0)
    _reader, writer = await asyncio.open_connection("127.0.0.1", int(gate.server.rsplit(":", 1)[1]))
    try:
        writer.write(f"GET http://{ALLOWED}:{allowed.port}/ HTTP/1.1\r\nHost: a\r\n\r\n".encode())
        await writer.drain()
        await wait_until(lambda: allowed.connections == 1, what="the request to reach the destination")
        await gate.aclose()
        await wait_until(lambda: not gate._tasks, what="the connection to end")
        await wait_until(lambda: allowed.closed == 1, what="the destination's connection to close")
    finally:
        writer.close()
