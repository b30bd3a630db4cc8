"""``compare(a, b)``: where did two runs of an agent go different ways?

Two traces of the same task are aligned step by step on what is comparable across sessions: the
action and its target's role (the alignment), then origins, outcome and error class, whether the
step changed the page or its URL, and the sanitised parameters (byte lengths, scroll settings,
counts). Fingerprints are keyed per session, so they are never compared between two runs; the
"changed the page" flags are each computed inside their own run. Durations are shown side by side,
never counted as differences.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from plasmate_nb.notebook._html import STYLE, box, cell
from plasmate_nb.notebook._tables import EVENT_COLUMNS, ReadableFrame, event_columns
from plasmate_nb.notebook.export import FinalTraceOmitted, TraceExport, load_trace

#: What aligns two steps: the same action on an element of the same role.
ALIGNED_ON = ("action", "target_role")
#: What else two aligned steps must share to be the same step.
COMPARED = (
    "before_origin",
    "after_origin",
    "outcome",
    "error_class",
    "state_changed",
    "url_changed",
    "redacted_bytes",
    "append",
    "direction",
    "pixels",
    "targeted",
    "cookie_count",
    "filter_present",
)
_SHOWN = ("sequence", *ALIGNED_ON, *COMPARED, "duration_ms")
SAME, CHANGED, ONLY_A, ONLY_B = "same", "changed", "only in a", "only in b"
_HIGHLIGHT = "background:#fff8c5"
_MISSING = "background:#ffebe9"


@dataclass(frozen=True)
class Divergence:
    """The first step where two runs differ: aligned ``step`` index, each run's ``sequence``, ``reason``.

    >>> cmp.first_divergence.reason
    'outcome: success → error; error_class: None → not_found'
    """

    step: int
    sequence_a: int | None
    sequence_b: int | None
    status: str
    fields: tuple[str, ...]
    reason: str


class Comparison:
    """Two runs aligned step by step: ``steps`` (every aligned step), ``differences``, ``first_divergence``.

    ``steps`` has one row per aligned step with each run's value side by side (``action_a``,
    ``action_b``, …, ``duration_ms_a``, ``duration_ms_b``), a ``status`` (``same``, ``changed``,
    ``only in a``, ``only in b``) and the names of the fields that differ. In a notebook it shows
    as two columns with the differences highlighted. ``steps`` and ``differences`` are
    ``ReadableFrame``s: shown on their own, every column and whole origins, where pandas would
    hide the middle columns and cut text at 50 characters; computing on them gives plain DataFrames.

    >>> cmp = pnb.compare("good.json", "bad.json")
    >>> cmp.first_divergence
    >>> cmp.differences[["step", "status", "differences", "outcome_a", "outcome_b"]]
    """

    def __init__(self, steps: pd.DataFrame, labels: tuple[str, str], notes: tuple[str, ...]) -> None:
        self.steps = ReadableFrame(steps)
        self.labels = labels
        self.notes = notes

    @property
    def differences(self) -> ReadableFrame:
        """Only the steps that differ (``status`` other than ``same``), a ``ReadableFrame`` like ``steps``.

        >>> cmp.differences
        """
        return ReadableFrame(self.steps[self.steps["status"] != SAME].reset_index(drop=True))

    @property
    def identical(self) -> bool:
        """True when every step aligns and agrees.

        >>> assert pnb.compare(export, export).identical
        """
        return bool((self.steps["status"] == SAME).all())

    @property
    def first_divergence(self) -> Divergence | None:
        """The first step that differs, with the reason in words; ``None`` when the runs agree.

        >>> cmp.first_divergence.step, cmp.first_divergence.reason
        """
        differing = self.differences
        if differing.empty:
            return None
        row = differing.iloc[0]
        fields = tuple(row["differences"].split(",")) if row["differences"] else ()
        return Divergence(
            step=int(row["step"]),
            sequence_a=None if pd.isna(row["sequence_a"]) else int(row["sequence_a"]),
            sequence_b=None if pd.isna(row["sequence_b"]) else int(row["sequence_b"]),
            status=str(row["status"]),
            fields=fields,
            reason=_reason(row, self.labels),
        )

    def _headline(self) -> str:
        a, b = self.labels
        first = self.first_divergence
        if first is None:
            return f"{a} and {b} agree on all {len(self.steps)} steps"
        return f"{len(self.differences)} of {len(self.steps)} steps differ; first at step {first.step}: {first.reason}"

    def __repr__(self) -> str:
        return f"Comparison({self._headline()})"

    def _repr_html_(self) -> str:
        a, b = self.labels
        notes = "".join(f"<div><i>{cell(note)}</i></div>" for note in self.notes)
        head = f"<div>{cell(self._headline())}</div>{notes}"
        fields = (
            "sequence",
            "action",
            "target_role",
            "before_origin",
            "after_origin",
            "outcome",
            "error_class",
        )
        header = (
            "<tr><th>step</th>"
            + f"<th colspan='{len(fields) + 1}' style='text-align:left'>{cell(a)}</th>"
            + f"<th colspan='{len(fields) + 1}' style='text-align:left'>{cell(b)}</th><th>differs in</th></tr>"
            + "<tr><th></th>"
            + ("".join(f"<th style='text-align:left'>{cell(f)}</th>" for f in (*fields, "duration_ms")) * 2)
            + "<th></th></tr>"
        )
        body = []
        for row in self.steps.to_dict(orient="records"):
            differing = set(row["differences"].split(",")) if row["differences"] else set()
            cells = [f"<td>{row['step']}</td>"]
            for side, missing in (("a", ONLY_B), ("b", ONLY_A)):
                for name in (*fields, "duration_ms"):
                    style = _MISSING if row["status"] == missing else _HIGHLIGHT if name in differing else ""
                    value = row[f"{name}_{side}"]
                    cells.append(f"<td style='{style}'>{'' if pd.isna(value) else cell(value)}</td>")
            cells.append(f"<td>{cell(row['differences'])}</td>")
            body.append("<tr>" + "".join(cells) + "</tr>")
        grid = f"<table style='{STYLE}'><thead>{header}</thead><tbody>{''.join(body)}</tbody></table>"
        return box(f"Comparison of {a} and {b}", head + grid)


def compare(a: Any, b: Any, *, labels: tuple[str, str] = ("a", "b")) -> Comparison:
    """Align two runs' retained events and show where they differ (never comparing fingerprints).

    ``a`` and ``b``: anything ``load_trace`` reads (a ``TraceExport``, a payload dict, JSON text, a
    file path, a ``close_page`` answer). ``labels`` name the runs in the table and the HTML view.

    >>> cmp = pnb.compare(good_run.export(), failed_run.export(), labels=("good", "failed"))
    >>> cmp.first_divergence
    >>> cmp                                  # in a notebook: two columns, differences highlighted
    """
    runs = [_export(run, label) for run, label in zip((a, b), labels, strict=True)]
    columns = [event_columns(run.payload["events"]) for run in runs]
    pairs = _align([_keys(c) for c in columns])
    rows = [_row(step, i, j, columns) for step, (i, j) in enumerate(pairs)]
    frame = _frame(rows)
    notes = tuple(note for run, label in zip(runs, labels, strict=True) for note in _notes(run, label))
    return Comparison(frame, labels, notes)


def _export(run: Any, label: str) -> TraceExport:
    loaded = run if isinstance(run, TraceExport) else load_trace(run)
    if isinstance(loaded, FinalTraceOmitted):
        raise ValueError(
            f"run {label} is an omitted final trace (it has no events); compare an export taken with "
            "s.trace.export() before closing the session"
        )
    return loaded


def _keys(columns: dict[str, list[Any]]) -> list[tuple[Any, ...]]:
    return list(zip(*(columns[name] for name in ALIGNED_ON), strict=True))


def _align(keys: list[list[tuple[Any, ...]]]) -> list[tuple[int | None, int | None]]:
    """A longest common subsequence of the two key lists; the steps between two matches are paired
    in order (a replaced step) and the rest are steps only one run took."""
    left, right = keys
    n, m = len(left), len(right)
    # lengths[i][j]: LCS length of left[i:] and right[j:].
    lengths = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            lengths[i][j] = (
                lengths[i + 1][j + 1] + 1
                if left[i] == right[j]
                else max(lengths[i + 1][j], lengths[i][j + 1])
            )
    pairs: list[tuple[int | None, int | None]] = []
    pending_a: list[int] = []
    pending_b: list[int] = []

    def flush() -> None:
        for offset in range(max(len(pending_a), len(pending_b))):
            pairs.append(
                (
                    pending_a[offset] if offset < len(pending_a) else None,
                    pending_b[offset] if offset < len(pending_b) else None,
                )
            )
        pending_a.clear()
        pending_b.clear()

    i = j = 0
    while i < n or j < m:
        if i < n and j < m and left[i] == right[j]:
            flush()
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif j >= m or (i < n and lengths[i + 1][j] >= lengths[i][j + 1]):
            pending_a.append(i)
            i += 1
        else:
            pending_b.append(j)
            j += 1
    flush()
    return pairs


def _row(step: int, i: int | None, j: int | None, columns: list[dict[str, list[Any]]]) -> dict[str, Any]:
    row: dict[str, Any] = {"step": step}
    for side, index, cols in (("a", i, columns[0]), ("b", j, columns[1])):
        for name in _SHOWN:
            row[f"{name}_{side}"] = None if index is None else cols[name][index]
    differing: list[str] = []
    if i is None:
        row["status"] = ONLY_B
    elif j is None:
        row["status"] = ONLY_A
    else:
        differing = [name for name in (*ALIGNED_ON, *COMPARED) if row[f"{name}_a"] != row[f"{name}_b"]]
        row["status"] = CHANGED if differing else SAME
    row["differences"] = ",".join(differing)
    return row


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    arrays: dict[str, Any] = {
        "step": pd.array([r["step"] for r in rows], dtype="Int64"),
        "status": pd.array([r["status"] for r in rows], dtype=pd.StringDtype()),
        "differences": pd.array([r["differences"] for r in rows], dtype=pd.StringDtype()),
    }
    for name in _SHOWN:
        for side in ("a", "b"):
            arrays[f"{name}_{side}"] = pd.array(
                [r[f"{name}_{side}"] for r in rows], dtype=EVENT_COLUMNS[name]
            )
    frame = pd.DataFrame(arrays, copy=False)
    frame["duration_delta_ms"] = frame["duration_ms_b"] - frame["duration_ms_a"]
    return frame


def _reason(row: pd.Series, labels: tuple[str, str]) -> str:
    a, b = labels
    status = row["status"]
    if status in (ONLY_A, ONLY_B):
        side, here, other = ("a", a, b) if status == ONLY_A else ("b", b, a)
        role = row[f"target_role_{side}"]
        on = "" if pd.isna(role) else f" on a {role}"
        outcome = row[f"outcome_{side}"]
        return f"{here} took a step {other} did not: {row[f'action_{side}']}{on} ({outcome})"
    parts = []
    for name in row["differences"].split(","):
        va, vb = row[f"{name}_a"], row[f"{name}_b"]
        parts.append(f"{name}: {None if pd.isna(va) else va} → {None if pd.isna(vb) else vb}")
    return "; ".join(parts)


def _notes(run: TraceExport, label: str) -> list[str]:
    """Why an alignment may start mid-run: events that the trace no longer holds."""
    notes = []
    lost = {name: run.payload[name] for name in ("evicted_events", "oversized_events", "cleared_events")}
    if any(lost.values()):
        counts = ", ".join(f"{n} {name.split('_')[0]}" for name, n in lost.items() if n)
        notes.append(f"{label} no longer holds every step ({counts}); only retained events are compared")
    return notes
