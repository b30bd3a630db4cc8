"""Hidden content, inert, live state after real user input, passwords, article, lang, shadow."""

from __future__ import annotations

from plasmate_nb.som import compile_page
from tests.som._helpers import TIMEOUT_S, by_html_id, by_text, elements, expected_id, load


async def test_each_hiding_mechanism_excludes_content(page, fixture_server):
    som = await load(page, fixture_server, "hidden.html")
    for hidden in (
        "Hidden by attribute",
        "Hidden by stylesheet",
        "Hidden by visibility",
        "Hidden by aria",
        "Hidden inline",
        "Hidden button",
        "secret span",
        "Accept cookies",
        "No script",
        "Template text",
    ):
        assert hidden not in som.text, hidden
    assert by_text(som.data, "Half faded stays")["role"] == "paragraph"
    assert by_text(som.data, "Text with shown")["role"] == "paragraph"
    inert = [e for e in elements(som.data) if e.get("attrs", {}).get("inert")]
    assert {e["role"] for e in inert} == {"section", "button"}


async def test_live_state_after_user_actions(page, fixture_server):
    await page.goto(f"{fixture_server}/som/live.html")
    before = (await compile_page(page, timeout=TIMEOUT_S)).data
    assert by_html_id(before, "name")["attrs"]["value"] == "default"
    assert "checked" not in by_html_id(before, "agree")["attrs"]
    await page.fill("#name", "Ada Lovelace")
    await page.check("#agree")
    await page.select_option("#color", "g")
    await page.fill("#bio", "Wrote   notes")
    await page.click("#more summary")
    await page.fill("#pw", "hunter2-Secret")
    som = await compile_page(page, timeout=TIMEOUT_S)
    after = som.data
    assert by_html_id(after, "name")["attrs"]["value"] == "Ada Lovelace"
    assert by_html_id(after, "agree")["attrs"]["checked"] is True
    color = by_html_id(after, "color")["attrs"]
    assert (
        color["value"] == "g"
        and color["options"][1]["selected"] is True
        and "selected" not in color["options"][0]
    )
    assert by_html_id(after, "bio")["attrs"]["value"] == "Wrote notes"
    assert by_html_id(after, "more")["attrs"]["open"] is True
    assert "hunter2-Secret" not in som.text
    # labelled controls keep their id when their value changes (docs/contract.md#element-ids)
    assert by_html_id(after, "name")["id"] == by_html_id(before, "name")["id"]


async def test_article_content_is_kept(page, fixture_server):
    data = (await load(page, fixture_server, "article.html")).data
    roles = [(e["role"], e.get("text")) for e in data["regions"][0]["elements"]]
    assert roles[0] == ("section", None)
    assert ("heading", "Story title") in roles and ("paragraph", "Story body text.") in roles
    assert ("link", "Read more") in roles and ("paragraph", "Byline") in roles
    assert [r["id"] for r in data["regions"]] == ["r_main"]  # article header/footer are not landmarks


async def test_open_shadow_roots_feed_paths_and_ids(page, fixture_server):
    som = await load(page, fixture_server, "shadow.html")
    host = by_html_id(som.data, "host")
    assert host["shadow"]["mode"] == "open"
    inner = host["shadow"]["elements"]
    assert [e.get("text") for e in inner] == ["Shadow para", "Shadow button"]
    # body > [#text, main]; main > [#text, section#host]; shadow root child 1 = button
    assert inner[1]["id"] == expected_id(fixture_server, "button", "Shadow button", "0/1/1#shadow/1")
    widget = by_html_id(som.data, "cw")
    assert widget["role"] == "group"
    assert (
        by_html_id({"regions": [widget["shadow"]]}, "si")["label"] == "Inner"
    )  # label index per shadow root
    assert "Imperative button" in som.text
    assert "Closed button" not in som.text
    handle = await som.resolve(inner[1]["id"])
    assert handle is not None and await handle.evaluate("n => n.id") == "sb"
    assert som.data["meta"]["element_count"] == len(elements(som.data))
