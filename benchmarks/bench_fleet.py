"""pnb.fleet beside json + pd.json_normalize + pandas groupby, on 100,000 exports (~4 million events).

The exports are synthesised once with ``write_synthetic_fleet`` (events the real trace core
recorded, assembled with the log's own bounds; see plasmate_nb/analysis/synthetic.py) and
cached under ``benchmarks/results/fleet_data/``. Each side then runs in its own subprocess,
from the same files, computing the same summary: totals, by action, by origin, by error class,
duration percentiles, bounds pressure and the replay share. Reported: wall time, peak memory
(``ru_maxrss`` of the side's process), the speedup, and whether both sides gave the same
answers. Targets: pnb.fleet under 30 s, at least 10x the baseline, at most 2 GiB.

    python benchmarks/bench_fleet.py                  # the full run
    python benchmarks/bench_fleet.py --exports 200 --data /tmp/f --dry   # a smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(
    1, str(Path(__file__).resolve().parent.parent)
)  # the repository: tests.analysis.fleet_reference

from _report import RESULTS, report

SEED = 20261203
TARGET_S = 30.0
TARGET_X = 10.0
TARGET_GIB = 2.0


def ensure_data(folder: Path, exports: int) -> float:
    """Generate ``exports`` files into ``folder`` unless a complete set is there; return seconds spent."""
    from plasmate_nb.analysis.synthetic import write_synthetic_fleet

    marker = folder / ".complete"
    wanted = {"exports": exports, "seed": SEED}
    if marker.exists() and json.loads(marker.read_text()) == wanted:
        return 0.0
    started = time.perf_counter()
    write_synthetic_fleet(folder, exports, seed=SEED, workers=os.cpu_count() or 1)
    marker.write_text(json.dumps(wanted))
    return time.perf_counter() - started


def side_fleet(folder: Path) -> dict:
    import plasmate_nb as pnb

    fleet = pnb.fleet(folder, progress=False)
    return {
        "totals": {key: int(value) for key, value in fleet.totals.items()},
        "events_by_action": fleet.by_action["events"].to_dict(),
        "failures_by_origin": fleet.by_origin["failures"].to_dict(),
        "by_error_class": fleet.by_error_class["events"].to_dict(),
        "p99_by_action": fleet.durations["p99"].round(6).to_dict(),
        "pressure_runs": [int(n) for n in fleet.pressure["runs"]],
        "replay_events": [int(n) for n in fleet.replay["events"]],
    }


def side_pandas(folder: Path) -> dict:
    from tests.analysis import fleet_reference

    summary = fleet_reference.summary(sorted(folder.glob("*.json")))
    return {
        "totals": summary["totals"],
        "events_by_action": summary["by_action"]["events"].to_dict(),
        "failures_by_origin": summary["by_origin"]["failures"].to_dict(),
        "by_error_class": summary["by_error_class"]["events"].to_dict(),
        "p99_by_action": summary["durations"]["p99"].round(6).to_dict(),
        "pressure_runs": summary["pressure_runs"],
        "replay_events": summary["replay_events"],
    }


def run_side(name: str, folder: Path) -> dict:
    """Run one side in a fresh interpreter; its answers, wall time and peak memory."""
    done = subprocess.run(
        [sys.executable, __file__, "--side", name, "--data", str(folder)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"{name} side failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exports", type=int, default=100_000)
    parser.add_argument("--data", type=Path, default=None, help="the folder of exports (default: cached)")
    parser.add_argument("--dry", action="store_true", help="print the rows, write no results file")
    parser.add_argument("--side", choices=("fleet", "pandas"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        started = time.perf_counter()
        answers = side_fleet(args.data) if args.side == "fleet" else side_pandas(args.data)
        seconds = time.perf_counter() - started
        usage = resource.getrusage(resource.RUSAGE_SELF)
        peak = usage.ru_maxrss * 1024  # kilobytes on Linux
        cpu = usage.ru_utime + usage.ru_stime  # every thread's, imports included
        print(json.dumps({"answers": answers, "seconds": seconds, "cpu_seconds": cpu, "peak_bytes": peak}))
        return
    folder = args.data or RESULTS / "fleet_data" / f"exports-{args.exports}"
    generated_s = ensure_data(folder, args.exports)
    size = sum(path.stat().st_size for path in folder.glob("*.json"))
    ours, baseline = run_side("fleet", folder), run_side("pandas", folder)
    same = ours["answers"] == baseline["answers"]
    totals = ours["answers"]["totals"]
    speedup = baseline["seconds"] / ours["seconds"]
    rows = [{
        "exports": totals["runs"], "events": totals["events"], "data_gib": size / 2**30,
        "fleet_s": ours["seconds"], "pandas_s": baseline["seconds"], "speedup_x": speedup,
        "fleet_cpu_s": ours["cpu_seconds"], "pandas_cpu_s": baseline["cpu_seconds"],
        "fleet_peak_gib": ours["peak_bytes"] / 2**30, "pandas_peak_gib": baseline["peak_bytes"] / 2**30,
        "same_answers": same, "under_30s": ours["seconds"] < TARGET_S, "meets_10x": speedup >= TARGET_X,
        "under_2gib": ours["peak_bytes"] <= TARGET_GIB * 2**30,
    }]  # fmt: skip
    notes = {
        "generation_s (0: cached)": generated_s,
        "cpus": os.cpu_count(),
        "load average at the end (1 min)": os.getloadavg()[0],
        "baseline": "json.loads per file + pd.json_normalize(record_path='events') in chunks + pandas groupby",
        "summary": "totals, by action, by origin, by error class, duration percentiles, bounds pressure, replay share",
    }
    if args.dry:
        print(json.dumps({"rows": rows, "notes": notes}, indent=1))
    else:
        report("bench_fleet", rows, notes)
    if not same:
        raise SystemExit(
            "the two sides disagree: " + json.dumps([ours["answers"], baseline["answers"]])[:2000]
        )


if __name__ == "__main__":
    main()
