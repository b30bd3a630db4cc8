"""The notebooks and the examples, run end to end as a user would run them.

Each notebook is executed top to bottom in a real ``python3`` kernel (nbclient) from the
``notebooks/`` folder, on the bundled demo site it starts itself. Outputs stay in memory: the
committed notebooks are never rewritten, and the test checks that nothing was written next
to them. Each example runs as a subprocess and must exit 0 with its key lines.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
EXAMPLES = ROOT / "examples"
NOTEBOOK_NAMES = [
    "01_explore_a_session.ipynb",
    "02_trace_semantics.ipynb",
    "03_replay_validation.ipynb",
    "04_watch_an_agent.ipynb",
    "05_audit_and_fleets.ipynb",
]
CELL_TIMEOUT_S = 120
EXAMPLE_TIMEOUT_S = 120
DRIFT_CODES = {
    "cross_session", "event_not_retained", "unsupported_action", "origin_drift", "page_drift",
    "target_missing", "target_ambiguous", "action_unavailable", "state_drift",
}  # fmt: skip
#: Values the notebooks type or select (in their source); none may reach an output.
TYPED_IN_SOURCE = {
    "01_explore_a_session.ipynb": ["analyst@example.test", "Team"],
    "02_trace_semantics.ipynb": [
        "Grüße, Zoë ✓",
        "Enterprise",
        "SPRING-SECRET-42",
        "coupon",
        "cookie-value-9f3e",
        "demo_cookie_name",
    ],
    "03_replay_validation.ipynb": ["batch@example.test", "hello", "not a text box"],
    "04_watch_an_agent.ipynb": ["agent@example.test"],
    "05_audit_and_fleets.ipynb": ["fleet@example.test", "Platinum", "Team"],
}
RESULT_MARKER = "NOTEBOOK-TEST-RESULT:"


@pytest.fixture(scope="module")
def jupyter_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Runtime and IPython dirs in a temp dir, a python3 kernelspec, and the env for kernels."""
    home = tmp_path_factory.mktemp("jupyter")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JUPYTER_RUNTIME_DIR", str(home / "runtime"))
        patch.setenv("IPYTHONDIR", str(home / "ipython"))
        _ensure_python3_kernelspec()
        env = dict(os.environ)
        env["PLASMATE_NB_DEMO_PASSWORD"] = "pw-" + secrets.token_urlsafe(12)
        env["PLASMATE_NB_AGENT_PASSWORD"] = "agent-pw-" + secrets.token_urlsafe(12)
        yield env


def _ensure_python3_kernelspec() -> None:
    from jupyter_client.kernelspec import KernelSpecManager

    if "python3" not in KernelSpecManager().find_kernel_specs():
        subprocess.run([sys.executable, "-m", "ipykernel", "install", "--sys-prefix"], check=True,
                       capture_output=True, timeout=60)  # fmt: skip


