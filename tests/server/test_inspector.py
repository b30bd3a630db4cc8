"""The real MCP Inspector CLI against ``plasmate-nb serve`` (stdio and HTTP).

Skipped, with the reason, when ``npx``/``npm`` are missing or the Inspector cannot be installed.
Over HTTP the Inspector calls every tool of the catalogue once, with valid arguments, and gets
a non-error answer; ``ard_discover`` reaches a loopback HTTPS site whose throw-away certificate
the server process trusts through ``SSL_CERT_FILE``.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from plasmate_nb.tools.catalogue import DEFAULT_TOOLS
from tests.reliability.support import TOKEN, ServerProcess
from tests.tools.local_http import Answer, ScriptedServer, scripted, self_signed

INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
# The first test installs the Inspector (up to 300 s on a cold cache) before it runs.
pytestmark = pytest.mark.timeout(600)
INSTALL_DIR = Path(os.environ.get("PLASMATE_NB_INSPECTOR_DIR", Path.home() / ".cache/plasmate_nb/inspector"))
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


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A throw-away self-signed certificate for 127.0.0.1 (trusted by the HTTP server process only)."""
    return self_signed(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def https_site(tls: tuple[Path, Path]) -> Iterator[ScriptedServer]:
    with scripted({"/": Answer(200, "<p>nothing to discover</p>")}, tls=tls) as server:
        yield server


@pytest.fixture(scope="module")
def http_endpoint(tls: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # Its log goes to a file: a pipe nobody reads would stop the server once it filled.
    log = tmp_path_factory.mktemp("inspector") / "server.log"
    server = ServerProcess(log, env={"SSL_CERT_FILE": str(tls[0])})
    try:
        yield server.url
    finally:
        server.stop()


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


def _elements(som: dict[str, Any]) -> Iterator[dict[str, Any]]:
    def walk(elements: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for element in elements:
            yield element
            yield from walk(element.get("children") or [])

    for region in som.get("regions") or []:
        yield from walk(region.get("elements") or [])


def _element_id(som: dict[str, Any], role: str, name: str) -> str:
    found = [
        e["id"] for e in _elements(som) if e.get("role") == role and name in (e.get("label"), e.get("text"))
    ]
    assert len(found) == 1, (role, name, found)
    return found[0]


def test_inspector_calls_every_catalogue_tool_over_http(
    inspector: list[str], http_endpoint: str, demo, https_site: ScriptedServer
) -> None:
    """One call of every tool in the catalogue, in an order that gives each a valid target."""
    auth = ["--transport", "http", "--header", f"Authorization: Bearer {TOKEN}"]

    def call(tool: str, arguments: dict[str, Any]) -> dict:
        pairs = [f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in arguments.items()]
        args = ["--tool-arg", *pairs] if pairs else []
        result = _run(inspector, http_endpoint, *auth, "--method", "tools/call", "--tool-name", tool, *args)
        assert not result.get("isError"), (tool, result)
        assert result["content"], (tool, result)
        return result

    def payload(result: dict) -> Any:
        text = result["content"][0]["text"]
        try:
            return json.loads(text)
        except ValueError:
            return text

    login = demo.url("/login.html")
    opened = payload(call("open_page", {"url": login, "trace": True}))
    sid, som = opened["session_id"], opened
    email = _element_id(som, "text_input", "Email")
    trace_id = payload(call("trace_status", {"session_id": sid}))["trace_id"]
    session = {"session_id": sid}
    # Valid arguments for each tool; the session's own tools act on the login page opened above.
    arguments: dict[str, Callable[[], dict[str, Any]]] = {
        "open_page": lambda: {"url": demo.url("/index.html"), "trace": False},  # a second session
        "session_status": dict,
        "trace_status": lambda: session,
        "trace_export": lambda: session,
        "trace_clear": lambda: session,
        "replay_validate": lambda: {**session, "trace_id": trace_id, "sequence": 1},
        "evaluate": lambda: {**session, "expression": "document.title"},
        "type_text": lambda: {**session, "element_id": email, "text": "analyst@example.test"},
        "clear": lambda: {**session, "element_id": email},
        "select_option": lambda: {
            **session,
            "element_id": _element_id(som, "select", "Plan"),
            "value": "team",
        },
        "toggle": lambda: {**session, "element_id": _element_id(som, "checkbox", "Remember me")},
        "scroll": lambda: {**session, "direction": "down", "pixels": 200},
        "get_cookies": lambda: session,
        "set_cookies": lambda: {
            **session,
            "cookies": [{"name": "probe", "value": "1", "url": demo.url("/")}],
        },
        "clear_cookies": lambda: {**session, "name": "probe"},
        "click": lambda: {**session, "element_id": _element_id(som, "link", "Home")},
        "navigate_to": lambda: {**session, "url": login},
        "close_page": lambda: session,
        "fetch_page": lambda: {"url": login},
        "extract_text": lambda: {"url": login},
        "extract_links": lambda: {"url": login},
        "ard_discover": lambda: {"url": https_site.url("/"), "timeout_ms": 5000},
        "crawl_policy": lambda: {"url": demo.url("/private")},
        "inspect_page": lambda: {"url": login},
        "cache_status": dict,
        "screenshot_page": lambda: {"url": login, "width": 320, "height": 200},
        "page_som": lambda: {**session, "selector": "form"},
    }
    names = [
        tool.name for tool in DEFAULT_TOOLS
    ]  # replay_execute is opt-in (tests/server/test_replay_execute_transports.py)
    assert sorted(arguments) == sorted(names), "a catalogue tool has no arguments here (or one is stale)"
    order = [n for n in names if n not in ("click", "navigate_to", "close_page")] + [
        "click",
        "navigate_to",
        "close_page",
    ]
    answered: dict[str, dict] = {}
    for name in order:  # close_page last: every session tool runs on an open session
        answered[name] = call(name, arguments[name]())
    assert set(answered) == set(names)

    image = answered["screenshot_page"]["content"][0]
    assert image["type"] == "image" and image["mimeType"] == "image/png"
    assert base64.b64decode(image["data"])[:8] == b"\x89PNG\r\n\x1a\n"
    assert payload(answered["fetch_page"])["title"] == "Sign in"
    assert {region["role"] for region in payload(answered["page_som"])["regions"]} == {"form"}
    assert payload(answered["close_page"])["closed"] is True
    report = payload(answered["ard_discover"])
    assert report["sources"], report
