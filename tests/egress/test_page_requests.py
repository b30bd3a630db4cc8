"""What a page asks for itself: fetch, XHR, images, frames, form posts, popups, and the same from
a dedicated worker and a service worker. Refused subresources just fail (a refused plain-HTTP
``fetch`` even resolves, with the gate's 403); refused navigations fail the action with
``Outbound URL blocked``. Either way no byte reaches 127.0.0.2.
"""

from __future__ import annotations

import pytest

from plasmate_nb.browser import ActionError
from tests.browser.conftest import eid
from tests.egress.harness import BLOCKED_IP, NOT_ROUTABLE, unique
from tests.support import element_id, wait_until

BLOCKED = "Outbound URL blocked: " + NOT_ROUTABLE


async def test_fetch_xhr_images_and_frames(site, open_session, refusals, blocked) -> None:
    key = unique("sub")
    session = await open_session(site.url(f"/subresources.html?k={key}"))
    for kind in ("img", "iframe", "fetch", "xhr"):
        await wait_until(lambda kind=kind: site.origin.hits(f"/ok/{kind}-{key}"), what=f"the control {kind}")
    control_fetch, _, _, control_xhr, _ = await session.evaluate("window.results")
    assert (control_fetch, control_xhr) == (200, 200)
    await refusals.wait(BLOCKED_IP, site.origin.port, count=4)  # img, iframe, fetch, XHR
    await refusals.wait("blocked.test", site.origin.port, count=2)  # img, fetch
    blocked.assert_untouched()


async def test_dedicated_and_service_workers(site, open_session, refusals, blocked) -> None:
    key = unique("worker")
    session = await open_session(site.url(f"/workers.html?k={key}"))
    worker, service_worker = await session.evaluate(
        "Promise.all([window.workerResult, window.serviceWorkerResult])"
    )
    assert (worker[0], service_worker) == (200, "registered")
    await wait_until(lambda: site.origin.hits(f"/ok/worker-{key}"), what="the worker's control fetch")
    await wait_until(lambda: site.origin.hits(f"/ok/sw-{key}"), what="the service worker's control fetch")
    await refusals.wait(BLOCKED_IP, site.origin.port, count=2)
    await refusals.wait("blocked.test", site.origin.port, count=2)
    blocked.assert_untouched()


async def test_form_post_to_the_blocked_host(site, open_session, refusals, blocked) -> None:
    key = unique("form")
    form = site.url(f"/form.html?k={key}")
    session = await open_session(form)
    await session.click(eid(session, "send-ok"))
    assert session.url == site.url(f"/ok/form-{key}")
    assert [(hit.method, hit.body) for hit in site.origin.hits(f"/ok/form-{key}")] == [("POST", b"q=control")]

    await session.navigate(form)
    with pytest.raises(ActionError) as info:
        await session.click(eid(session, "send-blocked"))
    assert str(info.value).startswith("Navigation failed: " + BLOCKED)
    await refusals.wait(BLOCKED_IP, site.origin.port)
    assert session.url == form
    blocked.assert_untouched()


async def test_form_post_is_traced_as_policy(site, call, refusals, blocked) -> None:
    opened = await call.ok("open_page", url=site.url(f"/form.html?k={unique('traced')}"), trace=True)
    sid = opened["session_id"]
    try:
        message = await call.error(
            "click", {"session_id": sid, "element_id": element_id(opened, "button", "Send there")}
        )
        assert message.startswith("Navigation failed: " + BLOCKED)
        await refusals.wait(BLOCKED_IP, site.origin.port)
        event = (await call.export(sid))["events"][-1]
        assert (event["action"], event["outcome"], event["error_class"]) == ("click", "error", "policy")
    finally:
        await call.ok("close_page", session_id=sid)
    blocked.assert_untouched()


async def test_window_open(site, open_session, refusals, blocked) -> None:
    key = unique("popup")
    session = await open_session(site.url(f"/form.html?k={key}"))
    await session.click(eid(session, "popups"))  # popups are closed by the session, but load first
    await wait_until(lambda: site.origin.hits(f"/ok/popup-{key}"), what="the control popup")
    await refusals.wait(BLOCKED_IP, site.origin.port)
    await refusals.wait("blocked.test", site.origin.port)
    blocked.assert_untouched()
