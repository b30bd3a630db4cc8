"""Every action on the live page, and its live state in the recompiled SOM (docs/contract.md#browser-engine, docs/contract.md#attributes)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from plasmate_nb.browser import ActionError, Engine, EngineConfig
from plasmate_nb.errors import ELEMENT_NOT_IN_DOM
from tests.browser.conftest import attrs, eid, element
from tests.support import wait_until

CONFIG = EngineConfig(navigation_timeout=10, action_timeout=3, evaluate_timeout=3, settle_timeout=1)


@pytest_asyncio.fixture(scope="module")
async def engine() -> AsyncIterator[Engine]:
    async with Engine(CONFIG) as running:
        yield running


@pytest_asyncio.fixture
async def login(engine, demo):
    session = await engine.open(demo.url("/login.html"))
    yield session
    await engine.close_session(session.id)


async def test_open_returns_a_live_page_with_its_som(login, demo):
    assert login.url == demo.url("/login.html")
    view = login.view()
    assert set(view) == {"regions", "title", "url"}
    assert view["title"] == "Sign in"
    assert element(login, html_id="email")["role"] == "text_input"
    state = login.page_state()
    assert state.url == login.url and state.som_text == login.som.text and state.som == login.som.data


async def test_type_text_replaces_then_appends_and_persists(login):
    email = eid(login, "email")
    await login.type_text(email, "ada@example.com")
    assert attrs(login, "email").get("value") == "ada@example.com"
    await login.type_text(email, "ada@")
    await login.type_text(eid(login, "email"), "example.org", append=True)
    assert attrs(login, "email").get("value") == "ada@example.org"
    assert await login.evaluate("document.getElementById('email').value") == "ada@example.org"


async def test_password_value_never_reaches_the_som(login):
    await login.type_text(eid(login, "password"), "hunter2-secret")
    assert await login.evaluate("document.getElementById('password').value") == "hunter2-secret"
    assert "hunter2-secret" not in login.som.text
    assert "value" not in attrs(login, "password")


async def test_select_option_by_value_and_by_visible_text(login):
    await login.select_option(eid(login, "plan"), "team")
    assert attrs(login, "plan").get("value") == "team"
    await login.select_option(eid(login, "plan"), "Enterprise")
    assert attrs(login, "plan").get("value") == "enterprise"
    assert await login.evaluate("document.getElementById('plan').value") == "enterprise"


async def test_toggle_checkbox_both_ways(login):
    await login.toggle(eid(login, "remember"))
    assert attrs(login, "remember").get("checked") is True
    assert await login.evaluate("document.getElementById('remember').checked") is True
    await login.toggle(eid(login, "remember"))
    assert not attrs(login, "remember").get("checked")


async def test_clear_empties_the_field(login):
    await login.type_text(eid(login, "email"), "x@y.z")
    await login.clear(eid(login, "email"))
    assert not attrs(login, "email").get("value")
    assert await login.evaluate("document.getElementById('email').value") is None  # "" maps to None


async def test_submitting_the_form_navigates_without_the_password_in_the_url(login, demo):
    await login.type_text(eid(login, "email"), "ada@example.com")
    await login.type_text(eid(login, "password"), "pw-in-url?")
    await login.click(eid(login, "submit"))
    assert login.url == demo.url("/welcome.html")
    assert login.view()["title"] == "Welcome"
    assert "pw-in-url" not in login.url


async def test_link_click_updates_url_and_title(engine, demo):
    session = await engine.open(demo.url("/index.html"))
    try:
        await session.click(element(session, role="link", text="Details and radio buttons")["id"])
        assert session.url == demo.url("/details.html")
        assert session.view()["title"] == "Details and choices"
    finally:
        await engine.close_session(session.id)


async def test_details_and_radio_toggle(engine, demo):
    session = await engine.open(demo.url("/details.html"))
    try:
        assert attrs(session, "faq").get("open") is False
        await session.toggle(eid(session, "faq"))
        assert attrs(session, "faq").get("open") is True
        assert await session.evaluate("document.getElementById('faq').open") is True
        await session.toggle(eid(session, "express"))
        assert attrs(session, "express").get("checked") is True
        assert not attrs(session, "standard").get("checked")
    finally:
        await engine.close_session(session.id)


async def test_javascript_rendered_content_is_in_the_som(engine, demo):
    session = await engine.open(demo.url("/dynamic.html"))
    try:
        assert "Add Rendered gadget" in session.som.text
        assert "3 products rendered by JavaScript" in session.som.text
    finally:
        await engine.close_session(session.id)


async def test_click_changes_persist_in_the_live_page(engine, demo):
    session = await engine.open(demo.url("/drift.html"))
    try:
        for _ in range(3):
            await session.click(eid(session, "increment"))
        assert await session.evaluate("document.getElementById('count').textContent") == 3
    finally:
        await engine.close_session(session.id)


async def test_scroll_directions_and_into_view(engine, fixture_server):
    session = await engine.open(f"{fixture_server}/browser/kinds.html")
    try:
        assert await session.scroll("down", 250) == pytest.approx(250)
        assert await session.scroll("up", 100) == pytest.approx(150)
        bottom = await session.scroll("bottom")
        assert bottom > 1000
        assert await session.scroll("sideways", 50) == pytest.approx(
            bottom
        )  # unknown acts as down; at the end
        assert await session.scroll("top") == 0.0
        assert await session.scroll(element_id=eid(session, "far")) == 0.0  # near the top: no move needed
    finally:
        await engine.close_session(session.id)


async def test_evaluate_result_mapping(login):
    assert await login.evaluate("({a: [1, 2]})") == {"a": [1, 2]}
    assert await login.evaluate("'123'") == 123
    assert await login.evaluate("'true'") is True
    assert await login.evaluate("undefined") is None
    assert await login.evaluate("''") is None
    assert await login.evaluate("'plain text'") == "plain text"
    assert await login.evaluate("null") is None
    assert await login.evaluate("Promise.resolve(7)") == 7


async def test_evaluate_changes_persist_and_show_in_the_som(login):
    await login.evaluate("document.querySelector('h1').textContent = 'Changed by evaluate'")
    assert "Changed by evaluate" in login.som.text
    assert await login.evaluate("document.querySelector('h1').textContent") == "Changed by evaluate"


async def test_cookie_round_trip(login, demo):
    count = await login.set_cookies(
        [
            {"name": "theme", "value": "dark", "url": demo.base_url},
            {"name": "lang", "value": "en", "domain": "127.0.0.1", "sameSite": "strict"},
            {"name": "bad"},  # no value: skipped
            {"name": "nodomain", "value": "x"},  # no domain or url: skipped
        ]
    )
    assert count == 2
    cookies = {c["name"]: c for c in await login.get_cookies()}
    assert set(cookies) == {"theme", "lang"}
    assert cookies["lang"]["sameSite"] == "Strict"
    assert cookies["theme"] == {
        "domain": "127.0.0.1",
        "expires": None,
        "httpOnly": False,
        "name": "theme",
        "path": "/",
        "sameSite": "Lax",
        "secure": False,
        "size": 9,
        "value": "dark",
    }
    seen = await login.evaluate("document.cookie")
    assert set(seen.split("; ")) == {"theme=dark", "lang=en"}
    assert await login.clear_cookies(name="theme") == 1
    assert [c["name"] for c in await login.get_cookies()] == ["lang"]
    assert await login.clear_cookies(name="lang", domain="example.com") == 0
    assert await login.clear_cookies(domain="127.0.0.1", url=demo.base_url + "/") == 1
    await login.set_cookies(
        [{"name": "a", "value": "1", "url": demo.base_url}, {"name": "b", "value": "2", "url": demo.base_url}]
    )
    assert await login.clear_cookies() == 2
    assert await login.get_cookies() == []


async def test_dialogs_are_dismissed(engine, demo):
    session = await engine.open(demo.url("/faults/dialog.html"))  # alert on load must not block
    try:
        await session.click(eid(session, "ask"))
        assert await session.evaluate("document.getElementById('answer').textContent") == "Dismissed"
    finally:
        await engine.close_session(session.id)


@pytest.mark.parametrize("leave", ["navigate_to", "a link"])
async def test_a_page_asking_to_stay_is_left(engine, fixture_server, leave):
    # An unattended session answers "Leave site?" with leave: dismissing it would keep the
    # agent on the page for good (every navigation aborted).
    session = await engine.open(f"{fixture_server}/browser/stay.html")
    try:
        await session.click(eid(session, "edit"))  # the user activation that arms the prompt
        if leave == "navigate_to":
            await session.navigate(f"{fixture_server}/browser/target.html")
        else:
            await session.click(eid(session, "leave"))
        assert session.url == f"{fixture_server}/browser/target.html"
        assert "You arrived" in session.som.text
    finally:
        await engine.close_session(session.id)


async def test_popups_and_new_tabs_are_closed(engine, demo):
    session = await engine.open(demo.url("/faults/popup.html"))
    opened: list[Any] = []
    session._context.on("page", lambda page: opened.append(page))
    try:
        await session.click(eid(session, "open"))
        await session.click(eid(session, "blank"))
        await wait_until(
            lambda: (
                len(opened) == 2
                and all(page.is_closed() for page in opened)
                and len(session._context.pages) == 1
            ),
            what="the new pages opened and closed",
        )
        assert await session.evaluate("location.pathname") == "/faults/popup.html"
    finally:
        await engine.close_session(session.id)


async def test_downloads_are_refused(engine, demo):
    with pytest.raises(Exception, match="download refused"):
        await engine.open(demo.url("/faults/download"))
    session = await engine.open(demo.url("/index.html"))
    try:
        await session.click(element(session, role="link", text="Download")["id"])
        assert session.url == demo.url("/index.html")
    finally:
        await engine.close_session(session.id)


async def test_settle_is_out_of_reach_of_a_page_that_steals_its_timers(engine, fixture_server):
    """Settling waits for a frame and a task from the isolated world: a page that replaced
    requestAnimationFrame and setTimeout in its own world is never asked for one, and actions
    still see their effect."""
    session = await engine.open(f"{fixture_server}/browser/frozen_clock.html")
    try:
        for n in (1, 2, 3):
            await session.click(eid(session, "count"))
            assert element(session, html_id="count")["text"] == f"Clicked {n}"
        assert await session.evaluate("window.__stolen") == 0
    finally:
        await engine.close_session(session.id)


async def test_an_element_that_leaves_during_the_action_is_not_in_the_dom(engine, fixture_server):
    """The node the id named was there when the action began and left before its click landed:
    the action answers at once that the element is not in the DOM (it does not wait out the
    action timeout for a node that cannot come back), and the page keeps its last good state."""
    session = await engine.open(f"{fixture_server}/browser/shy.html")
    try:
        shy = eid(session, "shy")
        with pytest.raises(ActionError, match=f"^{ELEMENT_NOT_IN_DOM}$"):
            await session.click(shy)
        assert element(session, html_id="shy")["id"] == shy  # the last good SOM is kept
        assert await session.evaluate("document.getElementById('shy')") is None
    finally:
        await engine.close_session(session.id)
