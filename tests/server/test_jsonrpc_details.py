"""The reference's JSON-RPC answers (docs/contract.md#json-rpc-answers), over raw stdio, the SDK
client and HTTP: lifecycle, initialize validation, unknown methods and tools, missing params,
``notifications/initialized`` with an id, and an id-less ``ping``. None of these needs a browser.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio
from mcp import Client
from mcp.shared.exceptions import MCPError

from plasmate_nb.browser import Engine, EngineConfig
from plasmate_nb.server import HttpServer, build_server
from plasmate_nb.server import protocol as answers
from plasmate_nb.tools import Dispatcher
from tests.server.raw_jsonrpc import (
    LEGACY,
    QUIET_S,
    STABLE,
    RawHttp,
    RawStdio,
    initialize_params,
    modern_meta,
)

TOKEN = "jsonrpc-details-" + "k" * 32


@pytest.fixture
def raw() -> Iterator[RawStdio]:
    with RawStdio() as server:
        yield server


@pytest.fixture(scope="module")
def ready() -> Iterator[RawStdio]:
    """One initialized stdio server for the tests that do not depend on the lifecycle."""
    with RawStdio() as server:
        server.initialize(STABLE)
        yield server


def error_of(answer: dict) -> dict:
    assert "result" not in answer, answer
    return answer["error"]


# ----- lifecycle ------------------------------------------------------------------------------------


def test_tools_need_initialize_then_initialized_and_a_new_initialize_starts_over(raw: RawStdio) -> None:
    for method, params in (("tools/list", None), ("tools/call", {"name": "session_status"})):
        assert error_of(raw.request(method, params)) == {"code": -32600, "message": answers.NOT_INITIALIZED}
    assert "result" in raw.request("initialize", initialize_params(STABLE))
    for method, params in (("tools/list", None), ("tools/call", {"name": "session_status"})):
        assert error_of(raw.request(method, params)) == {
            "code": -32600,
            "message": answers.AWAITING_INITIALIZED,
        }
    raw.notify("notifications/initialized")
    assert len(raw.request("tools/list")["result"]["tools"]) > 0
    assert "result" in raw.request("initialize", initialize_params(STABLE))  # re-initialising resets the flag
    assert error_of(raw.request("tools/list")) == {"code": -32600, "message": answers.AWAITING_INITIALIZED}


def test_initialized_sent_with_an_id_is_answered(raw: RawStdio) -> None:
    too_early = raw.request("notifications/initialized", id="early")
    assert too_early == {
        "jsonrpc": "2.0",
        "id": "early",
        "error": {"code": -32600, "message": answers.INITIALIZED_TOO_EARLY},
    }
    assert error_of(raw.request("tools/list"))["message"] == answers.NOT_INITIALIZED  # it opened nothing
    raw.request("initialize", initialize_params(LEGACY))
    assert raw.request("notifications/initialized", id=7) == {"jsonrpc": "2.0", "id": 7, "result": {}}
    assert "tools" in raw.request("tools/list")["result"]


def test_a_bare_initialized_before_initialize_opens_nothing_and_is_not_answered(raw: RawStdio) -> None:
    raw.notify("notifications/initialized")
    assert raw.read(QUIET_S) is None
    assert error_of(raw.request("tools/list"))["message"] == answers.NOT_INITIALIZED


def test_ping_is_always_answered_with_or_without_an_id(raw: RawStdio) -> None:
    assert raw.request("ping", id="p0") == {"jsonrpc": "2.0", "id": "p0", "result": {}}  # before initialize
    raw.send('{"jsonrpc":"2.0","method":"ping"}')
    assert raw.read_line() == '{"jsonrpc":"2.0","result":{}}\n'
    raw.send('{"jsonrpc":"2.0","id":null,"method":"ping","params":{}}')
    assert raw.read_line() == '{"jsonrpc":"2.0","result":{}}\n'
    raw.notify("notifications/cancelled", {"requestId": "nothing"})  # other notifications stay unanswered
    assert raw.read(QUIET_S) is None


def test_modern_per_request_metadata_needs_no_initialize(raw: RawStdio) -> None:
    listed = raw.request("tools/list", {"_meta": modern_meta()})["result"]
    assert listed["resultType"] == "complete" and all("outputSchema" in tool for tool in listed["tools"])
    called = raw.request("tools/call", {"name": "session_status", "arguments": {}, "_meta": modern_meta()})
    result = called["result"]
    assert result["resultType"] == "complete" and result["structuredContent"]["trust"] == "sensitive-session"


# ----- initialize validation ------------------------------------------------------------------------

GOOD = initialize_params(STABLE)


@pytest.mark.parametrize(("params", "message"), [
    (None, answers.MISSING_INITIALIZE_PARAMS),
    ({"capabilities": {}, "clientInfo": GOOD["clientInfo"]}, answers.MISSING_PROTOCOL_VERSION),
    ({**GOOD, "protocolVersion": 20251125}, answers.MISSING_PROTOCOL_VERSION),
    ({**GOOD, "capabilities": None}, answers.MISSING_CAPABILITIES),
    ({**GOOD, "capabilities": []}, answers.MISSING_CAPABILITIES),
    ({key: value for key, value in GOOD.items() if key != "clientInfo"}, answers.MISSING_CLIENT_INFO),
    ({**GOOD, "clientInfo": "me"}, answers.MISSING_CLIENT_INFO),
    ({**GOOD, "clientInfo": {"name": "me"}}, answers.BAD_CLIENT_INFO),
    ({**GOOD, "clientInfo": {"name": "me", "version": 1}}, answers.BAD_CLIENT_INFO),
])  # fmt: skip
def test_initialize_params_are_checked_in_the_references_order(ready: RawStdio, params, message: str) -> None:
    assert error_of(ready.request("initialize", params)) == {"code": -32602, "message": message}


def test_initialize_answers_per_version(raw: RawStdio) -> None:
    legacy = raw.request("initialize", initialize_params(LEGACY))["result"]
    assert legacy["protocolVersion"] == LEGACY
    assert legacy["serverInfo"] == {"name": "plasmate-nb", "version": legacy["serverInfo"]["version"]}
    assert legacy["capabilities"] == {"tools": {"listChanged": False}}
    stable = raw.request("initialize", initialize_params("2026-07-28"))["result"]  # any other: 2025-11-25
    assert stable["protocolVersion"] == STABLE
    assert {"name", "title", "version", "description"} <= set(stable["serverInfo"])


# ----- methods and tools/call -----------------------------------------------------------------------


@pytest.mark.parametrize("method", ["bogus", "resources/list", "notifications/bogus", ""])
def test_an_unknown_method_names_itself(ready: RawStdio, method: str) -> None:
    assert error_of(ready.request(method, {})) == {"code": -32601, "message": f"Method not found: {method}"}


@pytest.mark.parametrize(("params", "message"), [
    (None, "Missing params"),
    ({}, "Missing tool name"),
    ({"name": 5, "arguments": {}}, "Missing tool name"),
    ({"name": "nope", "arguments": {}}, "Unknown tool: nope"),
    ({"name": "nope", "arguments": "not an object"}, "Unknown tool: nope"),  # the name is checked first
])  # fmt: skip
def test_tools_call_params_and_unknown_tools_are_json_rpc_errors(
    ready: RawStdio, params, message: str
) -> None:
    answer = ready.request("tools/call", params)
    assert answer["id"] and error_of(answer) == {"code": -32602, "message": message}


def test_null_arguments_are_read_as_absent(ready: RawStdio) -> None:
    # The SDK's request model cannot tell the two apart (docs/contract.md#deviations-from-the-reference).
    for params in ({"name": "extract_text", "arguments": None}, {"name": "extract_text"}):
        result = ready.request("tools/call", params)["result"]
        assert result["isError"] is True
        assert result["content"][0]["text"] == "Invalid arguments: missing field `url`"


# ----- the SDK client and HTTP ----------------------------------------------------------------------


@pytest_asyncio.fixture(scope="module")
async def dispatcher() -> AsyncIterator[Dispatcher]:
    engine = Engine(EngineConfig(max_sessions=2))
    try:
        yield Dispatcher(engine)
    finally:
        await engine.aclose()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_sdk_client_receives_an_unknown_tool_as_an_mcp_error(
    dispatcher: Dispatcher, mode: str
) -> None:
    async with Client(build_server(dispatcher), mode=mode) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("nope", {})
    assert (raised.value.code, raised.value.message, raised.value.data) == (
        -32602,
        "Unknown tool: nope",
        None,
    )


async def test_the_in_process_dispatcher_keeps_an_unknown_tool_a_tool_error(dispatcher: Dispatcher) -> None:
    result = await dispatcher.call("nope", {})
    assert result.is_error and result.text == "Unknown tool: nope"


async def test_http_gives_the_same_answers(dispatcher: Dispatcher) -> None:
    server = await HttpServer(dispatcher, port=0, token=TOKEN).start()
    raw = RawHttp(server.url, TOKEN)
    try:
        started = await raw.post(
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize_params(STABLE)}
        )
        raw.headers = {
            **raw.headers,
            "mcp-session-id": started.headers["mcp-session-id"],
            "mcp-protocol-version": STABLE,
        }
        assert (await raw.request("tools/list"))["error"]["message"] == answers.AWAITING_INITIALIZED
        assert (await raw.post({"jsonrpc": "2.0", "method": "notifications/initialized"})).status_code == 202
        unknown = await raw.request("tools/call", {"name": "nope", "arguments": {}})
        assert unknown["error"] == {"code": -32602, "message": "Unknown tool: nope"}
        assert (await raw.request("bogus"))["error"] == {"code": -32601, "message": "Method not found: bogus"}
    finally:
        await raw.aclose()
        await server.stop()
