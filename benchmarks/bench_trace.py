"""Trace recorder cost: event appends per second and state-fingerprint throughput.

Everything here is pure CPU (``plasmate_nb.trace`` has no I/O). In the same run:

- **appends**: ``TraceLog.record`` of realistic click events (a target and two real page
  states, about 1.1 KB each, so the 48 KiB bound keeps evicting), alone and together with
  the bookkeeping a traced click does around it (before state, target lookup, after
  state) on a 100 KB SOM;
- **state fingerprints**: ``TraceKey.state_fingerprint`` (HMAC-SHA-256 over the SOM bytes)
  on 10 KB, 100 KB and 1 MB SOM byte strings beside plain ``hashlib.sha256`` over the same
  bytes, the physical limit of any SHA-256 based fingerprint;
- export of a full log, and ``replay_validate`` against a 5k-element SOM.

Run: ``python benchmarks/bench_trace.py``. Writes ``benchmarks/results/bench_trace.json``.
"""

from __future__ import annotations

import hashlib
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _report import median_ms, report, time_call

from plasmate_nb.trace import PageState, ReplayRequest, TraceKey, TraceLog, compact_json, sanitize_parameters

URL = "http://127.0.0.1:8765/login?next=/account"
SOM_SIZES = {"10 KB": 10_000, "100 KB": 100_000, "1 MB": 1_000_000}
APPENDS = 20_000


def section_elements(index: int) -> list[dict[str, Any]]:
    """One page section as the SOM compiler emits it: heading, text, labelled input, button, link."""
    return [
        {"id": f"e_{index:06x}a0", "role": "heading", "text": f"Section {index}", "attrs": {"level": 2}},
        {"id": f"e_{index:06x}b0", "role": "paragraph", "text": f"Body text of section {index}."},
        {
            "id": f"e_{index:06x}c0",
            "role": "text_input",
            "label": f"Field {index}",
            "actions": ["type", "clear"],
            "attrs": {"name": f"field{index}", "input_type": "text", "placeholder": "…"},
        },
        {
            "id": f"e_{index:06x}d0",
            "role": "button",
            "text": "Save",
            "label": f"Save {index}",
            "actions": ["click"],
        },
        {
            "id": f"e_{index:06x}e0",
            "role": "link",
            "text": "More",
            "label": f"More about {index}",
            "actions": ["click"],
            "attrs": {"href": f"/item/{index}"},
        },
    ]


def som_of_size(target_bytes: int) -> tuple[dict[str, Any], str]:
    """A SOM dict and its canonical text, grown section by section to about ``target_bytes``."""
    elements: list[dict[str, Any]] = []
    som: dict[str, Any] = {
        "som_version": "0.1",
        "url": URL,
        "title": "Benchmark",
        "lang": "en",
        "regions": [],
    }
    som["regions"] = [{"id": "r_main", "role": "main", "elements": elements}]
    index, size = 0, 0
    while size < target_bytes:
        batch = section_elements(index)
        elements.extend(batch)
        size += len(compact_json(batch).encode()) + 1
        index += 1
    text = compact_json(som)
    return som, text


def mb_per_s(n_bytes: int, seconds: float) -> float:
    return n_bytes / seconds / 1e6


