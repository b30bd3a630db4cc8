"""Every Python snippet in README.md runs as written, in order, in one fresh Jupyter kernel.

The README's ```python blocks become the cells of one notebook, executed top to bottom by a
real ``python3`` kernel (nbclient) in a temporary folder, so files the snippets write (``trace.json``)
land there. A fenced block may be tagged by an HTML comment on the line just before it:

- ``<!-- readme-test: background -->`` before a shell block: each command in it is started in
  the background before the snippets run (a server the README tells the reader to start), and
  stopped afterwards. Each must name its ``--port``; the test waits until that port accepts
  connections. The port is replaced by a free one, in the command and in every snippet, so
  parallel runs cannot collide.
- ``<!-- readme-test: skip: <reason> -->`` before a Python block: not run; the reason is shown
  in the README itself and must not be empty.

Untagged shell, JSON and other blocks are documentation only. Commands and kernel get the same
environment a reader's activated virtual environment gives: the package's scripts on ``PATH``
and ``PLASMATE_NB_MCP_TOKEN`` set (the README tells the reader to set it for both).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.notebooks.test_notebooks import _ensure_python3_kernelspec

README = Path(__file__).resolve().parents[1] / "README.md"
CELL_TIMEOUT_S = 180
START_TIMEOUT_S = 60.0
FENCE = re.compile(r"(?:^<!-- readme-test: (?P<tag>[\w-]+)(?::\s*(?P<reason>.*?))? -->\n)?^```(?P<lang>\w*)\n(?P<body>.*?)^```$", re.M | re.S)  # fmt: skip


@dataclass(frozen=True)
class Block:
    lang: str
    body: str
    tag: str | None
    reason: str | None


def readme_blocks(text: str) -> list[Block]:
    """The fenced blocks of ``text`` in order, each with the readme-test tag just before it."""
    return [Block(m["lang"], m["body"], m["tag"], m["reason"]) for m in FENCE.finditer(text)]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _commands(block: Block) -> list[str]:
    lines = [line.split(" #", 1)[0].strip() for line in block.body.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def _port_of(command: str) -> int:
    words = shlex.split(command)
    assert "--port" in words, f"a background command must name its --port: {command!r}"
    return int(words[words.index("--port") + 1])


def _wait_for_port(port: int, process: subprocess.Popen[bytes], command: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        assert process.poll() is None, f"{command!r} exited with {process.returncode}"
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        assert time.monotonic() < deadline, f"{command!r} did not listen on port {port}"
        time.sleep(0.1)


@pytest.fixture
def reader_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """An activated environment's variables, Jupyter's own dirs in ``tmp_path``, and the token."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "jupyter-runtime"))
        patch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
        _ensure_python3_kernelspec()
        env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PLASMATE_NB_MCP_TOKEN"] = "readme-" + secrets.token_urlsafe(24)
    yield env


@pytest.fixture
def background(reader_env: dict[str, str], tmp_path: Path) -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:  # each in its own process group, which only this test started
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=15)


def test_readme_blocks_are_found_and_tagged_sensibly() -> None:
    blocks = readme_blocks(README.read_text(encoding="utf-8"))
    python = [b for b in blocks if b.lang == "python"]
    assert len(python) >= 3 and "pnb.DemoSite()" in python[0].body  # the quickstart comes first
    for block in blocks:
        assert block.tag in (None, "background", "skip"), f"unknown readme-test tag {block.tag!r}"
        if block.tag == "skip":
            assert block.lang == "python" and (block.reason or "").strip(), "a skip needs a reason"
        if block.tag == "background":
            assert block.lang == "sh" and all(_port_of(c) for c in _commands(block))


def test_every_readme_python_snippet_runs(
    reader_env: dict[str, str], background: list[subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    blocks = readme_blocks(README.read_text(encoding="utf-8"))
    ports = {
        _port_of(command): _free_port()
        for block in blocks
        if block.tag == "background"
        for command in _commands(block)
    }

    def with_free_ports(text: str) -> str:
        for readme_port, port in ports.items():
            text = re.sub(rf"\b{readme_port}\b", str(port), text)
        return text

    for block in blocks:
        if block.tag != "background":
            continue
        for command in _commands(block):
            command = with_free_ports(command)
            process = subprocess.Popen(
                ["bash", "-c", f"exec {command}"], env=reader_env, cwd=tmp_path, start_new_session=True,
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            background.append(process)
            _wait_for_port(_port_of(command), process, command)

    snippets = [b.body for b in blocks if b.lang == "python" and b.tag != "skip"]
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(with_free_ports(body)) for body in snippets]
    client = NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute(env=reader_env)

    for index, cell in enumerate(notebook.cells):
        errors = [o for o in cell.outputs if o["output_type"] == "error"]
        assert not errors, (
            f"README python block {index + 1} failed: {errors[0]['ename']}: {errors[0]['evalue']}\n"
            + cell.source
        )
    outputs = json.dumps([cell.outputs for cell in notebook.cells], ensure_ascii=False)
    typed = {value for body in snippets for value in re.findall(r'type_text\(.*, "([^"]+)"\)', body)}
    assert typed, "the quickstart types something"
    for value in typed:  # what the README types never comes back in an output
        assert value not in outputs
    assert reader_env["PLASMATE_NB_MCP_TOKEN"] not in outputs
    assert all(process.poll() is None for process in background), "a background server died"


def test_the_readme_names_every_tool_in_tools_list_order() -> None:
    from plasmate_nb.tools.catalogue import TOOLS

    text = README.read_text(encoding="utf-8")
    paragraph = text[text.index("Tools, in `tools/list` order") :].split("\n\n")[0]
    arguments = {"trace", "append", "final_trace"}  # named beside their tools
    named = [name for name in re.findall(r"`([a-z_]+)`", paragraph) if name not in arguments]
    assert named == [tool.name for tool in TOOLS]  # every tool, in order, and nothing else
