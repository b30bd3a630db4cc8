"""The server's command line end to end: policy flags over a real ``plasmate-nb serve`` and its gate, the
reference's names (``plasmate-nb mcp``, ``--transport streamable-http``), and how it ends."""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import sys
from fractions import Fraction

import psutil
import pytest

from plasmate_nb.browser import EngineConfig
from plasmate_nb.cli import build_parser
from plasmate_nb.client import StdioTransport, ToolError
from plasmate_nb.server.cli import engine_config_from_args
from tests.server.raw_jsonrpc import RawStdio


def test_allow_network_reaches_the_engine_config_and_refuses_non_networks():
    args = build_parser().parse_args(
        [
            "serve",
            "--allow-network",
            "10.0.0.0/8",
            "--allow-network",
            "fd00::1/128",
            "--allow-host",
            "intranet.test",
        ]
    )
    config = engine_config_from_args(args)
    assert config.allowed_networks == ("10.0.0.0/8", "fd00::1/128")
    assert config.allowed_hosts == ("intranet.test",) and config.allow_private_network is False
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--allow-network", "intranet"])


@pytest.mark.parametrize(
    ("flag", "value", "said"),
    [
        ("--idle-timeout", "-5", "must be a number of seconds, 0 for never"),  # reaped every session at once
        ("--idle-timeout", "inf", "must be a number of seconds, 0 for never"),
        ("--max-sessions", "0", "must be at least 1"),  # refused every open_page
        ("--max-sessions", "-2", "must be at least 1"),
    ],
)
def test_a_capacity_or_idle_timeout_that_cannot_work_is_refused_at_start(
    flag: str, value: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args(["serve", flag, value])
    assert stopped.value.code == 2 and f"argument {flag}: {said}" in capsys.readouterr().err


@pytest.mark.parametrize(
    "setting",
    [
        {"action_timeout": 0},
        {"navigation_timeout": -1.0},
        {"evaluate_timeout": float("nan")},
        {"settle_timeout": float("inf")},
        {"browser_timeout": "5"},
        {"idle_timeout": -3},
        {"idle_timeout": "30"},
        {"action_timeout": True},
        {"max_sessions": 0},
        {"max_sessions": True},
    ],
)
def test_an_engine_config_that_cannot_work_is_refused_by_name(setting: dict[str, object]) -> None:
    (name,) = setting
    with pytest.raises(ValueError, match=f"^{name} must be "):
        EngineConfig(**setting)  # type: ignore[arg-type]


def test_idle_timeout_zero_still_means_no_reaping_and_other_numbers_are_accepted() -> None:
    assert build_parser().parse_args(["serve", "--idle-timeout", "0"]).idle_timeout == 0
    assert EngineConfig(idle_timeout=0).idle_timeout == 0  # the engine reaps only with a positive one
    assert (
        EngineConfig(action_timeout=Fraction(3, 2), max_sessions=3).action_timeout == 1.5
    )  # any real number


async def test_allow_network_admits_addresses_however_named_and_the_refusal_names_the_flags(demo):
    port = demo.base_url.rsplit(":", 1)[1]
    server = StdioTransport([sys.executable, "-m", "plasmate_nb", "serve", "--allow-network", "127.0.0.1/32"])
    try:
        opened = await server.call("open_page", {"url": f"http://localhost:{port}/login.html"})
        assert opened["title"] == "Sign in"  # a name, admitted by the address it resolves to
        with pytest.raises(ToolError) as refused:
            await server.call(
                "navigate_to",
                {"session_id": opened["session_id"], "url": f"http://127.0.0.2:{port}/login.html"},
            )
        message = str(refused.value)
        assert "Outbound URL blocked: address 127.0.0.2 is not globally routable" in message
        assert all(flag in message for flag in ("--allow-host", "--allow-network", "--allow-private-network"))
        await server.call("close_page", {"session_id": opened["session_id"]})
    finally:
        await server.aclose()


def test_the_reference_names_are_aliases():
    parsed = build_parser().parse_args(["mcp", "--transport", "streamable-http", "--port", "9300"])
    assert (parsed.transport, parsed.port, parsed.run.__name__) == ("http", 9300, "_serve")
    assert build_parser().parse_args(["serve"]).transport == "stdio"
    assert "``" not in build_parser().format_help()


async def test_plasmate_nb_mcp_serves_stdio(demo):
    server = StdioTransport([sys.executable, "-m", "plasmate_nb", "mcp", "--allow-private-network"])
    try:
        opened = await server.call("open_page", {"url": demo.url("/login.html")})
        assert opened["title"] == "Sign in"
        await server.call("close_page", {"session_id": opened["session_id"]})
    finally:
        await server.aclose()


def test_a_port_in_use_is_named_and_the_server_exits_2():
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "plasmate_nb", "serve", "--transport", "http", "--port", str(port)],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[-1] == (
        f"cannot listen on 127.0.0.1:{port}: Address already in use; choose another port (0 picks a free one)"
    )
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("signal_number", "stdin_closed"),
    [(signal.SIGINT, False), (signal.SIGTERM, False), (signal.SIGTERM, True)],
    ids=["SIGINT", "SIGTERM", "SIGTERM-after-stdin-ends"],  # the last: what MCP clients do on exit
)
async def test_one_signal_ends_a_stdio_server_and_closes_its_browser(demo, signal_number, stdin_closed):
    with RawStdio() as server:
        server.initialize()
        opened = server.payload("open_page", {"url": demo.url("/login.html")})
        assert opened["title"] == "Sign in"
        browser = psutil.Process(server.process.pid).children(recursive=True)
        assert browser, "the browser should run under the server"
        if stdin_closed:
            assert server.process.stdin is not None
            server.process.stdin.close()  # the server now closes its browser, and is signalled meanwhile
        server.process.send_signal(signal_number)  # otherwise stdin stays open and silent
        try:
            code = await asyncio.to_thread(server.process.wait, 30)
        except subprocess.TimeoutExpired:
            pytest.fail(f"one {signal_number.name} did not end the server")
        assert code == 0, server.stderr()[-2000:]
        assert "Traceback" not in server.stderr()
        _gone, alive = psutil.wait_procs(browser, timeout=15)
        assert not alive, f"left running: {[p.name() for p in alive]}"


def test_the_stdio_server_also_serves_from_a_thread_that_is_not_the_main_one() -> None:
    # An embedding host may run it on a worker thread, where no signal handler can be set.
    code = (
        "import threading\n"
        "from plasmate_nb.cli import main\n"
        "result = []\n"
        "worker = threading.Thread(target=lambda: result.append(main(['serve'])))\n"
        "worker.start(); worker.join(60)\n"
        "print(result)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=90
    )  # stdin ends at once: the session ends, the server returns 0
    assert done.stdout.strip() == "[0]", done.stderr[-2000:]
    assert "Traceback" not in done.stderr
