"""The compiler runs in an isolated world: a page's patched builtins, prototypes and
self-rewriting traps change nothing in its SOM, cannot reach the id map, and actions on
resolved ids still go through Playwright's real input."""

from __future__ import annotations

import asyncio

import pytest
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from plasmate_nb.som import compile_page, next_frame
from plasmate_nb.som.world import NOT_CONNECTED
from tests.som._helpers import TIMEOUT_S, by_html_id

PAGE = "som/isolation.html"

# Each patch is what a hostile page could do to a compiler running in its main world.
PATCHES = {
    "builtins": """
        Map.prototype.get = function () { return document.getElementById('decoy'); };
        Map.prototype.set = function () { return this; };
        Array.prototype.push = function () { throw new Error('no push'); };
        JSON.stringify = () => '{}';
        JSON.parse = () => ({});
        String.prototype.slice = function () { return 'x'; };
        String.prototype.toLowerCase = function () { return 'cookie'; };
        Date.now = () => 0;
    """,
    "dom_prototypes": """
        Element.prototype.getAttribute = function () { return 'hijacked'; };
        Element.prototype.hasAttribute = function () { return true; };
        Element.prototype.getAttributeNames = function () { return ['hidden']; };
        Object.defineProperty(Node.prototype, 'textContent', { get() { throw new Error('no text'); } });
        Object.defineProperty(CharacterData.prototype, 'data', { get() { return 'forged'; } });
        Object.defineProperty(HTMLInputElement.prototype, 'value', { get() { return 'forged'; } });
        Document.prototype.querySelectorAll = function () { return []; };
        Element.prototype.querySelectorAll = function () { return []; };
        window.getComputedStyle = () => ({ display: 'none', visibility: 'hidden' });
        Element.prototype.checkVisibility = () => false;
    """,
    # Walking the tree from the main world would rewrite the page under the walker.
    "self_rewriting": """
        const first = Object.getOwnPropertyDescriptor(Node.prototype, 'firstChild').get;
        let rewritten = false;
        Object.defineProperty(Node.prototype, 'firstChild', { get() {
          if (!rewritten && document.body) {
            rewritten = true;
            const fake = document.createElement('button');
            fake.textContent = 'Pay now';
            document.body.append(fake);
            document.getElementById('save')?.remove();
          }
          return first.call(this);
        } });
    """,
}


async def _som_text(page, url: str) -> str:
    await page.goto(url)
    return (await compile_page(page, timeout=TIMEOUT_S)).text


@pytest.mark.parametrize("patch", sorted(PATCHES))
async def test_patched_main_world_gives_the_same_som_bytes(browser, fixture_server, patch):
    url = f"{fixture_server}/{PAGE}"
    plain_context = await browser.new_context()
    patched_context = await browser.new_context()
    try:
        plain = await _som_text(await plain_context.new_page(), url)
        patched_page = await patched_context.new_page()
        await patched_page.add_init_script(PATCHES[patch])
        patched = await _som_text(patched_page, url)
    finally:
        await plain_context.close()
        await patched_context.close()
    assert "Save" in plain and "Team" in plain
    assert patched.encode() == plain.encode()


async def test_patched_map_cannot_redirect_an_id_and_clicks_use_real_input(page, fixture_server):
    await page.add_init_script(PATCHES["builtins"])
    await page.goto(f"{fixture_server}/{PAGE}")
    som = await compile_page(page, timeout=TIMEOUT_S)
    handle = await som.resolve(by_html_id(som.data, "save")["id"])
    assert handle is not None
    assert await handle.get_attribute("id") == "save"  # not the decoy the page's Map.get returns
    await handle.click(timeout=TIMEOUT_S * 1000)
    assert await page.get_attribute("#save", "data-clicked") == "yes"
    assert await page.get_attribute("#decoy", "data-clicked") is None


