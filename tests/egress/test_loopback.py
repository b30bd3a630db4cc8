"""127.0.0.1 itself as the blocked host: the one address Chromium may still resolve on its own
(``--host-resolver-rules … EXCLUDE 127.0.0.1``, so it can reach the gate), and the address the
other egress tests must allow for their pages. Here the pages come from an allowed *name* on
127.0.0.1 and the address itself is blocked, so anything that reaches a listener on 127.0.0.1
went around the gate.

Loopback goes through a proxy only because Playwright adds ``<-loopback>`` to Chromium's bypass
list, and it leaves that out when ``PLAYWRIGHT_DISABLE_FORCED_CHROMIUM_PROXIED_LOOPBACK`` is set
in the environment: a page then reached 127.0.0.1 straight, never seen by the gate.
"""

from __future__ import annotations

import base64
import contextlib
import json
import shlex
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
import pytest_asyncio

from plasmate_nb.browser import ActionError, Engine, EngineConfig, EngineError
from plasmate_nb.browser.discovery import _playwright_managed, find_chromium
from tests.browser.conftest import eid
from tests.egress.conftest import TIMEOUTS, Refusals
from tests.egress.harness import (
    ALLOWED_IP,
    LEAK_ANSWER,
    ScriptedResolver,
    TcpListener,
    UdpListener,
    unique,
)
from tests.support import wait_until

LOOPBACK_SWITCH = "PLAYWRIGHT_DISABLE_FORCED_CHROMIUM_PROXIED_LOOPBACK"


@pytest.fixture
def victim() -> Iterator[TcpListener]:
    """A service on 127.0.0.1 that must never be reached."""
    listener = TcpListener("victim-127.0.0.1", ALLOWED_IP, answer=LEAK_ANSWER)
    try:
        yield listener
    finally:
        listener.close()


@pytest.fixture
def victim_udp() -> Iterator[UdpListener]:
    listener = UdpListener("victim-udp-127.0.0.1", ALLOWED_IP)
    try:
        yield listener
    finally:
        listener.close()


@pytest_asyncio.fixture(params=["default environment", LOOPBACK_SWITCH])
async def strict(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, resolver: ScriptedResolver
) -> AsyncIterator[tuple[Engine, str]]:
    """An engine that blocks every private address, 127.0.0.1 included, and allows one name on
    127.0.0.1 (the page's origin). Launched with or without the loopback switch set."""
    if request.param == LOOPBACK_SWITCH:
        monkeypatch.setenv(LOOPBACK_SWITCH, "1")  # the driver Playwright starts inherits it
    name = unique("strict-") + ".localhost"  # a secure context (service workers, WebTransport)
    resolver.script(name, [ALLOWED_IP])
    config = EngineConfig(
        allow_private_network=False, allowed_hosts=(name,), resolver=resolver, max_sessions=1, **TIMEOUTS
    )
    async with Engine(config) as engine:
        yield engine, name


async def test_a_page_never_reaches_127_0_0_1_around_the_gate(site, strict, victim) -> None:
    engine, name = strict
    refusals = Refusals(engine)
    session = await engine.open(f"http://{name}:{site.origin.port}/blank.html")
    target = f"http://{ALLOWED_IP}:{victim.port}"
    outcomes = await session.evaluate(
        "Promise.all(["
        f"fetch('{target}/fetch', {{mode: 'no-cors'}}).then(() => 'answered', () => 'failed'),"
        f"new Promise(done => {{ const i = new Image(); i.onload = i.onerror = () => done('settled'); "
        f"i.src = '{target}/img'; }}),"
        "])"
    )
    assert victim.since(0) == [], f"127.0.0.1 was reached around the gate ({outcomes})"
    await refusals.wait(ALLOWED_IP, victim.port, count=2)  # both went to the gate, which refused them
    await engine.close_session(session.id)


# Loads the other egress tests do not make: CSS (link, @import, @font-face, url()), srcset, poster,
# media, object/embed, SVG image, <a ping>, EventSource, beacons, a shared worker (fetch and
# importScripts), a blob worker's importScripts, an srcdoc frame with a meta refresh, and at pagehide
# a beacon and a keepalive fetch. Only the ones that reliably fire are counted; none may get through.
KINDS_REFUSED_AT_LEAST = 24  # 27 seen with Chromium 156

