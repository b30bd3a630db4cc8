"""A page that grows its renderer without bound is stopped at the memory bound, and the call
that waited for it says so (docs/contract.md#renderer-memory-bound).

The attack: an endless gzip stream of tiny elements. A few kilobytes on the wire become hundreds
of megabytes of DOM a second; unguarded, Chromium passed 6 GB before the navigation timed out.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import zlib
from collections.abc import Awaitable, Callable, Iterator

import psutil
import pytest
from playwright.async_api import Error as PlaywrightError

from plasmate_nb.browser import config
from plasmate_nb.browser.config import EngineConfig
from plasmate_nb.browser.engine import Engine
from plasmate_nb.browser.memory import RendererMemoryGuard, renderers_over
from plasmate_nb.cli import build_parser
from plasmate_nb.server.cli import engine_config_from_args
from plasmate_nb.server.options import DEFAULT_RENDERER_MEMORY_MB, MIN_RENDERER_MEMORY_MB
from plasmate_nb.som import crashed_at
from plasmate_nb.tools import Dispatcher
from tests.reliability.support import bounded
from tests.support import wait_until

BOUND_MB = 512
MARKUP = b"<p>x" * (256 * 1024)  # one megabyte: 256k elements
GROW = "const kept = []; for (;;) kept.push(document.body.appendChild(document.createElement('p')))"
PAGES = {
    # A button that builds elements until the renderer is stopped.
    "/grow": f'<!doctype html><title>grow</title><button onclick="{GROW}">Grow</button>',
    # A page that loads, then does the same by itself.
    "/late": f"<!doctype html><title>late</title><p>Loaded<script>onload = () => setTimeout(() => {{ {GROW} }})</script>",
}


def _gzip_segments() -> tuple[bytes, bytes]:
    """The stream's start (gzip header, a document, one megabyte of markup) and a segment that
    inflates to one more megabyte whatever came before (each ends with a full flush)."""
    deflate = zlib.compressobj(6, zlib.DEFLATED, 31)
    head = deflate.compress(b"<!doctype html><title>bomb</title><body>" + MARKUP)
    head += deflate.flush(zlib.Z_FULL_FLUSH)
    again = deflate.compress(MARKUP) + deflate.flush(zlib.Z_FULL_FLUSH)
    return head, again


@pytest.fixture(scope="module")
def bomb() -> Iterator[str]:
    head, again = _gzip_segments()

    class Bomb(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            if self.path == "/favicon.ico":
                self.send_error(404)
                return
            if self.path in PAGES:
                body = PAGES[self.path].encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                for segment in [head] + [again] * 100_000:  # endless for any browser: 100 GB of markup
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(segment), segment))
            except OSError:
                pass  # the browser left (its renderer was stopped)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Bomb)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


async def test_a_page_past_the_memory_bound_is_stopped_and_the_call_says_why(bomb, demo) -> None:
    engine = Engine(EngineConfig(renderer_memory_mb=BOUND_MB, navigation_timeout=60.0))
    dispatcher = Dispatcher(engine)
    try:
        opened = await dispatcher.call("open_page", {"url": demo.url("/login.html"), "trace": True})
        session = json.loads(opened.text)["session_id"]
        # Another session on the same site: it shares the browser, never a renderer (contexts don't).
        bystander = json.loads((await dispatcher.call("open_page", {"url": demo.url("/index.html")})).text)

        failed = await bounded(dispatcher.call("navigate_to", {"session_id": session, "url": bomb + "/"}), 45)

        assert failed.is_error
        assert failed.text == (
            f"Failed to fetch {bomb}/…: Navigation failed: the page passed the renderer memory bound "
            f"({BOUND_MB} MB) and was stopped; to allow more, raise the bound "
            "(PLASMATE_NB_RENDERER_MEMORY_MB, serve --renderer-memory-mb)"
        )
        assert engine.memory_guard is not None and engine.memory_guard.stopped == 1
        assert renderers_over(engine.memory_guard.renderer_sizes(), BOUND_MB) == []
        # The session goes on: its last good page is back and a new navigation works.
        again = await dispatcher.call(
            "navigate_to", {"session_id": session, "url": demo.url("/details.html")}
        )
        assert not again.is_error, again.text
        # The bystander kept its page.
        som = await dispatcher.call("page_som", {"session_id": bystander["session_id"]})
        assert not som.is_error and json.loads(som.text)["regions"] == bystander["regions"]
        export = json.loads((await dispatcher.call("trace_export", {"session_id": session})).text)
        assert [e["outcome"] for e in export["events"]][-2:] == ["error", "success"]
    finally:
        await engine.aclose()


async def _harm_the_other_as_the_guard_stops_one(
    dispatcher: Dispatcher,
    engine: Engine,
    bombed: dict,
    other: dict,
    bomb: str,
    harm: Callable[[], Awaitable[None]],
) -> None:
    """While a call waits on ``other``'s page, ``bombed`` navigates to the bomb; the moment the
    guard stops that renderer, ``harm`` strikes ``other``'s. Only the bombed call names the bound."""
    guard = engine.memory_guard
    assert guard is not None
    waiting = asyncio.create_task(
        dispatcher.call(
            "evaluate", {"session_id": other["session_id"], "expression": "new Promise(() => {})"}
        )
    )
    navigating = asyncio.create_task(
        dispatcher.call("navigate_to", {"session_id": bombed["session_id"], "url": bomb + "/"})
    )
    await wait_until(lambda: guard.stopped == 1, 45, "the bombed renderer's stop")
    await harm()
    harmed, failed = await bounded(asyncio.gather(waiting, navigating), 45)
    assert harmed.is_error and "memory" not in harmed.text, harmed.text
    assert "renderer memory bound" in failed.text, failed.text
    assert guard.stopped == 1


