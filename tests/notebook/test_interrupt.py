"""Interrupting a notebook call (the kernel's Interrupt: KeyboardInterrupt in the main thread) stops
its work on the background loop too, instead of letting it run on unseen.

The sync ``Session`` waits in ``run_sync`` for a coroutine on the background loop. A page that
never answers keeps ``s.open`` waiting; the user interrupts. The page's load must stop (its
browser context closed: the origin sees its connection go) and the session must work afterwards.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import threading
from collections.abc import Iterator

import pytest

import plasmate_nb as pnb
from plasmate_nb._loop import run_sync

BOUND_S = 30.0


def interrupt_when(started: threading.Event) -> None:
    """Send this process SIGINT once ``started`` is set (as Jupyter's Interrupt does)."""

    def send() -> None:
        if started.wait(BOUND_S):
            os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=send, daemon=True).start()


def test_an_interrupted_call_cancels_its_coroutine() -> None:
    started, cancelled = threading.Event(), threading.Event()

    async def forever() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    interrupt_when(started)
    with pytest.raises(KeyboardInterrupt):
        run_sync(forever())
    assert cancelled.wait(BOUND_S), "the coroutine ran on after the interrupt"


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
