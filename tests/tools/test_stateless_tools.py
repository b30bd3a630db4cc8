"""extract_text, extract_links, cache_status, fetch_page's javascript/selector and screenshot_page,
with real Chromium on loopback pages (docs/contract.md#stateless-page-tools)."""

from __future__ import annotations

import base64
import json
import struct

import pytest

from plasmate_nb.tools import TOOLS_BY_NAME, Dispatcher
from plasmate_nb.tools.catalogue import TRACED_TOOLS
from tests.tools.local_http import Answer, scripted

STATELESS = (
    "extract_text",
    "extract_links",
    "ard_discover",
    "crawl_policy",
    "inspect_page",
    "cache_status",
    "screenshot_page",
)
SNAPSHOT_FIELDS = [
    "hits",
    "stale_hits",
    "misses",
    "evictions",
    "total_som_bytes_served",
    "total_webmcp_bytes_served",
    "total_html_bytes_avoided",
    "entries",
    "full_entries",
    "selector_entries",
    "effective_html_entries",
    "total_som_bytes",
    "total_webmcp_bytes",
    "total_html_bytes",
    "total_effective_html_bytes",
    "max_hot_entries",
]
TEXT_PAGE = (
    "MCP Smoke Test\n\nNowhere\nPage 2 from the menu\nWelcome\nThis is a test page for MCP integration.\n"
    "• First item\n• Second item\nPlans\nPlan | Price\nStarter | $9\nPro | $29\nBack to top\nGo to page 2\n"
    "Plasmate\nMenu entry\nClick me\nShadow link\nShadow text"
)


def page(fixture_server: str, name: str) -> str:
    return f"{fixture_server}/stateless/{name}"


async def text_of(dispatcher: Dispatcher, tool: str, arguments: object) -> str:
    result = await dispatcher.call(tool, arguments)
    assert not result.is_error, result.text
    return result.text


async def error_of(dispatcher: Dispatcher, tool: str, arguments: object) -> str:
    result = await dispatcher.call(tool, arguments)
    assert result.is_error, result.text
    return result.text


# ----- the catalogue ------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "title", "hints", "trust", "closed"), [
    ("extract_text", "Extract Page Text", (True, False, True, True), "untrusted-web", False),
    ("extract_links", "Extract Page Links", (True, False, True, True), "untrusted-web", False),
    ("ard_discover", "Discover Static ARD Catalogs", (True, False, True, True), "untrusted-web", True),
    ("crawl_policy", "Evaluate Crawl Policy", (True, False, True, True), "untrusted-web", True),
    ("inspect_page", "Inspect Structured Page", (True, False, True, True), "untrusted-web", True),
    ("cache_status", "Inspect SOM Cache", (True, False, True, False), "local", False),
    ("screenshot_page", "Capture Page Screenshot", (True, False, True, True), "untrusted-web", False),
])  # fmt: skip
def test_catalogue_entries(name: str, title: str, hints: tuple[bool, ...], trust: str, closed: bool) -> None:
    spec = TOOLS_BY_NAME[name]
    assert (spec.title, (spec.read_only, spec.destructive, spec.idempotent, spec.open_world)) == (
        title,
        hints,
    )
    assert spec.trust == trust and spec.closed is closed and spec.session is False
    assert spec.traced == "never" and name not in TRACED_TOOLS


