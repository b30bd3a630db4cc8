"""URL policy: blocked for direct opens and for every navigation the page starts (the egress
gate's attack tests are in tests/egress/)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from plasmate_nb.browser import ActionError, Engine, EngineConfig, EngineError, PolicyViolation, UrlPolicy
from plasmate_nb.errors import DESTINATION_HINT
from tests.browser.conftest import eid

TIMEOUTS = {"navigation_timeout": 5, "action_timeout": 2, "evaluate_timeout": 2, "settle_timeout": 1}
NOT_ROUTABLE = "Outbound URL blocked: address 127.0.0.1 is not globally routable" + DESTINATION_HINT


@pytest_asyncio.fixture(scope="module")
async def closed_engine() -> AsyncIterator[Engine]:
    async with Engine(EngineConfig(allow_private_network=False, **TIMEOUTS)) as running:
        yield running


@pytest_asyncio.fixture(scope="module")
async def allow_listed() -> AsyncIterator[Engine]:
    config = EngineConfig(allow_private_network=False, allowed_hosts=("127.0.0.1",), **TIMEOUTS)
    async with Engine(config) as running:
        yield running


@pytest_asyncio.fixture
async def probes(allow_listed, fixture_server):
    session = await allow_listed.open(f"{fixture_server}/browser/policy.html")
    yield session
    await allow_listed.close_session(session.id)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://127.0.0.1:{port}/index.html", "address 127.0.0.1 is not globally routable"),
        ("http://localhost:{port}/index.html", "address 127.0.0.1 is not globally routable"),
        ("http://169.254.169.254/latest/meta-data", "address 169.254.169.254 is not globally routable"),
        ("http://[::1]:{port}/", "address ::1 is not globally routable"),
        ("http://10.1.2.3/", "address 10.1.2.3 is not globally routable"),
        (
            "file:///etc/passwd",
            "outbound URL scheme 'file' is not allowed; only http and https are permitted",
        ),
        ("http://user:pw@127.0.0.1:{port}/", "outbound URLs containing credentials are not allowed"),
    ],
)
async def test_direct_open_is_blocked(closed_engine, demo, url, reason):
    url = url.format(port=demo.base_url.rsplit(":", 1)[1])
    with pytest.raises(EngineError) as info:
        await closed_engine.open(url)
    hint = DESTINATION_HINT if reason.startswith("address") else ""
    assert str(info.value).endswith(": Outbound URL blocked: " + reason + hint)
    assert "--allow-host" in str(info.value) or not hint
    assert str(info.value).startswith("Failed to fetch ")
    assert "pw" not in str(info.value) and "meta-data" not in str(info.value)
    assert closed_engine.sessions() == []


async def test_allow_list_lets_the_demo_site_through(allow_listed, demo):
    session = await allow_listed.open(demo.url("/login.html"))
    try:
        assert session.view()["title"] == "Sign in"
        await session.navigate(demo.url("/redirect?to=/welcome.html"))  # allowed redirect hop
        assert session.url == demo.url("/welcome.html")
    finally:
        await allow_listed.close_session(session.id)


async def test_link_click_to_a_loopback_name_is_blocked(probes):
    before = (probes.url, probes.som.text)
    with pytest.raises(ActionError) as info:
        await probes.click(eid(probes, "loopback-link"))
    assert str(info.value) == "Navigation failed: " + NOT_ROUTABLE
    assert (probes.url, probes.som.text) == before
    await probes.click(eid(probes, "same-host"))  # still usable; allowed navigation works
    assert probes.url.endswith("/browser/target.html")


async def test_script_navigation_is_blocked(probes):
    with pytest.raises(ActionError) as info:
        await probes.click(eid(probes, "script-nav"))
    assert str(info.value) == (
        "Navigation failed: Outbound URL blocked: address 127.0.0.2 is not globally routable"
        + DESTINATION_HINT
    )
    with pytest.raises(ActionError, match="Outbound URL blocked"):
        await probes.evaluate("location.href = 'http://localhost:' + location.port + '/'")
    assert await probes.evaluate("location.pathname") == "/browser/policy.html"


async def test_redirects_to_loopback_are_blocked_at_every_hop(probes, demo):
    port = demo.base_url.rsplit(":", 1)[1]
    one_hop = demo.url(f"/redirect?to=http://localhost:{port}/welcome.html")
    two_hops = demo.url(f"/redirect?to=/redirect%3Fto%3Dhttp://localhost:{port}/welcome.html")
    for url in (one_hop, two_hops):
        with pytest.raises(ActionError) as info:
            await probes.navigate(url)
        assert str(info.value).endswith(NOT_ROUTABLE)
        assert probes.url.endswith("/browser/policy.html")


async def test_subresources_pass_the_gate_too(probes, allow_listed):
    mark = allow_listed.gate.mark()
    await probes.evaluate(
        "fetch('http://localhost:' + location.port + '/browser/target.html', {mode: 'no-cors'}).then(() => 1, () => 0)"
    )
    refused = [r for r in allow_listed.gate.refusals() if r.serial > mark]
    assert [(r.host, r.reason) for r in refused] == [
        ("localhost", "address 127.0.0.1 is not globally routable")
    ]
    same = await probes.evaluate("fetch('/browser/target.html').then(r => r.status)")
    assert same == 200


async def test_policy_object_rules():
    open_policy = UrlPolicy()
    await open_policy.check("http://127.0.0.1/")  # notebook default: private allowed
    with pytest.raises(PolicyViolation, match="scheme 'ftp'"):
        await open_policy.check("ftp://example.com/")  # scheme rule always applies
    strict = UrlPolicy(allow_private_network=False, allowed_hosts=("LOCALHOST",))
    await strict.check("http://localhost:1/")  # allow-list is case-insensitive
    for address in ("0.0.0.0", "224.0.0.1", "[fd00:ec2::254]", "[::ffff:127.0.0.1]", "100.64.0.1"):
        with pytest.raises(PolicyViolation, match="is not globally routable"):
            await strict.check(f"http://{address}/")


async def test_a_backslash_ends_the_authority_as_a_browser_reads_it():
    strict = UrlPolicy(allow_private_network=False)
    assert strict.check_form("http://example.com:8080\\path") == "example.com"  # a valid port, then a path
    assert strict.check_form("http://example.com\\@127.0.0.1/") == "example.com"  # no user info: a path
    with pytest.raises(PolicyViolation, match="is not globally routable"):
        await strict.check("http://127.0.0.1\\@example.com/")  # where the browser would go: refused
    with pytest.raises(PolicyViolation, match="containing credentials"):
        strict.check_form("http://user:pw@example.com\\path")  # user info before it still counts


async def test_allowed_networks_match_addresses_and_allowed_hosts_match_names():
    async def resolver(host):
        return {"intranet.test": ["10.1.2.3"], "rebound.test": ["127.0.0.1"]}[host]

    by_network = UrlPolicy(allow_private_network=False, allowed_networks=("10.0.0.0/8",))
    assert [str(a) for a in await by_network.addresses("intranet.test", resolver)] == ["10.1.2.3"]
    assert [str(a) for a in await by_network.addresses("10.9.9.9", resolver)] == ["10.9.9.9"]
    with pytest.raises(PolicyViolation, match=r"address 169\.254\.169\.254 is not globally routable"):
        await by_network.addresses("169.254.169.254", resolver)
    by_name = UrlPolicy(allow_private_network=False, allowed_hosts=("127.0.0.1",))
    with pytest.raises(PolicyViolation, match=r"address 127\.0\.0\.1 is not globally routable"):
        await by_name.addresses("rebound.test", resolver)  # a name rebound onto an allowed host
    with pytest.raises(ValueError, match="not a CIDR network"):
        UrlPolicy(allowed_networks=("intranet",))


async def test_a_refusal_that_arrives_after_the_next_frame_still_blocks(fixture_server):
    """The gate answers a script navigation only after a slow name lookup: the action must wait
    for that answer, not take the page as settled after one animation frame."""

    async def slow_for_one_name(host: str) -> list[str]:
        if host == "slow.test":
            await asyncio.sleep(0.4)  # the page draws many frames meanwhile
            return ["127.0.0.2"]
        return ["127.0.0.1"] if host == "127.0.0.1" else []

    config = EngineConfig(
        allow_private_network=False,
        allowed_hosts=("127.0.0.1",),
        resolver=slow_for_one_name,
        **{**TIMEOUTS, "settle_timeout": 3},
    )
    async with Engine(config) as engine:
        session = await engine.open(f"{fixture_server}/browser/policy.html")
        with pytest.raises(ActionError) as info:
            await session.evaluate("location.href = 'http://slow.test:' + location.port + '/'")
        assert str(info.value) == (
            "Navigation failed: Outbound URL blocked: address 127.0.0.2 is not globally routable"
            + DESTINATION_HINT
        )
        assert session.url.endswith("/browser/policy.html")
