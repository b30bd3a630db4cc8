"""Regions, common roles, labels, ids, meta and resolve on a small login page."""

from __future__ import annotations

from tests.som._helpers import by_html_id, by_text, expected_id, load, region


async def test_login_page_regions_roles_and_meta(page, fixture_server):
    som = await load(page, fixture_server, "basic.html")
    data = som.data
    assert list(data)[:6] == ["som_version", "url", "title", "lang", "regions", "meta"]
    assert data["som_version"] == "0.1"
    assert data["title"] == "Login"
    assert [r["id"] for r in data["regions"]] == ["r_navigation", "r_form", "r_main", "r_footer"]
    form = region(data, "r_form")
    assert (form["label"], form["action"], form["method"]) == ("Login form", "/api/login", "POST")
    email = by_html_id(data, "email")
    assert email["role"] == "text_input"
    assert email["label"] == "Email"
    assert email["actions"] == ["type", "clear"]
    assert email["attrs"] == {
        "input_type": "email",
        "name": "email",
        "placeholder": "you@example.com",
        "required": True,
    }
    assert by_text(data, "Sign In")["role"] in {"heading", "button"}
    assert by_html_id(data, "remember")["actions"] == ["toggle"]
    meta = data["meta"]
    assert meta["element_count"] == sum(len(r["elements"]) for r in data["regions"])
    assert meta["interactive_count"] == 6
    assert meta["html_bytes"] == len((await page.evaluate("document.documentElement.outerHTML")).encode())


async def test_ids_match_hashlib_and_resolve_to_the_live_node(page, fixture_server):
    som = await load(page, fixture_server, "basic.html")
    origin = fixture_server  # http://127.0.0.1:<port>
    heading = next(e for e in region(som.data, "r_main")["elements"] if e["role"] == "heading")
    # body > [#text, nav, #text, main] ; main > [#text, h1]
    assert heading["id"] == expected_id(origin, "heading", "Sign In", "0/3/1")
    handle = await som.resolve(heading["id"])
    assert handle is not None
    assert await handle.evaluate("n => n.localName") == "h1"
    assert await som.resolve("e_000000000000") is None
    await som.dispose()


async def test_password_value_never_appears(page, fixture_server):
    await page.goto(f"{fixture_server}/som/basic.html")
    await page.fill("#pw", "Typed-Secret-42")
    from plasmate_nb.som import compile_page

    som = await compile_page(page, timeout=20)
    assert "Typed-Secret-42" not in som.text
    assert "source-secret" not in som.text
    assert "value" not in by_html_id(som.data, "pw")["attrs"]
