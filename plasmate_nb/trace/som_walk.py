"""Pure walks over SOM dicts: every element, and lookup by id (docs/contract.md#shape-and-serialisation).

Elements live in ``som["regions"][i]["elements"]`` and nest through ``children`` and
``shadow.elements``. The walk is depth-first in document order (an element, then its
children, then its shadow elements), iterative so a deep tree cannot hit the recursion
limit, and tolerant of malformed input: anything that is not the expected dict/list is
skipped.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


def iter_elements(som: Any) -> Iterator[dict[str, Any]]:
    """Every element of ``som`` in document order, nested ones included."""
    if not isinstance(som, Mapping):
        return
    regions = som.get("regions")
    if not isinstance(regions, list):
        return
    stack: list[Any] = []
    for region in reversed(regions):
        if isinstance(region, Mapping):
            _push(stack, region.get("elements"))
    while stack:
        element = stack.pop()
        if not isinstance(element, dict):
            continue
        yield element
        shadow = element.get("shadow")
        if isinstance(shadow, Mapping):
            _push(stack, shadow.get("elements"))
        _push(stack, element.get("children"))


def find_element(som: Any, element_id: Any) -> dict[str, Any] | None:
    """The first element whose ``id`` is ``element_id``; ``None`` if absent or not a string id."""
    if not isinstance(element_id, str):
        return None
    for element in iter_elements(som):
        if element.get("id") == element_id:
            return element
    return None


def _push(stack: list[Any], items: Any) -> None:
    # Pushed in reverse so that popping yields them in document order.
    if isinstance(items, list):
        stack.extend(reversed(items))
