"""Events of ``plasmate.trace.v1`` exports as typed pandas columns.

Built column by column straight from the event dicts (one list comprehension per column,
one typed array per column): no per-row objects, no ``json_normalize``. Only fields the
export contains appear; fingerprints stay opaque and are compared, never shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

STRING = pd.StringDtype()

#: Column name -> pandas dtype, in display order.
EVENT_COLUMNS: dict[str, Any] = {
    "sequence": "Int64",
    "action": STRING,
    "outcome": STRING,
    "error_class": STRING,
    "duration_ms": "Int64",
    "target_role": STRING,
    "target_id": STRING,
    "before_origin": STRING,
    "after_origin": STRING,
    "before_has_page": "boolean",
    "after_has_page": "boolean",
    "state_changed": "boolean",
    "url_changed": "boolean",
    "redacted_fields": STRING,
    "redacted_bytes": "Int64",
    "append": "boolean",
    "direction": STRING,
    "pixels": "Int64",
    "targeted": "boolean",
    "cookie_count": "Int64",
    "filter_present": "boolean",
}


def event_columns(events: Sequence[dict[str, Any]]) -> dict[str, list[Any]]:
    """Plain Python columns of ``events`` (raises KeyError/TypeError on a malformed event)."""
    before = [e["before"] for e in events]
    after = [e["after"] for e in events]
    targets = [e.get("target") for e in events]
    params = [e["parameters"] for e in events]
    values = [p.get("value") for p in params]
    redacted = [e["redaction"]["redacted_fields"] for e in events]
    return {
        "sequence": [e["sequence"] for e in events],
        "action": [e["action"] for e in events],
        "outcome": [e["outcome"] for e in events],
        "error_class": [e.get("error_class") for e in events],
        "duration_ms": [e["duration_ms"] for e in events],
        "target_role": [t["role"] if t else None for t in targets],
        "target_id": [t["target_id"] if t else None for t in targets],
        "before_origin": [b["origin"] for b in before],
        "after_origin": [a["origin"] for a in after],
        "before_has_page": [b["has_page"] for b in before],
        "after_has_page": [a["has_page"] for a in after],
        "state_changed": [b["fingerprint"] != a["fingerprint"] for b, a in zip(before, after, strict=True)],
        "url_changed": [
            b["url_fingerprint"] != a["url_fingerprint"] for b, a in zip(before, after, strict=True)
        ],
        "redacted_fields": [",".join(r) if r else None for r in redacted],
        "redacted_bytes": [v["byte_length"] if v else None for v in values],
        "append": [p.get("append") for p in params],
        "direction": [p.get("direction") for p in params],
        "pixels": [p.get("pixels") for p in params],
        "targeted": [p.get("targeted") for p in params],
        "cookie_count": [p.get("cookie_count") for p in params],
        "filter_present": [p.get("filter_present") for p in params],
    }


def frame(
    columns: dict[str, list[Any]], leading: dict[str, tuple[list[Any], Any]] | None = None
) -> pd.DataFrame:
    """A DataFrame of typed columns; ``leading`` adds columns (values, dtype) in front."""
    arrays = {name: pd.array(values, dtype=dtype) for name, (values, dtype) in (leading or {}).items()}
    arrays.update({name: pd.array(columns[name], dtype=dtype) for name, dtype in EVENT_COLUMNS.items()})
    return pd.DataFrame(arrays, copy=False)


def events_frame(events: Sequence[dict[str, Any]]) -> pd.DataFrame:
    return frame(event_columns(events))
