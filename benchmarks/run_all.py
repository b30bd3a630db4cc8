"""Run every benchmark in this folder, one after another, in one process each."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent

if __name__ == "__main__":
    failures = 0
    for script in sorted(HERE.glob("bench_*.py")):
        failures += subprocess.call([sys.executable, str(script)]) != 0
    raise SystemExit(failures)
