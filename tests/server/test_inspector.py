"""The real MCP Inspector CLI against ``plasmate-nb serve`` (stdio and HTTP).

Skipped, with the reason, when ``npx``/``npm`` are missing or the Inspector cannot be installed.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
INSTALL_DIR = Path(os.environ.get("PLASMATE_NB_INSPECTOR_DIR", Path.home() / ".cache/plasmate_nb/inspector"))
TOKEN = "inspector-" + "k" * 32
SERVE = [sys.executable, "-m", "plasmate_nb", "serve", "--allow-private-network"]


@pytest.fixture(scope="module")
def inspector() -> list[str]:
    if not (shutil.which("npx") and shutil.which("npm")):
        pytest.skip("npx/npm not available: the MCP Inspector CLI cannot run here")
    binary = INSTALL_DIR / "node_modules" / ".bin" / "mcp-inspector"
    if not binary.exists():
        INSTALL_DIR.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(INSTALL_DIR), INSPECTOR],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        if done.returncode != 0 or not binary.exists():
            pytest.skip(f"could not install {INSPECTOR}: {done.stderr.strip()[-300:]}")
    return [str(binary), "--cli"]


def _run(inspector: list[str], *args: str) -> dict:
    done = subprocess.run([*inspector, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def http_endpoint() -> Iterator[str]:
    port = _free_port()
    server = subprocess.Popen(
        [*SERVE, "--transport", "http", "--port", str(port), "--token", TOKEN],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        line = server.stderr.readline()
        assert line.startswith("MCP HTTP endpoint: "), line
        yield line.split(": ", 1)[1].strip()
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_inspector_lists_tools_over_stdio(inspector: list[str]) -> None:
    listed = _run(inspector, *SERVE, "--method", "tools/list")
    names = {tool["name"] for tool in listed["tools"]}
    assert {"open_page", "trace_status", "trace_export", "replay_validate", "close_page"} <= names


def test_inspector_drives_a_traced_session_over_http(inspector: list[str], http_endpoint: str, demo) -> None:
    auth = ["--transport", "http", "--header", f"Authorization: Bearer {TOKEN}"]

    def call(tool: str, *pairs: str) -> dict:
        result = _run(inspector, http_endpoint, *auth, "--method", "tools/call", "--tool-name", tool,
                      "--tool-arg", *pairs)  # fmt: skip
        assert not result.get("isError"), result
        return json.loads(result["content"][0]["text"])

    opened = call("open_page", f"url={demo.url('/login.html')}", "trace=true")
    sid = opened["session_id"]
    status = call("trace_status", f"session_id={sid}")
    assert status["enabled"] is True and status["retained_events"] == 1
    closed = call("close_page", f"session_id={sid}")
    assert closed["closed"] is True and closed["final_trace"]["events"][-1]["action"] == "close_page"
