"""Id stability and its documented causes, determinism, no trace left in the page, hostile pages."""

from __future__ import annotations

import asyncio
import json

import pytest

from plasmate_nb.som import SomCompileError, compile_page, find_element
from tests.som._helpers import TIMEOUT_S, by_html_id, by_text, expected_id, load


async def test_unchanged_page_compiles_to_identical_text(page, fixture_server):
    first = await load(page, fixture_server, "roles.html")
    second = await compile_page(page, timeout=TIMEOUT_S)
    assert first.text.encode() == second.text.encode()
    assert json.loads(first.text) == first.data


async def test_id_changes_with_name_role_path_and_origin(page, fixture_server):
    som = await load(page, fixture_server, "ids.html")
    para = by_html_id(som.data, "p")
    assert para["id"] == expected_id(fixture_server, "paragraph", "Counter 1", "0/0/1")
    button = by_html_id(som.data, "b")
    # name change: an unlabeled paragraph's text is its name; a labelled button keeps its id
    await page.evaluate("document.getElementById('p').textContent = 'Counter 2'")
    await page.evaluate("document.getElementById('b').textContent = 'Buy again'")
    renamed = (await compile_page(page, timeout=TIMEOUT_S)).data
    assert by_html_id(renamed, "p")["id"] == expected_id(fixture_server, "paragraph", "Counter 2", "0/0/1")
    assert by_html_id(renamed, "b")["id"] == button["id"]
    # role change
    await page.evaluate("document.getElementById('b').setAttribute('role', 'link')")
    relabelled = (await compile_page(page, timeout=TIMEOUT_S)).data
    assert by_html_id(relabelled, "b")["id"] == expected_id(fixture_server, "link", "Buy", "0/0/2")
    # dom_path change: a comment inserted before the heading shifts later siblings
    title_id = by_text(relabelled, "Stable title")["id"]
    await page.evaluate("document.querySelector('main').prepend(document.createComment('x'))")
    shifted = (await compile_page(page, timeout=TIMEOUT_S)).data
    assert by_text(shifted, "Stable title")["id"] == expected_id(
        fixture_server, "heading", "Stable title", "0/0/1"
    )
    assert by_text(shifted, "Stable title")["id"] != title_id
    # origin change: same document from localhost instead of 127.0.0.1
    other = fixture_server.replace("127.0.0.1", "localhost")
    moved = (await load(page, other, "ids.html")).data
    assert by_html_id(moved, "p")["id"] == expected_id(other, "paragraph", "Counter 1", "0/0/1")
    assert by_html_id(moved, "p")["id"] != para["id"]


async def test_budgets_dedupe_links_and_cap_paragraphs(page, fixture_server):
    data = (await load(page, fixture_server, "budget.html")).data
    content = next(r for r in data["regions"] if r["id"] == "r_content")
    assert content["elements"][-1] == {
        "id": "e_summary_8",
        "role": "paragraph",
        "text": "[2 duplicate links, 6 more paragraphs dropped, ~44 chars]",
    }
    assert sum(e["role"] == "paragraph" for e in content["elements"]) == 11  # 10 + the summary
    main = next(r for r in data["regions"] if r["id"] == "r_main")["elements"]
    assert len(main[0]["text"]) == 200 and main[0]["text"].endswith("...")
    assert len(main[1]["text"]) == 80
    meta = data["meta"]
    assert meta["element_count"] == sum(len(r["elements"]) for r in data["regions"])
    assert meta["interactive_count"] == 1
    assert 0 < meta["som_bytes"] <= len(json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode())


async def test_compile_leaves_no_trace_in_dom_or_window(page, fixture_server):
    await page.goto(f"{fixture_server}/som/roles.html")
    html_before = await page.evaluate("document.documentElement.outerHTML")
    keys_before = await page.evaluate("Object.getOwnPropertyNames(window).sort()")
    som = await compile_page(page, timeout=TIMEOUT_S)
    await som.resolve(by_html_id(som.data, "sel")["id"])
    assert await page.evaluate("document.documentElement.outerHTML") == html_before
    assert await page.evaluate("Object.getOwnPropertyNames(window).sort()") == keys_before


async def test_resolve_returns_none_for_disconnected_nodes(page, fixture_server):
    som = await load(page, fixture_server, "ids.html")
    button_id = by_html_id(som.data, "b")["id"]
    assert await som.resolve(button_id) is not None
    await page.evaluate("document.getElementById('b').remove()")
    assert await som.resolve(button_id) is None
    assert find_element(som.data, button_id)["role"] == "button"


async def test_hostile_page_yields_a_som_without_hanging(page, fixture_server):
    await page.goto(f"{fixture_server}/som/hostile.html")
    som = await asyncio.wait_for(compile_page(page, timeout=TIMEOUT_S), TIMEOUT_S + 5)
    assert "Before the trap" in som.text and "After the trap" in som.text
    # the throwing getters are the page's own properties on its DOM wrappers; the compiler's
    # isolated world has its own wrappers, so it reads the button like any other
    assert by_text(som.data, "Trap")["role"] == "button"
    assert "level 99" in som.text  # 100 nested open shadow roots
    again = await compile_page(page, timeout=TIMEOUT_S)
    assert again.data["regions"] == som.data["regions"]
    assert await som.resolve(by_text(som.data, "Before the trap")["id"]) is not None


async def test_page_that_breaks_map_gives_a_som_or_a_clear_error(page, fixture_server):
    # Playwright's own in-page helper needs Map, so this may fail before our code runs.
    await page.goto(f"{fixture_server}/som/hostile-map.html")
    try:
        som = await asyncio.wait_for(compile_page(page, timeout=TIMEOUT_S), TIMEOUT_S + 5)
    except SomCompileError as error:
        assert "trap" not in str(error).lower()
    else:
        assert "Before the trap" in som.text


async def test_compile_errors_are_clear_and_carry_no_page_content(page, fixture_server):
    await page.goto(f"{fixture_server}/som/ids.html")
    # keep the renderer busy for a bounded while: the compile cannot run and must time out
    await page.evaluate("setTimeout(() => { const end = Date.now() + 3000; while (Date.now() < end) {} }, 0)")
    with pytest.raises(SomCompileError) as caught:
        await compile_page(page, timeout=1.0)
    assert "timed out" in str(caught.value)
    assert "Counter" not in str(caught.value)