def test_schemas_carry_the_reference_defaults_and_limits() -> None:
    fetch = TOOLS_BY_NAME["fetch_page"].input_schema["properties"]
    assert fetch["javascript"] == {**fetch["javascript"], "type": "boolean", "default": True}
    inspect = TOOLS_BY_NAME["inspect_page"].input_schema["properties"]
    assert list(inspect) == [
        "url",
        "javascript",
        "selector",
        "visual_mode",
        "width",
        "height",
        "screenshot_timeout_ms",
    ]
    assert inspect["javascript"]["default"] is False
    assert (
        inspect["visual_mode"]["enum"] == ["never", "auto", "always"]
        and inspect["visual_mode"]["default"] == "auto"
    )
    assert (inspect["width"]["minimum"], inspect["width"]["maximum"], inspect["width"]["default"]) == (
        320,
        1920,
        1280,
    )
    assert (inspect["height"]["minimum"], inspect["height"]["maximum"], inspect["height"]["default"]) == (
        200,
        1080,
        720,
    )
    assert inspect["url"]["maxLength"] == 4096 and inspect["selector"]["maxLength"] == 256
    crawl = TOOLS_BY_NAME["crawl_policy"].input_schema["properties"]
    assert (
        crawl["product_token"]["pattern"] == "^[A-Za-z_-]{1,64}$"
        and crawl["product_token"]["default"] == "Plasmate"
    )
    assert crawl["timeout_ms"]["minimum"] == 1 and crawl["timeout_ms"]["maximum"] == 30000
    ard = TOOLS_BY_NAME["ard_discover"].input_schema
    assert ard["properties"]["url"]["format"] == "uri" and ard["required"] == ["url"]
    assert TOOLS_BY_NAME["cache_status"].input_schema["properties"] == {}


# ----- arguments ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("tool", "arguments", "message"), [
    ("extract_text", {}, "Invalid arguments: missing field `url`"),
    ("extract_text", {"url": 5}, "Invalid arguments: invalid type: integer, expected a string"),
    ("extract_text", {"url": "http://127.0.0.1:9/", "max_chars": -1},
     "Invalid arguments: invalid value: integer, expected usize"),
    ("extract_text", {"url": "http://127.0.0.1:9/", "max_chars": 1.5},
     "Invalid arguments: invalid type: floating point, expected usize"),
    ("extract_text", [], "Invalid arguments: invalid type: sequence, expected struct ExtractTextParams"),
    ("extract_links", "x", "Invalid arguments: invalid type: string, expected struct ExtractLinksParams"),
    ("extract_links", {"url": "http://127.0.0.1:9/", "selector": 3},
     "Invalid arguments: invalid type: integer, expected a string"),
    ("ard_discover", 1, "Invalid arguments: invalid type: integer, expected struct ArdDiscoverParams"),
    ("crawl_policy", True, "Invalid arguments: invalid type: boolean, expected struct CrawlPolicyParams"),
    ("inspect_page", [1], "Invalid arguments: invalid type: sequence, expected struct InspectPageParams"),
    ("screenshot_page", 2.5, "Invalid arguments: invalid type: floating point, expected struct ScreenshotPageParams"),
    ("inspect_page", {"url": "http://127.0.0.1:9/", "javascript": None},
     "Invalid arguments: invalid type: null, expected a boolean"),
    ("screenshot_page", {"url": "http://127.0.0.1:9/", "width": -3},
     "Invalid arguments: invalid value: integer, expected u32"),
    ("screenshot_page", {"url": "http://127.0.0.1:9/", "height": 2**32},
     "Invalid arguments: invalid value: integer, expected u32"),
    ("ard_discover", {"url": "https://example.com/", "timeout_ms": "5"},
     "Invalid arguments: invalid type: string, expected u64"),
    ("ard_discover", {"url": "https://example.com/", "x": 1},
     "Invalid arguments: unknown field `x`, expected `url` or `timeout_ms`"),
    ("crawl_policy", {"url": "https://example.com/", "x": 1},
     "Invalid arguments: unknown field `x`, expected one of `url`, `product_token`, `timeout_ms`"),
    ("inspect_page", {"url": "https://example.com/", "x": 1},
     "Invalid arguments: unknown field `x`, expected one of `url`, `javascript`, `selector`, `visual_mode`, "
     "`width`, `height`, `screenshot_timeout_ms`"),
])  # fmt: skip
async def test_argument_errors_use_the_reference_words(
    dispatcher: Dispatcher, tool: str, arguments: object, message: str
) -> None:
    assert await error_of(dispatcher, tool, arguments) == message


