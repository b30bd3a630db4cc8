"""Pure helpers over SOM dicts (no browser): roles, actions and display views."""

from __future__ import annotations

from typing import Any

from plasmate_nb.trace.som_walk import find_element, iter_elements

__all__ = [
    "ACTIONS_BY_ROLE",
    "INTERACTIVE_ROLES",
    "elements_table_rows",
    "find_element",
    "iter_elements",
    "page_view",
]

# docs/contract.md#elements-roles-and-actions: the default actions of each interactive role; other roles have none.
ACTIONS_BY_ROLE: dict[str, tuple[str, ...]] = {
    "link": ("click",),
    "button": ("click",),
    "text_input": ("type", "clear"),
    "textarea": ("type", "clear"),
    "select": ("select",),
    "checkbox": ("toggle",),
    "radio": ("select",),
    "details": ("toggle",),
}
INTERACTIVE_ROLES: frozenset[str] = frozenset(ACTIONS_BY_ROLE)


def page_view(som: dict[str, Any], url: str | None = None) -> dict[str, Any]:
    """What tool responses carry of a SOM: ``{"regions", "title", "url"}``.

    ``url`` overrides the SOM's own url (the engine may know the final URL better).
    """
    return {
        "regions": som.get("regions", []),
        "title": som.get("title", ""),
        "url": url or som.get("url", ""),
    }


def elements_table_rows(som: dict[str, Any]) -> list[dict[str, Any]]:
    """One flat row per element (shadow content included), for tables in notebooks."""
    rows = []
    for region in som.get("regions", []):
        if not isinstance(region, dict):
            continue
        for element in iter_elements({"regions": [region]}):
            rows.append(
                {
                    "id": element.get("id", ""),
                    "role": element.get("role", ""),
                    "label": element.get("label", ""),
                    "text": element.get("text", ""),
                    "actions": ",".join(element.get("actions", [])),
                    "region": region.get("id", ""),
                }
            )
    return rows
