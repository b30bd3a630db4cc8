"""Errors as a notebook user meets them, in a real kernel (nbclient): short, no internals, a hint.

One kernel runs every cell (kernels are slow to start). Each mistake is a cell of its own (a bad
setting of the embedded engine comes before the cell that starts it); its error output must
show the user's cell and the cause only: at most five frames, none in
plasmate_nb, and a ``hint:`` line. Connecting with a wrong token or without ``/mcp`` must say
so, against a real MCP server over streamable HTTP (the one ``pnb.serve()`` embeds).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

import plasmate_nb
from tests.notebooks.test_notebooks import jupyter_env  # noqa: F401  # the fixture: a kernelspec and temp dirs

CELL_TIMEOUT_S = 120
PACKAGE_DIR = str(Path(plasmate_nb.__file__).parent)
MAX_FRAMES = 5
ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: A frame's header in IPython's tracebacks: ``Cell In[3], line 1`` or ``File /path/x.py:12, in f()``.
FRAME = re.compile(r"^(Cell In\[\d+\], line \d+|File \S+)", re.M)
SECRET_PATH = "secret-path-7f3a"
UNKNOWN_OPTION = "Platinum-9c1e"

#: Mistakes made before the embedded engine starts: run first, then SETUP starts it.
BEFORE_SETUP = {
    "bad memory setting": (
        "import os\nimport plasmate_nb as pnb\n"
        'os.environ["PLASMATE_NB_RENDERER_MEMORY_MB"] = "lots"\n'
        'pnb.Session().open("http://127.0.0.1:9/")'
    ),
}
SETUP = """
import os
import plasmate_nb as pnb
os.environ.pop("PLASMATE_NB_RENDERER_MEMORY_MB", None)  # corrected: read again, as the engine never started
site = pnb.DemoSite().start()
server = pnb.serve()
s = pnb.Session()
page = s.open(site.url("/login.html"))
plan = page.find(label="Plan")
wanted = {option!r}
typo = {typo!r}
""".format(option=UNKNOWN_OPTION, typo=f"localhost:8888/{SECRET_PATH}")

#: Cell name -> code; every one of them raises.
MISTAKES = {
    "wrong element id": 's.click("e_doesnotexist")',
    "unknown option": "s.select_option(plan, wanted)",
    "blocked URL": "s.navigate(typo)",
    "wrong token": 'pnb.Session.connect(server.url, token="w" * 40).open(site.url("/login.html"))',
    "no /mcp": 'pnb.Session.connect(server.url.removesuffix("/mcp"), token=server.token).open(site.url("/"))',
    "async call": 'a = pnb.AsyncSession()\nawait a.open(site.url("/login.html"))\nawait a.click("e_doesnotexist")',
    "missing command": 'pnb.Session.connect(command=["plasmate-nb-missing", "serve"]).open(site.url("/"))',
    "after close": "s.close()\ns.trace.events()",
    "port in use": "pnb.serve(port=int(server.url.rsplit(':', 1)[1].removesuffix('/mcp')))",
    "missing trace file": 'pnb.load_trace("/nonexistent/trace.json")',
    "not an export": """pnb.load_trace('{"events": []}')""",
    "unknown replay code": 'pnb.explain("no_such_code")',
    "find without criteria": "page.find()",
    "find a misspelled label": 'page.find(label="Emial")',
}


def _run_cells(env: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Run the mistakes before SETUP, SETUP, then every other mistake in one kernel; each
    mistake's error output, by name."""
    mistakes = {**BEFORE_SETUP, **MISTAKES}
    codes = [*BEFORE_SETUP.values(), SETUP, *MISTAKES.values()]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code) for code in codes])
    client = NotebookClient(notebook, timeout=CELL_TIMEOUT_S, kernel_name="python3", allow_errors=True)
    client.execute(env=env)
    setup = notebook.cells.pop(len(BEFORE_SETUP))
    setup_errors = [o for o in setup.outputs if o["output_type"] == "error"]
    assert not setup_errors, setup_errors
    found = {}
    for name, cell in zip(mistakes, notebook.cells, strict=True):
        errors = [o for o in cell.outputs if o["output_type"] == "error"]
        assert len(errors) == 1, f"{name}: {cell.outputs}"
        found[name] = errors[0]
    return found


