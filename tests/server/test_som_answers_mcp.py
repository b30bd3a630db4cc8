"""``som_answers: "changes"`` and ``page_som`` through the official MCP SDK client over stdio
(docs/contract.md#answers-that-carry-only-what-changed): what an agent really receives.

The SDK checks every ``structuredContent`` against the tool's ``outputSchema``; the test applies
each answer's ``changes`` to the SOM it holds and compares the bytes with ``page_som``'s text and
the ``som_digest``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from plasmate_nb.tools.som_changes import apply_changes, canonical_text
from tests.support import element_id

SERVE = ["-m", "plasmate_nb", "serve", "--allow-private-network"]


def _text(result: Any) -> str:
    assert not result.is_error, result.content
    return "".join(block.text for block in result.content)


async def test_an_sdk_client_rebuilds_the_whole_som_from_changes(demo) -> None:
    server = StdioServerParameters(command=sys.executable, args=SERVE)
    async with Client(stdio_client(server)) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert listed["page_som"].annotations.read_only_hint is True
        assert listed["page_som"].output_schema == listed["click"].output_schema
        assert listed["open_page"].input_schema["properties"]["som_answers"]["enum"] == ["full", "changes"]

        opened_result = await client.call_tool(
            "open_page", {"url": demo.url("/login.html"), "trace": True, "som_answers": "changes"}
        )
        opened = json.loads(_text(opened_result))
        assert opened_result.structured_content["trust"] == "untrusted-web"
        sid = opened["session_id"]
        whole = _text(await client.call_tool("page_som", {"session_id": sid}))
        assert opened["som_digest"] == "sha256:" + hashlib.sha256(whole.encode()).hexdigest()

        email = element_id(opened, "text_input", "Email")
        typed_result = await client.call_tool(
            "type_text", {"session_id": sid, "element_id": email, "text": "agent@example.test"}
        )
        typed = json.loads(_text(typed_result))
        assert "regions" not in typed and typed["changes"]["base_digest"] == opened["som_digest"]
        assert typed_result.structured_content["result"]["changes"]["changed"][0]["id"] == email
        rebuilt = canonical_text(apply_changes(json.loads(whole), typed["changes"]))
        now = _text(await client.call_tool("page_som", {"session_id": sid}))
        assert rebuilt == now
        assert typed["som_digest"] == "sha256:" + hashlib.sha256(now.encode()).hexdigest()

        forms = json.loads(_text(await client.call_tool("page_som", {"session_id": sid, "selector": "form"})))
        assert {region["role"] for region in forms["regions"]} == {"form"}
        status = json.loads(_text(await client.call_tool("trace_status", {"session_id": sid})))
        assert status["next_sequence"] == 3  # open_page and type_text; page_som is never traced
        await client.call_tool("close_page", {"session_id": sid})
