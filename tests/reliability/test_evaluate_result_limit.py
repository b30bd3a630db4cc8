"""The size limit on ``evaluate`` results, through the real dispatcher on real Chromium.

A 30 MB result used to come back whole (into the agent's context, the MCP frame, memory).
The limit is measured on the JSON of the result as sent (UTF-8); a larger result is an error
that names the limit and how to raise it, never the result, classified ``operation``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator

import pytest_asyncio

from plasmate_nb.browser import Engine
from plasmate_nb.tools import Dispatcher
from tests.reliability.support import FAST, last_event
from tests.support import Caller

SMALL_LIMIT = 1000
CONFIG = dataclasses.replace(FAST, evaluate_timeout=15.0)  # room to build a 30 MB value on a busy machine
MARKER = "evaluate-limit-marker-7f3a"


@pytest_asyncio.fixture(scope="module")
async def default_limit() -> AsyncIterator[Caller]:
    engine = Engine(CONFIG)
    try:
        yield Caller(Dispatcher(engine))
    finally:
        await engine.aclose()


@pytest_asyncio.fixture(scope="module")
async def small_limit() -> AsyncIterator[Caller]:
    engine = Engine(dataclasses.replace(CONFIG, evaluate_result_limit=SMALL_LIMIT))
    try:
        yield Caller(Dispatcher(engine))
    finally:
        await engine.aclose()


async def _evaluate(call: Caller, sid: str, expression: str) -> tuple[bool, str]:
    result = await call.dispatcher.call("evaluate", {"session_id": sid, "expression": expression})
    return not result.is_error, result.text


async def test_a_huge_result_is_refused_naming_the_limit_never_the_result(
    default_limit: Caller, demo
) -> None:
    call = default_limit
    sid = (await call.ok("open_page", url=demo.url("/login.html"), trace=True))["session_id"]
    for expression in (
        f"'{MARKER}' + 'x'.repeat(30 * 2 ** 20)",
        f"({{k: '{MARKER}' + 'x'.repeat(2 ** 21)}})",
        f"Array.from({{length: 2 ** 18}}, () => '{MARKER}')",
    ):
        ok, message = await _evaluate(call, sid, expression)
        assert not ok and message.startswith("Evaluate failed: "), message[:200]
        assert (
            "1048576 bytes" in message
            and "evaluate_result_limit" in message
            and "--evaluate-result-limit" in message
        )
        assert MARKER not in message and "xxxx" not in message and len(message) < 300
        event = last_event(await call.export(sid))
        assert (event["action"], event["error_class"]) == ("evaluate", "operation")
    assert await call.ok("evaluate", session_id=sid, expression="location.pathname") == {
        "result": "/login.html"
    }
    await call.ok("close_page", session_id=sid)


async def test_the_limit_is_exact_on_the_json_of_the_result(small_limit: Caller, demo) -> None:
    call = small_limit
    sid = (await call.ok("open_page", url=demo.url("/login.html")))["session_id"]
    # (expression building a value whose JSON is n bytes, overhead of the JSON around the repeated part)
    cases = [
        ("'x'.repeat({n})", 1, 2),  # "xx…x"
        ("'\\u00e9'.repeat({n})", 2, 2),  # two UTF-8 bytes per character
        ("'\\n'.repeat({n})", 2, 2),  # JSON escapes each newline as two bytes
        ("({{a: 'x'.repeat({n})}})", 1, 8),  # {"a":"…"}
        ("String.fromCharCode(0xd800).repeat({n})", 6, 2),
    ]  # sent as \ud800 escapes
    for template, unit, overhead in cases:
        fits = (SMALL_LIMIT - overhead) // unit
        ok, text = await _evaluate(call, sid, template.format(n=fits))
        assert ok, f"{template} × {fits} ({fits * unit + overhead} bytes) was refused: {text[:200]}"
        ok, text = await _evaluate(call, sid, template.format(n=fits + 1))
        assert not ok and f"limit of {SMALL_LIMIT} bytes" in text, f"{template} × {fits + 1}: {text[:200]}"
    await call.ok("close_page", session_id=sid)


async def test_a_far_oversized_value_is_refused_in_the_page(default_limit: Caller, demo) -> None:
    """The page itself swaps a value far over the limit for a small refusal: it never crosses the wire."""
    call = default_limit
    sid = (await call.ok("open_page", url=demo.url("/login.html")))["session_id"]
    session = call.dispatcher.engine.get(sid)
    page = await session._live_page()
    limit = 1000
    refused = await page.evaluate(session._refusing_oversize("'x'.repeat(10 ** 6)", limit))
    assert isinstance(refused, dict)
    pretty = "JSON.stringify(Array(150).fill(1), null, 10)"  # far over the limit as text, 301 bytes compact
    assert len(await page.evaluate(session._refusing_oversize(pretty, limit))) > limit * 3 // 2
    assert await _evaluate(call, sid, pretty) == (True, '{"result":[' + ",".join(["1"] * 150) + "]}")
    await call.ok("close_page", session_id=sid)
