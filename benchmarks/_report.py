"""Shared output for benchmark scripts: a printed table and a JSON file.

Benchmarks measure; tests never assert wall-clock times.
"""

from __future__ import annotations

import json
import platform
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / "results"


def median_ms(samples: Sequence[float]) -> float:
    return statistics.median(samples) * 1000.0


def percentile_ms(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index] * 1000.0


def time_call(fn: Callable[[], Any], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


async def time_async(fn: Callable[[], Awaitable[Any]], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        await fn()
        samples.append(time.perf_counter() - start)
    return samples


def report(name: str, rows: list[dict[str, Any]], notes: dict[str, Any] | None = None) -> Path:
    """Print ``rows`` as an aligned table and write them to ``benchmarks/results/<name>.json``."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    cells = [[_fmt(row.get(col, "")) for col in columns] for row in rows]
    widths = [max(len(col), *(len(r[i]) for r in cells)) for i, col in enumerate(columns)]
    print(f"\n== {name}")
    print("  ".join(col.ljust(w) for col, w in zip(columns, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for r in cells:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    for key, value in (notes or {}).items():
        print(f"{key}: {_fmt(value)}")
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    payload = {"benchmark": name, "machine": platform.platform(), "rows": rows, "notes": notes or {}}
    path.write_text(json.dumps(payload, indent=2))
    return path


def _fmt(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 100 else f"{value:.1f}"
    return str(value)
