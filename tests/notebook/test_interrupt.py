"""Interrupting a notebook call (the kernel's Interrupt: KeyboardInterrupt in the main thread) stops
its work on the background loop too, instead of letting it run on unseen; a call interrupted or
failed halfway leaves the ``Session`` whole.

The sync ``Session`` waits in ``run_sync`` for a coroutine on the background loop. A page that
never answers keeps ``s.open`` waiting; the user interrupts. The page's load must stop (its
browser context closed: the origin sees its connection go) and the session must work afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from typing import Any

import psutil
import pytest

import plasmate_nb as pnb
from plasmate_nb._loop import background_loop, run_sync
from plasmate_nb.client import LoopBoundTransport, StdioTransport, ToolError, embedded_transport

BOUND_S = 30.0


@pytest.fixture(autouse=True)
def sigint_interrupts() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt here, as in a kernel (a process may inherit it ignored)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def interrupt_when(started: threading.Event) -> None:
    """Send this process SIGINT once ``started`` is set (as Jupyter's Interrupt does)."""

    def send() -> None:
        if started.wait(BOUND_S):
            os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=send, daemon=True).start()


async def forever(started: threading.Event, cancelled: threading.Event) -> None:
    started.set()
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        cancelled.set()
        raise


def test_an_interrupted_call_is_cancelled() -> None:
    for _ in range(5):  # the interrupt lands at a slightly different point each time
        started, cancelled = threading.Event(), threading.Event()
        with pytest.raises(KeyboardInterrupt):
            interrupt_when(started)
            run_sync(forever(started, cancelled))
        assert cancelled.wait(BOUND_S), "the coroutine ran on after the interrupt"


def test_an_interrupt_as_the_call_is_handed_to_the_loop_still_stops_it(monkeypatch) -> None:
    loop = background_loop()
    hand_over = loop.call_soon_threadsafe

    def handed_then_interrupted(*args: Any, **options: Any) -> Any:
        monkeypatch.undo()
        hand_over(*args, **options)
        raise KeyboardInterrupt  # the signal lands just after the hand-over, before anything returns

    monkeypatch.setattr(loop, "call_soon_threadsafe", handed_then_interrupted)
    started, cancelled = threading.Event(), threading.Event()
    with pytest.raises(KeyboardInterrupt):
        run_sync(forever(started, cancelled))
    run_sync(asyncio.sleep(0))  # what was handed to the loop before has run by now
    assert not started.is_set() or cancelled.wait(BOUND_S), "the coroutine ran on after the interrupt"


class HeldOrigin:
    """A page that never answers; counts the requests for it and the connections that closed."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/held"
        self.asked = threading.Event()
        self.gone = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        connection, _ = self.listener.accept()
        with connection:
            data = b""
            while b"\r\n\r\n" not in data:
                data += connection.recv(65536)
            self.asked.set()
            while connection.recv(65536):
                pass
        self.gone.set()


@pytest.fixture
def held() -> Iterator[HeldOrigin]:
    origin = HeldOrigin()
    yield origin
    origin.listener.close()


def test_an_interrupted_open_stops_loading_and_the_session_works_after(held: HeldOrigin, demo) -> None:
    s = pnb.Session()
    try:
        interrupt_when(held.asked)
        with pytest.raises(KeyboardInterrupt):
            s.open(held.url)
        assert held.gone.wait(BOUND_S), "the page went on loading after the interrupt"
        page = s.open(demo.url("/login.html"))
        assert page.title == "Sign in"
    finally:
        s.close()


SERVE = [sys.executable, "-m", "plasmate_nb", "serve", "--allow-private-network"]


def _servers() -> list[psutil.Process]:
    """The stdio servers this test process runs (``plasmate_nb serve`` children)."""
    found = []
    for child in psutil.Process().children():
        with contextlib.suppress(psutil.Error):
            if child.cmdline()[1:4] == ["-m", "plasmate_nb", "serve"]:
                found.append(child)
    return found


def test_a_connected_session_that_failed_to_close_still_lets_its_server_go(demo) -> None:
    others = {server.pid for server in _servers()}  # other tests' servers, session-wide ones included
    s = pnb.Session.connect(command=SERVE)
    s.open(demo.url("/login.html"))
    (ours,) = [server for server in _servers() if server.pid not in others]
    run_sync(s.transport().call("close_page", {"session_id": s.session_id}))  # closed behind its back
    with pytest.raises(ToolError, match="Session not found"):
        s.close()
    _gone, alive = psutil.wait_procs([ours], timeout=BOUND_S)
    assert not alive, "the server process outlived its session"


def test_a_connected_session_whose_open_failed_closes_and_lets_its_server_go() -> None:
    # close() used to raise "no open browser session" here, and the server and its Chromium stayed.
    others = {server.pid for server in _servers()}
    s = pnb.Session.connect(command=[sys.executable, "-m", "plasmate_nb", "serve"])  # refuses private hosts
    with pytest.raises(ToolError, match="Outbound URL blocked"):
        s.open("http://10.0.0.1/")
    assert (s.session_id, s.page) == (None, None)
    (ours,) = [server for server in _servers() if server.pid not in others]
    processes = [ours, *ours.children(recursive=True)]  # the server and its browser
    assert s.close() is None
    _gone, alive = psutil.wait_procs(processes, timeout=BOUND_S)
    assert not alive, f"outlived the session: {alive}"
    assert s.close() is None  # again: no error, and no new server started to close nothing
    assert not [server for server in _servers() if server.pid not in others]


def test_a_connected_session_closed_twice_returns_its_final_trace_again(demo) -> None:
    others = {server.pid for server in _servers()}
    s = pnb.Session.connect(command=SERVE)
    s.open(demo.url("/login.html"))
    (ours,) = [server for server in _servers() if server.pid not in others]
    final = s.close()
    assert isinstance(final, pnb.TraceExport) and s.close() is final
    _gone, alive = psutil.wait_procs([ours], timeout=BOUND_S)
    assert not alive and not [server for server in _servers() if server.pid not in others]


def test_a_connected_session_opens_again_on_the_same_server_after_close(demo) -> None:
    s = pnb.Session.connect(command=SERVE)
    try:
        s.open(demo.url("/login.html"))
        s.close()
        assert s.open(demo.url("/login.html")).title == "Sign in"
        assert isinstance(s.transport(), StdioTransport), "after close() it fell back to the embedded engine"
    finally:
        s.close()


async def test_an_open_interrupted_after_the_page_opened_leaves_no_part_of_the_last_session(demo) -> None:
    paused, resume = asyncio.Event(), asyncio.Event()

    class PausingStatus(LoopBoundTransport):
        """The embedded engine, holding trace_status until told: the moment an interrupt can land."""

        async def call(self, tool: str, arguments: Any = None) -> Any:
            if tool == "trace_status" and not resume.is_set():
                paused.set()
                await resume.wait()
            return await super().call(tool, arguments)

    embedded = await embedded_transport()
    s = pnb.AsyncSession(PausingStatus(embedded.inner, embedded.loop))
    resume.set()
    await s.open(demo.url("/login.html"))
    first = (s.session_id, s.trace_id, s.page)
    await s.close()
    resume.clear()
    opening = asyncio.ensure_future(s.open(demo.url("/details.html")))
    await asyncio.wait_for(paused.wait(), BOUND_S)
    opening.cancel()
    with pytest.raises(asyncio.CancelledError):
        await opening
    assert s.session_id not in (None, first[0])
    assert s.trace_id is None and s.page is not None and s.page is not first[2]
    resume.set()
    await s.close()
