"""A deterministic corpus of malformed JSON-RPC messages (one line each, no newline inside)."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

HUGE_BYTES = 2 * 1024 * 1024
CATEGORIES = (
    "bad_json",
    "truncated",
    "wrong_types",
    "unknown_method",
    "wrong_version",
    "wrong_params",
    "not_an_object",
    "huge",
)


@dataclass(frozen=True)
class Malformed:
    category: str
    body: bytes
    request_id: int | str | None  # the id a server can read back from the body, if any


def _readable_id(body: bytes) -> int | str | None:
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if (
        isinstance(message, dict)
        and isinstance(message.get("id"), int | str)
        and not isinstance(message.get("id"), bool)
    ):
        return message["id"]
    return None


def _request(rng: random.Random, index: int, **fields: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": f"m{index}",
        "method": "tools/call",
        "params": {"name": rng.choice(["click", "trace_status", "open_page"]), "arguments": {}},
    } | fields


def _body(category: str, rng: random.Random, index: int) -> bytes:
    if category == "bad_json":
        alphabet = "{}[]:,\"'\\ abc123\t-+.eE\x00\x7f"
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 80))).encode()
    if category == "truncated":
        whole = json.dumps(_request(rng, index)).encode()
        return whole[: rng.randint(1, len(whole) - 1)]
    if category == "wrong_types":
        field, value = rng.choice(
            [
                ("id", {"a": 1}),
                ("id", [1]),
                ("id", 1.5),
                ("id", True),
                ("method", 42),
                ("method", None),
                ("params", "x"),
                ("params", 7),
                ("params", [1, 2]),
            ]
        )
        return json.dumps(_request(rng, index, **{field: value})).encode()
    if category == "unknown_method":
        method = rng.choice(["bogus", "tools/run", "resources/write", "", "x" * 300, "rpc.discover"])
        return json.dumps({"jsonrpc": "2.0", "id": f"m{index}", "method": method, "params": {}}).encode()
    if category == "wrong_version":
        version = rng.choice(["1.0", "2", 2.0, None, "3.0"])
        message = {"jsonrpc": version, "id": f"m{index}", "method": "ping"}
        if rng.random() < 0.3:
            del message["jsonrpc"]
        return json.dumps(message).encode()
    if category == "wrong_params":
        params = rng.choice(
            [
                {},
                {"name": 5},
                {"name": "click", "arguments": "x"},
                {"name": "click", "arguments": [1]},
                {"name": "trace_status", "arguments": {"session_id": 5}},
                {"name": "open_page", "arguments": {"url": ["x"]}},
                {"name": "replay_validate", "arguments": {"session_id": "s", "sequence": -1}},
                {"name": "nonexistent_tool", "arguments": {}},
            ]
        )
        return json.dumps(
            {"jsonrpc": "2.0", "id": f"m{index}", "method": "tools/call", "params": params}
        ).encode()
    if category == "not_an_object":
        return rng.choice([b"[]", b"42", b"null", b'"text"', b"true", b"[1,2,3]", b"{}"])
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": f"m{index}",
            "method": "tools/call",
            "params": {"name": "trace_status", "arguments": {"session_id": "s" * HUGE_BYTES}},
        }
    ).encode()


def corpus(count: int, seed: int, huge: int = 2) -> list[Malformed]:
    """``count`` messages spread over the categories; only ``huge`` of them are huge (memory, time)."""
    rng = random.Random(seed)
    small = [c for c in CATEGORIES if c != "huge"]
    categories = ["huge"] * min(huge, count) + [
        small[i % len(small)] for i in range(count - min(huge, count))
    ]
    messages = []
    for index, category in enumerate(categories):
        body = _body(category, rng, index).replace(b"\n", b" ").replace(b"\r", b" ")
        messages.append(Malformed(category, body, _readable_id(body)))
    return messages