def _tree(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def _execute(name: str, env: dict[str, str], extra_cell: str | None = None) -> nbformat.NotebookNode:
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    if extra_cell is not None:
        notebook.cells.append(nbformat.v4.new_code_cell(extra_cell))
    before = _tree(NOTEBOOKS)
    client = NotebookClient(
        notebook, timeout=CELL_TIMEOUT_S, kernel_name="python3", store_widget_state=True,
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )  # fmt: skip
    client.execute(env=env)
    assert _tree(NOTEBOOKS) == before, "a notebook wrote files next to itself"
    return notebook


def _outputs(notebook: nbformat.NotebookNode) -> list[dict[str, Any]]:
    return [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]


def _all_output_text(notebook: nbformat.NotebookNode) -> str:
    """Every output and the stored widget state, as one string."""
    return json.dumps([_outputs(notebook), notebook.metadata.get("widgets", {})], ensure_ascii=False)


def _stream_text(notebook: nbformat.NotebookNode) -> str:
    return "".join(o.get("text", "") for o in _outputs(notebook) if o["output_type"] == "stream")


def _result(notebook: nbformat.NotebookNode) -> Any:
    for line in _stream_text(notebook).splitlines():
        if line.startswith(RESULT_MARKER):
            return json.loads(line[len(RESULT_MARKER) :])
    raise AssertionError("the extra cell printed no result")


def _assert_clean(notebook: nbformat.NotebookNode, name: str, secrets_: list[str]) -> None:
    errors = [o for o in _outputs(notebook) if o["output_type"] == "error"]
    assert not errors, f"{name}: {errors[0]['ename']}: {errors[0]['evalue']}" if errors else ""
    text = _all_output_text(notebook)
    for secret in [*TYPED_IN_SOURCE[name], *secrets_]:
        assert secret not in text, f"{name}: a typed value reached an output"


def _widget_views(notebook: nbformat.NotebookNode) -> int:
    return sum("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in _outputs(notebook))


# -- the committed notebooks ------------------------------------------------------------------


@pytest.mark.parametrize("name", NOTEBOOK_NAMES)
def test_committed_notebook_has_no_outputs(name: str) -> None:
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and all(not cell.outputs and cell.execution_count is None for cell in code)
    assert "widgets" not in notebook.metadata
    assert notebook.metadata["kernelspec"]["name"] == "python3"


def test_01_explore_a_session(jupyter_env: dict[str, str]) -> None:
    name = "01_explore_a_session.ipynb"
    notebook = _execute(name, jupyter_env)
    _assert_clean(notebook, name, [jupyter_env["PLASMATE_NB_DEMO_PASSWORD"]])
    assert _widget_views(notebook) >= 2  # the session's dashboard and the extra one
    streams = _stream_text(notebook)
    assert "typed or selected values found in the export: 0" in streams
    assert "next_sequence is now 3" in streams  # the final "one more action" cell
    last = notebook.cells[-1]
    assert "one-more-action" in last.metadata.get("tags", [])
    widget_state = json.dumps(notebook.metadata["widgets"])
    assert "next sequence" in widget_state and "retained bytes" in widget_state


def test_02_trace_semantics(jupyter_env: dict[str, str]) -> None:
    name = "02_trace_semantics.ipynb"
    extra = (
        f"import json; print({RESULT_MARKER!r} + json.dumps(dict(e6_evicted=final_status.evicted_events)))"
    )
    notebook = _execute(name, jupyter_env, extra)
    _assert_clean(notebook, name, [])
    streams = _stream_text(notebook)
    assert "characters: 12 | bytes recorded: 17" in streams
    assert "after close: Session not found" in streams
    assert re.search(r"smallest real event: \d+ bytes", streams)
    # The oversize cell's hostile direction is warned about at the cell's own line, once.
    warned = [
        line for line in streams.splitlines() if "UserWarning: scroll direction 'xxxxxxxxxxxx'…" in line
    ]
    assert len(warned) == 1 and "asyncio" not in warned[0] and "ipykernel" in warned[0]
    assert _result(notebook)["e6_evicted"] > 0


def test_03_replay_validation_produces_every_outcome(jupyter_env: dict[str, str]) -> None:
    name = "03_replay_validation.ipynb"
    extra = (
        f"import json; print({RESULT_MARKER!r} + json.dumps("
        "dict(drifts=sorted(observed_drifts), statuses=sorted(observed_statuses))))"
    )
    notebook = _execute(name, jupyter_env, extra)
    _assert_clean(notebook, name, [])
    result = _result(notebook)
    assert set(result["drifts"]) == DRIFT_CODES
    assert set(result["statuses"]) == {"refused", "confirmation_required", "validated"}
    assert "execution_available: false" in _all_output_text(notebook)


def test_04_watch_an_agent(jupyter_env: dict[str, str]) -> None:
    name = "04_watch_an_agent.ipynb"
    notebook = _execute(name, jupyter_env)
    _assert_clean(notebook, name, [jupyter_env["PLASMATE_NB_AGENT_PASSWORD"]])
    text = _all_output_text(notebook)
    assert "token=<hidden" in text and "Bearer" not in text  # the server's token is never shown
    streams = _stream_text(notebook)
    shown = re.search(r"next_sequence as the dashboard showed it: \[([\d, ]+)\]", streams)
    assert shown, streams
    values = [int(v) for v in shown.group(1).split(",")]
    assert values[0] == 2 and values[-1] == 9 and len(values) > 3  # it moved while the agent acted
    assert _widget_views(notebook) >= 1


def test_05_audit_and_fleets(jupyter_env: dict[str, str]) -> None:
    name = "05_audit_and_fleets.ipynb"
    extra = (
        f"import json; print({RESULT_MARKER!r} + json.dumps(dict(audit_ok=report.ok, "
        "fields=list(divergence.fields), runs=int(fleet.totals['runs']), problems=int(fleet.totals['problems']), "
        "events=int(fleet.totals['events']), loaded=len(table), partitions=len(partitions))))"
    )
    notebook = _execute(name, jupyter_env, extra)
    _assert_clean(notebook, name, [jupyter_env["PLASMATE_NB_DEMO_PASSWORD"]])
    result = _result(notebook)
    assert result["audit_ok"] is True and "outcome" in result["fields"]
    assert result["runs"] == 1502 and result["problems"] == 0
    assert result["loaded"] == result["events"] and result["partitions"] >= 10
    streams = _stream_text(notebook)
    assert "select_option failed:" in streams and "audit: 2 exports audited: clean" in streams
    assert re.search(r"first divergence at step \d+: ", streams)
    images = sum("image/png" in o.get("data", {}) for o in _outputs(notebook))
    assert images >= 2  # the overview and the origins plot


# -- the examples --------------------------------------------------------------------------------


def _run_example(script: str) -> str:
    done = subprocess.run([sys.executable, str(EXAMPLES / script)], cwd=ROOT, capture_output=True, text=True,
                          timeout=EXAMPLE_TIMEOUT_S, stdin=subprocess.DEVNULL)  # fmt: skip
    assert done.returncode == 0, f"{script} exited {done.returncode}:\n{done.stdout}\n{done.stderr[-3000:]}"
    assert done.stdout.rstrip().endswith("OK")
    return done.stdout


def test_example_record_and_validate() -> None:
    out = _run_example("record_and_validate.py")
    assert "signed in: now on 'Welcome'" in out
    assert "typed values in the export: none" in out
    assert "script@example.test" not in out
    assert re.search(r"6\s+scroll\s+confirmation_required", out)
    assert "last action close_page" in out


def test_example_analyse_trace_folder() -> None:
    out = _run_example("analyse_trace_folder.py")
    assert "wrote 3 traces to a temporary folder" in out
    assert re.search(r"loaded \d+ events from 3 traces", out)
    assert "events per action:" in out


def test_example_fleet_summary() -> None:
    out = _run_example("fleet_summary.py")
    assert "wrote 1000 synthetic and 2 real exports" in out
    assert re.search(r"1002 runs, \d+ events, \d+ failures, 0 problem files", out)
    assert "bounds pressure:" in out and "DuckDB over the Parquet dataset:" in out


def test_example_connect_stdio() -> None:
    out = _run_example("connect_stdio.py")
    assert "over stdio: opened 'Sign in'" in out
    assert "replay_validate(4): confirmation_required" in out
    assert "stdio@example.test" not in out


def test_example_connect_http() -> None:
    out = _run_example("connect_http.py")
    assert re.search(r"MCP server listening at http://127\.0\.0\.1:\d+/mcp", out)
    assert "replay_validate(3, confirmed=True): validated" in out


def test_mcp_client_config_snippets_are_valid_json() -> None:
    text = (EXAMPLES / "mcp_client_configs.md").read_text(encoding="utf-8")
    blocks = [json.loads(block) for block in re.findall(r"```json\n(.*?)```", text, flags=re.S)]
    assert len(blocks) >= 4
    servers = [block["mcpServers"]["plasmate-nb"] for block in blocks]
    stdio = [s for s in servers if "command" in s]
    http = [s for s in servers if s.get("type") == "http"]
    assert stdio and all(s["args"][0] == "serve" and s["command"].endswith("plasmate-nb") for s in stdio)
    assert http and all(s["url"].endswith("/mcp") and s["headers"]["Authorization"].startswith("Bearer ")
                        for s in http)  # fmt: skip
