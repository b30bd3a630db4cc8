"""What changed between two SOMs, and its exact inverse (docs/contract.md#answers-that-carry-only-what-changed).

An agent that opened its session with ``som_answers: "changes"`` gets, after each action, only
the difference from the page model of the previous answer. That is worth doing only if it is
exact: :func:`apply_changes` of :func:`diff_som`'s result to the previous SOM gives the next SOM
with the same compact JSON, key order and list order included, because the ``som_digest`` an
answer carries is taken over those bytes. Pure: dicts in, dicts out; no browser, no I/O.

The unit of change is a region's top-level element (``shadow`` and ``children`` content travels
inside its host, as a changed field). Element ids are unique in a compiled SOM; when they are
not (or the shape is not a SOM's), the regions travel whole, which is still exact.
"""

from __future__ import annotations

import bisect
import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from operator import is_
from typing import Any

from plasmate_nb.trace.compact import escape_surrogates

Json = dict[str, Any]
Equal = Callable[[Any, Any], bool]

DIGEST_PREFIX = "sha256:"
#: Stable elements compared per step: large enough that an unchanged page costs a few C-level
#: compares, small enough that a changed chunk is cheap to compare one by one.
CHUNK = 64


class ChangesMismatch(ValueError):
    """The changes do not fit the SOM they were applied to (it is not their base)."""


def som_digest(text: str) -> str:
    """``sha256:`` + the SHA-256 hex of the SOM's canonical JSON text (UTF-8).

    A plain hash of content the same answer stream already carries in full: unkeyed, unlike the
    trace's state fingerprint (an HMAC with the session's secret key), and it cannot be turned
    into it.

    >>> som_digest(page_som_answer_text) == last_answer["som_digest"]
    True
    """
    return DIGEST_PREFIX + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def canonical_text(som: Json) -> str:
    """The compact JSON of a SOM (the compiler's own serialisation, so the digest's input): raw
    UTF-8 but for a lone surrogate, written as its lowercase ``\\uXXXX`` escape, so the text is
    always valid UTF-8.

    >>> canonical_text({"a": [1, "é", "\\ud800"]})
    '{"a":[1,"é","\\\\ud800"]}'
    """
    return escape_surrogates(json.dumps(som, separators=(",", ":"), ensure_ascii=False))


def diff_som(before: Json, after: Json, after_text: str | None = None) -> Json:
    """The changes that turn ``before`` into ``after`` (see the module docstring and the contract).

    Elements are compared by identity, then with ``==`` (C speed). The same object is the same
    JSON text (an incremental compile's parse shares every element whose text did not change), but
    ``==`` cannot see a key order or a ``1`` / ``1.0`` / ``true`` difference: when it vouched for
    two different objects, the result is checked against ``after``'s canonical text (``after_text``
    when the caller has it, as the compiler produced it) and recomputed comparing JSON bytes in the
    rare case it falls short.

    >>> changes = diff_som(old_som, new_som)
    >>> [c["id"] for c in changes["changed"]]         # e.g. the input whose value was typed
    """
    equal = _Vouching()
    changes = _diff(before, after, equal)
    if not equal.vouched:
        return changes
    expected = after_text if after_text is not None else canonical_text(after)
    if canonical_text(apply_changes(before, changes)) == expected:
        return changes
    return _diff(before, after, _same)


def apply_changes(som: Json, changes: Json) -> Json:
    """``som`` with ``changes`` applied; raises :class:`ChangesMismatch` when they are not its changes.

    Unchanged elements and regions are shared with ``som``, not copied.

    >>> canonical_text(apply_changes(old_som, diff_som(old_som, new_som))) == canonical_text(new_som)
    True
    """
    try:
        if not _has_region_changes(changes):  # also every answer whose regions travel whole
            return _apply_object_patch(som, changes, None, None)
        regions = _apply_regions(som["regions"], changes)
        return _apply_object_patch(som, changes, "regions", regions)
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise ChangesMismatch(
            "these changes do not apply to this page model: it is not the one they were made from"
        ) from exc


def apply_to_regions(regions: list[Json], changes: Json) -> list[Json]:
    """The regions list after ``changes`` (for a client that keeps only an answer's ``regions``).

    >>> page_regions = apply_to_regions(page_regions, answer["changes"])
    """
    result = apply_changes({"regions": regions}, changes).get("regions")  # its keys may drop it
    if not isinstance(result, list):
        raise ChangesMismatch("these changes leave the page model without regions")
    return result


