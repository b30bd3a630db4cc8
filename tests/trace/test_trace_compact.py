"""``not_text_at``: the walk that finds a string a JSON writer cannot encode (a lone UTF-16
surrogate), used by the MCP client before it sends."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from plasmate_nb.trace.compact import is_text, not_text_at

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=6)
LONE = st.sampled_from(["\ud800", "a\udfffb", "\udc00\ud800"])  # halves of pairs, never a pair
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | TEXT,
    lambda children: (
        st.lists(children, max_size=4)
        | st.tuples(children, children)
        | st.dictionaries(TEXT, children, max_size=4)
    ),
    max_leaves=12,
)


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def _bad(value: Any) -> bool:
    """What ``not_text_at`` may point at: a string that is not text, or an object with such a key."""
    if isinstance(value, str):
        return not is_text(value)
    return isinstance(value, dict) and any(isinstance(k, str) and not is_text(k) for k in value)


def _plant(value: Any, lone: str, where: int, as_key: bool) -> Any:
    """``value`` with one string (or one key) replaced by ``lone``: the ``where``-th in document order."""
    count = [0]

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            count[0] += 1
            return lone if count[0] - 1 == where else item
        if isinstance(item, dict):
            out = {}
            for key, inner in item.items():
                count[0] += 1
                name = lone if as_key and count[0] - 1 == where and lone not in item else key
                out[name] = walk(inner)
            return out
        if isinstance(item, list | tuple):
            return type(item)(walk(inner) for inner in item)
        return item

    return walk(value)


@given(JSON)
def test_text_everywhere_gives_none(value: Any) -> None:
    assert not_text_at(value) is None


@given(JSON, LONE, st.integers(0, 30), st.booleans())
def test_a_planted_lone_surrogate_is_found_where_it_is(
    value: Any, lone: str, where: int, as_key: bool
) -> None:
    planted = _plant(value, lone, where, as_key)
    path = not_text_at(planted)
    if planted == value:  # fewer strings than ``where``: nothing was planted
        assert path is None
    else:
        assert path is not None and _bad(_at(planted, path))


def test_the_first_in_document_order_and_the_object_for_a_key() -> None:
    assert not_text_at({"a": ["ok", "\ud800"], "b": "\udc00"}) == ("a", 1)
    assert not_text_at({"a": {"x\ud800": 1}}) == ("a",)
    assert not_text_at({"a": "\ud800", "b\ud800": 1}) == ("a",)  # a value before a later key
    assert not_text_at("\ud800") == ()
    assert not_text_at([1, None, True, 2.5]) is None


def test_any_depth() -> None:
    deep: Any = "\ud800"
    for _ in range(100_000):
        deep = [deep]
    assert not_text_at(deep) == (0,) * 100_000
