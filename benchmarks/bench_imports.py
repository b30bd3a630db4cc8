"""Import cost of the pure reading path: ``import plasmate_nb`` + ``load_trace`` + ``load_traces``.

Each step runs in a fresh interpreter under ``python -X importtime``; its import time is the sum
of the self times of every module it imports beyond a bare interpreter's start-up (median of
``REPEAT`` runs). ``load_traces`` alone (its fast path) needs no jsonschema. The top 10 modules of the whole path by cumulative import time show where the
time goes, and the heavy stacks (Playwright, MCP SDK, uvicorn, starlette, httpx, ipywidgets)
must not load at all. Target: the whole path imports in 0.3 s or less.
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
    """``{module: (self_us, cumulative_us)}`` and the heavy modules loaded, for ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {set(HEAVY)!r})))"
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
        steps = {
            "import plasmate_nb": "import plasmate_nb as pnb",
            "+ load_traces(folder) only": f"import plasmate_nb as pnb\npnb.load_traces({tmp!r})",
            "+ load_trace(file)": f"import plasmate_nb as pnb\npnb.load_trace({str(first)!r})",
            "+ load_traces(folder)": (
                f"import plasmate_nb as pnb\npnb.load_trace({str(first)!r})\npnb.load_traces({tmp!r})"
            ),
        }
        baseline = set(_importtime("pass")[0])
        rows = []
        whole: dict[str, tuple[int, int]] = {}
        heavy_loaded: list[str] = []
        for step, code in steps.items():
            totals, counts = [], []
            for _ in range(REPEAT):
                times, heavy = _importtime(code)
                new = {name: t for name, t in times.items() if name not in baseline}
                totals.append(sum(self_us for self_us, _ in new.values()) / 1e6)
                counts.append(len(new))
                whole, heavy_loaded = new, heavy
            rows.append({"step": step, "import_s": statistics.median(totals), "modules": int(statistics.median(counts)),
                         "heavy_loaded": ", ".join(heavy) or "none"})  # fmt: skip
    top = sorted(whole.items(), key=lambda item: item[1][1], reverse=True)[:10]
    for name, (self_us, cumulative_us) in top:
        rows.append({"step": f"  top: {name}", "import_s": cumulative_us / 1e6, "self_s": self_us / 1e6})
    total = rows[len(steps) - 1]["import_s"]  # the last step: the whole path
    report(
        "imports",
        rows,
        {
            "whole path import time (s)": total,
            "target (s)": TARGET_S,
            "target met": total <= TARGET_S,
            "heavy modules loaded": heavy_loaded or "none",
        },
    )


if __name__ == "__main__":
    main()
