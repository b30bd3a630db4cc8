"""Shared fixtures: a loopback static server for fixture pages, and a real Chromium.

All async tests share one session-scoped event loop (pyproject: asyncio_mode=auto), so a
session-scoped Playwright browser can serve every test.
"""

from __future__ import annotations

import collections
import functools
import hashlib
import http.server
import json
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

FIXTURE_PAGES = Path(__file__).parent / "fixtures" / "pages"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # keep test output clean
        pass


class ExportAudit:
    """Exports the dispatcher answered, audited in batches so the run never holds them all.

    Each distinct answer text (an unchanged log exports the same bytes) is audited once: texts
    wait in ``pending`` until ``BATCH`` of them are there, then ``pnb.audit`` checks them and
    keeps only the findings. ``recent`` keeps the last few texts for the test that checks
    collecting works."""

    BATCH = 256

    def __init__(self) -> None:
        self.pending: list[str] = []
        self.recent: collections.deque[str] = collections.deque(maxlen=64)
        self.findings: list[str] = []
        self._seen: set[bytes] = set()

    def add(self, text: str) -> None:
        digest = hashlib.sha256(text.encode()).digest()
        if digest in self._seen:
            return
        self._seen.add(digest)
        self.pending.append(text)
        self.recent.append(text)
        if len(self.pending) >= self.BATCH:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        from plasmate_nb.analysis import audit

        report = audit([json.loads(text) for text in self.pending])
        self.pending.clear()
        if not report.ok:
            self.findings.append(
                report.findings[["source", "sequence", "rule", "path", "message"]].to_string()
            )


@pytest.fixture(scope="session", autouse=True)
def dispatcher_exports() -> Iterator[ExportAudit]:
    """Every trace_export and final_trace that the real ``Dispatcher`` answers during the run is
    audited against the contract (``pnb.audit``); a finding fails the run when it ends. Exports
    built by hand (tests of broken exports) never pass through the dispatcher."""
    from plasmate_nb.tools.dispatcher import Dispatcher

    collected = ExportAudit()
    original = Dispatcher.call

    async def call(self: Dispatcher, name: str, arguments: object = None) -> object:
        result = await original(self, name, arguments)
        if not result.is_error and (
            name == "trace_export" or (name == "close_page" and '"final_trace"' in result.text)
        ):
            collected.add(result.text)
        return result

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Dispatcher, "call", call)
        yield collected
    collected.flush()
    assert not collected.findings, "exports the dispatcher produced in this run break the contract:\n" + (
        "\n".join(collected.findings)
    )


@pytest.fixture(scope="session")
def fixture_server() -> Iterator[str]:
    """Base URL (``http://127.0.0.1:<port>``) serving ``tests/fixtures/pages``."""
    handler = functools.partial(_QuietHandler, directory=str(FIXTURE_PAGES))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def demo() -> Iterator[object]:
    """The bundled demo site on a free loopback port."""
    from plasmate_nb.demo_site import DemoSite

    with DemoSite() as site:
        yield site


@pytest_asyncio.fixture(scope="session")
async def browser() -> AsyncIterator[object]:
    """One real headless Chromium for tests that drive Playwright directly."""
    from playwright.async_api import async_playwright

    from plasmate_nb.browser.discovery import LAUNCH_ARGS, find_chromium

    location = find_chromium()
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=location.executable, headless=True, args=list(LAUNCH_ARGS)
        )
        try:
            yield launched
        finally:
            await launched.close()


@pytest_asyncio.fixture
async def page(browser: object) -> AsyncIterator[object]:
    """A fresh page in its own context."""
    context = await browser.new_context()  # type: ignore[attr-defined]
    try:
        yield await context.new_page()
    finally:
        await context.close()
