"""Connections Playwright never routes: WebSocket and WebRTC (TURN over TCP and UDP, STUN).

Through the gate a ``ws://`` socket and a TURN-over-TCP allocation are ``CONNECT`` tunnels,
checked like any request; WebRTC UDP is never sent (``disable_non_proxied_udp``), so a
TURN/STUN server on UDP gets nothing. Without the gate all of these reached 127.0.0.2.
"""

from __future__ import annotations

import json

from tests.egress.harness import BLOCKED_IP, unique
from tests.support import wait_until

STUN_ALLOCATE = b"\x00\x03"  # a TURN Allocate request (RFC 8656), the first thing a TURN client sends


def sockets_script(urls: list[str]) -> str:
    return (
        f"(() => {{ window.sockets = {json.dumps(urls)}.map(url => new WebSocket(url)); "
        "return window.sockets.length; })()"
    )


def ice_script(servers: list[str]) -> str:
    """One peer connection with these ICE servers; a data channel and a local offer start gathering."""
    ice = [{"urls": url, "username": "user", "credential": "secret"} for url in servers]
    return (
        "(async () => { const pc = new RTCPeerConnection({iceServers: " + json.dumps(ice) + "}); "
        "window.peer = pc; pc.createDataChannel('probe'); "
        "await pc.setLocalDescription(await pc.createOffer()); return pc.iceGatheringState; })()"
    )


async def test_websocket(site, open_session, refusals, blocked) -> None:
    path = unique("/ws-")
    control = f"ws://127.0.0.1:{site.allowed_tcp.port}{path}"
    port = site.blocked_ws.port
    marker = site.allowed_tcp.mark()
    session = await open_session(site.url("/blank.html"))
    assert (
        await session.evaluate(
            sockets_script([control, f"ws://{BLOCKED_IP}:{port}{path}", f"ws://blocked.test:{port}{path}"])
        )
        == 3
    )

    await wait_until(lambda: site.allowed_tcp.since(marker), what="the control WebSocket's connection")
    await refusals.wait(BLOCKED_IP, port)
    await refusals.wait("blocked.test", port)
    blocked.assert_untouched()


async def test_webrtc_turn_and_stun(site, open_session, refusals, blocked) -> None:
    turn_port, udp_port = site.blocked_turn.port, site.blocked_udp.port
    tls_port = site.blocked_ws.port  # another blocked TCP listener, for TURN over TLS
    marker = site.allowed_tcp.mark()
    session = await open_session(site.url("/blank.html"))
    await session.evaluate(
        ice_script(
            [
                f"turn:127.0.0.1:{site.allowed_tcp.port}?transport=tcp",
                f"turn:{BLOCKED_IP}:{turn_port}?transport=tcp",
                f"turn:blocked.test:{turn_port}?transport=tcp",
                f"turns:{BLOCKED_IP}:{tls_port}?transport=tcp",
                f"turn:{BLOCKED_IP}:{udp_port}?transport=udp",
                f"stun:{BLOCKED_IP}:{udp_port}",
            ]
        )
    )

    def allocation() -> bool:
        return any(
            bytes(contact.data).startswith(STUN_ALLOCATE) for contact in site.allowed_tcp.since(marker)
        )

    await wait_until(allocation, what="the control TURN-over-TCP allocation")  # gathering ran
    await refusals.wait(BLOCKED_IP, turn_port)
    await refusals.wait("blocked.test", turn_port)
    await refusals.wait(BLOCKED_IP, tls_port)
    blocked.assert_untouched()  # TCP refused; UDP never sent (no refusal to wait for: not proxied)
