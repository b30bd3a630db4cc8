"""D8: a control wrapped by a <label> without `for` takes the label's text even without an id
(plasmate_nb/som/DEVIATIONS.md); every other label rule stays the reference's."""

from __future__ import annotations

from tests.som._helpers import elements, expected_id, load


def _by_name(data: dict, name: str) -> dict:
    matches = [e for e in elements(data) if e.get("attrs", {}).get("name") == name]
    assert len(matches) == 1, f"expected one element named {name!r}"
    return matches[0]


async def test_wrapped_controls_without_id_take_the_label_text(page, fixture_server):
    data = (await load(page, fixture_server, "wrapped-labels.html")).data
    remember = _by_name(data, "remember")
    assert (remember["role"], remember["label"]) == ("checkbox", "Remember me")
    radios = [e for e in elements(data) if e["role"] == "radio"]
    assert [(r["label"], r["attrs"].get("checked", False)) for r in radios] == [
        ("Basic", False),
        ("Pro (best)", True),
    ]
    assert _by_name(data, "blank-id")["label"] == "Blank id"
    assert _by_name(data, "size")["label"] == "Size"
    bare = [e for e in elements(data) if e["role"] == "text_input" and e.get("label") == "Nickname"]
    assert len(bare) == 1 and "name" not in bare[0].get("attrs", {})  # a control with no attributes at all


async def test_wrapped_label_names_the_id(page, fixture_server):
    som = await load(page, fixture_server, "wrapped-labels.html")
    remember = _by_name(som.data, "remember")
    # the id hashes the label like any labelled control; its path is body/main/form/label/input
    assert remember["id"] == expected_id(fixture_server, "checkbox", "Remember me", "0/1/3/1/0")
    handle = await som.resolve(remember["id"])
    assert handle is not None and await handle.get_attribute("name") == "remember"


async def test_other_label_rules_stay_the_references(page, fixture_server):
    data = (await load(page, fixture_server, "wrapped-labels.html")).data
    assert _by_name(data, "withid")["label"] == "Has an id"  # by id, as before
    # the reference labels the first wrapped control with an id; the one before it gets D8
    assert _by_name(data, "second")["label"] == "Two controls"
    assert _by_name(data, "first")["label"] == "Two controls"
    # a label with `for` names its target only, never the control it wraps
    assert _by_name(data, "other")["label"] == "Pointing elsewhere"
    assert "label" not in _by_name(data, "inner")
    assert _by_name(data, "explicit")["label"] == "Explicit name"  # aria-label comes first
    same = next(e for e in elements(data) if e["role"] == "button" and e.get("text") == "Same")
    assert "label" not in same  # a label equal to the text is not repeated
    assert all(e.get("attrs", {}).get("name") != "hidden-label" for e in elements(data))