async def test_closed_tools_fail_on_an_unknown_field_before_any_request(dispatcher: Dispatcher) -> None:
    with scripted({"/": Answer(200, "<p>x</p>")}) as server:
        for tool in ("ard_discover", "crawl_policy", "inspect_page"):
            text = await error_of(dispatcher, tool, {"url": server.url("/"), "extra": True})
            assert text.startswith("Invalid arguments: unknown field `extra`")
        assert server.seen == []


async def test_open_tools_ignore_unknown_keys_and_accept_null_options(
    dispatcher: Dispatcher, fixture_server: str
) -> None:
    url = page(fixture_server, "title-only.html")
    assert (
        await text_of(
            dispatcher,
            "extract_text",
            {"url": url, "max_chars": None, "selector": None, "session_id": "ignored", "extra": 1},
        )
        == "Only a title\n"
    )


# ----- extract_text ---------------------------------------------------------------------------------


async def test_extract_text_renders_title_blank_line_bullets_and_table_rows(
    dispatcher: Dispatcher, fixture_server: str
) -> None:
    assert await text_of(dispatcher, "extract_text", {"url": page(fixture_server, "text.html")}) == TEXT_PAGE


async def test_extract_text_title_only_page_ends_with_a_newline(
    dispatcher: Dispatcher, fixture_server: str
) -> None:
    assert (
        await text_of(dispatcher, "extract_text", {"url": page(fixture_server, "title-only.html")})
        == "Only a title\n"
    )


@pytest.mark.parametrize(("max_chars", "expected"), [
    (7, "Hello..."),  # 7 characters are "Hello 😀": cut back to the last whitespace
    (0, "..."),
    (5, "Hello..."),  # no whitespace in the prefix: a hard cut
    (13, "Hello 😀 world"),  # not longer than the limit: unchanged
    (12, "Hello 😀..."),
])  # fmt: skip
async def test_extract_text_max_chars_counts_characters_and_cuts_at_whitespace(
    dispatcher: Dispatcher, fixture_server: str, max_chars: int, expected: str
) -> None:
    arguments = {"url": page(fixture_server, "emoji.html"), "max_chars": max_chars}
    assert await text_of(dispatcher, "extract_text", arguments) == expected


async def test_extract_text_selector_narrows_to_a_region(dispatcher: Dispatcher, fixture_server: str) -> None:
    text = await text_of(
        dispatcher, "extract_text", {"url": page(fixture_server, "text.html"), "selector": "nav"}
    )
    assert text == "MCP Smoke Test\n\nNowhere\nPage 2 from the menu"


async def test_extract_text_runs_page_scripts(dispatcher: Dispatcher, fixture_server: str) -> None:
    text = await text_of(dispatcher, "extract_text", {"url": page(fixture_server, "scripted.html")})
    assert text == "Scripted\n\nStatic heading\nWritten by a script"


async def test_extract_text_fetch_errors(dispatcher: Dispatcher, fixture_server: str) -> None:
    assert await error_of(dispatcher, "extract_text", {"url": "file:///etc/passwd"}) == (
        "Failed to fetch file:…: Outbound URL blocked: outbound URL scheme 'file' is not allowed; "
        "only http and https are permitted"
    )
    missing = await error_of(dispatcher, "extract_text", {"url": page(fixture_server, "missing.html")})
    where = fixture_server + "/…"
    assert missing == f"Failed to fetch {where}: HTTP error 404: {where}"


# ----- extract_links --------------------------------------------------------------------------------


async def test_extract_links_order_dedupe_and_skips(dispatcher: Dispatcher, fixture_server: str) -> None:
    # "" and "#" are skipped, the second /page2 is dropped, an <a role=menuitem> is a button, the
    # shadow link comes after the light-DOM content before it.
    text = await text_of(dispatcher, "extract_links", {"url": page(fixture_server, "text.html")})
    assert text == "/page2\nhttps://plasmate.app\n/shadow"


