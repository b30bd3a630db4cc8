"""DNS answered once per connection: a name is resolved by the gate, every address it returns
is checked, and the gate connects to exactly the address it checked.

The route-based guard resolved a name, then Chromium resolved it again: a name answering
127.0.0.1 to the check and 127.0.0.2 to the browser got through. Here the blocked listener sits
on 127.0.0.2 at the origin's own port, so a rebound request would land on it.
"""

from __future__ import annotations

import pytest

from plasmate_nb.browser import EngineError
from tests.egress.harness import ALLOWED_IP, BLOCKED_IP, NOT_ROUTABLE, unique

BLOCKED = "Outbound URL blocked: " + NOT_ROUTABLE


async def test_a_name_rebound_after_the_page_loaded(site, resolver, open_session, refusals, blocked) -> None:
    name = unique("rebind-") + ".test"
    resolver.script(name, [ALLOWED_IP], [BLOCKED_IP])
    origin = f"http://{name}:{site.origin.port}"
    session = await open_session(origin + "/blank.html")  # blank.html asks for nothing more (no favicon)
    assert [hit.host for hit in site.origin.hits("/blank.html")][-1] == f"{name}:{site.origin.port}"

    secret = unique("/ok/secret-")
    status, marker, body = await session.evaluate(
        f"fetch('{secret}').then(r => r.text().then(t => [r.status, r.headers.get('x-plasmate-egress'), t]))"
    )
    assert (status, marker) == (403, "refused")  # same origin: the page reads the gate's answer
    assert NOT_ROUTABLE in body
    await refusals.wait(name, site.origin.port)
    assert site.origin.hits(secret) == []
    assert resolver.calls_for(name) == 2  # once per request, never twice for one
    blocked.assert_untouched()


@pytest.mark.parametrize("answer", [[ALLOWED_IP, BLOCKED_IP], [BLOCKED_IP, ALLOWED_IP]])
async def test_every_address_of_an_answer_is_checked(
    site, resolver, open_session, call, refusals, blocked, answer
) -> None:
    clean, mixed = unique("clean-") + ".test", unique("mixed-") + ".test"
    resolver.script(clean, [ALLOWED_IP])
    resolver.script(mixed, answer)
    port = site.origin.port
    session = await open_session(f"http://{clean}:{port}/blank.html")  # control: a name on 127.0.0.1 is fine
    assert session.url == f"http://{clean}:{port}/blank.html"

    with pytest.raises(EngineError) as info:
        await open_session(f"http://{mixed}:{port}/blank.html")
    assert BLOCKED in str(info.value)
    await refusals.wait(mixed, port)
    assert [hit for hit in site.origin.hits() if hit.host.startswith(mixed)] == []  # not even the allowed one

    opened = await call.ok("open_page", url=f"http://{clean}:{port}/blank.html", trace=True)
    sid = opened["session_id"]
    try:
        assert BLOCKED in await call.error(
            "navigate_to", {"session_id": sid, "url": f"http://{mixed}:{port}/x"}
        )
        event = (await call.export(sid))["events"][-1]
        assert (event["action"], event["outcome"], event["error_class"]) == ("navigate_to", "error", "policy")
    finally:
        await call.ok("close_page", session_id=sid)
    blocked.assert_untouched()


async def test_a_refused_subresource_leaves_the_loaded_page_alone(
    site, resolver, open_session, refusals, blocked
) -> None:
    """Contract: refused subresources just fail. The page itself came from 127.0.0.1; its own
    same-origin image, requested while it loads after the name was rebound, is refused — and
    opening the page still succeeds."""
    name = unique("rebind-load-") + ".test"
    resolver.script(name, [ALLOWED_IP], [BLOCKED_IP])
    key = unique("img")
    session = await open_session(f"http://{name}:{site.origin.port}/subresource.html?k={key}")
    assert session.url.startswith(f"http://{name}:")
    await refusals.wait(name, site.origin.port)
    assert site.origin.hits(f"/ok/same-origin-{key}") == []
    blocked.assert_untouched()
