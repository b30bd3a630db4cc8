"""Redirect hops: every hop Chromium follows is checked when Chromium requests it.

The route-based guard fetched hops itself and let Chromium request them again, so a hop that
answered the checker harmlessly and Chromium with ``302 → 127.0.0.2`` got the blocked page
loaded (``/flip``). Through the gate Chromium's own request is the one checked.
"""

from __future__ import annotations

from urllib.parse import quote

import pytest

from plasmate_nb.browser import ActionError, EngineError
from tests.browser.conftest import eid
from tests.egress.harness import BLOCKED_IP, NOT_ROUTABLE, unique
from tests.support import element_id

BLOCKED = "Outbound URL blocked: " + NOT_ROUTABLE


def flip_url(site, key: str) -> str:
    """A redirect onto the flipping hop: first answer a page, every later one ``302 → blocked``."""
    return site.url("/redirect?to=" + quote(f"/flip?k={key}", safe=""))


async def test_a_hop_answering_differently_the_second_time_navigated(
    site, open_session, refusals, blocked
) -> None:
    key = unique("nav")
    session = await open_session(flip_url(site, key))
    blocked.assert_untouched()
    assert session.url == site.url(f"/flip?k={key}")
    assert len(site.origin.hits(f"/flip?k={key}")) == 1  # requested once: by Chromium, nobody before it

    with pytest.raises(ActionError) as info:
        await session.navigate(flip_url(site, key))  # the hop now answers 302 → the blocked host
    assert BLOCKED in str(info.value)
    assert len(site.origin.hits(f"/flip?k={key}")) >= 2  # the attack fired (restoring the page asks again)
    await refusals.wait(BLOCKED_IP, site.origin.port)
    assert session.url == site.url(f"/flip?k={key}")
    blocked.assert_untouched()


async def test_a_hop_answering_differently_the_second_time_clicked(
    site, open_session, refusals, blocked
) -> None:
    key = unique("click")
    session = await open_session(site.url("/link.html?to=" + quote(flip_url(site, key), safe="")))
    await session.click(eid(session, "go"))
    blocked.assert_untouched()
    assert session.url == site.url(f"/flip?k={key}")  # the harmless first answer

    with pytest.raises(ActionError) as info:
        await session.click(eid(session, "again"))  # same link again: now 302 → the blocked host
    assert str(info.value).startswith("Navigation failed: " + BLOCKED)
    assert len(site.origin.hits(f"/flip?k={key}")) >= 2
    await refusals.wait(BLOCKED_IP, site.origin.port)
    assert session.url == site.url(f"/flip?k={key}")
    blocked.assert_untouched()


@pytest.mark.parametrize("hops", [1, 3])
@pytest.mark.parametrize("host", [BLOCKED_IP, "blocked.test"])
async def test_redirect_chains_to_the_blocked_host(site, open_session, refusals, blocked, hops, host) -> None:
    end = unique("/ok/chain-end-")
    session = await open_session(site.url(f"/chain?n={hops}&to={quote(end, safe='')}"))
    assert session.url == site.url(end)  # control: the chain is followed to its end

    target = f"http://{host}:{site.origin.port}" + unique("/chain-leak-")
    chain = f"/chain?n={hops}&to={quote(target, safe='')}"
    with pytest.raises(ActionError) as info:
        await session.navigate(site.url(chain))
    assert BLOCKED in str(info.value)
    assert len(site.origin.hits(quote(target, safe=""))) == hops  # every hop served: the attack fired
    await refusals.wait(host, site.origin.port)
    assert session.url == site.url(end)
    blocked.assert_untouched()

    with pytest.raises(EngineError) as opened:  # a fresh session straight into the chain
        await open_session(site.url(chain))
    assert BLOCKED in str(opened.value)
    blocked.assert_untouched()


async def test_refused_navigations_are_traced_as_policy(site, call, refusals, blocked) -> None:
    key = unique("traced")
    opened = await call.ok(
        "open_page", url=site.url("/link.html?to=" + quote(flip_url(site, key), safe="")), trace=True
    )
    sid = opened["session_id"]
    try:
        clicked = await call.ok("click", session_id=sid, element_id=element_id(opened, "link", "go"))
        blocked.assert_untouched()
        assert clicked["url"] == site.url(f"/flip?k={key}")
        refused_click = await call.error(
            "click", {"session_id": sid, "element_id": element_id(clicked, "link", "again")}
        )
        chain = "/chain?n=3&to=" + quote(f"http://blocked.test:{site.origin.port}/traced-leak", safe="")
        refused_navigation = await call.error("navigate_to", {"session_id": sid, "url": site.url(chain)})
        assert BLOCKED in refused_click and BLOCKED in refused_navigation
        await refusals.wait(BLOCKED_IP, site.origin.port)
        await refusals.wait("blocked.test", site.origin.port)

        events = (await call.export(sid))["events"]
        assert [(e["action"], e["outcome"], e.get("error_class")) for e in events[-3:]] == [
            ("click", "success", None),
            ("click", "error", "policy"),
            ("navigate_to", "error", "policy"),
        ]
    finally:
        await call.ok("close_page", session_id=sid)
    blocked.assert_untouched()


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
async def test_a_form_post_redirected_to_the_blocked_host(
    site, open_session, refusals, blocked, code
) -> None:
    """307 and 308 send the POST body again, to the new location: it must be refused like any hop."""
    key = unique(f"post{code}-")
    target = f"http://{BLOCKED_IP}:{site.origin.port}/post-leak-{key}"
    action = f"/redirect?code={code}&to={quote(target, safe='')}"
    session = await open_session(site.url(f"/post.html?k={key}&action={quote(action, safe='')}"))
    with pytest.raises(ActionError) as info:
        await session.click(eid(session, "send"))
    assert BLOCKED in str(info.value)
    assert [hit.body for hit in site.origin.hits(f"/redirect?code={code}")][-1] == f"q=secret-{key}".encode()
    await refusals.wait(BLOCKED_IP, site.origin.port)
    blocked.assert_untouched()


async def test_a_websocket_redirected_to_the_blocked_host(site, open_session, refusals, blocked) -> None:
    """The handshake of an allowed ws:// URL answered with a redirect: Chromium fails the socket
    and follows nothing."""
    key = unique("ws-redirect-")
    target = f"ws://{BLOCKED_IP}:{site.blocked_ws.port}/{key}"
    url = f"ws://127.0.0.1:{site.origin.port}/redirect?code=307&to={quote(target, safe='')}&k={key}"
    session = await open_session(site.url("/blank.html"))
    outcome = await session.evaluate(
        f"new Promise(done => {{ const ws = new WebSocket({url!r}); "
        "ws.onopen = () => done('open'); ws.onerror = () => done('error'); })"
    )
    assert outcome == "error"
    assert site.origin.hits(f"k={key}")  # the handshake reached the allowed host, which redirected
    assert refusals.of(BLOCKED_IP, site.blocked_ws.port) == []  # not even asked for
    blocked.assert_untouched()