async def test_extract_links_without_links_is_empty(dispatcher: Dispatcher, fixture_server: str) -> None:
    assert await text_of(dispatcher, "extract_links", {"url": page(fixture_server, "emoji.html")}) == ""


async def test_extract_links_selector(dispatcher: Dispatcher, fixture_server: str) -> None:
    text = await text_of(
        dispatcher, "extract_links", {"url": page(fixture_server, "text.html"), "selector": "main"}
    )
    assert text == "/page2\nhttps://plasmate.app\n/shadow"
    text = await text_of(
        dispatcher, "extract_links", {"url": page(fixture_server, "text.html"), "selector": "nav"}
    )
    assert text == "/page2"


# ----- cache_status and the SOM cache ---------------------------------------------------------------


async def test_cache_status_cold_then_warm(dispatcher: Dispatcher, fixture_server: str) -> None:
    fresh = Dispatcher(dispatcher.engine)  # its own, empty cache
    status = json.loads(await text_of(fresh, "cache_status", None))
    assert list(status) == SNAPSHOT_FIELDS
    assert status == dict.fromkeys(SNAPSHOT_FIELDS, 0) | {"max_hot_entries": 1000}

    url = page(fixture_server, "text.html")
    html_bytes = len(await _read_fixture("text.html"))
    await text_of(fresh, "extract_text", {"url": url})
    cold = json.loads(await text_of(fresh, "cache_status", {}))
    assert list(cold) == SNAPSHOT_FIELDS
    assert {k: cold[k] for k in SNAPSHOT_FIELDS[:11]} == {
        "hits": 0,
        "stale_hits": 0,
        "misses": 1,
        "evictions": 0,
        "total_som_bytes_served": 0,
        "total_webmcp_bytes_served": 0,
        "total_html_bytes_avoided": 0,
        "entries": 1,
        "full_entries": 1,
        "selector_entries": 0,
        "effective_html_entries": 1,
    }
    assert cold["total_webmcp_bytes"] == 52  # the empty WebMCP catalog
    assert cold["total_html_bytes"] == html_bytes
    assert cold["total_som_bytes"] > 0 and cold["total_effective_html_bytes"] > 0

    await text_of(fresh, "extract_links", {"url": url})  # a hit: same document, same key
    warm = json.loads(await text_of(fresh, "cache_status", {}))
    assert (warm["hits"], warm["misses"], warm["entries"]) == (1, 1, 1)
    assert warm["total_som_bytes_served"] == cold["total_som_bytes"]
    assert warm["total_webmcp_bytes_served"] == 52
    assert warm["total_html_bytes_avoided"] == html_bytes

    # A selector derived from the cached full SOM: one selector miss, then two hits (full, then the
    # stored selector entry), as the reference counts it.
    await text_of(fresh, "extract_text", {"url": url + "#fragment-ignored", "selector": " NAV "})
    derived = json.loads(await text_of(fresh, "cache_status", {}))
    assert (derived["hits"], derived["misses"]) == (3, 2)
    assert (derived["entries"], derived["full_entries"], derived["selector_entries"]) == (2, 1, 1)
    assert derived["effective_html_entries"] == 1


async def test_cache_stale_entry_after_the_document_changed(dispatcher: Dispatcher) -> None:
    fresh = Dispatcher(dispatcher.engine)
    body = {"text": "<title>One</title><p>first</p>"}
    with scripted({"/doc": lambda _path: Answer(200, body["text"])}) as server:
        assert await text_of(fresh, "extract_text", {"url": server.url("/doc")}) == "One\n\nfirst"
        body["text"] = "<title>Two</title><p>second</p>"
        assert await text_of(fresh, "extract_text", {"url": server.url("/doc")}) == "Two\n\nsecond"
    status = json.loads(await text_of(fresh, "cache_status", {}))
    assert (status["stale_hits"], status["misses"], status["hits"], status["entries"]) == (1, 1, 0, 1)


async def _read_fixture(name: str) -> bytes:
    from pathlib import Path

    return (Path(__file__).parent.parent / "fixtures" / "pages" / "stateless" / name).read_bytes()


