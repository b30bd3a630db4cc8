"""iter_elements / find_element: recursive, document order, tolerant of malformed SOMs."""

from __future__ import annotations

from plasmate_nb.trace.som_walk import find_element, iter_elements
from tests.trace.trace_testkit import element


def tree() -> dict:
    return {
        "regions": [
            {
                "id": "r_main",
                "elements": [
                    element(
                        "a",
                        "section",
                        children=[element("a1", "link"), element("a2", "link")],
                        shadow={"mode": "open", "elements": [element("as", "button")]},
                    ),
                    element("b", "button"),
                ],
            },
            {"id": "r_footer", "elements": [element("c", "link")]},
        ]
    }


def test_iter_elements_walks_children_then_shadow_in_document_order() -> None:
    assert [e["id"] for e in iter_elements(tree())] == ["a", "a1", "a2", "as", "b", "c"]


def test_iter_elements_tolerates_malformed_input() -> None:
    assert list(iter_elements(None)) == []
    assert list(iter_elements({"regions": "x"})) == []
    broken = {"regions": [None, {"elements": [1, "x", {"id": "ok", "children": "bad", "shadow": [1]}]}]}
    assert [e["id"] for e in iter_elements(broken)] == ["ok"]


def test_iter_elements_survives_very_deep_nesting() -> None:
    node = element("leaf", "link")
    for depth in range(5000):
        node = element(f"n{depth}", "group", children=[node])
    assert sum(1 for _ in iter_elements({"regions": [{"elements": [node]}]})) == 5001


def test_find_element_returns_the_first_match() -> None:
    som = tree()
    som["regions"][1]["elements"].append(element("a1", "button"))
    assert find_element(som, "a1")["role"] == "link"  # type: ignore[index]
    assert find_element(som, "as")["role"] == "button"  # type: ignore[index]


def test_find_element_without_match_or_string_id_is_none() -> None:
    assert find_element(tree(), "zzz") is None
    assert find_element(tree(), 1) is None
    assert find_element(None, "a") is None