# Sockets: ws, wss, https (CONNECT tunnels), WebTransport (QUIC), and WebRTC with a STUN server,
# a TURN-over-TCP server and remote host candidates (UDP and TCP), all on 127.0.0.1.
SOCKETS = """async ([target, host, tcp, udp]) => {
  const settle = promise => Promise.race([promise.then(value => value || 'opened', e => String(e)),
                                          new Promise(done => setTimeout(() => done('pending'), 8000))]);
  const socket = url => new Promise((opened, failed) => {
    const ws = new WebSocket(url); ws.onopen = opened; ws.onerror = failed; });
  const transport = url => { const wt = new WebTransport(url); return wt.ready; };
  const peer = async () => {
    const pc = new RTCPeerConnection({iceServers: [
      {urls: `stun:${host}:${udp}`}, {urls: `turn:${host}:${tcp}?transport=tcp`, username: 'u', credential: 'p'}]});
    pc.createDataChannel('probe');
    await pc.setLocalDescription(await pc.createOffer());
    const other = new RTCPeerConnection();
    await other.setRemoteDescription(pc.localDescription);
    const answer = await other.createAnswer();
    const candidates = `a=candidate:1 1 udp 2122260223 ${host} ${udp} typ host\\r\\n` +
                       `a=candidate:2 1 tcp 1518280447 ${host} ${tcp} typ host tcptype passive\\r\\n`;
    await pc.setRemoteDescription({type: 'answer', sdp: answer.sdp.replace(/(a=ice-pwd:.*\\r\\n)/, '$1' + candidates)});
    return new Promise(done => {  // gathered, and every candidate pair tried
      const check = () => pc.iceGatheringState === 'complete' &&
        ['failed', 'disconnected'].includes(pc.iceConnectionState) && done('ice ' + pc.iceConnectionState);
      pc.onicegatheringstatechange = pc.oniceconnectionstatechange = check;
      check();
    });
  };
  return Promise.all([
    settle(socket(`ws://${host}:${tcp}/ws`)),
    settle(socket(`wss://${host}:${tcp}/wss`)),
    settle(fetch(`https://${host}:${tcp}/https`, {mode: 'no-cors'})),
    settle(transport(`https://${host}:${udp}/webtransport`)),
    settle(transport(`https://${host}:${tcp}/webtransport`)),
    settle(peer()),
  ]);
}"""


@pytest.mark.parametrize("strict", ["default environment"], indirect=True)
async def test_every_kind_of_load_is_refused(site, strict, victim, victim_udp) -> None:
    engine, name = strict
    refusals = Refusals(engine)
    key = unique("kinds")
    origin = f"http://{name}:{site.origin.port}"
    target = f"http://{ALLOWED_IP}:{victim.port}"
    session = await engine.open(f"{origin}/kinds.html?k={key}&T={quote(target, safe='')}")
    await wait_until(lambda: site.origin.hits(f"/ok/shared-worker-{key}"), what="the shared worker's control")
    await session.click(eid(session, "ping"))  # pings, and leaves the page: pagehide
    assert session.url == f"{origin}/ok/ping-target-{key}"
    await refusals.wait(ALLOWED_IP, victim.port, count=KINDS_REFUSED_AT_LEAST)

    arguments = [target, ALLOWED_IP, victim.port, victim_udp.port]
    outcomes = await session.evaluate(f"({SOCKETS})({json.dumps(arguments)})")
    assert "opened" not in outcomes and outcomes[5].startswith("ice "), outcomes
    sockets = 4  # ws, wss, https and TURN over TCP reach the gate; WebTransport and UDP never do
    await refusals.wait(ALLOWED_IP, victim.port, count=KINDS_REFUSED_AT_LEAST + sockets)
    assert victim.since(0) == [] and victim_udp.since(0) == [], "127.0.0.1 was reached"
    await engine.close_session(session.id)