# ----- fetch_page: javascript and selector -------------------------------------------------------------


async def test_fetch_page_javascript_defaults_to_true_and_false_disables_scripts(
    dispatcher: Dispatcher, fixture_server: str
) -> None:
    url = page(fixture_server, "scripted.html")
    on = json.loads(await text_of(dispatcher, "fetch_page", {"url": url}))
    off = json.loads(await text_of(dispatcher, "fetch_page", {"url": url, "javascript": False}))
    texts_on = [e.get("text") for r in on["regions"] for e in r["elements"]]
    texts_off = [e.get("text") for r in off["regions"] for e in r["elements"]]
    assert "Written by a script" in texts_on and "Before scripts" not in texts_on
    assert "Before scripts" in texts_off and "Written by a script" not in texts_off


async def test_fetch_page_javascript_type_is_checked(dispatcher: Dispatcher) -> None:
    text = await error_of(dispatcher, "fetch_page", {"url": "http://127.0.0.1:9/", "javascript": "no"})
    assert text == "Invalid arguments: invalid type for `javascript`: expected a boolean"


@pytest.mark.parametrize("budget", [-5, -1, 2**64, -5.0])
async def test_fetch_page_refuses_a_budget_no_token_count_has_before_any_request(
    dispatcher: Dispatcher, budget: object
) -> None:
    """The reference's ``Option<usize>``: a negative budget used to answer "SOM exceeded budget of
    -5 tokens". Refused like extract_text's ``max_chars``, naming the field, never the value."""
    with scripted({"/": Answer(200, "<p>x</p>")}) as server:
        text = await error_of(dispatcher, "fetch_page", {"url": server.url("/"), "budget": budget})
        assert text == "Invalid arguments: invalid value: integer, expected usize for `budget`"
        assert server.seen == []


async def test_fetch_page_budget_zero_and_a_whole_float_are_token_counts(
    dispatcher: Dispatcher, fixture_server: str
) -> None:
    """0 is a usize (every SOM exceeds it); 5.0 is an integer to the schema checker, said as one."""
    url = page(fixture_server, "text.html")
    for budget, said in ((0, "0"), (5.0, "5")):
        answer = json.loads(await text_of(dispatcher, "fetch_page", {"url": url, "budget": budget}))
        assert answer["truncated"] is True and answer["message"] == f"SOM exceeded budget of {said} tokens"


async def test_fetch_page_selector_and_cache_use(dispatcher: Dispatcher, fixture_server: str) -> None:
    fresh = Dispatcher(dispatcher.engine)
    url = page(fixture_server, "text.html")
    som = json.loads(await text_of(fresh, "fetch_page", {"url": url, "selector": "nav"}))
    assert [r["role"] for r in som["regions"]] == ["navigation"]
    unknown = json.loads(await text_of(fresh, "fetch_page", {"url": url, "selector": "no-such-thing"}))
    assert [r["role"] for r in unknown["regions"]] == ["navigation", "main"]
    assert som["meta"] == unknown["meta"]  # meta stays the whole page's
    after_js = json.loads(await text_of(fresh, "cache_status", {}))
    await text_of(fresh, "fetch_page", {"url": url, "javascript": False})
    assert (
        json.loads(await text_of(fresh, "cache_status", {})) == after_js
    )  # javascript:false skips the cache
    assert after_js["full_entries"] == 1 and after_js["selector_entries"] == 2


# ----- screenshot_page -----------------------------------------------------------------------------------


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


async def test_screenshot_page_returns_one_png_image_block(
    dispatcher: Dispatcher, fixture_server: str
) -> None:
    result = await dispatcher.call(
        "screenshot_page", {"url": page(fixture_server, "text.html"), "width": 640, "height": 480}
    )
    assert not result.is_error and result.text_block is False and len(result.blocks) == 1
    block = result.blocks[0]
    assert block.mime_type == "image/png"
    assert png_size(base64.b64decode(block.data, validate=True)) == (640, 480)
    assert json.loads(result.text) == {"encodedBytes": len(block.data), "mimeType": "image/png"}


