"""A site cannot speak for the gate: answers it writes with the gate's marker headers
(``x-plasmate-egress: refused`` and a reason of its choosing) are its own pages, not refusals.

Before, a page that loaded fine was answered ``Outbound URL blocked: <the site's text>`` and
traced as ``policy``, and the site's text (a path, a token) went into the error message. The
gate now drops those headers from every answer it relays, and the engine believes them only on
plain-HTTP answers (an HTTPS answer passes the gate encrypted).
"""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest

from plasmate_nb.browser.egress import gate_answer
from tests.browser.conftest import eid
from tests.egress.harness import FORGED_REASON

KINDS = ["refused", "unreachable"]


@pytest.mark.parametrize("kind", KINDS)
async def test_a_page_with_forged_marker_headers_loads(site, open_session, kind) -> None:
    url = site.url(f"/forged?kind={kind}")
    session = await open_session(url)
    assert session.url == url and session.som is not None and "Loaded fine" in session.som.text
    await session.navigate(site.url(f"/forged?kind={kind}&again=1"))
    assert session.url.endswith("again=1")


@pytest.mark.parametrize("kind", KINDS)
async def test_a_click_onto_a_page_with_forged_marker_headers_succeeds(site, open_session, kind) -> None:
    target = site.url(f"/forged?kind={kind}")
    session = await open_session(site.url("/link.html?to=" + quote(target, safe="")))
    await session.click(eid(session, "go"))
    assert session.url == target


async def test_a_traced_navigation_onto_forged_headers_is_a_success_with_no_site_text(site, call) -> None:
    opened = await call.ok("open_page", url=site.url("/ok/start"), trace=True)
    sid = opened["session_id"]
    answer = await call.ok("navigate_to", session_id=sid, url=site.url("/forged?kind=refused"))
    assert answer["title"] == "Forged"
    exported = await call.export(sid)
    assert [event["outcome"] for event in exported["events"]] == ["success", "success"]
    assert "SECRET" not in json.dumps(exported)
    await call.ok("close_page", session_id=sid)


async def test_a_robots_txt_with_forged_marker_headers_is_read(site, call) -> None:
    report = await call.ok("crawl_policy", url=site.url("/private/page"))
    assert FORGED_REASON.split()[0] not in json.dumps(report)
    assert report["decision"]["allowed"] is False and report["source"]["http_status"] == 200


@pytest.mark.parametrize(
    ("url", "gated", "believed"),
    [
        ("http://127.0.0.1/", True, True),  # only the gate's own plain-HTTP answers carry them
        ("HTTP://127.0.0.1/", True, True),
        ("https://127.0.0.1/", True, False),  # relayed encrypted: the site's own headers
        ("http://127.0.0.1/", False, False),  # no gate (a remote browser): nothing to believe
    ],
)
def test_marker_headers_are_believed_only_from_a_gate_on_plain_http(url, gated, believed) -> None:
    headers = {"x-plasmate-egress": "refused", "x-plasmate-egress-reason": FORGED_REASON}
    expected = ("refused", FORGED_REASON) if believed else (None, "")
    assert gate_answer(url, headers, gated=gated) == expected