async def test_the_page_cannot_see_the_compiler_or_its_map(page, fixture_server):
    await page.goto(f"{fixture_server}/{PAGE}")
    names_before = await page.evaluate("Object.getOwnPropertyNames(globalThis).sort()")
    som = await compile_page(page, timeout=TIMEOUT_S)
    assert await som.resolve(by_html_id(som.data, "email")["id"]) is not None
    assert await page.evaluate("Object.getOwnPropertyNames(globalThis).sort()") == names_before
    assert await page.evaluate("typeof globalThis.__plasmate_som") == "undefined"


async def test_ids_resolve_after_navigation_and_not_across_documents(page, fixture_server):
    await page.goto(f"{fixture_server}/{PAGE}")
    first = await compile_page(page, timeout=TIMEOUT_S)
    save_id = by_html_id(first.data, "save")["id"]
    await page.goto(f"{fixture_server}/{PAGE}?again")
    assert await first.resolve(save_id) is None  # that document's map went with it
    second = await compile_page(page, timeout=TIMEOUT_S)
    handle = await second.resolve(by_html_id(second.data, "save")["id"])
    assert handle is not None and await handle.get_attribute("id") == "save"


async def test_a_located_id_acts_on_its_own_node_and_fails_at_once_after_it_left(page, fixture_server):
    """Actions go through ``locate``: the locator reaches the node the compile kept (not the
    decoy a patched Map would give). Once that node left the DOM, or for an id the compile never
    made, or a compile of another document, acting fails at once with the engine's own reason
    (a locator would otherwise wait for a node that never comes back); a disposed compile and a
    malformed id locate nothing."""
    await page.add_init_script(PATCHES["builtins"])
    await page.goto(f"{fixture_server}/{PAGE}")
    som = await compile_page(page, timeout=TIMEOUT_S)
    save_id, email_id = by_html_id(som.data, "save")["id"], by_html_id(som.data, "email")["id"]
    located = await som.locate(save_id)
    assert located is not None
    await located.click(timeout=TIMEOUT_S * 1000)
    assert await page.get_attribute("#save", "data-clicked") == "yes"
    assert await page.get_attribute("#decoy", "data-clicked") is None
    assert await som.locate("not an id') || (1") is None

    async def assert_gone(compiled, element_id: str) -> None:
        located = await compiled.locate(element_id)
        assert located is not None
        with pytest.raises(PlaywrightError) as raised:
            await located.click(timeout=TIMEOUT_S * 1000)
        assert not isinstance(raised.value, PlaywrightTimeoutError)
        assert NOT_CONNECTED in str(raised.value)
        assert await compiled.resolve(element_id) is None

    await assert_gone(som, "e_000000000000")
    await page.evaluate("document.getElementById('save').remove()")
    await assert_gone(som, save_id)
    fresh = await compile_page(page, timeout=TIMEOUT_S)
    await som.dispose()
    assert await som.locate(email_id) is None
    await page.goto(f"{fixture_server}/{PAGE}?again")
    newer = await compile_page(page, timeout=TIMEOUT_S)  # the new document's world is known
    await assert_gone(fresh, email_id)  # its key has no map in this document
    assert await newer.resolve(email_id) is not None


async def test_the_frame_wait_is_out_of_reach_of_a_page_that_steals_its_timers(page, fixture_server):
    """``next_frame`` (settle's wait) is served from the isolated world: it resolves although
    the page replaced requestAnimationFrame and setTimeout, and the page is never asked."""
    await page.goto(f"{fixture_server}/browser/frozen_clock.html")
    for _ in range(3):
        await asyncio.wait_for(next_frame(page), TIMEOUT_S)
    assert await page.evaluate("window.__stolen") == 0


async def test_the_frame_wait_ends_on_a_page_whose_scripts_are_disabled(browser):
    """With JavaScript disabled no timer fires, in any world; the wait ends with the next frame
    instead of running into settle's timeout on every action."""
    context = await browser.new_context(java_script_enabled=False)
    try:
        page = await context.new_page()
        await page.set_content("<html><body><h1>No scripts</h1><button>Go</button></body></html>")
        await compile_page(page, timeout=TIMEOUT_S)
        for _ in range(3):
            await asyncio.wait_for(next_frame(page), TIMEOUT_S)
    finally:
        await context.close()
