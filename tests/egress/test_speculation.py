"""Loads nobody asked for: speculation rules (prefetch, prerender), ``<link rel=prefetch>`` and
``<link rel=preconnect>``. Playwright routes never saw speculation loads (the browser process
makes them), so the route-based guard let them reach 127.0.0.2; the gate sees them as proxy
requests like any other.
"""

from __future__ import annotations

import json

import pytest

from tests.egress.harness import ALLOWED_IP, BLOCKED_IP, unique
from tests.support import wait_until


def rules(prefetch: list[str], prerender: list[str]) -> str:
    """A page script adding speculation rules (eagerness "immediate") for these URLs."""
    spec = {
        "prefetch": [{"source": "list", "eagerness": "immediate", "urls": prefetch}],
        "prerender": [{"source": "list", "eagerness": "immediate", "urls": prerender}],
    }
    return (
        "(() => { const s = document.createElement('script'); s.type = 'speculationrules'; "
        f"s.textContent = {json.dumps(json.dumps(spec))}; document.head.append(s); return 1; }})()"
    )


async def test_speculation_rules_aimed_at_the_blocked_host(site, open_session, blocked) -> None:
    """Without the gate (route-based guard) Chromium 156 prefetched and prerendered every blocked
    URL of this page into 127.0.0.2. With the gate as its proxy, Chromium 156 was seen to make no
    cross-site speculative request at all (none reaches the gate, and a same-origin hop
    redirecting to 127.0.0.2 is not followed), so there is no refusal to wait for: the controls
    and the same-origin hops show the rules were processed, and the blocked side stays untouched."""
    key = unique("spec")
    await open_session(site.url(f"/speculation.html?k={key}"))
    await wait_until(lambda: site.origin.hits(f"/ok/prefetch-{key}.html"), what="the same-origin prefetch")
    await wait_until(lambda: site.origin.hits(f"/ok/prerender-{key}.html"), what="the same-origin prerender")
    await wait_until(
        lambda: site.origin.hits(f"prefetch-redirect-leak-{key}"), what="the prefetched redirect hop"
    )
    await wait_until(
        lambda: site.origin.hits(f"prerender-redirect-leak-{key}"), what="the prerendered redirect hop"
    )
    blocked.assert_untouched()


async def test_speculation_is_checked_on_every_request_of_a_rebound_name(
    site, resolver, open_session, refusals, blocked
) -> None:
    """Same-origin speculation that does reach the gate: the page's name answers 127.0.0.1 for the
    page and 127.0.0.2 afterwards; its prefetch and prerender are refused, never sent to .2.
    (``*.localhost`` names are secure contexts, where Chromium speculates.)"""
    key = unique("rebound")
    steady, rebound = f"steady-{key}.localhost", f"rebound-{key}.localhost"
    resolver.script(steady, [ALLOWED_IP])
    resolver.script(rebound, [ALLOWED_IP], [BLOCKED_IP])
    port = site.origin.port

    control = await open_session(f"http://{steady}:{port}/blank.html")
    await control.evaluate(rules([f"/ok/prefetch-{key}.html"], [f"/ok/prerender-{key}.html"]))
    for kind in ("prefetch", "prerender"):
        hits = await wait_until(
            lambda kind=kind: site.origin.hits(f"/ok/{kind}-{key}.html"), what=f"the {kind}"
        )
        assert hits[0].host == f"{steady}:{port}"

    session = await open_session(f"http://{rebound}:{port}/blank.html")
    assert [hit.host for hit in site.origin.hits("/blank.html")][-1] == f"{rebound}:{port}"
    await session.evaluate(rules([f"/ok/prefetch-again-{key}.html"], [f"/ok/prerender-again-{key}.html"]))
    refused = await refusals.wait(rebound, port, count=2)
    assert {refusal.reason for refusal in refused} == {f"address {BLOCKED_IP} is not globally routable"}
    assert site.origin.hits(f"again-{key}") == []
    blocked.assert_untouched()


async def test_link_prefetch(site, open_session, refusals, blocked) -> None:
    key = unique("hint")
    await open_session(site.url(f"/hints.html?k={key}"))
    await wait_until(lambda: site.origin.hits(f"/ok/link-prefetch-{key}"), what="the control prefetch")
    await refusals.wait(BLOCKED_IP, site.origin.port)
    await refusals.wait("blocked.test", site.origin.port)
    blocked.assert_untouched()


async def test_link_preconnect(site, open_session, blocked) -> None:
    marker = site.allowed_tcp.mark()
    await open_session(site.url("/preconnect.html"))
    try:
        await wait_until(
            lambda: site.allowed_tcp.since(marker), timeout=5.0, what="a preconnect to the control"
        )
    except AssertionError:
        blocked.assert_untouched()
        pytest.skip(
            "Chromium 156 headless never preconnected, not even to the allowed listener (with or "
            "without the gate): the vector does not fire here; the blocked side stayed untouched"
        )
    blocked.assert_untouched()
