"""The fleet summary computed the way an analyst would without ``pnb.fleet``: ``json.load`` every
file, ``pd.json_normalize`` the events, pandas ``groupby``.

It is the oracle of tests/analysis/test_fleet.py and the baseline of benchmarks/bench_fleet.py,
written independently of plasmate_nb/analysis/fleet_summary.py (no SQL, no shared helpers beyond the
contract's constants). Files are read in chunks so that the baseline's memory stays bounded
by the kept columns, not by every parsed document at once.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from plasmate_nb.trace.constants import COARSE_ACTIONS, MAX_BYTES, MAX_EVENTS, UNSUPPORTED_REPLAY_ACTIONS

NEAR = 0.9
NO_ORIGIN = "(no origin)"
CHUNK = 2000
KEPT = ["file_index", "action", "outcome", "error_class", "duration_ms", "before.origin", "after.origin"]
COUNTERS = ["retained_events", "retained_bytes", "next_sequence", "evicted_events", "oversized_events",
            "cleared_events"]  # fmt: skip


def _document(path: Path) -> dict[str, Any] | None:
    """The export in ``path``; ``None`` for an omitted marker; raises for anything unreadable."""
    document = json.loads(path.read_text(encoding="utf-8"))
    if "final_trace" in document and "closed" in document:
        document = document["final_trace"]
    if document.get("omitted") is True:
        return None
    if not isinstance(document.get("events"), list) or "trace_id" not in document:
        raise ValueError("not an export")
    return document


def load(files: Sequence[Path]) -> tuple[pd.DataFrame, pd.DataFrame, int, list[str]]:
    """(events, runs, omitted markers, problem file names) of ``files``."""
    frames: list[pd.DataFrame] = []
    runs: list[dict[str, Any]] = []
    omitted = 0
    problems: list[str] = []
    for start in range(0, len(files), CHUNK):
        documents = []
        for index in range(start, min(len(files), start + CHUNK)):
            try:
                document = _document(files[index])
            except (ValueError, UnicodeDecodeError, AttributeError, TypeError):
                problems.append(files[index].name)
                continue
            if document is None:
                omitted += 1
                continue
            document["file_index"] = index
            documents.append(document)
            events = document["events"]
            runs.append({
                "file_index": index, **{name: document[name] for name in COUNTERS},
                "failures": sum(event["outcome"] == "error" for event in events),
            })  # fmt: skip
        if documents:
            table = pd.json_normalize(documents, record_path="events", meta=["file_index"])
            frames.append(table.reindex(columns=KEPT))
    events = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=KEPT)
    events = events.astype({"file_index": "int64", "duration_ms": "int64"})
    events["origin"] = events["before.origin"].fillna(events["after.origin"]).fillna(NO_ORIGIN)
    return events, pd.DataFrame(runs, columns=["file_index", *COUNTERS, "failures"]), omitted, problems


def _grouped(events: pd.DataFrame, key: str) -> pd.DataFrame:
    errors = events["outcome"] == "error"
    table = (
        events.assign(error=errors)
        .groupby(key)
        .agg(runs=("file_index", "nunique"), events=("action", "size"), failures=("error", "sum"))
    )
    table["failure_rate"] = table["failures"] / table["events"]
    return table.reset_index().sort_values(["events", key], ascending=[False, True]).set_index(key)


def summary(files: Sequence[Path]) -> dict[str, Any]:
    """Every table ``pnb.fleet`` answers, computed with json + pandas."""
    events, runs, omitted, problems = load(files)
    by_action = _grouped(events, "action")
    by_action["replay_candidate"] = ~by_action.index.isin(sorted(UNSUPPORTED_REPLAY_ACTIONS))
    failed = events[events["outcome"] == "error"]
    by_error_class = failed.groupby("error_class").agg(
        events=("action", "size"), runs=("file_index", "nunique")
    )
    by_error_class["share"] = by_error_class["events"] / len(failed)
    counts = failed.groupby(["error_class", "action"]).size().rename("n").reset_index()
    top = counts.sort_values(["error_class", "n", "action"], ascending=[True, False, True]).drop_duplicates(
        "error_class"
    )
    by_error_class["top_action"] = top.set_index("error_class")["action"]
    by_error_class = by_error_class.reset_index().sort_values(
        ["events", "error_class"], ascending=[False, True]
    )
    durations = events.groupby("action")["duration_ms"]
    duration_table = pd.DataFrame({
        "events": durations.size(), "mean": durations.mean(), "p50": durations.quantile(0.5),
        "p90": durations.quantile(0.9), "p99": durations.quantile(0.99), "max": durations.max(),
    }).reset_index().sort_values(["events", "action"], ascending=[False, True]).set_index("action")  # fmt: skip
    pressure = [
        runs["evicted_events"] > 0, runs["oversized_events"] > 0, runs["cleared_events"] > 0,
        runs["retained_events"] >= NEAR * MAX_EVENTS, runs["retained_bytes"] >= NEAR * MAX_BYTES,
    ]  # fmt: skip
    lifecycle = UNSUPPORTED_REPLAY_ACTIONS - COARSE_ACTIONS
    replay = [
        (~events["action"].isin(sorted(UNSUPPORTED_REPLAY_ACTIONS))).sum(),
        events["action"].isin(sorted(lifecycle)).sum(),
        events["action"].isin(sorted(COARSE_ACTIONS)).sum(),
    ]
    return {
        "totals": {"files": len(files), "runs": len(runs), "events": len(events),
                   "failures": int(runs["failures"].sum()), "omitted": omitted, "problems": len(problems)},
        "problems": problems,
        "by_action": by_action,
        "by_origin": _grouped(events, "origin"),
        "by_error_class": by_error_class.set_index("error_class"),
        "durations": duration_table,
        "pressure_runs": [int(hit.sum()) for hit in pressure],
        "replay_events": [int(n) for n in replay],
    }  # fmt: skip
