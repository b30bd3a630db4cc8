"""Region and element-role mapping, attrs, labels, options, lists, tables, hints (docs/contract.md#regions, docs/contract.md#elements-roles-and-actions)."""

from __future__ import annotations

from tests.som._helpers import by_html_id, by_text, elements, load, region


async def test_regions_from_landmarks_roles_and_class_hints(page, fixture_server):
    data = (await load(page, fixture_server, "roles.html")).data
    roles = {r["id"]: r["role"] for r in data["regions"]}
    assert roles == {
        "r_header": "header",
        "r_aside": "aside",  # class="sidebar"
        "r_aside_1": "aside",
        "r_search": "navigation",  # role=search
        "r_dialog": "dialog",
        "r_main": "main",
        "r_footer": "footer",
    }
    assert region(data, "r_dialog")["label"] == "Settings"
    assert data["lang"] == "de-CH"  # D4: from documentElement.lang despite the doctype


async def test_element_roles_and_default_actions(page, fixture_server):
    data = (await load(page, fixture_server, "roles.html")).data
    role_of = {(e.get("text") or e.get("label") or e.get("html_id")): e["role"] for e in elements(data)}
    expected = {
        "Heading two": "heading",
        "First paragraph.": "paragraph",
        "Inside sectionSection link": "section",
        "Choice": "group",
        "Alpha": "radio",
        "MoreHidden detail": "details",
        "fallback": "iframe",
        "initial notes": "textarea",
        "ARIA button": "button",
        "Wifi": "checkbox",
        "Slider": "text_input",
        "Combo": "select",
        "Tab one": "button",
        "Send it": "button",
        "Go": "button",
        "dt": "text_input",
        "No href anchor": "paragraph",  # <a> without href is no element
        "Role list item": "paragraph",  # unrecognised role turns off the native list
    }
    for name, role in expected.items():
        assert role_of.get(name) == role, name
    kinds = {e["role"] for e in elements(data)}
    assert {"image", "list", "table", "separator", "select", "link"} <= kinds
    actions = {e["role"]: e.get("actions") for e in elements(data)}
    assert actions["details"] == ["toggle"] and actions["radio"] == ["select"] and actions["heading"] is None
    assert "hidden-token" not in (await load(page, fixture_server, "roles.html")).text


async def test_attrs_keys_and_order(page, fixture_server):
    som = await load(page, fixture_server, "roles.html")
    desc = by_html_id(som.data, "desc")
    assert desc["attrs"] == {
        "aria": {"describedby": "lbl1"},
        "description": "Name from labelledby",
        "input_type": "text",
        "maxlength": 10,
        "min": "0.5",
        "required": True,
        "tabindex": " 0",  # Rust i64 parse rejects surrounding whitespace
        "test_id": "t1",
    }
    assert list(desc["attrs"]) == sorted(desc["attrs"])
    assert list(desc) == ["id", "role", "html_id", "actions", "attrs"]
    heading = by_text(som.data, "Heading two")
    assert heading["attrs"] == {"level": 2, "title": "Tip"} and heading["label"] == "Tip"
    assert by_text(som.data, "fallback")["attrs"] == {
        "height": "50",
        "name": "fr",
        "src": "/frame.html",
        "width": "100",
    }
    assert by_text(som.data, "Send it")["attrs"]["button_type"] == "submit"
    assert by_text(som.data, "Delete")["hints"] == ["danger", "large"]


async def test_labels_follow_the_reference_order(page, fixture_server):
    data = (await load(page, fixture_server, "roles.html")).data
    assert by_html_id(data, "lb")["label"] == "Name from labelledby"  # aria-labelledby
    assert by_html_id(data, "q")["label"] == "Search site"  # aria-label
    assert by_html_id(data, "r1")["label"] == "Alpha"  # <label for>
    assert by_html_id(data, "wrapped")["label"] == "Wrapped"  # wrapping label, control with id
    # D8: the reference leaves a wrapped control without an id unlabelled; it takes the label's text here
    assert (
        next(e for e in elements(data) if e.get("attrs", {}).get("name") == "noid")["label"]
        == "Wrapped no id"
    )
    assert by_html_id(data, "ph")["label"] == "Just a placeholder"  # placeholder
    assert by_text(data, "X")["label"] == "Close dialog"  # title
    assert by_text(data, "Go")["attrs"]["alt"] == "Go"  # input type=image alt
    assert by_text(data, "Send it")["role"] == "button"  # input button value
    assert by_text(data, "Choice")["role"] == "group"  # fieldset legend


async def test_select_options_list_items_and_table_data(page, fixture_server):
    data = (await load(page, fixture_server, "roles.html")).data
    select = by_html_id(data, "sel")
    assert select["attrs"]["options"] == [
        {"selected": True, "text": "Starter", "value": "s"},
        {"group": "Big", "text": "Team", "value": "t"},
        {"disabled": True, "group": "Big", "text": "Enterprise", "value": "Enterprise"},
    ]
    assert select["attrs"]["value"] == "s"
    multi = by_html_id(data, "multi")["attrs"]
    assert (multi["multiple"], multi["size"], multi["selected_values"]) == (True, 3, ["x"])
    lists = [e for e in elements(data) if e["role"] == "list"]
    assert (
        lists[0]["attrs"]["items"][-1] == {"text": "[2 more items]"} and len(lists[0]["attrs"]["items"]) == 6
    )
    assert lists[1]["attrs"]["ordered"] is True
    table = next(e for e in elements(data) if e["role"] == "table")
    assert table["attrs"] == {
        "caption": "Prices",
        "headers": ["Plan", "Cost"],
        "rows": [["Starter", "$5"], ["Team", "Team"]],
    }
    assert "text" not in table
