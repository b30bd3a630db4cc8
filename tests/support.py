"""Helpers shared by tests: call tools and decode payloads, find elements by name, wait for a condition."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

from plasmate_nb.tools import Dispatcher
from plasmate_nb.trace.som_walk import iter_elements

# Reference §1: "tools/list returns exactly 26 tools, in the order below".
REFERENCE_TOOLS = (
    "fetch_page", "extract_text", "extract_links", "ard_discover", "crawl_policy", "inspect_page", "cache_status",
    "session_status", "trace_status", "trace_export", "trace_clear", "replay_validate", "screenshot_page",
    "open_page", "evaluate", "click", "close_page", "navigate_to", "type_text", "select_option", "scroll", "toggle",
    "clear", "get_cookies", "set_cookies", "clear_cookies",
)  # fmt: skip


class DelegatingTransport:
    """A ``Transport`` that hands every call to ``inner``; a test overrides ``call`` to change answers."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        return await self.inner.call(tool, arguments)

    async def list_tools(self) -> list[dict[str, Any]]:
        return await self.inner.list_tools()

    def subscribe(self, callback: Any) -> Callable[[], None]:
        return self.inner.subscribe(callback)

    async def aclose(self) -> None:
        await self.inner.aclose()


class Caller:
    """Calls tools and decodes payloads; fails the test loudly on unexpected errors."""

    def __init__(self, dispatcher: Dispatcher) -> None:
        self.dispatcher = dispatcher

    async def ok(self, tool: str, **arguments: Any) -> Any:
        result = await self.dispatcher.call(tool, arguments)
        assert not result.is_error, f"{tool} failed: {result.text}"
        return json.loads(result.text)

    async def error(self, tool: str, arguments: Any) -> str:
        result = await self.dispatcher.call(tool, arguments)
        assert result.is_error, f"{tool} unexpectedly succeeded"
        return result.text

    async def export(self, session_id: str) -> dict[str, Any]:
        return await self.ok("trace_export", session_id=session_id)


def element_id(payload: dict[str, Any], role: str, name: str) -> str:
    """The id of the one element of ``role`` whose label or text is ``name``."""
    found = [
        element["id"]
        for element in iter_elements({"regions": payload["regions"]})
        if element["role"] == role and name in (element.get("label"), element.get("text"))
    ]
    assert len(found) == 1, f"expected one {role} named {name!r}, found {len(found)}"
    return found[0]


async def wait_until(predicate: Callable[[], Any], timeout: float = 10.0, what: str = "the condition") -> Any:
    """Poll ``predicate`` until it returns something truthy (returned); fail after ``timeout`` s."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if loop.time() >= deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(0.02)


def wait_until_here(predicate: Callable[[], Any], timeout: float = 10.0, what: str = "the condition") -> Any:
    """``wait_until`` for a test outside any event loop (the sync ``Session``'s work runs on its
    own loop's thread): poll ``predicate`` on this thread until it is truthy."""
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.02)
    return value
