"""The stateless page tools (``fetch_page``, ``extract_text``, ``extract_links``,
``screenshot_page``, ``inspect_page``) load in a temporary context of the same browser: a
redirect chain that ends on the blocked host, or a hop that answers a harmless page first and a
redirect to the blocked host the next time, is refused by the gate like a session's navigation.
"""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.egress.harness import BLOCKED_IP, NOT_ROUTABLE, unique

BLOCKED = "Outbound URL blocked: " + NOT_ROUTABLE
TOOLS = ["fetch_page", "extract_text", "extract_links", "screenshot_page", "inspect_page"]


@pytest.mark.parametrize("tool", TOOLS)
async def test_a_redirect_chain_to_the_blocked_host(site, call, refusals, blocked, tool) -> None:
    target = f"http://{BLOCKED_IP}:{site.origin.port}" + unique(f"/{tool}-leak-")
    chain = site.url("/chain?n=2&to=" + quote(target, safe=""))
    message = await call.error(tool, {"url": chain})
    assert BLOCKED in message
    assert len(site.origin.hits(quote(target, safe=""))) == 2  # both hops served: the attack fired
    await refusals.wait(BLOCKED_IP, site.origin.port)
    blocked.assert_untouched()


async def test_a_hop_that_answers_differently_the_second_time(site, call, refusals, blocked) -> None:
    key = unique("stateless")
    flip = site.url("/redirect?to=" + quote(f"/flip?k={key}", safe=""))
    first = await call.dispatcher.call("extract_text", {"url": flip})  # the harmless first answer
    assert not first.is_error and "harmless" in first.text
    message = await call.error("fetch_page", {"url": flip})  # now 302 → the blocked host
    assert BLOCKED in message
    await refusals.wait(BLOCKED_IP, site.origin.port)
    blocked.assert_untouched()
