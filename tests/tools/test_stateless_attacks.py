"""Hostile servers against the stateless tools' fetches: every misbehaviour ends in a result with the
contract's words, within the deadline, in bounded memory (docs/contract.md#small-document-fetches,
docs/contract.md#page-loads)."""

from __future__ import annotations

import asyncio
import gzip
import json
import resource
import socket
import threading
import zlib
from collections.abc import AsyncIterator, Callable

import pytest
import pytest_asyncio

from plasmate_nb.browser import Engine, EngineConfig
from plasmate_nb.browser.documents import DocumentError, fetch_document
from plasmate_nb.tools import Dispatcher
from tests.support import wait_until
from tests.tools.local_http import Answer, scripted
from tests.tools.raw_http import drip, raw_server, send

NAVIGATION_TIMEOUT = 3.0
LIMIT = 64 * 1024


@pytest_asyncio.fixture(scope="module")
async def dispatcher() -> AsyncIterator[Dispatcher]:
    """This module's one engine: short waits, so a page that never loads fails in moments."""
    config = EngineConfig(
        max_sessions=2, navigation_timeout=NAVIGATION_TIMEOUT, action_timeout=3.0, settle_timeout=1.0
    )
    engine = Engine(config)
    try:
        yield Dispatcher(engine)
    finally:
        await engine.aclose()


async def fetch(dispatcher: Dispatcher, url: str, seconds: float = 2.0) -> bytes:
    deadline = asyncio.get_running_loop().time() + seconds
    document = await fetch_document(
        dispatcher.engine, url, max_bytes=LIMIT, max_redirects=5, deadline=deadline, user_agent="probe"
    )
    return document.body


async def fetch_error(dispatcher: Dispatcher, url: str, seconds: float = 2.0) -> tuple[str, str]:
    """``(kind, message)`` of a fetch that must fail."""
    with pytest.raises(DocumentError) as failure:
        await fetch(dispatcher, url, seconds)
    return failure.value.kind, str(failure.value)


# ----- small document fetches: slow, endless and lying servers --------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        drip(b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 10_000),  # a head that never ends
        drip(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b"a" * 100_000),  # nor its body
        send(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort", then_hold=True),  # stops, holds on
    ],
    ids=["dripped-head", "dripped-body", "stalled-body"],
)
async def test_one_deadline_covers_a_server_that_never_finishes(dispatcher: Dispatcher, answer) -> None:
    with raw_server(answer) as server:
        kind, message = await fetch_error(dispatcher, server.url("/robots.txt"), seconds=1.0)
    assert (kind, message) == ("timeout", "Timeout after 1000ms")


def endless_chunks(connection: socket.socket, stopping: threading.Event) -> None:
    connection.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    chunk = b"4000\r\n" + b"a" * 0x4000 + b"\r\n"
    while not stopping.is_set():
        connection.sendall(chunk)


