"""JupyterLab in a real browser: notebook 01 runs, its dashboards render, fit and move, no secret shows.

JupyterLab is started on loopback (free port, token) with every settings, workspace, runtime
and IPython directory in a temp dir, on a temp copy of ``notebooks/`` so nothing is written
into the repository; it reads the repository's ``etc/jupyter`` (what ``make lab`` reads), which
turns widget state saving on. Chromium (Playwright, async API) opens ``01_explore_a_session.ipynb``,
runs all cells, reads the dashboards' counters and measures them at 1440 and 1000 px wide: every
figure, gauge and table header lies inside the cell's output area and nothing scrolls sideways.
It runs the final "one more action" cell again and sees the counters change. The password the
notebook types comes from the environment, so it is in no cell source: it must appear nowhere in
the rendered page. A second, small notebook drives one trace to 80 % of its byte bound (the
gauge turns amber) and on to eviction (red), is saved, its kernel shut down, and reopened: the
restored dashboard shows the last state. Run again (green, amber, red, then a failed action),
every text of its dashboard stands out at least 4.5:1 from what is behind it, in JupyterLab's
light and dark themes alike. Screenshots go to the test's temp dir (printed) and to
``$PLASMATE_NB_ARTIFACTS`` when set; ``PLASMATE_NB_UPDATE_SCREENSHOT=1`` refreshes
``docs/images/dashboard.png``.
"""

from __future__ import annotations

import asyncio
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

import nbformat
import pytest

from plasmate_nb.notebook._dashboard_card import LEVEL_COLOURS

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = "01_explore_a_session.ipynb"
BOUNDS_NOTEBOOK = "dashboard_bounds.ipynb"
WIDTHS = (1440, 1000)
SCREENSHOT = ROOT / "docs" / "images" / "dashboard.png"
LAB_START_S = 90.0
PAGE_MS = 90_000
RUN_ALL_MS = 240_000
CELL_MS = 60_000
STOP_S = 20.0

# Starting JupyterLab and a browser is part of the first test; a whole notebook may run 240 s.
pytestmark = [pytest.mark.ui, pytest.mark.timeout(600)]


@dataclass
class Lab:
    base: str
    token: str
    password: str
    root: Path

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


BOUNDS_CELLS = (
    """import plasmate_nb as pnb
site = pnb.DemoSite()
site.start()
s = pnb.Session()
s.open(site.url("/drift.html"), trace=True)
dashboard = s.trace.dashboard()
dashboard""",
    # Small scrolls until 80 % of the byte bound is used (about 45 events), then until one is evicted.
    """bound = s.trace.status().max_bytes
for _ in range(200):
    if s.trace.status().retained_bytes * 100 >= 80 * bound:
        break
    s.scroll("down", 1)""",
    """for _ in range(200):
    if s.trace.status().evicted_events:
        break
    s.scroll("down", 1)""",
    # A failed action: its outcome shows in the events table, in the alarm colour.
    """try:
    s.click("e_no_such_element")
except Exception as error:
    print(type(error).__name__)""",
)


def _write_bounds_notebook(path: Path) -> None:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in BOUNDS_CELLS])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, path)


def _artifacts(tmp_path: Path) -> list[Path]:
    """Where screenshots go: the test's temp dir, and $PLASMATE_NB_ARTIFACTS when set."""
    folders = [tmp_path / "artifacts"]
    if os.environ.get("PLASMATE_NB_ARTIFACTS"):
        folders.append(Path(os.environ["PLASMATE_NB_ARTIFACTS"]))
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
    print("screenshots in:", *folders)
    return folders