async def test_screenshot_page_default_size_and_formats(dispatcher: Dispatcher, fixture_server: str) -> None:
    url = page(fixture_server, "title-only.html")
    default = await dispatcher.call("screenshot_page", {"url": url})
    assert png_size(base64.b64decode(default.blocks[0].data)) == (1280, 720)
    for fmt, mime, magic in (
        ("JPG", "image/jpeg", b"\xff\xd8\xff"),
        ("jpeg", "image/jpeg", b"\xff\xd8\xff"),
        ("WebP", "image/webp", b"RIFF"),
        ("gif", "image/png", b"\x89PNG"),
    ):
        result = await dispatcher.call(
            "screenshot_page", {"url": url, "format": fmt, "width": 320, "height": 200}
        )
        assert result.blocks[0].mime_type == mime
        assert base64.b64decode(result.blocks[0].data).startswith(magic)


async def test_screenshot_page_errors(dispatcher: Dispatcher, fixture_server: str) -> None:
    where = fixture_server + "/…"
    assert await error_of(dispatcher, "screenshot_page", {"url": page(fixture_server, "missing.html")}) == (
        f"Failed to fetch {where}: HTTP error 404: {where}"
    )
    assert await error_of(dispatcher, "screenshot_page", {}) == "Invalid arguments: missing field `url`"
    assert await error_of(dispatcher, "screenshot_page", {"url": "http://127.0.0.1:9/", "format": None}) == (
        "Invalid arguments: invalid type: null, expected a string"
    )


async def test_mcp_result_carries_the_image_content_block(
    dispatcher: Dispatcher, fixture_server: str
) -> None:
    from mcp import Client

    from plasmate_nb.server.app import build_server

    async with Client(build_server(dispatcher)) as client:
        result = await client.call_tool(
            "screenshot_page", {"url": page(fixture_server, "title-only.html"), "width": 320, "height": 200}
        )
    assert not result.is_error
    assert [block.type for block in result.content] == ["image"]
    assert result.content[0].mime_type == "image/png"
    assert png_size(base64.b64decode(result.content[0].data)) == (320, 200)


def test_every_stateless_tool_is_in_the_catalogue() -> None:
    assert set(STATELESS) <= set(TOOLS_BY_NAME)


# ----- page text no UTF-8 can hold ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("fetch_page", {}),
        ("fetch_page", {"selector": "main"}),
        ("fetch_page", {"budget": 100_000}),
        ("extract_text", {}),
        ("extract_text", {"selector": "main"}),
        ("extract_links", {}),
    ],
)
async def test_page_tools_answer_a_page_holding_lone_surrogates(
    dispatcher: Dispatcher, fixture_server: str, tool: str, arguments: dict[str, str]
) -> None:
    """A script can put a lone UTF-16 surrogate in the DOM; sizing such text must not fail the tool."""
    url = page(fixture_server, "lone-surrogates.html")
    for attempt in ("cold", "cached"):
        result = await dispatcher.call(tool, {"url": url, **arguments})
        assert not result.is_error, (attempt, result.text)
        # In the text raw (a plain-text answer) or as its JSON escape (in a JSON answer's strings).
        assert "\ud800" in result.text or "\\ud800" in result.text, (attempt, result.text[:300])


@pytest.mark.parametrize("tool", ["fetch_page", "extract_text", "extract_links"])
async def test_a_page_whose_script_leaves_the_web_is_a_failed_fetch(
    dispatcher: Dispatcher, fixture_server: str, tool: str
) -> None:
    """Its script sends it to Chromium's error page: that page is no answer."""
    url = page(fixture_server, "leaves.html")
    assert await error_of(dispatcher, tool, {"url": url}) == (
        f"Failed to fetch {fixture_server}/…: Navigation failed: net::ERR_FAILED"
    )
