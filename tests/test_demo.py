"""``make demo`` runs end to end on the demo site and keeps the typed secrets out of the trace."""

from __future__ import annotations

import subprocess
import sys

from plasmate_nb.demo import DEMO_EMAIL, DEMO_PASSWORD


def test_demo_runs_end_to_end_without_leaking_what_it_typed() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "plasmate_nb", "demo"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "password or email anywhere in the export: False" in out
    assert DEMO_PASSWORD not in out and DEMO_EMAIL not in out
    for action in ("open_page", "type_text", "select_option", "toggle", "click", "navigate_to", "close_page"):
        assert action in out
    assert "page_drift" in out and "unsupported_action" in out  # replays checked, none executed
    assert "status='validated'" in out and "status='refused'" in out  # one passes beside one refused
    assert "this slice returns a plan" not in out  # plans speak in words, not the contract's