async def _screenshot(locator, name: str, folders: list[Path]) -> Path:
    shot = folders[0] / name
    await locator.screenshot(path=str(shot), timeout=CELL_MS)
    assert shot.stat().st_size > 1000
    for folder in folders[1:]:
        shutil.copyfile(shot, folder / name)
    return shot


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    _ensure_python3_kernelspec()
    home = tmp_path_factory.mktemp("lab")
    root = home / "notebooks"
    shutil.copytree(ROOT / "notebooks", root)
    _write_bounds_notebook(root / BOUNDS_NOTEBOOK)
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
        "JUPYTER_CONFIG_PATH": str(ROOT / "etc" / "jupyter"),  # as make lab: widget state saving on
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
    handle = Lab(f"http://127.0.0.1:{port}", token, password, root)
    try:
        _wait_until_up(handle, process, log)
        yield handle
    finally:
        _stop(handle, process)


COUNTERS_JS = """
() => Array.from(window.__nb.node.querySelectorAll(
  '.pnb-dashboard [data-counter="next_sequence"] > div:first-child')).map(e => e.textContent.trim())
"""
# Per dashboard card: its parts present, any part poking out of the cell's output area, any
# box that scrolls sideways (the output area, the card, the events box, the notebook itself).
LAYOUT_JS = """
() => Array.from(window.__nb.node.querySelectorAll('.pnb-dashboard')).map(card => {
  const output = card.closest('.jp-OutputArea-output').getBoundingClientRect();
  const inside = el => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && r.left >= output.left - 0.5 && r.right <= output.right + 0.5;
  };
  const parts = Array.from(card.querySelectorAll(
    '.pnb-header, .pnb-figure, .pnb-gauge, .pnb-explanation, .pnb-events, .pnb-events th, .pnb-redaction'));
  const boxes = [card.closest('.jp-OutputArea-output'), card, ...card.querySelectorAll('.pnb-events'),
                 window.__nb.content.node];
  return {
    figures: card.querySelectorAll('.pnb-figure').length,
    gauges: card.querySelectorAll('.pnb-gauge').length,
    headers: card.querySelectorAll('.pnb-events th').length,
    outside: parts.filter(el => !inside(el)).map(el => el.className || el.textContent.trim()),
    sideways: boxes.filter(el => el.scrollWidth > el.clientWidth).map(el => `${el.className}: ${el.scrollWidth} > ${el.clientWidth}`),
    beyond: Array.from(card.closest('.jp-OutputArea-output').querySelectorAll('*'))  // what pokes out, if anything
      .filter(el => el.getBoundingClientRect().right > output.right + 0.5).slice(-4)
      .map(el => `${el.tagName}.${el.className}: ${Math.round(el.getBoundingClientRect().right - output.right)} px`),
    card_height: card.getBoundingClientRect().height,
    events_box_height: card.querySelector('.pnb-events')?.getBoundingClientRect().height ?? 0,
  };
})
"""
GAUGE_JS = """
() => Array.from(window.__nb.node.querySelectorAll('.pnb-gauge')).map(gauge => [
  gauge.dataset.gauge, gauge.dataset.level, getComputedStyle(gauge.querySelector('.pnb-gauge-bar')).backgroundColor])
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


def _rgb(colour: str) -> str:
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({red}, {green}, {blue})"


async def _open(page, lab: Lab, notebook: str) -> None:
    """Open ``notebook`` and wait for its idle kernel; keep handles on the panel and the kernel."""
    # reset: open this notebook alone, not the tabs an earlier test left in the workspace.
    await page.goto(lab.url(f"/lab/tree/{notebook}") + "&reset", timeout=PAGE_MS)
    await page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=PAGE_MS)
    await page.wait_for_function(
        """name => {
            const panel = window.jupyterapp?.shell.currentWidget;
            return panel?.context?.path === name && panel.sessionContext?.session?.kernel?.status === 'idle';
        }""",
        arg=notebook,
        timeout=PAGE_MS,
    )
    # Keep references: shell.currentWidget becomes null once focus moves into a widget.
    await page.evaluate("""() => {
        window.__nb = window.jupyterapp.shell.currentWidget;
        window.__k = window.__nb.sessionContext.session.kernel;
    }""")


async def _run_cell(page, index: int) -> None:
    """Run cell ``index`` of the open notebook and wait (bounded) until it has run.

    Its execution count is cleared first: a fresh kernel numbers from 1 again, so a saved
    notebook's old count can equal the new one."""
    await page.evaluate(
        """index => {
            const nb = window.__nb;
            nb.content.model.cells.get(index).executionCount = null;
            nb.content.activeCellIndex = index;
            void window.jupyterapp.commands.execute('notebook:run-cell');  // waited for below, bounded
        }""",
        index,
    )
    await page.wait_for_function(
        """index => {
            const count = window.__nb.content.model.cells.get(index).executionCount;
            return window.__k.status === 'idle' && count !== null
                && !window.__nb.content.widgets[index].promptNode.textContent.includes('*');
        }""",
        arg=index,
        timeout=CELL_MS,
        polling=250,
    )