async def test_a_crash_the_guard_did_not_cause_is_not_blamed_on_it(bomb, demo) -> None:
    """The moment the guard stops one session's page, another session's page crashes for
    another reason (CDP ``Page.crash``) while a call waits on it: that call reports a crash, and
    the bombed session's names the bound."""
    engine = Engine(EngineConfig(renderer_memory_mb=BOUND_MB, navigation_timeout=60.0))
    dispatcher = Dispatcher(engine)
    try:
        bombed = json.loads((await dispatcher.call("open_page", {"url": demo.url("/login.html")})).text)
        other = json.loads((await dispatcher.call("open_page", {"url": demo.url("/index.html")})).text)
        page = engine.get(other["session_id"])._page
        assert page is not None and engine.memory_guard is not None
        crasher = await page.context.new_cdp_session(page)

        async def crash() -> None:
            with contextlib.suppress(PlaywrightError, TimeoutError):
                await asyncio.wait_for(crasher.send("Page.crash"), 2)

        await _harm_the_other_as_the_guard_stops_one(dispatcher, engine, bombed, other, bomb, crash)
    finally:
        await engine.aclose()


async def test_a_kill_that_is_not_ours_is_not_blamed_on_the_bound(bomb, demo) -> None:
    """Just after the guard stopped one session's renderer, another session's is killed by
    someone else (as the kernel's OOM killer would): only the first names the bound."""
    engine = Engine(EngineConfig(renderer_memory_mb=BOUND_MB, navigation_timeout=60.0))
    dispatcher = Dispatcher(engine)
    try:
        bombed = json.loads((await dispatcher.call("open_page", {"url": demo.url("/login.html")})).text)
        other = json.loads((await dispatcher.call("open_page", {"url": demo.url("/index.html")})).text)
        grown = await dispatcher.call(
            "evaluate",
            {"session_id": other["session_id"], "expression": "(window.kept = new Array(2e7).fill(1.5), 1)"},
        )
        assert not grown.is_error, grown.text
        guard = engine.memory_guard
        assert guard is not None

        def largest() -> tuple[int, int]:
            sizes = guard.renderer_sizes()
            return max(((size, pid) for pid, size in sizes.items()), default=(0, 0))

        await wait_until(lambda: largest()[0] > 150 * 2**20, 10, "the other session's renderer to grow")
        other_renderer = largest()[1]

        async def kill() -> None:
            os.kill(other_renderer, signal.SIGKILL)

        await _harm_the_other_as_the_guard_stops_one(dispatcher, engine, bombed, other, bomb, kill)
    finally:
        await engine.aclose()


