"""``parse_som`` (plasmate_nb/som/parse.py): the parse of a SOM text equals ``json.loads`` of
it, key order included, whether or not it reuses an earlier parse; the elements it reuses are
exactly those whose text lies wholly in the kept head or tail; text of another shape falls
back to ``json.loads``."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plasmate_nb.som.compiler import META_MARK
from plasmate_nb.som.parse import ParsedSom, Unchanged, parse_som
from tests.som._helpers import common_ends

TEXTS = st.sampled_from(["", "Save", 'say "hi"', "a\\b", "é ü", "😀 ok", "line\nbreak", "\u2028", "x" * 40])
LEAF = st.fixed_dictionaries(
    {
        "id": st.sampled_from(["e_1", "e_2", "e_3", "e_4_2"]),
        "role": st.sampled_from(["button", "link", "heading"]),
    },
    optional={
        "text": TEXTS,
        "attrs": st.dictionaries(st.sampled_from(["value", "level", "href"]), TEXTS | st.integers()),
    },
)
ELEMENT = st.recursive(
    LEAF,
    lambda inner: st.tuples(LEAF, st.lists(inner, max_size=3)).map(lambda t: {**t[0], "children": t[1]}),
    max_leaves=6,
)
REGION = st.fixed_dictionaries(
    {
        "id": st.sampled_from(["r_main", "r_nav", "r_content"]),
        "role": st.sampled_from(["main", "navigation", "content"]),
    },
    optional={"label": TEXTS},
).flatmap(lambda r: st.lists(ELEMENT, max_size=8).map(lambda els: {**r, "elements": els}))


@st.composite
def soms(draw: st.DrawFn) -> dict:
    som = {"som_version": "0.1", "url": "http://127.0.0.1/x", "title": draw(TEXTS), "lang": "en"}
    som["regions"] = draw(st.lists(REGION, max_size=4))
    som["meta"] = {"html_bytes": draw(st.integers(0, 10**6)), "som_bytes": draw(st.integers(0, 10**6))}
    if draw(st.booleans()):
        som["structured_data"] = {"json_ld": [{"@type": draw(TEXTS)}]}
    return som


@st.composite
def edits(draw: st.DrawFn, som: dict) -> dict:
    """``som`` with one change an action could make: an element changed, added or removed, a
    region added or removed, the title or the meta counts."""
    new = json.loads(json.dumps(som))
    regions = new["regions"]
    kind = draw(st.sampled_from(["change", "add", "remove", "region+", "region-", "title", "meta"]))
    if kind in ("change", "remove") and any(r["elements"] for r in regions):
        region = draw(st.sampled_from([r for r in regions if r["elements"]]))
        at = draw(st.integers(0, len(region["elements"]) - 1))
        if kind == "remove":
            del region["elements"][at]
        else:
            region["elements"][at] = draw(ELEMENT)
    elif kind == "add" and regions:
        region = draw(st.sampled_from(regions))
        region["elements"].insert(draw(st.integers(0, len(region["elements"]))), draw(ELEMENT))
    elif kind == "region+":
        regions.insert(draw(st.integers(0, len(regions))), draw(REGION))
    elif kind == "region-" and regions:
        del regions[draw(st.integers(0, len(regions) - 1))]
    elif kind == "title":
        new["title"] = draw(TEXTS)
    new["meta"]["som_bytes"] = draw(st.integers(0, 10**6))
    return new


def dump(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def kept(old: str, new: str) -> tuple[int, int, int, int]:
    """The compiler's delta in characters: common head and tail of the part before the meta
    block (as compiler.py turns the in-page delta into ``Unchanged``), and both cuts."""
    old_cut, new_cut = old.find(META_MARK), new.find(META_MARK)
    head, tail = common_ends(old[:old_cut], new[:new_cut])
    return head, tail, old_cut, new_cut


def assert_is_the_parse(parsed: ParsedSom, text: str) -> None:
    assert parsed.data == json.loads(text)
    assert dump(parsed.data) == text  # key order too
    # Indexed, not handed to json.loads: every region's top-level elements, in text order.
    assert parsed.values == [e for region in parsed.data["regions"] for e in region["elements"]]
    assert parsed.starts == sorted(parsed.starts)
    counts = [len(region["elements"]) for region in parsed.data["regions"]]
    assert parsed.list_ends == [sum(counts[: k + 1]) for k in range(len(counts))]
    for start, end, value in zip(parsed.starts, parsed.ends, parsed.values, strict=True):
        assert json.loads(text[start:end]) == value


@settings(max_examples=300)
@given(data=st.data())
def test_a_reusing_parse_is_the_parse_and_reuses_exactly_the_kept_elements(data):
    before = data.draw(soms())
    after = data.draw(edits(before))
    old_text, new_text = dump(before), dump(after)
    old = parse_som(old_text)
    assert_is_the_parse(old, old_text)
    head, tail, old_cut, new_cut = kept(old_text, new_text)
    new = parse_som(new_text, Unchanged(old, head, old_cut - tail, new_cut - old_cut))
    assert_is_the_parse(new, new_text)
    reused = {id(value) for value in old.values}
    for start, end, value in zip(new.starts, new.ends, new.values, strict=True):
        in_head = end <= head
        in_tail = start - (new_cut - old_cut) >= old_cut - tail
        if in_head or in_tail:
            assert id(value) in reused, (start, end)


@pytest.mark.parametrize(
    "text",
    ['{ "regions": [] }', "[1, 2]", '{"regions":[{"elements":[1,2]}]}', '{"regions":{"a":1}}', "{}"],
)
def test_other_shapes_are_parsed_by_json_loads(text):
    parsed = parse_som(text)
    expected = json.loads(text)
    assert parsed.data == (expected if isinstance(expected, dict) else {})


def test_text_that_is_not_json_still_raises():
    with pytest.raises(json.JSONDecodeError):
        parse_som('{"regions":[{"elements":[{"id":')
