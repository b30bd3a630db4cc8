"""What changed between two pages of a session, as a small table (``Page.changes`` / ``Page.diff``).

The rows come from the same diff the server sends with ``som_answers: "changes"``
(:mod:`plasmate_nb.tools.som_changes`), over the regions both pages already hold: nothing new is
fetched or kept. Privacy as in ``Page.elements``: the roles ``Page`` names (value-bearing controls)
show no ``text`` (it would be the typed or selected value), and a changed element lists the
*names* of its changed fields (``attrs.value``), never their values.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd

from ..tools.som_changes import diff_som
from ._tables import string_column

CHANGE_COLUMNS = ("change", "id", "role", "label", "text", "region", "fields")

Json = dict[str, Any]


def changes_table(before: list[Json], after: list[Json], *, hidden_text: frozenset[str]) -> pd.DataFrame:
    """One row per element added, removed or changed between two regions lists, in that order;
    elements of a role in ``hidden_text`` show no text.

    >>> changes_table(old_page.regions, new_page.regions, hidden_text=frozenset({"text_input"}))
    """
    rows = [
        {**row, "text": None if row["role"] in hidden_text else row["text"]} for row in _rows(before, after)
    ]
    return pd.DataFrame(
        {c: string_column([row[c] for row in rows]) for c in CHANGE_COLUMNS},
        columns=CHANGE_COLUMNS,
    )


def _rows(before: list[Json], after: list[Json]) -> Iterator[Json]:
    changes = diff_som({"regions": before}, {"regions": after})
    if "regions" in changes["fields"]:  # ids not unique: the regions travel whole, compare as sets
        yield from _whole_regions_rows(before, after)
        return
    where_before = _index(before)
    where_after = _index(after)
    regions_before = {region.get("id"): region for region in before}
    for added in changes["regions"]["added"]:
        region = added["region"]
        yield from (_row("added", element, region) for element in region.get("elements") or [])
    for added in changes["added"]:
        element = added["element"]
        yield _row("added", element, where_after[element["id"]][1])
    for region_id in changes["regions"]["removed"]:
        region = regions_before[region_id]
        yield from (_row("removed", element, region) for element in region.get("elements") or [])
    for element_id in changes["removed"]:
        element, region = where_before[element_id]
        yield _row("removed", element, region)
    for changed in changes["changed"]:
        element, region = where_after[changed["id"]]
        old, _ = where_before[changed["id"]]
        yield _row("changed", element, region, _field_names(old, element, changed))


def _index(regions: list[Json]) -> dict[str, tuple[Json, Json]]:
    return {
        element["id"]: (element, region) for region in regions for element in region.get("elements") or []
    }


def _row(change: str, element: Json, region: Json, fields: str | None = None) -> Json:
    return {
        "change": change,
        "id": element.get("id"),
        "role": element.get("role"),
        "label": element.get("label"),
        "text": element.get("text"),
        "region": region.get("role"),
        "fields": fields,
    }


def _field_names(old: Json, new: Json, changed: Json) -> str:
    names: list[str] = []
    for field in [*changed["fields"], *changed.get("removed_fields", ())]:
        old_value, new_value = old.get(field), new.get(field)
        if isinstance(old_value, dict) and isinstance(new_value, dict):
            keys = sorted(set(old_value) | set(new_value))
            names += [f"{field}.{key}" for key in keys if old_value.get(key) != new_value.get(key)] or [field]
        else:
            names.append(field)
    return ", ".join(names)


def _whole_regions_rows(before: list[Json], after: list[Json]) -> Iterator[Json]:
    def keyed(regions: list[Json]) -> dict[str, tuple[Json, Json]]:
        return {
            repr(element): (element, region) for region in regions for element in region.get("elements") or []
        }

    old, new = keyed(before), keyed(after)
    yield from (_row("added", *new[key]) for key in new if key not in old)
    yield from (_row("removed", *old[key]) for key in old if key not in new)
