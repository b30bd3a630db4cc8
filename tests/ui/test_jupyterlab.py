"""JupyterLab in a real browser: notebook 01 runs, its dashboard renders and moves, no secret shows.

JupyterLab is started on loopback (free port, token) with every settings, workspace, runtime
and IPython directory in a temp dir, on a temp copy of ``notebooks/`` so nothing is written
into the repository. Chromium (Playwright, async API) opens ``01_explore_a_session.ipynb``,
runs all cells, reads the dashboard's counters, runs the final "one more action" cell again
and sees them change. The password the notebook types comes from the environment, so it is
in no cell source: it must appear nowhere in the rendered page. Set
``PLASMATE_NB_UPDATE_SCREENSHOT=1`` to refresh ``docs/images/dashboard.png``.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = "01_explore_a_session.ipynb"
SCREENSHOT = ROOT / "docs" / "images" / "dashboard.png"
LAB_START_S = 90.0
PAGE_MS = 90_000
RUN_ALL_MS = 240_000
CELL_MS = 60_000
STOP_S = 20.0

pytestmark = pytest.mark.ui


@dataclass
class Lab:
    base: str
    token: str
    password: str

    def url(self, path: str) -> str:
        return f"{self.base}{path}?token={self.token}"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _write_settings(settings: Path) -> None:
    files = {
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                            "checkForUpdates": False},
        "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
        # Render every cell (no windowing), so the page text covers the whole notebook.
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    }  # fmt: skip
    for relative, content in files.items():
        path = settings / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(content), encoding="utf-8")


def _api(lab: Lab, path: str, method: str = "GET") -> object:
    request = urllib.request.Request(lab.url(path), method=method)
    with urllib.request.urlopen(request, timeout=10) as response:
        body = response.read()
    return json.loads(body) if body else None


def _wait_until_up(lab: Lab, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + LAB_START_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"JupyterLab exited early:\n{log.read_text(errors='replace')[-3000:]}")
        try:
            _api(lab, "/api/status")
            return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.25)
    raise AssertionError(
        f"JupyterLab did not answer in {LAB_START_S} s:\n{log.read_text(errors='replace')[-3000:]}"
    )


def _stop(lab: Lab, process: subprocess.Popen[bytes]) -> None:
    """Shut the kernels down through the REST API, then terminate Lab's process group."""
    try:
        for kernel in _api(lab, "/api/kernels") or []:  # type: ignore[union-attr]
            _api(lab, f"/api/kernels/{kernel['id']}", method="DELETE")
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        pass
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=STOP_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=STOP_S)


def _ensure_python3_kernelspec() -> None:
    from jupyter_client.kernelspec import KernelSpecManager

    if "python3" not in KernelSpecManager().find_kernel_specs():
        subprocess.run([sys.executable, "-m", "ipykernel", "install", "--sys-prefix"], check=True,
                       capture_output=True, timeout=60)  # fmt: skip


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    _ensure_python3_kernelspec()
    home = tmp_path_factory.mktemp("lab")
    root = home / "notebooks"
    shutil.copytree(ROOT / "notebooks", root)
    settings, workspaces = home / "settings", home / "workspaces"
    _write_settings(settings)
    workspaces.mkdir()
    token, port = secrets.token_hex(16), _free_port()
    password = "pw-" + secrets.token_urlsafe(12)
    env = dict(os.environ)
    env.update({
        "JUPYTERLAB_SETTINGS_DIR": str(settings), "JUPYTERLAB_WORKSPACES_DIR": str(workspaces),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"), "JUPYTER_CONFIG_DIR": str(home / "config"),
        "IPYTHONDIR": str(home / "ipython"), "PLASMATE_NB_DEMO_PASSWORD": password,
    })  # fmt: skip
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}", "--LabApp.expose_app_in_browser=True",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--ServerApp.port_retries=0",
    ]  # fmt: skip
    if os.geteuid() == 0:
        command.append("--allow-root")
    log = home / "lab.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(command, env=env, cwd=home, stdin=subprocess.DEVNULL, stdout=sink,
                                   stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    handle = Lab(f"http://127.0.0.1:{port}", token, password)
    try:
        _wait_until_up(handle, process, log)
        yield handle
    finally:
        _stop(handle, process)