def bomb(size: int, layers: int) -> bytes:
    """``size`` zero bytes, gzipped ``layers`` times."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(1024 * 1024)
    body = b"".join(packer.compress(block) for _ in range(size // len(block))) + packer.flush()
    for _ in range(layers - 1):
        body = gzip.compress(body, 9)
    return body


@pytest.mark.parametrize(
    ("answer", "encoding"),
    [(endless_chunks, None), (None, "gzip"), (None, "gzip, gzip")],
    ids=["endless-chunked", "gzip-bomb", "double-gzip-bomb"],
)
async def test_the_byte_cap_holds_on_decoded_bytes(
    dispatcher: Dispatcher, answer, encoding: str | None
) -> None:
    if answer is None:
        body = bomb(512 * 1024 * 1024, layers=encoding.count("gzip"))  # 512 MB once decoded
        head = f"HTTP/1.1 200 OK\r\nContent-Encoding: {encoding}\r\nContent-Length: {len(body)}\r\n\r\n"
        answer = send(head.encode() + body)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB
    with raw_server(answer) as server:
        kind, message = await fetch_error(dispatcher, server.url("/robots.txt"), seconds=5.0)
    assert (kind, message) == ("too_large", f"Response body exceeds the configured {LIMIT} byte limit")
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak < 100 * 1024


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (send(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort"), "Navigation failed: net::ERR_FAILED"),
        (
            send(b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * (1024 * 1024) + b"\r\n\r\n"),
            "Navigation failed: net::ERR_INVALID_HTTP_RESPONSE",
        ),
        (send(b"HTTP/1.1 abc\r\n\r\n"), "Navigation failed: net::ERR_INVALID_HTTP_RESPONSE"),
        (send(b"User-agent: *\nDisallow: /\n"), "Navigation failed: net::ERR_INVALID_HTTP_RESPONSE"),
        (send(b""), "Navigation failed: net::ERR_EMPTY_RESPONSE"),
    ],
    ids=["short-body", "1MB-header", "bad-status-line", "http-0.9", "nothing"],
)
async def test_broken_answers_are_network_failures(dispatcher: Dispatcher, answer, message: str) -> None:
    with raw_server(answer) as server:
        kind, text = await fetch_error(dispatcher, server.url("/robots.txt"))
    assert (kind, text) == ("network", message)


async def test_ten_thousand_headers_are_an_ordinary_answer(dispatcher: Dispatcher) -> None:
    with raw_server(send(b"HTTP/1.1 200 OK\r\n" + b"X-A: b\r\n" * 10_000 + b"\r\nUser-agent: *\n")) as server:
        assert await fetch(dispatcher, server.url("/robots.txt")) == b"User-agent: *\n"


@pytest.mark.parametrize("chain", [0, 30], ids=["loop", "30-hops"])
async def test_redirects_stop_at_the_limit(dispatcher: Dispatcher, chain: int) -> None:
    def hop(path: str) -> Answer:
        number = int(path.strip("/") or 0)
        target = "/0" if chain == 0 else f"/{number + 1}"
        return Answer(302, "", headers={"Location": target})

    with scripted({f"/{n}": hop for n in range(max(chain, 1))} | {"/": hop}) as server:
        kind, message = await fetch_error(dispatcher, server.url("/"))
        requested = len(server.seen)
    assert (kind, message) == ("redirects", "Too many redirects (maximum 5)")
    assert requested == 6  # the first request and five hops, never a sixth


# ----- crawl_policy on hostile robots.txt files ---------------------------------------------------------


def robots_answer(body: bytes) -> Answer:
    return Answer(200, body, "text/plain")


async def test_a_50_mb_robots_txt_is_invalid_and_never_read_whole(dispatcher: Dispatcher) -> None:
    with scripted({"/robots.txt": robots_answer(b"Disallow: /\n" * 4_500_000)}) as server:
        result = await dispatcher.call("crawl_policy", {"url": server.url("/x")})
    report = json.loads(result.text)
    assert report["source"]["classification"] == "invalid_too_large"
    assert (report["decision"]["allowed"], report["decision"]["reason"]) == (False, "robots_invalid")


@pytest.mark.parametrize(
    ("body", "allowed", "reason"),
    [
        ("\ufeffUser-agent: *\nDisallow: /x\n".encode(), False, "disallow_rule"),
        (b"User-agent: *\x00\nDisallow: /x\x00\n", True, "no_matching_rule"),  # NULs: no valid agent
        ("User-agent: *\nDisallow: /x\n".encode("utf-16"), True, "no_matching_rule"),  # read as UTF-8
        (b"User-agent: *\nCrawl-delay: 1e308\nDisallow: /x\n", False, "disallow_rule"),
        (b"User-agent: *\n\xff\xfe\nDisallow: /x\n", False, "disallow_rule"),
    ],
    ids=["bom", "nul", "utf-16", "crawl-delay-1e308", "invalid-utf-8"],
)
async def test_odd_robots_txt_files_give_reports(
    dispatcher: Dispatcher, body: bytes, allowed: bool, reason: str
) -> None:
    with scripted({"/robots.txt": robots_answer(body)}) as server:
        result = await dispatcher.call("crawl_policy", {"url": server.url("/x")})
    assert not result.is_error, result.text
    decision = json.loads(result.text)["decision"]
    assert (decision["allowed"], decision["reason"]) == (allowed, reason)


# ----- page loads --------------------------------------------------------------------------------------


@pytest.mark.parametrize("tool", ["fetch_page", "extract_text", "screenshot_page"])
async def test_a_page_that_never_finishes_loading_fails_at_the_navigation_timeout(
    dispatcher: Dispatcher, tool: str
) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n<title>t</title>"
    with raw_server(drip(head + b" " * 100_000, interval=0.01)) as server:
        result = await dispatcher.call(tool, {"url": server.url("/secret?token=x")})
        where = server.url("/…")
    assert result.is_error and result.text == f"Failed to fetch {where}: Timeout after 3000ms"


# ----- the SOM cache ---------------------------------------------------------------------------------


def counting(template: str, delay: float = 0.0) -> Callable[[str], Answer]:
    """A route answering ``template`` with the number of requests so far in it."""
    served = [0]

    def answer(_path: str) -> Answer:
        served[0] += 1
        return Answer(200, template.format(served[0]), delay=delay)

    return answer


async def test_a_page_a_script_sends_on_is_never_answered_from_another_documents_hash(
    dispatcher: Dispatcher,
) -> None:
    # The hash is of the document the navigation received; the key is the URL the page ended at.
    # When a script moved the page on, the two belong to different documents: the next call found
    # the first document unchanged and answered the old SOM of the second, which had changed.
    routes = {
        "/start": Answer(200, "<script>location.replace('/news')</script>"),
        "/news": counting("<title>t</title><p>edition {}</p>"),
    }
    with scripted(routes) as server:
        first = await dispatcher.call("extract_text", {"url": server.url("/start")})
        second = await dispatcher.call("extract_text", {"url": server.url("/start")})
    assert (first.text, second.text) == ("t\n\nedition 1", "t\n\nedition 2")


async def cache_counts(dispatcher: Dispatcher) -> tuple[int, int]:
    status = json.loads((await dispatcher.call("cache_status", {})).text)
    return status["hits"], status["entries"]


async def test_a_page_a_script_sent_on_is_cached_by_the_document_it_shows(dispatcher: Dispatcher) -> None:
    routes = {
        "/moved": Answer(200, "<script>location.replace('/stable')</script>"),
        "/stable": Answer(200, "<p>stable</p>"),
        "/pushed": Answer(200, "<p>pushed</p><script>history.pushState({}, '', '/elsewhere')</script>"),
    }
    with scripted(routes) as server:
        for path, hits in (("/moved", 0), ("/moved", 1), ("/pushed", 0), ("/pushed", 0)):
            before = await cache_counts(dispatcher)
            await dispatcher.call("extract_text", {"url": server.url(path)})
            after = await cache_counts(dispatcher)
            assert after[0] - before[0] == hits, path
    # No document answered for /elsewhere: nothing can vouch for an entry there.
    assert after[1] == before[1]


async def test_concurrent_calls_for_one_slow_url_each_answer_their_own_load(dispatcher: Dispatcher) -> None:
    routes = {"/slow": counting("<title>t</title><p>answer {}</p>", delay=0.3)}
    with scripted(routes) as server:
        results = await asyncio.gather(
            *(dispatcher.call("extract_text", {"url": server.url("/slow")}) for _ in range(2))
        )
    assert sorted(result.text for result in results) == ["t\n\nanswer 1", "t\n\nanswer 2"]
    status = json.loads((await dispatcher.call("cache_status", {})).text)
    assert status["entries"] == status["full_entries"] >= 1


async def test_page_loads_beyond_max_sessions_wait_their_turn(dispatcher: Dispatcher) -> None:
    """Each stateless call loads its page in a renderer of its own: fifty at once were fifty
    renderers. At most ``max_sessions`` (2 here) load at once; the others wait, then answer."""
    released = threading.Event()

    def held(connection: socket.socket, stopping: threading.Event) -> None:
        released.wait(30)
        body = b"<title>t</title><p>held</p>"
        connection.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )

    loads = dispatcher.engine.page_loads
    with raw_server(held) as server:

        def pages() -> int:  # each page also asks for /favicon.ico
            return sum(not request.startswith(b"GET /favicon.ico ") for request in server.requests)

        calls = [
            asyncio.ensure_future(dispatcher.call("extract_text", {"url": server.url(f"/{n}")}))
            for n in range(3)
        ]
        await wait_until(lambda: (loads.running, loads.waiting, pages()) == (2, 1, 2))
        released.set()
        results = await asyncio.gather(*calls)
        assert pages() == 3  # the third loaded once a turn was free
    assert [result.text for result in results] == ["t\n\nheld"] * 3
    assert (loads.running, loads.waiting) == (0, 0)


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"<p>plain ascii</p>", "text/html; charset=utf-16"),
        (b"<p>broken \xff\xfe\xc3 bytes</p>", "text/html; charset=utf-8"),
        (b"<p>nul \x00 byte</p>", "text/html; charset=nonsense"),
    ],
    ids=["utf-16-lie", "invalid-utf-8", "unknown-charset"],
)
async def test_charset_lies_and_broken_bytes_are_read_as_a_browser_reads_them(
    dispatcher: Dispatcher, body: bytes, content_type: str
) -> None:
    with scripted({"/": Answer(200, body, content_type)}) as server:
        for tool in ("extract_text", "extract_links", "fetch_page"):
            result = await dispatcher.call(tool, {"url": server.url("/")})
            assert not result.is_error, result.text


async def test_a_navigation_that_leaves_the_document_does_not_vouch_for_it(dispatcher: Dispatcher) -> None:
    """A 204 answer to the page's own reload leaves the document as it was, at the same URL: its
    empty body vouched for every later edition of the page, which the cache then answered stale."""
    served = [0]

    def page(_path: str) -> Answer:
        served[0] += 1
        if served[0] % 2 == 0:
            return Answer(204, "")
        edition = served[0] // 2 + 1
        reload_once = "<script>onload = () => { if (!sessionStorage.done) { sessionStorage.done = 1; location.reload(); } };</script>"
        return Answer(200, f"<title>t</title><p>edition {edition}</p>{reload_once}")

    with scripted({"/page": page}) as server:
        texts = [(await dispatcher.call("extract_text", {"url": server.url("/page")})).text for _ in range(2)]
        assert served[0] == 4  # each call: the page, then its reload answered 204
    assert texts == ["t\n\nedition 1", "t\n\nedition 2"]


# ----- a page that sends the browser on to no document -----------------------------------------------


@pytest.mark.parametrize(
    "target",
    [
        Answer(200, b"PK", "application/zip", headers={"Content-Disposition": "attachment; filename=a.zip"}),
        Answer(204, ""),
    ],
    ids=["download", "no-content"],
)
async def test_a_page_that_sends_the_browser_on_to_no_document_loads(
    dispatcher: Dispatcher, target: Answer
) -> None:
    """ "Your download starts now": the page's own script navigates, while it loads, to a file
    (or a 204). Chromium abandons that navigation and shows the page, loaded, but Playwright never
    reports its load: every tool waited out the navigation timeout and failed."""
    page = "<title>Thanks</title><p>Your download starts now.</p><script>location.href = '/file';</script>"
    with scripted({"/thanks": Answer(200, page), "/file": target, "/other": Answer(200, page)}) as server:
        text = await dispatcher.call("extract_text", {"url": server.url("/thanks")})
        assert (text.is_error, text.text) == (False, "Thanks\n\nYour download starts now.")
        # The page's URL then holds the fragment its response's does not: the same document.
        text = await dispatcher.call("extract_text", {"url": server.url("/thanks#start")})
        assert (text.is_error, text.text) == (False, "Thanks\n\nYour download starts now.")
        opened = await dispatcher.call("open_page", {"url": server.url("/thanks")})
        assert not opened.is_error, opened.text
        answer = json.loads(opened.text)
        assert (answer["title"], answer["url"]) == ("Thanks", server.url("/thanks"))
        moved = await dispatcher.call(
            "navigate_to", {"session_id": answer["session_id"], "url": server.url("/other")}
        )
        assert not moved.is_error and json.loads(moved.text)["url"] == server.url("/other")
        await dispatcher.call("close_page", {"session_id": answer["session_id"]})
        # Sent straight to the file, there is no page: that still fails, at once.
        refused = await dispatcher.call("extract_text", {"url": server.url("/file")})
        assert refused.is_error and "Timeout" not in refused.text
