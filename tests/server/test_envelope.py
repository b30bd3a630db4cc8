"""The tools/call result envelope and the tools/list entries per protocol version
(docs/contract.md#result-envelope): the structured-copy table as pure functions, then real
servers over raw stdio (2024-11-05 and 2025-11-25) and once over HTTP.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import pytest_asyncio

from plasmate_nb.browser import Engine, EngineConfig
from plasmate_nb.server import HttpServer
from plasmate_nb.server.envelope import (
    BLOCK_DATA_HANDLING,
    DEPTH_REASON,
    RESULT_DATA_HANDLING,
    SIZE_REASON,
    STRUCTURED_MAX_BYTES,
    call_result,
    structured_copy,
    text_copy,
)
from plasmate_nb.tools import DEFAULT_TOOLS, Dispatcher, ToolResult
from plasmate_nb.tools.catalogue import OUTPUT_SCHEMA
from tests.server.raw_jsonrpc import LEGACY, STABLE, RawHttp, RawStdio, sorted_everywhere

TOKEN = "envelope-" + "k" * 40
BLOCK_META = {"dev.plasmate/dataHandling": BLOCK_DATA_HANDLING}
LONG = 300_000  # characters of an evaluate result: above the 262,144-byte structured-copy limit


def nested(depth: int) -> Any:
    """A JSON value whose depth is ``depth`` (the root is level 1, the innermost scalar counts)."""
    value: Any = 0
    for _ in range(depth - 1):
        value = [value]
    return value


# ----- the structured-copy table, as pure functions ------------------------------------------------


@pytest.mark.parametrize(("content", "expected"), [
    (None, (None, "application/json")),
    ([], (None, "application/json")),
    ("text", (None, "application/json")),
    ([{"type": "text", "text": '{"b":{"d":1,"c":[{"z":0,"a":null}]},"a":404}'}],
     ({"a": 404, "b": {"c": [{"a": None, "z": 0}], "d": 1}}, "application/json")),
    ([{"type": "text", "text": "404"}], (404, "application/json")),
    ([{"type": "text", "text": ""}], ("", "text/plain")),
    ([{"type": "text", "text": "NaN"}], ("NaN", "text/plain")),
    ([{"type": "text", "text": "Session not found: x"}], ("Session not found: x", "text/plain")),
    ([{"type": "resource", "text": "[1]"}], ([1], "application/json")),  # any type with a text
    ([{"type": "image", "data": "QUJD", "mimeType": "image/webp"}],
     ({"encodedBytes": 4, "mimeType": "image/webp"}, "image/webp")),
    ([{"type": "image", "data": "QUJD"}],
     ({"encodedBytes": 4, "mimeType": "application/octet-stream"}, "application/octet-stream")),
    ([{"type": "audio", "data": "QUJD", "mimeType": "audio/wav"}],
     ({"blockCount": 1, "blocks": [{"mimeType": "audio/wav", "type": "audio"}]}, "application/vnd.mcp.content+json")),
    ([{"type": "text", "text": "a"}, {"type": "image", "data": "QUJD", "mimeType": "image/png"}, 7],
     ({"blockCount": 3, "blocks": [{"mimeType": None, "type": "text"}, {"mimeType": "image/png", "type": "image"},
                                   {"mimeType": None, "type": "unknown"}]}, "application/vnd.mcp.content+json")),
])  # fmt: skip
def test_the_structured_copy_follows_the_reference_table(content: Any, expected: tuple[Any, str]) -> None:
    assert structured_copy(content) == expected


def test_a_block_summary_lists_at_most_32_blocks() -> None:
    copy, _ = structured_copy([{"type": "text", "text": str(i)} for i in range(40)])
    assert copy["blockCount"] == 40 and len(copy["blocks"]) == 32


def test_the_size_limit_is_in_utf8_bytes_strictly_above_256_kib_and_checked_before_parsing() -> None:
    at_limit = json.dumps(
        "é" * ((STRUCTURED_MAX_BYTES - 2) // 2), ensure_ascii=False
    )  # quotes, 2 bytes a char
    assert len(at_limit.encode()) == STRUCTURED_MAX_BYTES
    assert text_copy(at_limit) == (json.loads(at_limit), "application/json")
    over = at_limit[:-1] + "a" + at_limit[-1]
    marker = {"bytes": STRUCTURED_MAX_BYTES + 1, "omitted": True, "reason": SIZE_REASON}
    assert text_copy(over) == (marker, "text/plain")  # JSON, yet text/plain: the size is checked first


def test_the_depth_limit_counts_the_root_and_the_scalars() -> None:
    assert text_copy(json.dumps(nested(32))) == (nested(32), "application/json")
    deep = json.dumps(nested(33))
    assert text_copy(deep) == (
        {"bytes": len(deep), "omitted": True, "reason": DEPTH_REASON},
        "application/json",
    )
    very_deep = "[" * 100_000 + "]" * 100_000  # deeper than Python's parser goes: still the marker
    assert text_copy(very_deep)[0]["reason"] == DEPTH_REASON


def test_lone_surrogates_in_a_copy_are_escaped_so_the_result_stays_encodable() -> None:
    copy, content_type = text_copy('{"\\ud800k":"v\\udfff"}')
    assert content_type == "application/json" and copy == {"\\ud800k": "v\\udfff"}
    json.dumps(copy, ensure_ascii=False).encode()  # no UnicodeEncodeError


def test_error_results_are_labelled_tool_error_and_legacy_results_carry_nothing_extra() -> None:
    failed = call_result(ToolResult.error("Element not found: e_1"), "untrusted-web", STABLE)
    assert failed["isError"] is True and failed["structuredContent"] == {
        "contentType": "text/plain",
        "result": "Element not found: e_1",
        "trust": "tool-error",
    }
    assert failed["content"][0]["_meta"] == {**BLOCK_META, "dev.plasmate/trust": "tool-error"}
    assert failed["_meta"] == {
        "dev.plasmate/dataHandling": RESULT_DATA_HANDLING,
        "dev.plasmate/trust": "tool-error",
    }
    assert call_result(ToolResult.error("x"), "local", LEGACY) == {
        "content": [{"type": "text", "text": "x"}],
        "isError": True,
    }
    assert call_result(ToolResult.payload({"a": 1}), "local", LEGACY) == {
        "content": [{"type": "text", "text": '{"a":1}'}]
    }  # no isError key on success, as the reference
    assert "resultType" not in call_result(ToolResult.payload(1), "local", STABLE)
    assert call_result(ToolResult.payload(1), "local", "2026-07-28")["resultType"] == "complete"


# ----- real servers over raw stdio -----------------------------------------------------------------


@pytest.fixture(scope="module", params=[LEGACY, STABLE])
def server(request: pytest.FixtureRequest) -> Iterator[RawStdio]:
    with RawStdio() as raw:
        assert raw.initialize(request.param)["protocolVersion"] == request.param
        yield raw


def _check_shape(result: dict[str, Any], version: str, trust: str) -> dict[str, Any] | None:
    """The shape every result has on ``version``; returns its structuredContent (None on legacy)."""
    if version == LEGACY:
        assert set(result) <= {"content", "isError"} and result.get("isError", True) is True, result.keys()
        assert all("_meta" not in block for block in result["content"])
        return None
    assert set(result) <= {"content", "isError", "structuredContent", "_meta"}
    assert result["_meta"] == {"dev.plasmate/dataHandling": RESULT_DATA_HANDLING, "dev.plasmate/trust": trust}
    assert all(block["_meta"] == {**BLOCK_META, "dev.plasmate/trust": trust} for block in result["content"])
    structured = result["structuredContent"]
    assert set(structured) == {"result", "contentType", "trust"} and structured["trust"] == trust
    return structured


def test_tools_list_declares_the_one_output_schema_from_2025_11_25(server: RawStdio) -> None:
    tools = server.request("tools/list")["result"]["tools"]
    assert [tool["name"] for tool in tools] == [spec.name for spec in DEFAULT_TOOLS]
    if server.version == LEGACY:
        assert all(set(tool) == {"name", "description", "inputSchema"} for tool in tools)
        return
    for tool, spec in zip(tools, DEFAULT_TOOLS, strict=True):
        assert set(tool) == {"name", "title", "description", "inputSchema", "annotations", "outputSchema"}
        assert tool["outputSchema"] == OUTPUT_SCHEMA and tool["title"] == spec.title
        assert {
            key: tool["annotations"][key]
            for key in ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
        } == {
            "readOnlyHint": spec.read_only,
            "destructiveHint": spec.destructive,
            "idempotentHint": spec.idempotent,
            "openWorldHint": spec.open_world,
        }


def test_a_json_payload_is_copied_parsed_with_sorted_keys(server: RawStdio, demo) -> None:
    result = server.call("open_page", {"url": demo.url("/login.html")})
    text = result["content"][0]["text"]
    structured = _check_shape(result, server.version, "untrusted-web")
    if structured is not None:
        assert structured["contentType"] == "application/json"
        assert structured["result"] == json.loads(text) and sorted_everywhere(structured["result"])
    closed = server.call("close_page", {"session_id": json.loads(text)["session_id"]})
    structured = _check_shape(closed, server.version, "sensitive-session")
    assert structured is None or structured["result"]["closed"] is True


def test_a_plain_text_payload_is_copied_as_the_string(server: RawStdio, demo) -> None:
    result = server.call("extract_text", {"url": demo.url("/index.html")})
    structured = _check_shape(result, server.version, "untrusted-web")
    if structured is not None:
        assert structured == {
            "contentType": "text/plain",
            "result": result["content"][0]["text"],
            "trust": "untrusted-web",
        }


def test_a_tool_error_is_labelled_tool_error(server: RawStdio) -> None:
    result = server.call("click", {"session_id": "no-such-session", "element_id": "e_1"})
    assert result["isError"] is True and result["content"] == [
        {
            "type": "text",
            "text": "Session not found: no-such-session",
            **(
                {}
                if server.version == LEGACY
                else {"_meta": {**BLOCK_META, "dev.plasmate/trust": "tool-error"}}
            ),
        }
    ]
    structured = _check_shape(result, server.version, "tool-error")
    assert structured is None or structured["result"] == "Session not found: no-such-session"


def test_a_text_over_256_kib_is_replaced_by_the_size_marker(server: RawStdio, demo) -> None:
    sid = server.payload("open_page", {"url": demo.url("/index.html")})["session_id"]
    try:
        result = server.call("evaluate", {"session_id": sid, "expression": f"'x'.repeat({LONG})"})
        text = result["content"][0]["text"]
        assert json.loads(text) == {"result": "x" * LONG}
        structured = _check_shape(result, server.version, "untrusted-web")
        if structured is not None:
            assert structured["contentType"] == "text/plain"
            assert structured["result"] == {
                "bytes": len(text.encode()),
                "omitted": True,
                "reason": SIZE_REASON,
            }
        deep = server.call(
            "evaluate", {"session_id": sid, "expression": "JSON.parse('" + json.dumps(nested(33)) + "')"}
        )
        structured = _check_shape(deep, server.version, "untrusted-web")
        if structured is not None:  # {"result": <33 levels>} is 34 deep
            assert (
                structured["result"]["reason"] == DEPTH_REASON
                and structured["contentType"] == "application/json"
            )
    finally:
        server.call("close_page", {"session_id": sid})


def test_an_image_is_summarised_and_text_plus_image_is_a_block_summary(server: RawStdio, demo) -> None:
    shot = server.call("screenshot_page", {"url": demo.url("/index.html")})
    assert [block["type"] for block in shot["content"]] == ["image"]
    image = shot["content"][0]
    assert image["mimeType"] == "image/png" and len(image["data"]) > 100
    structured = _check_shape(shot, server.version, "untrusted-web")
    if structured is not None:
        assert structured == {
            "contentType": "image/png",
            "trust": "untrusted-web",
            "result": {"encodedBytes": len(image["data"]), "mimeType": "image/png"},
        }
    both = server.call("inspect_page", {"url": demo.url("/index.html"), "visual_mode": "always"})
    assert [block["type"] for block in both["content"]] == ["text", "image"]
    structured = _check_shape(both, server.version, "untrusted-web")
    if structured is not None:
        assert structured["contentType"] == "application/vnd.mcp.content+json"
        assert structured["result"] == {
            "blockCount": 2,
            "blocks": [{"mimeType": None, "type": "text"}, {"mimeType": "image/png", "type": "image"}],
        }


def test_cache_status_is_local(server: RawStdio) -> None:
    structured = _check_shape(server.call("cache_status"), server.version, "local")
    assert structured is None or structured["contentType"] == "application/json"


# ----- once over HTTP ------------------------------------------------------------------------------


@pytest_asyncio.fixture
async def http_url() -> AsyncIterator[str]:
    engine = Engine(EngineConfig(max_sessions=2))
    server = await HttpServer(Dispatcher(engine), port=0, token=TOKEN).start()
    try:
        yield server.url
    finally:
        await server.stop()
        await engine.aclose()


async def test_http_sends_the_same_envelope(http_url: str, demo) -> None:
    raw = RawHttp(http_url, TOKEN)
    try:
        await raw.initialize(STABLE)
        tools = (await raw.request("tools/list"))["result"]["tools"]
        assert all(tool["outputSchema"] == OUTPUT_SCHEMA for tool in tools)
        opened = await raw.request(
            "tools/call", {"name": "open_page", "arguments": {"url": demo.url("/login.html")}}
        )
        result = opened["result"]
        structured = _check_shape(result, STABLE, "untrusted-web")
        assert structured is not None and structured["result"] == json.loads(result["content"][0]["text"])
        closed = await raw.request(
            "tools/call",
            {"name": "close_page", "arguments": {"session_id": structured["result"]["session_id"]}},
        )
        assert closed["result"]["structuredContent"]["trust"] == "sensitive-session"
    finally:
        await raw.aclose()
