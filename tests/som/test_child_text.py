"""attrs taken from a first visible child: fieldset legend, details summary (docs/contract.md#attributes)."""

from __future__ import annotations

from tests.som._helpers import by_html_id, load


async def test_legend_and_summary_come_from_the_first_visible_child(page, fixture_server):
    data = (await load(page, fixture_server, "child-text.html")).data
    fieldset = by_html_id(data, "fs")
    assert fieldset["role"] == "group" and fieldset["attrs"]["legend"] == "Shipping address"
    assert fieldset["label"] == "Shipping address"
    assert by_html_id(data, "more")["attrs"] == {"open": False, "summary": "More options"}
    assert "summary" not in by_html_id(data, "bare")["attrs"]