async def test_an_action_whose_script_passes_the_bound_says_why(bomb) -> None:
    engine = Engine(EngineConfig(renderer_memory_mb=BOUND_MB, action_timeout=60.0))
    dispatcher = Dispatcher(engine)
    try:
        opened = json.loads((await dispatcher.call("open_page", {"url": bomb + "/grow"})).text)
        button = opened["regions"][0]["elements"][0]
        assert button["role"] == "button"
        clicked = await bounded(
            dispatcher.call("click", {"session_id": opened["session_id"], "element_id": button["id"]}), 45
        )
        assert clicked.is_error
        assert clicked.text.startswith(
            f"Click failed: the page passed the renderer memory bound ({BOUND_MB} MB)"
        )
        assert engine.memory_guard is not None and engine.memory_guard.stopped == 1
        # The page is back at its last good state and answers.
        som = await dispatcher.call("page_som", {"session_id": opened["session_id"]})
        assert json.loads(som.text)["regions"] == opened["regions"]
    finally:
        await engine.aclose()


async def test_a_stateless_load_past_the_bound_says_why(bomb) -> None:
    engine = Engine(EngineConfig(renderer_memory_mb=BOUND_MB, navigation_timeout=60.0))
    try:
        fetched = await bounded(Dispatcher(engine).call("fetch_page", {"url": bomb + "/"}), 45)
        assert fetched.is_error
        assert "renderer memory bound (512 MB)" in fetched.text and fetched.text.startswith(
            f"Failed to fetch {bomb}/…: Navigation failed: the page passed"
        ), fetched.text
        assert engine.memory_guard is not None and engine.memory_guard.stopped == 1
    finally:
        await engine.aclose()


async def test_a_page_that_grows_after_its_load_says_why(bomb) -> None:
    """Stopped while the SOM is being compiled: the compile ends with the crash, long before its
    deadline, and the call names the bound (a session's open and a stateless tool alike)."""
    engine = Engine(EngineConfig(renderer_memory_mb=BOUND_MB, action_timeout=120.0))
    dispatcher = Dispatcher(engine)
    try:
        opened = await bounded(dispatcher.call("open_page", {"url": bomb + "/late"}), 45)
        fetched = await bounded(dispatcher.call("fetch_page", {"url": bomb + "/late"}), 45)
        for result in (opened, fetched):
            assert result.is_error
            assert result.text.startswith(
                f"Pipeline error: the page passed the renderer memory bound ({BOUND_MB} MB)"
            ), result.text
        assert engine.memory_guard is not None and engine.memory_guard.stopped == 2
    finally:
        await engine.aclose()


async def test_a_page_stopped_between_calls_is_named_by_the_next_action(demo) -> None:
    """Nobody waits on the page when it passes the bound (its own timer grows it): the next action
    reloads it and says why it will not act on it, naming the bound; the one after works."""
    engine = Engine(EngineConfig(renderer_memory_mb=BOUND_MB))
    dispatcher = Dispatcher(engine)
    try:
        opened = json.loads((await dispatcher.call("open_page", {"url": demo.url("/login.html")})).text)
        session = opened["session_id"]
        page = engine.get(session)._page
        assert page is not None and engine.memory_guard is not None
        cdp = await page.context.new_cdp_session(page)
        await cdp.send("Runtime.evaluate", {"expression": f"setTimeout(() => {{ {GROW} }})"})
        await wait_until(lambda: crashed_at(page) is not None, 45, "the guard to stop the page")
        submit = next(e for r in opened["regions"] for e in r["elements"] if e.get("html_id") == "submit")

        clicked = await dispatcher.call("click", {"session_id": session, "element_id": submit["id"]})

        assert clicked.is_error
        assert clicked.text == (
            f"Pipeline error: the page passed the renderer memory bound ({BOUND_MB} MB) and was stopped; "
            "to allow more, raise the bound (PLASMATE_NB_RENDERER_MEMORY_MB, serve --renderer-memory-mb); "
            "it was reloaded at its last good URL, so what was typed or changed on it is gone: "
            "read the page again (page_som) before acting on it"
        )
        assert engine.memory_guard.stopped == 1
        again = await dispatcher.call("scroll", {"session_id": session, "direction": "down", "pixels": 10})
        assert not again.is_error, again.text
    finally:
        await engine.aclose()