def no_changes() -> Json:
    """What :func:`diff_som` gives for two identical SOMs (without comparing them).

    >>> no_changes()["added"]
    []
    """
    return {"fields": {}, **_no_element_changes()}


# ----- diff ------------------------------------------------------------------------------------


def _diff(before: Json, after: Json, equal: Equal) -> Json:
    regions_before, regions_after = before.get("regions"), after.get("regions")
    if not (_fine_grained(regions_before) and _fine_grained(regions_after)):
        return {**_object_patch(before, after, None), **_no_element_changes()}
    changes: Json = {**_object_patch(before, after, "regions"), **_no_element_changes()}
    _diff_regions(regions_before, regions_after, changes, equal)  # type: ignore[arg-type]
    return changes


def _no_element_changes() -> Json:
    return {
        "regions": {"added": [], "removed": [], "changed": []},
        "added": [],
        "removed": [],
        "changed": [],
    }


def _fine_grained(regions: Any) -> bool:
    """Regions whose elements can be diffed by id: the compiler's shape with unique ids."""
    if not isinstance(regions, list):
        return False
    region_ids: set[str] = set()
    element_ids: set[str] = set()
    elements_seen = 0
    for region in regions:
        if not (isinstance(region, dict) and isinstance(region.get("id"), str)):
            return False
        elements = region.get("elements")
        if not isinstance(elements, list):
            return False
        region_ids.add(region["id"])
        for element in elements:
            if not (isinstance(element, dict) and isinstance(element.get("id"), str)):
                return False
            element_ids.add(element["id"])
        elements_seen += len(elements)
    return len(region_ids) == len(regions) and len(element_ids) == elements_seen


def _dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class _Vouching:
    """``==`` that notes when it called two different objects equal (the same object needs no
    check: it serialises to the same text)."""

    def __init__(self) -> None:
        self.vouched = False

    def __call__(self, a: Any, b: Any) -> bool:
        if a is b or (
            isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and all(map(is_, a, b))
        ):
            return True
        if a == b:
            self.vouched = True
            return True
        return False


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON bytes (``==`` alone ignores key order and says ``1 == 1.0 == True``)."""
    return bool(a == b) and _dump(a) == _dump(b)


def _key_order(before: Sequence[str], fields: Json, removed: Iterable[str]) -> list[str]:
    """The key order an object patch gives without an explicit ``keys`` list."""
    gone = set(removed)
    kept = [key for key in before if key not in gone]
    present = set(before)
    return kept + [key for key in fields if key not in present]


def _object_patch(before: Json, after: Json, nested: str | None) -> Json:
    """``fields`` (new or changed values, whole), ``removed_fields`` and ``keys`` when needed.

    ``nested`` names the key whose value is diffed separately (a SOM's ``regions``, a region's
    ``elements``): it takes part in the key order only.
    """
    fields = {
        key: value
        for key, value in after.items()
        if key != nested and (key not in before or not _same(before[key], value))
    }
    patch: Json = {"fields": fields}
    removed = [key for key in before if key not in after]
    if removed:
        patch["removed_fields"] = removed
    if _key_order(list(before), fields, removed) != list(after):
        patch["keys"] = list(after)
    return patch


def _is_empty_patch(patch: Json) -> bool:
    return not patch["fields"] and len(patch) == 1


def _stable_pairs(before_ids: Sequence[str], after_ids: Sequence[str]) -> list[tuple[int, int]]:
    """Positions ``(i, j)`` of ids kept in place: the longest run in the same relative order."""
    where = {identifier: i for i, identifier in enumerate(before_ids)}
    pairs = [(where[identifier], j) for j, identifier in enumerate(after_ids) if identifier in where]
    if all(pairs[k][0] < pairs[k + 1][0] for k in range(len(pairs) - 1)):
        return pairs  # the usual case: nothing moved
    return _longest_increasing(pairs)


def _longest_increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest subsequence of ``pairs`` whose first items increase (patience sorting)."""
    tails: list[int] = []  # tails[k]: the smallest last ``i`` of an increasing run of length k + 1
    tail_at: list[int] = []  # index in ``pairs`` of that run's last pair
    previous = [-1] * len(pairs)
    for index, (i, _) in enumerate(pairs):
        length = bisect.bisect_left(tails, i)
        if length == len(tails):
            tails.append(i)
            tail_at.append(index)
        else:
            tails[length] = i
            tail_at[length] = index
        previous[index] = tail_at[length - 1] if length else -1
    run: list[tuple[int, int]] = []
    index = tail_at[-1] if tail_at else -1
    while index >= 0:
        run.append(pairs[index])
        index = previous[index]
    return run[::-1]