# How a URL may spell 127.0.0.1 (or a name for it); Chromium canonicalises most of them, and the
# gate checks whatever address the spelling stands for.
SPELLINGS = [
    "http://127.0.0.1:{port}/",
    "http://2130706433:{port}/",
    "http://0177.0.0.1:{port}/",
    "http://0x7f.1:{port}/",
    "http://127.1:{port}/",
    "http://127.0.0.1.:{port}/",
    "http://%31%32%37.0.0.1:{port}/",
    "http://[::ffff:127.0.0.1]:{port}/",
    "http://[::ffff:7f00:1]:{port}/",
    "http://0.0.0.0:{port}/",
    "http://0:{port}/",
    "http://[::]:{port}/",
    "http://[::1]:{port}/",
    "http://localhost:{port}/",
    "http://LOCALHOST.:{port}/",
    "http://\u24db\u24de\u24d2\u24d0\u24db\u24d7\u24de\u24e2\u24e3:{port}/",  # enclosed letters: "localhost"
    "http://x.localhost:{port}/",
    "https://127.0.0.1:{port}/",
    "http://{name}:{port}@127.0.0.1:{port}/",  # userinfo: refused by form, whatever the host
]
# Not a spelling of 127.0.0.1: a backslash ends the authority, so this is a path on the allowed host.
BACKSLASH = "http://{name}:{port}\\@127.0.0.1:{victim}/"


@pytest.mark.parametrize("strict", ["default environment"], indirect=True)
async def test_every_spelling_of_127_0_0_1_is_refused(site, strict, victim, resolver) -> None:
    engine, name = strict
    for local in ("localhost", "x.localhost"):
        resolver.script(local, [ALLOWED_IP])
    page = f"http://{name}:{site.origin.port}/blank.html"
    session = await engine.open(page)
    failures = {}
    for spelling in SPELLINGS:
        url = spelling.format(port=victim.port, name=name)
        with pytest.raises(ActionError) as info:
            await session.navigate(url)
        failures[url] = str(info.value)
        assert session.url == page
    with contextlib.suppress(ActionError):  # the allowed site answers 404 for that path
        await session.navigate(BACKSLASH.format(name=name, port=site.origin.port, victim=victim.port))
    assert victim.since(0) == [], "127.0.0.1 was reached"
    unblocked = {url: message for url, message in failures.items() if "Outbound URL blocked" not in message}
    assert unblocked == {}
    await engine.close_session(session.id)


# A launch wrapper, a flags file (Debian's /etc/chromium.d) or a managed policy can give Chromium
# another proxy mode, which it prefers to --proxy-server: then nothing it sends reaches the gate,
# and 127.0.0.1 (which the resolver rules leave alone, for the gate) is reached straight.
PAC_DIRECT = (
    "data:application/x-javascript-config;base64,"
    + base64.b64encode(b'function FindProxyForURL(url, host) { return "DIRECT"; }').decode()
)
PROXY_OVERRIDES = {"no proxy server": "--no-proxy-server", "a PAC script": f"--proxy-pac-url={PAC_DIRECT}"}


def wrapper(directory: Path, switch: str) -> str:
    """A Chromium launcher that adds ``switch`` before the engine's own switches."""
    real = find_chromium().executable or _playwright_managed()
    assert real, "no Chromium to wrap"
    script = directory / "chromium-wrapper"
    script.write_text(f'#!/bin/sh\nexec {shlex.quote(real)} {shlex.quote(switch)} "$@"\n', encoding="utf-8")
    script.chmod(0o755)
    return str(script)


@pytest.mark.parametrize("override", PROXY_OVERRIDES)
async def test_a_browser_that_does_not_use_the_gate_is_refused(
    site, resolver, victim, tmp_path, override
) -> None:
    config = EngineConfig(
        allow_private_network=False,
        executable=wrapper(tmp_path, PROXY_OVERRIDES[override]),
        resolver=resolver,
        max_sessions=1,
        **TIMEOUTS,
    )
    engine = Engine(config)
    try:
        with pytest.raises(EngineError, match="does not send its traffic through the egress gate"):
            session = await engine.open(f"http://{ALLOWED_IP}:{victim.port}/")
            await engine.close_session(session.id)
    finally:
        await engine.aclose()
    assert victim.since(0) == [], "127.0.0.1 was reached around the gate"
