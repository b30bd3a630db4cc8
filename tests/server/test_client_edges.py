"""What a real SDK client sees at the edges of the arguments and results (docs/contract.md#arguments,
docs/contract.md#answers): values the reference's own parsing and serialisation decide.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from mcp import Client

from plasmate_nb.browser import Engine, EngineConfig
from plasmate_nb.server import build_server
from plasmate_nb.tools import Dispatcher


@pytest_asyncio.fixture(scope="module")
async def dispatcher() -> AsyncIterator[Dispatcher]:
    engine = Engine(EngineConfig(max_sessions=2, action_timeout=5.0, settle_timeout=1.0))
    try:
        yield Dispatcher(engine)
    finally:
        await engine.aclose()


@pytest_asyncio.fixture(scope="module")
async def session_id(dispatcher: Dispatcher, demo) -> str:
    opened = await dispatcher.call("open_page", {"url": demo.url("/login.html")})
    assert not opened.is_error, opened.text
    return str(json.loads(opened.text)["session_id"])


def _strict_json(text: str) -> Any:
    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize(
    ("expression", "result", "written"),
    [
        ("NaN", "NaN", '"NaN"'),
        ("1/0", "Infinity", '"Infinity"'),
        ("-1/0", "-Infinity", '"-Infinity"'),
        ("'NaN'", "NaN", '"NaN"'),  # a string the reference's JSON parser does not take stays a string
        ("'Infinity'", "Infinity", '"Infinity"'),
        ("'-Infinity'", "-Infinity", '"-Infinity"'),
        ("-0", 0, "0"),  # String(-0) is "0"
        ("1.5", 1.5, "1.5"),
        # serde_json's float layout, not Python's ("1e+21", "1.5e-07", "1e-05")
        ("1e21", 1e21, "1e21"),
        ("1.5e-7", 1.5e-7, "1.5e-7"),
        ("0.00001", 1e-5, "0.00001"),
        ("[1e21, 2.5e-6, '1e+21']", [1e21, 2.5e-6, "1e+21"], '[1e21,2.5e-6,"1e+21"]'),
        # an integer is one while 64 bits hold it, then a float; String(2**60) writes short digits
        ("2**60", 1152921504606847000, "1152921504606847000"),
        ("1e20", 1e20, "1e20"),
        ("'18446744073709551615'", 2**64 - 1, "18446744073709551615"),
        ("'18446744073709551616'", 2.0**64, "1.8446744073709552e19"),
        ("'-9223372036854775809'", -(2.0**63), "-9.223372036854776e18"),
        ("2n**64n", 2.0**64, "1.8446744073709552e19"),
        # a number no float holds: serde_json refuses the text, which stays a string (it came
        # back as a bare Infinity, which no JSON parser takes)
        ("'1e400'", "1e400", '"1e400"'),
        ("'[1, -1e400]'", "[1, -1e400]", '"[1, -1e400]"'),
        ("'1' + '0'.repeat(400)", "1" + "0" * 400, '"1' + "0" * 400 + '"'),
        ("'-0'", -0.0, "-0.0"),  # serde_json reads the text -0 as the float -0.0
        # serde_json refuses a lone surrogate escape and nesting 128 deep: the text stays a string
        ("'\"\\\\ud800\"'", '"\\ud800"', '"\\"\\\\ud800\\""'),
        ("'['.repeat(128) + ']'.repeat(128)", "[" * 128 + "]" * 128, '"' + "[" * 128 + "]" * 128 + '"'),
    ],
)
async def test_evaluate_answers_numbers_as_the_references_json_reader_and_writer_do(
    dispatcher: Dispatcher, session_id: str, expression: str, result: Any, written: str
) -> None:
    """The reference's worker hands back ``String(value)`` and serde_json reads it back: NaN and
    the infinities are no JSON, so they stay strings; integers are integers while 64 bits hold
    them; a number out of any float's range leaves the text a string. The answer text writes
    floats as serde_json does, and both it and the structured copy are strict JSON."""
    async with Client(build_server(dispatcher)) as client:
        answer = await client.call_tool("evaluate", {"session_id": session_id, "expression": expression})
    assert not answer.is_error, answer
    text = answer.content[0].text
    assert text == '{"result":' + written + "}"
    assert _strict_json(text) == {"result": result}
    assert answer.structured_content is not None
    assert answer.structured_content["contentType"] == "application/json"
    assert answer.structured_content["result"] == {"result": result}


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("fetch_page", {"budget": None, "selector": None}),
        ("scroll", {"element_id": None}),
        ("get_cookies", {"url": None}),
        ("clear_cookies", {"name": None, "domain": None, "url": None}),
        ("page_som", {"selector": None}),
    ],
)
async def test_null_for_an_optional_argument_without_a_default_is_absent(
    dispatcher: Dispatcher, session_id: str, demo, tool: str, arguments: dict[str, Any]
) -> None:
    """The reference's ``Option`` fields take ``null`` as absent (clients that fill every declared
    property send it); only fields with a default, or required ones, refuse it."""
    base = {"url": demo.url("/login.html")} if tool == "fetch_page" else {"session_id": session_id}
    async with Client(build_server(dispatcher)) as client:
        answer = await client.call_tool(tool, {**base, **arguments})
    assert not answer.is_error, answer.content[0].text
    assert isinstance(_strict_json(answer.content[0].text), dict)


@pytest.mark.parametrize(
    ("tool", "arguments", "field", "kind"),
    [
        ("type_text", {"element_id": "e", "text": "a", "append": None}, "append", "a boolean"),
        ("scroll", {"pixels": None}, "pixels", "an integer"),
        ("click", {"element_id": None}, "element_id", "a string"),
    ],
)
async def test_null_for_a_defaulted_or_required_argument_is_still_refused(
    dispatcher: Dispatcher, session_id: str, tool: str, arguments: dict[str, Any], field: str, kind: str
) -> None:
    async with Client(build_server(dispatcher)) as client:
        answer = await client.call_tool(tool, {"session_id": session_id, **arguments})
    assert answer.is_error
    assert answer.content[0].text == f"Invalid arguments: invalid type for `{field}`: expected {kind}"


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("example.com/page", "invalid URL: relative URL without a base"),
        ("", "invalid URL: relative URL without a base"),
        ("http://", "invalid URL: empty host"),
        ("https:///path", "invalid URL: empty host"),
        ("http://[::1/", "invalid URL: invalid IPv6 address"),
        ("http://example.com:99999/", "invalid URL: invalid port number"),
        ("http://example.com:port/", "invalid URL: invalid port number"),
    ],
)
@pytest.mark.parametrize("tool", ["open_page", "extract_text"])
async def test_a_url_that_does_not_parse_is_refused_with_the_references_reason(
    dispatcher: Dispatcher, tool: str, url: str, reason: str
) -> None:
    """The reference parses the URL first and names the parser's error (`invalid URL: <error>`);
    a URL with no scheme is relative, never a scheme of ''."""
    async with Client(build_server(dispatcher)) as client:
        answer = await client.call_tool(tool, {"url": url})
    assert answer.is_error
    text = answer.content[0].text
    assert text.startswith("Failed to fetch "), text
    assert text.endswith(": Outbound URL blocked: " + reason), text


async def test_tools_without_arguments_declare_the_references_bare_schema(dispatcher: Dispatcher) -> None:
    """``{"type":"object","properties":{}}``: no empty ``required`` list, which JSON Schema draft 4
    validators (still used by some clients) refuse."""
    async with Client(build_server(dispatcher)) as client:
        listed = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
    assert listed["session_status"] == {"type": "object", "properties": {}}
    assert listed["cache_status"] == {"type": "object", "properties": {}}
    assert all(schema.get("required") for schema in listed.values() if "required" in schema)