def _diff_regions(before: list[Json], after: list[Json], changes: Json, equal: Equal) -> None:
    stable = _stable_pairs([r["id"] for r in before], [r["id"] for r in after])
    kept_before = {i for i, _ in stable}
    kept_after = {j for _, j in stable}
    region_changes = changes["regions"]
    region_changes["removed"] = [r["id"] for i, r in enumerate(before) if i not in kept_before]
    region_changes["added"] = [{"index": j, "region": r} for j, r in enumerate(after) if j not in kept_after]
    for i, j in stable:
        patch = _object_patch(before[i], after[j], "elements")
        if not _is_empty_patch(patch):
            region_changes["changed"].append({"id": after[j]["id"], **patch})
        _diff_elements(before[i]["elements"], after[j], changes, equal)


def _diff_elements(before: list[Json], region: Json, changes: Json, equal: Equal) -> None:
    after: list[Json] = region["elements"]
    if equal(before, after):
        return  # every region the action did not touch
    stable = _stable_pairs([e["id"] for e in before], [e["id"] for e in after])
    kept_before = {i for i, _ in stable}
    kept_after = {j for _, j in stable}
    changes["removed"].extend(e["id"] for i, e in enumerate(before) if i not in kept_before)
    changes["added"].extend(
        {"region": region["id"], "index": j, "element": e} for j, e in enumerate(after) if j not in kept_after
    )
    for start in range(0, len(stable), CHUNK):
        chunk = stable[start : start + CHUNK]
        if equal([before[i] for i, _ in chunk], [after[j] for _, j in chunk]):
            continue
        for i, j in chunk:
            if not equal(before[i], after[j]):
                changes["changed"].append({"id": after[j]["id"], **_object_patch(before[i], after[j], None)})


# ----- apply -----------------------------------------------------------------------------------


def _has_region_changes(changes: Json) -> bool:
    region_changes = changes["regions"]
    return any(changes[kind] or region_changes[kind] for kind in ("added", "removed", "changed"))


def _apply_object_patch(before: Json, patch: Json, nested: str | None, nested_value: Any) -> Json:
    fields: Json = patch.get("fields", {})
    removed = patch.get("removed_fields", ())
    order = patch["keys"] if "keys" in patch else _key_order(list(before), fields, removed)
    result: Json = {}
    for key in order:
        if key == nested:
            result[key] = nested_value
        elif key in fields:
            result[key] = fields[key]
        else:
            result[key] = before[key]
    return result


def _apply_regions(before: list[Json], changes: Json) -> list[Json]:
    region_changes: Json = changes["regions"]
    gone_regions = set(region_changes["removed"])
    gone_elements = set(changes["removed"])
    region_patches = {patch["id"]: patch for patch in region_changes["changed"]}
    element_patches = {patch["id"]: patch for patch in changes["changed"]}
    additions: dict[str, list[Json]] = {}
    for added in changes["added"]:
        additions.setdefault(added["region"], []).append(added)
    found_regions = found_removed = found_changed = patched_regions = 0
    regions: list[Json] = []
    for region in before:
        if region["id"] in gone_regions:
            found_regions += 1
            continue
        patched_regions += region["id"] in region_patches
        elements: list[Json] = []
        for element in region["elements"]:
            identifier = element["id"]
            if identifier in gone_elements:
                found_removed += 1
            elif identifier in element_patches:
                found_changed += 1
                elements.append(_apply_object_patch(element, element_patches[identifier], None, None))
            else:
                elements.append(element)
        for added in additions.pop(region["id"], ()):
            _insert(elements, added["index"], added["element"])
        patch = region_patches.get(region["id"], {"fields": {}})
        regions.append(_apply_object_patch(region, patch, "elements", elements))
    for added in region_changes["added"]:
        _insert(regions, added["index"], added["region"])
    if (
        additions
        or found_regions != len(gone_regions)
        or found_removed != len(gone_elements)
        or found_changed != len(element_patches)
        or patched_regions != len(region_patches)
    ):
        raise KeyError("an id named by the changes is not in this page model")
    return regions


def _insert(items: list[Json], index: int, item: Json) -> None:
    if not 0 <= index <= len(items):
        raise IndexError(index)
    items.insert(index, item)
