"""``fetch_page``'s ``selector`` and ``budget`` over a SOM dict (docs/contract.md#selectors).

A selector names a region role, an element role, ``interactive``, ``action:<name>`` or
``#html-id``. Matching elements keep their region; regions left empty are dropped. An
unrecognised selector or one that matches nothing returns the full SOM, as the reference does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plasmate_nb.trace.compact import compact_json, utf8_len

REGION_ALIASES = {"nav": "navigation"}
ELEMENT_ALIASES = {"textbox": "text_input", "input": "text_input", "img": "image"}
REGION_ROLES = frozenset({"navigation", "main", "aside", "header", "footer", "form", "dialog", "content"})
BYTES_PER_TOKEN = 4


def select_som(som: dict[str, Any], selector: str) -> dict[str, Any]:
    key = selector.strip().lower().replace("-", "_")
    key = REGION_ALIASES.get(key, key)
    if key in REGION_ROLES:
        regions = [region for region in som.get("regions", []) if region.get("role") == key]
    else:
        matches = _element_predicate(selector.strip())
        regions = []
        for region in som.get("regions", []):
            if selector.startswith("#") and region.get("id") == selector[1:]:
                regions.append(region)
                continue
            kept = [element for element in region.get("elements", []) if _keep(element, matches)]
            if kept:
                regions.append({**region, "elements": kept})
    return {**som, "regions": regions} if regions else som


def budget_payload(som: dict[str, Any], budget: int | None) -> Any:
    """The SOM, or the reference's truncation marker when it exceeds ``budget`` tokens."""
    if budget is None:
        return som
    size = utf8_len(compact_json(som))
    if size <= budget * BYTES_PER_TOKEN:
        return som
    return {"truncated": True, "original_bytes": size, "message": f"SOM exceeded budget of {budget} tokens"}


def _element_predicate(selector: str) -> Callable[[dict[str, Any]], bool]:
    if selector.startswith("#"):
        html_id = selector[1:]
        return lambda element: element.get("html_id") == html_id
    lowered = selector.lower()
    if lowered == "interactive":
        return lambda element: bool(element.get("actions"))
    if lowered.startswith("action:"):
        action = lowered.removeprefix("action:")
        return lambda element: action in element.get("actions", [])
    role = lowered.replace("-", "_")
    role = ELEMENT_ALIASES.get(role, role)
    return lambda element: element.get("role") == role


def _keep(element: dict[str, Any], matches: Callable[[dict[str, Any]], bool]) -> bool:
    """An element is kept if it matches, or if it contains (as children or shadow) one that does."""
    if matches(element):
        return True
    nested = list(element.get("children", [])) + list(element.get("shadow", {}).get("elements", []))
    return any(_keep(child, matches) for child in nested)