async def _check_layout(page, width: int) -> list[dict]:
    """At ``width`` px: every dashboard's parts inside its output area, nothing scrolling sideways."""
    await page.set_viewport_size({"width": width, "height": 1000})
    await page.wait_for_function(
        "width => innerWidth === width && window.__nb.content.node.getBoundingClientRect().right <= width",
        arg=width,
        timeout=CELL_MS,
    )
    layouts = await page.evaluate(LAYOUT_JS)
    assert layouts, "no dashboard rendered"
    for layout in layouts:
        assert layout["figures"] == 5 and layout["gauges"] == 2, f"{width} px: {json.dumps(layout)}"
        assert layout["outside"] == [] and layout["sideways"] == [], f"{width} px: {json.dumps(layout)}"
    return layouts


async def test_dashboard_renders_fits_moves_and_shows_no_secret(lab: Lab, browser, tmp_path: Path) -> None:
    folders = _artifacts(tmp_path)
    context = await browser.new_context(viewport={"width": WIDTHS[0], "height": 1000})
    try:
        page = await context.new_page()
        await _open(page, lab, NOTEBOOK)
        await page.evaluate("() => { void window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
        # Done, or stopped at an error (Lab runs no further cell then): either way, say which.
        await page.wait_for_function(
            f"() => ({ALL_RUN_JS})() || (window.__k.status === 'idle' && ({ERRORS_JS})().length > 0)",
            timeout=RUN_ALL_MS,
            polling=250,
        )
        assert await page.evaluate(ERRORS_JS) == []

        # Both dashboards render with their counters: the closed session's final trace, and the live one.
        await page.wait_for_function(f"() => ({COUNTERS_JS})().length >= 2", timeout=CELL_MS)
        before = await page.evaluate(COUNTERS_JS)
        assert before[-1] == "3", before  # the extra session: open_page + one click
        final_card = page.locator(".pnb-dashboard", has_text="final trace").first
        shots: dict[int, Path] = {}
        for width in WIDTHS:
            layouts = await _check_layout(page, width)
            assert all(layout["headers"] == 9 for layout in layouts), layouts  # both have events
            await final_card.scroll_into_view_if_needed(timeout=CELL_MS)
            assert "retained bytes" in await final_card.inner_text(timeout=CELL_MS)
            shots[width] = await _screenshot(final_card, f"dashboard-{width}px.png", folders)
        if os.environ.get("PLASMATE_NB_UPDATE_SCREENSHOT") == "1":
            SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(shots[WIDTHS[0]], SCREENSHOT)  # the wide layout: the whole card at a glance

        # Run the final "one more action" cell once more: the live dashboard moves.
        await _run_cell(page, await page.evaluate("() => window.__nb.content.widgets.length - 1"))
        await page.wait_for_function(f"() => ({COUNTERS_JS})().at(-1) === '4'", timeout=CELL_MS)
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


def _saved_dashboard_html(path: Path) -> list[str]:
    """The HTML widget values in a saved notebook's widget state (empty when none was saved)."""
    saved = json.loads(path.read_text(encoding="utf-8"))
    state = saved["metadata"].get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    models = state.get("state", {}).values()
    return [
        m["state"].get("value", "") for m in models if "pnb-dashboard" in str(m["state"].get("value", ""))
    ]


async def test_gauges_turn_amber_then_red_and_a_reopened_notebook_shows_the_last_state(
    lab: Lab, browser, tmp_path: Path
) -> None:
    folders = _artifacts(tmp_path)
    context = await browser.new_context(viewport={"width": WIDTHS[1], "height": 1000})
    try:
        page = await context.new_page()
        await _open(page, lab, BOUNDS_NOTEBOOK)
        levels = []
        for index in range(len(BOUNDS_CELLS)):
            await _run_cell(page, index)
            assert await page.evaluate(ERRORS_JS) == []
            await page.wait_for_function(
                "() => window.__nb.node.querySelector('.pnb-gauge')", timeout=CELL_MS
            )
            levels.append(
                dict((name, (level, colour)) for name, level, colour in await page.evaluate(GAUGE_JS))
            )
        # Opened: green. At 80 % of the byte bound: amber (the event gauge is far from its bound). Evicting: red.
        assert levels[0] == {
            "events": ("ok", _rgb(LEVEL_COLOURS["ok"])),
            "bytes": ("ok", _rgb(LEVEL_COLOURS["ok"])),
        }
        assert levels[1] == {
            "events": ("ok", _rgb(LEVEL_COLOURS["ok"])),
            "bytes": ("near", _rgb(LEVEL_COLOURS["near"])),
        }
        red = ("dropping", _rgb(LEVEL_COLOURS["dropping"]))
        assert levels[2] == {"events": red, "bytes": red}
        card = page.locator(".pnb-dashboard").first
        assert "Events are being lost" in await card.inner_text()
        layout = (await _check_layout(page, WIDTHS[1]))[0]
        assert layout["events_box_height"] < 400 and layout["card_height"] < 900, (
            layout
        )  # ~50 events, bounded
        await card.scroll_into_view_if_needed(timeout=CELL_MS)
        await _screenshot(card, "dashboard-evicting.png", folders)
        last = await page.evaluate(COUNTERS_JS)

        # Save (widget state included), shut the kernel down, open the notebook again.
        path = lab.root / BOUNDS_NOTEBOOK
        await page.evaluate("() => { void window.jupyterapp.commands.execute('docmanager:save'); }")
        deadline = time.monotonic() + CELL_MS / 1000
        while not _saved_dashboard_html(path) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        saved = _saved_dashboard_html(path)
        assert saved and f">{last[0]}</div>" in saved[0]  # the saved widget state is the last state
        for session in _api(lab, "/api/sessions") or []:  # type: ignore[union-attr]
            if session["path"].endswith(BOUNDS_NOTEBOOK):
                _api(lab, f"/api/sessions/{session['id']}", method="DELETE")
        await page.close()
        page = await context.new_page()
        await _open(page, lab, BOUNDS_NOTEBOOK)
        await page.wait_for_function(f"() => ({COUNTERS_JS})().length === 1", timeout=CELL_MS)
        assert await page.evaluate(COUNTERS_JS) == last
        assert "model not found" not in await page.inner_text(".jp-Notebook")
        assert [level for _, level, _ in await page.evaluate(GAUGE_JS)] == ["dropping", "dropping"]
        reopened = page.locator(".pnb-dashboard").first
        await reopened.scroll_into_view_if_needed(timeout=CELL_MS)
        await _screenshot(reopened, "dashboard-reopened.png", folders)
    finally:
        await context.close()


# Every element of the dashboards that shows text of its own: its colour (any opacity of it and
# its ancestors blended in) against the first opaque background behind it, as a WCAG contrast ratio.
# Conservative for the card as it is: opacity above that background fades it too (taken as text
# fading only), and a semi-transparent background in between is not blended (the card has none).
CONTRAST_JS = """
() => {
  // rgb()/rgba() in 0-255, or color(srgb r g b / a) in 0-1 (what a color-mix() computes to)
  const channels = s => {
    const n = (s.match(/-?[\\d.]+(e[-+]?\\d+)?/gi) || []).map(Number);
    return s.startsWith('color(srgb') ? n.map((v, i) => i < 3 ? v * 255 : v) : n;
  };
  const linear = v => { v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  const luminance = ([r, g, b]) => 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
  const over = (top, alpha, bottom) => top.map((c, i) => c * alpha + bottom[i] * (1 - alpha));
  const behind = el => {
    for (let e = el; e; e = e.parentElement) {
      const c = channels(getComputedStyle(e).backgroundColor);
      if (c.length === 3 || c[3] >= 0.99) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const opacity = el => {
    let o = 1;
    for (let e = el; e; e = e.parentElement) o *= Number(getComputedStyle(e).opacity);
    return o;
  };
  const own = el => Array.from(el.childNodes).some(n => n.nodeType === 3 && n.data.trim() !== '');
  return Array.from(window.__nb.node.querySelectorAll('.pnb-dashboard *')).filter(own).map(el => {
    const bg = behind(el), fg = channels(getComputedStyle(el).color);
    const seen = over(fg.slice(0, 3), (fg.length === 4 ? fg[3] : 1) * opacity(el), bg);
    const [hi, lo] = [luminance(seen), luminance(bg)].sort((a, b) => b - a);
    return {text: el.textContent.trim().slice(0, 40), ratio: (hi + 0.05) / (lo + 0.05)};
  });
}
"""
MIN_CONTRAST = 4.5  # WCAG AA for body text
THEMES = ("JupyterLab Light", "JupyterLab Dark")


async def _use_theme(page, theme: str) -> None:
    await page.evaluate(
        "theme => { void window.jupyterapp.commands.execute('apputils:change-theme', {theme}); }", theme
    )
    await page.wait_for_function(
        "light => document.body.dataset.jpThemeLight === light",
        arg=str(theme.endswith("Light")).lower(),
        timeout=CELL_MS,
    )


async def test_the_dashboard_reads_clearly_in_the_light_and_the_dark_theme(
    lab: Lab, browser, tmp_path: Path
) -> None:
    folders = _artifacts(tmp_path)
    context = await browser.new_context(viewport={"width": WIDTHS[0], "height": 1000})
    page = await context.new_page()
    try:
        await _open(page, lab, BOUNDS_NOTEBOOK)
        # Green, then amber, then red (eviction: an alarm figure), then a failed action's outcome.
        for index in range(len(BOUNDS_CELLS)):
            await _run_cell(page, index)
            assert await page.evaluate(ERRORS_JS) == []
            for theme in THEMES:
                await _use_theme(page, theme)
                texts = await page.evaluate(CONTRAST_JS)
                assert len(texts) > 20, texts  # header, figures, gauges, explanation, table
                faint = [text for text in texts if text["ratio"] < MIN_CONTRAST]
                assert faint == [], f"{theme}, after cell {index}: {faint}"
        card = page.locator(".pnb-dashboard").first
        assert "Events are being lost" in await card.inner_text()
        assert "error:" in await card.locator(".pnb-events").inner_text()
        for theme in THEMES:
            await _use_theme(page, theme)
            for width in WIDTHS:
                await _check_layout(page, width)
                await card.scroll_into_view_if_needed(timeout=CELL_MS)
                await _screenshot(card, f"dashboard-{theme.split()[-1].lower()}-{width}px.png", folders)
    finally:
        try:
            await _use_theme(page, THEMES[0])  # the lab is shared by this module's tests
        finally:
            await context.close()