def bench_appends(rows: list[dict[str, Any]]) -> dict[str, Any]:
    som, text = som_of_size(100_000)
    page = PageState(URL, text, som)
    button_id = som["regions"][0]["elements"][3]["id"]
    log = TraceLog(True)
    target = log.target(page, button_id)
    state = log.state(page)
    params = sanitize_parameters("click", {"session_id": "s", "element_id": button_id})
    start = time.perf_counter()
    for _ in range(APPENDS):
        log.record("click", params, target, state, state, None, 12)
    record_s = time.perf_counter() - start
    event_bytes = log.retained_bytes // max(1, log.retained_events)
    rows.append(
        {
            "case": "record() click event",
            "ops": APPENDS,
            "per_second": APPENDS / record_s,
            "us_per_op": record_s / APPENDS * 1e6,
            "event_bytes": event_bytes,
        }
    )
    full = TraceLog(True)
    n = 2_000
    start = time.perf_counter()
    for _ in range(n):
        before = full.state(page)
        tgt = full.target(page, button_id)
        after = full.state(page)
        full.record(
            "click", sanitize_parameters("click", {"element_id": button_id}), tgt, before, after, None, 12
        )
    full_s = time.perf_counter() - start
    rows.append(
        {
            "case": "traced click bookkeeping, 100 KB SOM",
            "ops": n,
            "per_second": n / full_s,
            "us_per_op": full_s / n * 1e6,
            "event_bytes": full.retained_bytes // max(1, full.retained_events),
        }
    )
    export_samples = time_call(lambda: compact_json(log.export("0b0e6b9b-6a1b-4b8e-9a1e-1f1d2c3b4a5e")), 200)
    rows.append(
        {
            "case": "export() + compact_json of a full log",
            "ops": 200,
            "per_second": 1000.0 / median_ms(export_samples),
            "us_per_op": median_ms(export_samples) * 1000.0,
            "event_bytes": log.retained_bytes,
        }
    )
    big_som, big_text = som_of_size(1_000_000 // 2)  # about 5k elements
    big_page = PageState(URL, big_text, big_som)
    replay_log = TraceLog(True)
    big_state = replay_log.state(big_page)
    big_button = big_som["regions"][0]["elements"][-2]["id"]
    sequence = replay_log.record(
        "click", {}, replay_log.target(big_page, big_button), big_state, big_state, None, 1
    )
    request = ReplayRequest("s", replay_log.trace_id, sequence, True)
    replay_samples = time_call(lambda: replay_log.replay_validate(request, big_page), 20)
    assert replay_log.replay_validate(request, big_page)["status"] == "validated"
    n_elements = len(big_som["regions"][0]["elements"])
    rows.append(
        {
            "case": f"replay_validate, {n_elements} elements",
            "ops": 20,
            "per_second": 1000.0 / median_ms(replay_samples),
            "us_per_op": median_ms(replay_samples) * 1000.0,
            "event_bytes": "",
        }
    )
    return {"append_us_per_event": record_s / APPENDS * 1e6, "click_event_bytes": event_bytes}


def bench_fingerprints(rows: list[dict[str, Any]]) -> dict[str, Any]:
    key = TraceKey()
    notes: dict[str, Any] = {}
    for label, size in SOM_SIZES.items():
        _, text = som_of_size(size)
        data = text.encode()
        repeat = max(20, 2_000_000 // len(data) * 5)
        hmac_samples = time_call(lambda data=data: key.state_fingerprint(data), repeat)
        sha_samples = time_call(lambda data=data: hashlib.sha256(data).hexdigest(), repeat)
        hmac_s = median_ms(hmac_samples) / 1000.0
        sha_s = median_ms(sha_samples) / 1000.0
        rows.append(
            {
                "case": f"state fingerprint, {label} SOM",
                "ops": repeat,
                "per_second": 1.0 / hmac_s,
                "us_per_op": hmac_s * 1e6,
                "som_bytes": len(data),
                "MB_per_s": mb_per_s(len(data), hmac_s),
                "sha256_MB_per_s": mb_per_s(len(data), sha_s),
                "vs_sha256": hmac_s / sha_s,
            }
        )
        notes[f"fingerprint_{label.replace(' ', '')}_vs_sha256"] = round(hmac_s / sha_s, 3)
    return notes


def main() -> None:
    rows: list[dict[str, Any]] = []
    notes = bench_appends(rows)
    notes.update(bench_fingerprints(rows))
    notes["python"] = sys.version.split()[0]
    report("bench_trace", rows, notes)


if __name__ == "__main__":
    main()
