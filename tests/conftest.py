"""Shared fixtures: a loopback static server for fixture pages, and a real Chromium.

All async tests share one session-scoped event loop (pyproject: asyncio_mode=auto), so a
session-scoped Playwright browser can serve every test.
"""

from __future__ import annotations

import functools
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


@pytest.fixture(scope="session", autouse=True)
def dispatcher_exports() -> Iterator[dict[str, None]]:
    """Every trace_export and final_trace that the real ``Dispatcher`` answers during the run is
    collected and, when the run ends, audited against the contract (``pnb.audit``); a finding fails
    the run. Exports built by hand (tests of broken exports) never pass through the dispatcher. The
    fixture's value is the collection (answer texts), so a test can check that collecting works."""
    from plasmate_nb.tools.dispatcher import Dispatcher

    produced: dict[str, None] = {}  # answer texts, once each (an unchanged log exports the same bytes)
    original = Dispatcher.call

    async def call(self: Dispatcher, name: str, arguments: object = None) -> object:
        result = await original(self, name, arguments)
        if not result.is_error and (
            name == "trace_export" or (name == "close_page" and '"final_trace"' in result.text)
        ):
            produced[result.text] = None
        return result

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Dispatcher, "call", call)
        yield produced
    if produced:
        from plasmate_nb.analysis import audit

        report = audit([json.loads(text) for text in produced])
        assert report.ok, "exports the dispatcher produced in this run break the contract:\n" + (
            report.findings[["source", "sequence", "rule", "path", "message"]].to_string()
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
