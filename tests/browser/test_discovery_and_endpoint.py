"""Chromium discovery order and the scale-out path: connecting to a browser that already runs."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import urllib.request
from pathlib import Path

import pytest

from plasmate_nb.browser import Engine, EngineConfig, EngineError
from plasmate_nb.browser.discovery import (
    ENV_EXECUTABLE,
    INSTALL_HINT,
    LAUNCH_ARGS,
    BrowserNotFound,
    find_chromium,
)
from plasmate_nb.browser.egress import SWITCHES_UNCHECKED, chromium_args, missing_switches
from plasmate_nb.browser.engine import REMOTE_WARNING


def test_explicit_executable_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    system = find_chromium().executable or "/usr/bin/chromium"
    monkeypatch.setenv(ENV_EXECUTABLE, system)
    assert find_chromium().source == "env" and find_chromium().executable == system


def test_a_wrong_explicit_executable_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(ENV_EXECUTABLE, str(tmp_path / "no-such-browser"))
    with pytest.raises(BrowserNotFound, match="is not an executable file") as caught:
        find_chromium()
    assert "apt-get install -y chromium" in str(caught.value)


def test_no_browser_anywhere_says_how_to_install_one(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(ENV_EXECUTABLE, raising=False)
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(BrowserNotFound) as caught:
        find_chromium()
    assert str(caught.value) == INSTALL_HINT


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def _wait_for_devtools(port: int) -> None:
    for _ in range(200):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/version", timeout=1) as answer:
                json.load(answer)
                return
        except OSError:
            await asyncio.sleep(0.05)
    raise AssertionError("Chromium's DevTools endpoint never answered")


def _running_browser(tmp_path: Path, *switches: str) -> tuple[subprocess.Popen[bytes], int]:
    port = _free_port()
    browser = subprocess.Popen(
        [find_chromium().executable or "chromium", *LAUNCH_ARGS, *switches, "--headless",
         "--remote-debugging-address=127.0.0.1", f"--remote-debugging-port={port}", f"--user-data-dir={tmp_path}",
         "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    return browser, port


async def test_engine_connects_to_a_running_browser_over_cdp(demo, tmp_path: Path, capsys) -> None:
    browser, port = _running_browser(tmp_path)  # without --enable-automation: it cannot say how it started
    try:
        await _wait_for_devtools(port)
        engine = Engine(
            EngineConfig(
                endpoint=f"http://127.0.0.1:{port}",
                allow_private_network=False,
                allowed_networks=("127.0.0.1/32",),
                navigation_timeout=5,
            )
        )
        try:
            session = await engine.open(demo.url("/login.html"), trace=True)
            assert session.view()["title"] == "Sign in"
            await session.evaluate("document.getElementById('email').value = 'x'")
            # The per-context proxy puts the connected browser behind the same gate.
            blocked = demo.url("/login.html").replace("127.0.0.1", "127.0.0.2")
            with pytest.raises(EngineError, match=r"Outbound URL blocked: address 127\.0\.0\.2"):
                await session.navigate(blocked)
            assert (
                [r.host for r in engine.gate.refusals()] == ["127.0.0.2"] * len(engine.gate.refusals()) != []
            )
            await engine.close_session(session.id)
            note = capsys.readouterr().err  # every switch the launched browser gets, none left out
            assert "--webrtc-ip-handling-policy=disable_non_proxied_udp" in note
            assert "WebRtcHideLocalIpsWithMdns" in note
            assert SWITCHES_UNCHECKED in note  # and that they could not be checked
            # The connection drops; the next call connects again and says nothing it said before.
            assert engine._browser is not None
            await engine._browser.close()  # connected over CDP: disconnects, the browser runs on
            session = await engine.open(demo.url("/login.html"))
            await engine.close_session(session.id)
            assert capsys.readouterr().err == ""
        finally:
            await engine.aclose()
        assert browser.poll() is None  # a connected browser is not ours to stop
    finally:
        browser.terminate()
        browser.wait(timeout=30)


@pytest.mark.parametrize("with_switches", [True, False], ids=["started as the gate needs", "started without"])
async def test_a_running_browser_that_says_how_it_started_is_checked_for_the_gates_switches(
    demo, tmp_path: Path, capsys, with_switches: bool
) -> None:
    switches = chromium_args() if with_switches else ["--disable-quic"]
    browser, port = _running_browser(tmp_path, "--enable-automation", *switches)
    try:
        await _wait_for_devtools(port)
        engine = Engine(EngineConfig(endpoint=f"http://127.0.0.1:{port}", navigation_timeout=5))
        try:
            if with_switches:
                session = await engine.open(demo.url("/login.html"))
                await engine.close_session(session.id)
                assert SWITCHES_UNCHECKED not in capsys.readouterr().err  # it was checked
            else:
                with pytest.raises(
                    EngineError, match="started without switches the egress gate relies on"
                ) as refused:
                    await engine.open(demo.url("/login.html"))
                missing = str(refused.value).partition("Missing: ")[2]
                assert "--webrtc-ip-handling-policy=disable_non_proxied_udp" in missing
                assert "--host-resolver-rules=" in missing and "--disable-quic" not in missing
        finally:
            await engine.aclose()
        assert browser.poll() is None  # refused or not, a connected browser is not ours to stop
    finally:
        browser.terminate()
        browser.wait(timeout=30)


def test_the_last_of_a_repeated_switch_is_the_one_that_counts() -> None:
    gated = chromium_args()
    assert missing_switches(gated) == []
    webrtc = "--webrtc-ip-handling-policy=disable_non_proxied_udp"
    assert missing_switches([*gated, "--webrtc-ip-handling-policy=default"]) == [
        webrtc
    ]  # Chromium keeps the last
    resolver = next(a for a in gated if a.startswith("--host-resolver-rules="))
    assert missing_switches([*gated, "--host-resolver-rules="]) == [resolver]
    overridden = [*gated, "--disable-features=Translate"]  # a later list replaces ours in Chromium
    assert missing_switches(overridden) == ["WebRtcHideLocalIpsWithMdns in its last --disable-features"]
    assert missing_switches([*gated[:-1], "--disable-features=Translate,WebRtcHideLocalIpsWithMdns"]) == []
    assert missing_switches([a for a in gated if a != "--disable-quic"]) == ["--disable-quic"]


def test_a_browser_on_another_machine_is_not_gated_and_the_operator_is_told(capsys) -> None:
    engine = Engine(EngineConfig(endpoint="ws://browsers.example.test:3000/", allow_private_network=False))
    assert engine._gated() is False  # decided without connecting anywhere
    assert "egress" in capsys.readouterr().err and "remote side's responsibility" in REMOTE_WARNING
