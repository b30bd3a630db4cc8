"""Events of ``plasmate.trace.v1`` exports as typed pandas columns, shown whole.

Built column by column straight from the event dicts (one list comprehension per column,
one typed array per column): no per-row objects, no ``json_normalize``. Only fields the
export contains appear; fingerprints stay opaque and are compared, never shown.

Tables are ``ReadableFrame``s: plain DataFrames for every computation, but their notebook
display shows every column and whole sentences (pandas would hide the middle columns of a
wide table and cut long text with an ellipsis).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from ..trace.compact import clean_text
from ._html import STYLE, counted, table

STRING = pd.StringDtype()


def string_column(values: Sequence[str | None]) -> pd.Series:
    """A column of page text. A page's text can hold a lone surrogate, which pandas' string type
    cannot: it shows as U+FFFD.

    >>> string_column(["Save", None]).tolist()
    ['Save', <NA>]
    """
    return pd.Series([v if v is None else clean_text(v) for v in values], dtype=STRING)


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
#: What ``events()`` shows unless asked for more: what happened, where, and what was redacted.
COMPACT_COLUMNS: tuple[str, ...] = (
    "sequence", "action", "outcome", "error_class", "duration_ms", "target_role", "before_origin",
    "after_origin", "state_changed", "url_changed", "redacted_fields", "redacted_bytes",
)  # fmt: skip


class ReadableFrame(pd.DataFrame):
    """A pandas DataFrame whose notebook display shows every column and every sentence whole.

    Everything else is pandas: selecting, filtering or computing gives plain DataFrames.
    Text is left-aligned and wraps instead of being cut; numbers are right-aligned.

    >>> table = s.replay_validate_all(progress=False)
    >>> table                       # all columns, whole messages
    >>> table[table["status"] == "refused"]   # a plain DataFrame from here on
    """

    def _repr_html_(self) -> str:
        return frame_html(self)

    def __repr__(self) -> str:
        max_rows, min_rows = pd.get_option("display.max_rows"), pd.get_option("display.min_rows") or 10
        shown = self if max_rows is None or len(self) <= max_rows else pd.concat(
            [self.head(min_rows // 2), self.tail(min_rows // 2)]
        )  # fmt: skip
        return self.to_string(
            max_rows=max_rows, min_rows=min_rows, show_dimensions=len(shown) < len(self),
            formatters=_left_aligned(shown), justify="left", na_rep="",
        )  # fmt: skip


def _left_aligned(data: pd.DataFrame) -> dict[Any, Any]:
    """Formatters that left-align each text column of ``data`` (pandas right-aligns them)."""

    def pad(width: int) -> Any:
        return lambda value: ("" if pd.isna(value) else str(value)).ljust(width)

    return {
        name: pad(max([len(str(name)), *(len(str(v)) for v in column.dropna())]))
        for name, column in data.items()
        if pd.api.types.is_string_dtype(column.dtype)
    }


def frame_html(data: pd.DataFrame) -> str:
    """``data`` as an HTML table: every column, no cut text; long tables show their head and tail."""
    max_rows, min_rows = pd.get_option("display.max_rows"), pd.get_option("display.min_rows") or 10

    def values(part: pd.DataFrame) -> list[list[Any]]:
        return [[None if pd.isna(v) else v for v in row] for row in part.itertuples(index=False)]

    if max_rows is None or len(data) <= max_rows:
        rows = values(data)
    else:  # only the rows shown are read: a table of a million rows shows at once
        half = max(1, min_rows // 2)
        gap = [f"⋮ {len(data) - 2 * half} rows not shown", *[""] * (len(data.columns) - 1)]
        rows = [*values(data.iloc[:half]), gap, *values(data.iloc[-half:])]
    size = (
        f"<div style='opacity:.7'>{counted(len(data), 'row')} × {counted(len(data.columns), 'column')}</div>"
    )
    return f"<div style='{STYLE}'>{table(data.columns, rows)}{size}</div>"


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


def column_names(columns: str | Sequence[str]) -> list[str]:
    """The event columns ``columns`` asks for: ``"compact"``, ``"all"`` or a list of names."""
    if columns == "compact":
        return list(COMPACT_COLUMNS)
    if columns == "all":
        return list(EVENT_COLUMNS)
    names = [columns] if isinstance(columns, str) else list(columns)
    unknown = [name for name in names if name not in EVENT_COLUMNS]
    if unknown:
        raise ValueError(
            f"unknown event column(s) {unknown}: use 'compact', 'all' or names from {list(EVENT_COLUMNS)}"
        )
    return names


def frame(
    columns: dict[str, list[Any]],
    leading: dict[str, tuple[list[Any], Any]] | None = None,
    names: Sequence[str] = tuple(EVENT_COLUMNS),
) -> ReadableFrame:
    """A table of the typed event columns ``names``; ``leading`` adds columns (values, dtype) in front."""
    arrays = {name: pd.array(values, dtype=dtype) for name, (values, dtype) in (leading or {}).items()}
    arrays.update({name: pd.array(columns[name], dtype=EVENT_COLUMNS[name]) for name in names})
    return ReadableFrame(arrays, copy=False)


def events_frame(events: Sequence[dict[str, Any]], columns: str | Sequence[str] = "all") -> ReadableFrame:
    return frame(event_columns(events), names=column_names(columns))