COUNTERS_JS = """
() => Array.from(document.querySelectorAll('.jp-Notebook .widget-text'))
  .filter(box => box.querySelector('.widget-label')?.textContent.trim() === 'next sequence')
  .map(box => box.querySelector('input').value)
"""
WIDGET_VALUES_JS = """
() => Array.from(document.querySelectorAll('input, textarea, select')).map(field => field.value)
"""
ERRORS_JS = """
() => {
  const cells = window.__nb.content.model.cells;
  const errors = [];
  for (let i = 0; i < cells.length; i++) {
    const cell = cells.get(i);
    if (cell.type !== 'code') continue;
    for (const output of cell.toJSON().outputs) {
      if (output.output_type === 'error') errors.push(output.ename + ': ' + output.evalue);
    }
  }
  return errors;
}
"""
ALL_RUN_JS = """
() => {
  const nb = window.__nb, cells = nb.content.model.cells;
  const last = cells.get(cells.length - 1);
  return window.__k.status === 'idle' && last.executionCount !== null && !nb.content.widgets.some(
    w => w.model.type === 'code' && w.promptNode && w.promptNode.textContent.includes('*'));
}
"""


async def test_dashboard_renders_moves_and_shows_no_secret(lab: Lab, browser, tmp_path: Path) -> None:
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = await context.new_page()
        await page.goto(lab.url(f"/lab/tree/{NOTEBOOK}"), timeout=PAGE_MS)
        await page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=PAGE_MS)
        await page.wait_for_function(
            "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel?.status === 'idle'",
            timeout=PAGE_MS,
        )
        # Keep references: shell.currentWidget becomes null once focus moves into a widget.
        await page.evaluate("""() => {
            window.__nb = window.jupyterapp.shell.currentWidget;
            window.__k = window.__nb.sessionContext.session.kernel;
        }""")
        await page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        await page.wait_for_function(ALL_RUN_JS, timeout=RUN_ALL_MS, polling=250)
        assert await page.evaluate(ERRORS_JS) == []

        # Both dashboards render with their counters: the closed session's final trace, and the live one.
        await page.wait_for_function(f"() => ({COUNTERS_JS})().length >= 2", timeout=CELL_MS)
        before = await page.evaluate(COUNTERS_JS)
        assert before[-1] == "3", before  # the extra session: open_page + one click
        dashboard = page.locator(".jupyter-widgets.widget-vbox", has_text="next sequence").first
        await dashboard.scroll_into_view_if_needed(timeout=CELL_MS)
        assert "retained bytes" in await dashboard.inner_text(timeout=CELL_MS)
        shot = tmp_path / "dashboard.png"
        await dashboard.screenshot(path=str(shot), timeout=CELL_MS)
        assert shot.stat().st_size > 1000
        if os.environ.get("PLASMATE_NB_UPDATE_SCREENSHOT") == "1":
            SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(shot, SCREENSHOT)

        # Run the final "one more action" cell once more: the live dashboard moves.
        await page.evaluate("""async () => {
            const nb = window.__nb;
            nb.content.activeCellIndex = nb.content.widgets.length - 1;
            await window.jupyterapp.commands.execute('notebook:run-cell');
        }""")
        await page.wait_for_function(f"() => ({COUNTERS_JS})().at(-1) === '4'", timeout=CELL_MS)
        await page.wait_for_function(ALL_RUN_JS, timeout=CELL_MS, polling=250)
        after = await page.evaluate(COUNTERS_JS)
        assert after[-1] == "4" and after[:-1] == before[:-1]
        assert await page.evaluate(ERRORS_JS) == []

        # The typed password is nowhere: not in the rendered text, widget values or the DOM.
        body = await page.inner_text("body")
        values = await page.evaluate(WIDGET_VALUES_JS)
        html = await page.content()
        assert "next sequence" in body and "retained bytes" in body
        assert lab.password not in body
        assert all(lab.password not in value for value in values)
        assert lab.password not in html
    finally:
        await context.close()
