"""Import cost of the pure reading path: ``import plasmate_nb`` + ``load_trace`` + ``load_traces``.

Each step runs in a fresh interpreter under ``python -X importtime``; its import time is the sum
of the self times of every module it imports beyond a bare interpreter's start-up (median of
``REPEAT`` runs). The load_trace path (``import plasmate_nb`` + ``load_trace(file)`` of a valid
export) loads neither jsonschema nor pandas: target 0.3 s or less. ``load_traces`` returns a
DataFrame, so it imports pandas; pandas' own cumulative import time is a row of its own, and
"ours" is the step's time without it (target 0.3 s too). The top 10 modules of the whole path
by cumulative import time show where the time goes, and the heavy stacks (Playwright, MCP SDK,
uvicorn, starlette, httpx, ipywidgets) must not load at all.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import report

from plasmate_nb.trace import TraceLog

REPEAT = 5
TARGET_S = 0.3
HEAVY = ("playwright", "mcp", "uvicorn", "starlette", "httpx", "httpx2", "ipywidgets")
#: Loaded on purpose by some steps only; each row says which of them it loaded.
WATCHED = ("jsonschema", "pandas", "duckdb", "fastjsonschema")


def _write_traces(folder: Path) -> Path:
    for name, scrolls in (("a", 5), ("b", 3)):
        log = TraceLog(True)
        closed = log.closed_state()
        for pixels in range(scrolls):
            log.record(
                "scroll",
                {"direction": "down", "pixels": pixels, "targeted": False},
                None,
                closed,
                closed,
                None,
                1,
            )
        (folder / f"{name}.json").write_text(json.dumps(log.export(f"s_{name}")), encoding="utf-8")
    return folder / "a.json"


def _importtime(code: str) -> tuple[dict[str, tuple[int, int]], list[str]]:
    """``{module: (self_us, cumulative_us)}`` and the heavy or watched top-level modules loaded, for ``code``."""
    names = set(HEAVY) | set(WATCHED)
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & {names!r})))"
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", probe], capture_output=True, text=True, check=True
    )
    times: dict[str, tuple[int, int]] = {}
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cumulative_us, name = (part.strip() for part in line[len("import time:") :].split("|"))
        times[name] = (int(self_us), int(cumulative_us))
    return times, json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        first = _write_traces(Path(tmp))
        load_trace = f"import plasmate_nb as pnb\npnb.load_trace({str(first)!r})"
        load_traces = f"import plasmate_nb as pnb\npnb.load_traces({tmp!r})"
        steps = {
            "import plasmate_nb": "import plasmate_nb as pnb",
            "load_traces path: import + load_traces(folder)": load_traces,
            "load_trace path: import + load_trace(file)": load_trace,
            "whole path: import + load_trace + load_traces": f"{load_trace}\npnb.load_traces({tmp!r})",
        }
        baseline = set(_importtime("pass")[0])
        rows = []
        medians: dict[str, float] = {}
        pandas_s: list[float] = []
        pandas_median = 0.0
        whole: dict[str, tuple[int, int]] = {}
        heavy_loaded: list[str] = []
        for step, code in steps.items():
            totals, counts = [], []
            for _ in range(REPEAT):
                times, loaded = _importtime(code)
                new = {name: t for name, t in times.items() if name not in baseline}
                totals.append(sum(self_us for self_us, _ in new.values()) / 1e6)
                counts.append(len(new))
                if step.startswith("load_traces path") and "pandas" in new:
                    pandas_s.append(new["pandas"][1] / 1e6)
                whole, heavy_loaded = new, [m for m in loaded if m in HEAVY]
            medians[step] = statistics.median(totals)
            rows.append({"step": step, "import_s": medians[step], "modules": int(statistics.median(counts)),
                         "loads": ", ".join(m for m in loaded if m in WATCHED) or "none",
                         "heavy_loaded": ", ".join(heavy_loaded) or "none"})  # fmt: skip
            if step.startswith("load_traces path"):
                pandas_median = statistics.median(pandas_s) if pandas_s else 0.0
                rows.append({"step": "  of which pandas (its cumulative import)", "import_s": pandas_median})
                rows.append(
                    {"step": "  of which ours (without pandas)", "import_s": medians[step] - pandas_median}
                )
    top = sorted(whole.items(), key=lambda item: item[1][1], reverse=True)[:10]
    for name, (self_us, cumulative_us) in top:
        rows.append({"step": f"  top: {name}", "import_s": cumulative_us / 1e6, "self_s": self_us / 1e6})
    load_trace_s = medians["load_trace path: import + load_trace(file)"]
    ours_s = medians["load_traces path: import + load_traces(folder)"] - pandas_median
    report(
        "imports",
        rows,
        {
            "load_trace path import time (s)": load_trace_s,
            "load_traces import time without pandas (s)": ours_s,
            "pandas' own import time (s)": pandas_median,
            "whole path import time, pandas included (s)": medians[
                "whole path: import + load_trace + load_traces"
            ],
            "target (s)": TARGET_S,
            "target met (load_trace path, and load_traces without pandas)": load_trace_s <= TARGET_S
            and ours_s <= TARGET_S,
            "heavy modules loaded": heavy_loaded or "none",
        },
    )


if __name__ == "__main__":
    main()