def test_mistakes_in_a_kernel_show_a_short_traceback_with_a_hint(jupyter_env: dict[str, str]) -> None:  # noqa: F811
    outputs = _run_cells(jupyter_env)
    texts = {name: ANSI.sub("", "\n".join(o["traceback"])) for name, o in outputs.items()}
    for name, text in texts.items():
        frames = FRAME.findall(text)
        assert 1 <= len(frames) <= MAX_FRAMES, f"{name}: {len(frames)} frames\n{text}"
        assert all(frame.startswith("Cell In[") for frame in frames), f"{name}: an internal frame\n{text}"
        assert PACKAGE_DIR not in text, f"{name}: a module's path\n{text}"
        assert "\nhint: " in text, f"{name}: no hint\n{text}"
        assert SECRET_PATH not in text and UNKNOWN_OPTION not in text, f"{name}: a typed value is shown"

    assert outputs["wrong element id"]["evalue"] == "Element not found: e_doesnotexist"
    assert "page.elements" in texts["wrong element id"]
    assert outputs["unknown option"]["evalue"] == f"Option not found: value of {len(UNKNOWN_OPTION)} bytes"
    assert "'Team'" in texts["unknown option"] and "'Enterprise'" in texts["unknown option"]
    assert "scheme 'localhost' is not allowed" in outputs["blocked URL"]["evalue"]
    assert "did you mean http://localhost:8888/…?" in texts["blocked URL"]
    assert outputs["wrong token"]["ename"] == "ServerConnectionError"
    assert "token was refused (HTTP 401)" in outputs["wrong token"]["evalue"]
    assert "w" * 40 not in texts["wrong token"] and "pass the token" in texts["wrong token"]
    assert "server.token for server = pnb.serve()" in texts["wrong token"]
    assert "not an MCP endpoint (HTTP 404)" in outputs["no /mcp"]["evalue"]
    assert re.search(r"did you mean http://127\.0\.0\.1:\d+/mcp\?", texts["no /mcp"])
    assert outputs["async call"]["evalue"] == "Element not found: e_doesnotexist"
    assert "no command 'plasmate-nb-missing'" in outputs["missing command"]["evalue"]
    assert "sys.executable" in texts["missing command"]
    assert "s.final_trace" in texts["after close"]
    assert outputs["port in use"]["ename"] == "ServerConfigError"
    assert "Address already in use; choose another port" in outputs["port in use"]["evalue"]
    assert "call stop() on that server first" in texts["port in use"]
    assert outputs["bad memory setting"]["ename"] == "EnvironmentSettingError"
    assert outputs["bad memory setting"]["evalue"] == (
        "PLASMATE_NB_RENDERER_MEMORY_MB must be a whole number of megabytes, at least 256 (0: no bound)"
    )
    assert "kernel restart" in texts["bad memory setting"]
    assert outputs["missing trace file"]["ename"] == "TraceFormatError"
    assert outputs["missing trace file"]["evalue"] == (
        "cannot read the file /nonexistent/trace.json (No such file or directory)"
    )
    assert "os.getcwd()" in texts["missing trace file"]
    assert outputs["not an export"]["evalue"].endswith(": the required field 'schema' is missing")
    assert "to_json(path)" in texts["not an export"]
    assert outputs["unknown replay code"]["ename"] == "UnknownReplayCode"
    assert "replay_validate_all()" in texts["unknown replay code"]
    assert outputs["find without criteria"]["ename"] == "MissingCriteria"
    assert 'page.find(label="Email")' in texts["find without criteria"]
    assert outputs["find a misspelled label"]["ename"] == "ElementNotFound"
    assert outputs["find a misspelled label"]["evalue"].startswith(
        "no element matches label='Emial'; the nearest:"
    )
    assert "\nhint: did you mean page.find(label='Email')?" in texts["find a misspelled label"]