def test_only_renderers_past_the_bound_are_named() -> None:
    sizes = {10: 100 * 2**20, 11: 513 * 2**20, 12: 512 * 2**20}
    assert renderers_over(sizes, 512) == [11]


def test_the_guard_never_touches_a_process_it_did_not_start() -> None:
    """A process that is not a descendant of this one (here: our parent) is never ours, however
    large: a browser reached through an endpoint is never guarded."""
    assert not RendererMemoryGuard.is_ours(os.getppid())
    assert not RendererMemoryGuard.is_ours(os.getpid())  # this process is no renderer
    assert psutil.pid_exists(os.getppid())


def test_the_bound_is_set_on_the_command_line() -> None:
    def bound(*flags: str) -> int | None:
        return engine_config_from_args(build_parser().parse_args(["serve", *flags])).renderer_memory_mb

    assert bound() == DEFAULT_RENDERER_MEMORY_MB == EngineConfig().renderer_memory_mb
    assert MIN_RENDERER_MEMORY_MB == config.MIN_RENDERER_MEMORY_MB  # the import-light mirror
    assert bound("--renderer-memory-mb", "700") == 700
    assert bound("--renderer-memory-mb", "0") is None  # no bound
    for too_small in ("-1", "1", "255"):
        with pytest.raises(SystemExit):
            build_parser().parse_args(["serve", "--renderer-memory-mb", too_small])


def test_the_bound_comes_from_the_environment_and_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLASMATE_NB_RENDERER_MEMORY_MB", "4096")
    assert EngineConfig().renderer_memory_mb == 4096
    assert engine_config_from_args(build_parser().parse_args(["serve"])).renderer_memory_mb == 4096
    assert (
        engine_config_from_args(
            build_parser().parse_args(["serve", "--renderer-memory-mb", "300"])
        ).renderer_memory_mb
        == 300
    )
    monkeypatch.setenv("PLASMATE_NB_RENDERER_MEMORY_MB", "0")
    assert EngineConfig().renderer_memory_mb is None
    for bad in ("lots", "-5", "100"):
        monkeypatch.setenv("PLASMATE_NB_RENDERER_MEMORY_MB", bad)
        with pytest.raises(
            ValueError, match="PLASMATE_NB_RENDERER_MEMORY_MB must be a whole number of megabytes"
        ):
            EngineConfig()
    # The command line's bound wins over the environment's, even a bad one.
    assert (
        engine_config_from_args(
            build_parser().parse_args(["serve", "--renderer-memory-mb", "1024"])
        ).renderer_memory_mb
        == 1024
    )
    for too_small in (-1, 0, 100):
        with pytest.raises(ValueError, match="renderer_memory_mb must be at least 256"):
            EngineConfig(renderer_memory_mb=too_small)


def test_a_bad_bound_in_the_environment_stops_serve_with_one_line() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "plasmate_nb", "serve"],
        env={**os.environ, "PLASMATE_NB_RENDERER_MEMORY_MB": "lots"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (run.returncode, run.stderr) == (
        2,
        "plasmate-nb serve: PLASMATE_NB_RENDERER_MEMORY_MB must be a whole number of megabytes, "
        "at least 256 (0: no bound)\n",
    )
