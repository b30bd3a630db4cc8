"""load_traces beside a plain ``pd.json_normalize`` on the same genuine trace exports.

Exports come from the real trace core (``TraceLog``) driven over the demo site's SOMs (as the
compiler makes them, from the scripted engine's pages in ``tests/scripted_pages.py``) with a
realistic action mix, recorded until the log is full. A genuine full export is bound by
48 KiB before it reaches 128 events, so two data sets are measured:
- ``1000 full exports``: 1,000 byte-bound full exports;
- ``128k events``: as many full exports as hold 1,000 x 128 events.
Each is timed on the same parsed input for both sides, and end to end from files
(read + parse + table). Target: load_traces under 1 s and at least 3x the baseline.
"""

from __future__ import annotations

import gc
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))  # the repository: tests.scripted_pages

from _report import median_ms, report, time_call

from plasmate_nb.notebook import load_traces
from plasmate_nb.trace import PageState, TraceLog, compact_json, sanitize_parameters
from plasmate_nb.trace.som_walk import iter_elements
from tests.scripted_engine import DEFAULT_ORIGIN, Document
from tests.scripted_pages import DEMO_SITE

REPEAT = 5


def _pages() -> list[tuple[str, PageState, list[dict]]]:
    """(url, state, elements) of the index, sign-in and welcome pages, in that order."""
    pages = []
    for path, page in DEMO_SITE.pages.items():
        url = f"{DEFAULT_ORIGIN}{path}"
        som = Document(page, url).compile()
        pages.append((url, PageState(url, som.text, som.data), list(iter_elements(som.data))))
    return pages


def full_export(rng: random.Random, pages: list[tuple[str, PageState, list[dict]]]) -> dict:
    """One genuine export, recorded until eviction starts (the log is full)."""
    log = TraceLog(True)
    url, page, elements = pages[1]
    log.record(
        "open_page",
        sanitize_parameters("open_page", {"url": url}),
        None,
        log.closed_state(),
        log.state(page),
        None,
        900,
    )
    while log.evicted_events == 0:
        action = rng.choice(
            ["type_text", "click", "scroll", "select_option", "toggle", "navigate_to", "evaluate"]
        )
        element = rng.choice(elements)
        arguments = {
            "element_id": element["id"],
            "text": "x" * rng.randint(1, 40),
            "value": "team",
            "pixels": 300,
        }
        before = log.state(page)
        if action == "navigate_to":
            url, page, elements = rng.choice(pages)
            arguments = {"url": url}
        error = "Element not found: e_x" if rng.random() < 0.05 else None
        target = log.target(page, arguments.get("element_id"))
        log.record(
            action,
            sanitize_parameters(action, arguments),
            target,
            before,
            log.state(page),
            error,
            rng.randint(5, 150),
        )
    return log.export("7d0c7b8e-0000-4000-8000-000000000000")


def baseline(documents: list[dict]) -> pd.DataFrame:
    return pd.json_normalize(documents, record_path="events", meta=["trace_id"])


def measure(name: str, documents: list[dict], folder: Path) -> list[dict]:
    for index, document in enumerate(documents):
        (folder / f"trace-{index:05d}.json").write_text(compact_json(document), encoding="utf-8")
    files = sorted(folder.glob("*.json"))
    events = sum(len(d["events"]) for d in documents)
    ours = load_traces(documents)
    assert len(ours) == len(baseline(documents)) == events

    def from_files_baseline() -> pd.DataFrame:
        return baseline([json.loads(p.read_text(encoding="utf-8")) for p in files])

    timings = {
        "load_traces (parsed)": time_call(lambda: load_traces(documents), REPEAT),
        "json_normalize (parsed)": time_call(lambda: baseline(documents), REPEAT),
        "load_traces (files)": time_call(lambda: load_traces(folder), REPEAT),
        "json_normalize (files)": time_call(from_files_baseline, REPEAT),
    }
    ms = {k: median_ms(v) for k, v in timings.items()}
    rows = []
    for case in ("parsed", "files"):
        ours_ms, base_ms = ms[f"load_traces ({case})"], ms[f"json_normalize ({case})"]
        rows.append({
            "data": name, "input": case, "exports": len(documents), "events": events,
            "load_traces_ms": ours_ms, "json_normalize_ms": base_ms, "speedup_x": base_ms / ours_ms,
            "under_1s": ours_ms < 1000.0, "meets_3x": base_ms / ours_ms >= 3.0,
        })  # fmt: skip
    return rows


def main() -> None:
    rng = random.Random(20261202)
    pages = _pages()
    started = time.perf_counter()
    exports = [full_export(rng, pages) for _ in range(1000)]
    per_export = sum(len(e["events"]) for e in exports) / len(exports)
    extra = [full_export(rng, pages) for _ in range(round(128_000 / per_export) - len(exports))]
    generated_s = time.perf_counter() - started
    gc.collect()
    gc.freeze()  # the inputs are long-lived: keep GC passes over them out of both timings
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        rows = measure("1000 full exports", exports, Path(a))
        rows += measure("128k events", exports + extra, Path(b))
    report(
        "bench_tables",
        rows,
        {
            "events per full export (mean)": per_export,
            "export bytes (mean)": sum(e["retained_bytes"] for e in exports) / len(exports),
            "generation_s": generated_s,
            "repeat (median of)": REPEAT,
            "baseline": "pd.json_normalize(docs, record_path='events', meta=['trace_id'])",
        },
    )


if __name__ == "__main__":
    main()
