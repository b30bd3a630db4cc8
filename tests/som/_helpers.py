"""Shared helpers for SOM tests: load a fixture page and compile it."""

from __future__ import annotations

import hashlib
from typing import Any

from plasmate_nb.som import CompiledSom, compile_page, iter_elements

TIMEOUT_S = 20.0


async def recompile_equals_full(page: Any, before: str) -> str:
    """Recompile after a change: the text differs from ``before`` (so a stale replay would be
    wrong) and equals a full compile's. Returns the recompile's mode."""
    incremental = await compile_page(page, timeout=TIMEOUT_S)
    full = await compile_page(page, timeout=TIMEOUT_S, incremental=False)
    assert full.text != before
    assert incremental.text == full.text
    return incremental.stats["mode"]


async def load(page: Any, fixture_server: str, name: str) -> CompiledSom:
    await page.goto(f"{fixture_server}/som/{name}")
    return await compile_page(page, timeout=TIMEOUT_S)


def elements(som: dict) -> list[dict]:
    return list(iter_elements(som))


def by_text(som: dict, text: str) -> dict:
    matches = [e for e in iter_elements(som) if e.get("text") == text or e.get("label") == text]
    assert matches, f"no element with text/label {text!r}"
    return matches[0]


def by_html_id(som: dict, html_id: str) -> dict:
    matches = [e for e in iter_elements(som) if e.get("html_id") == html_id]
    assert matches, f"no element with html_id {html_id!r}"
    return matches[0]


def region(som: dict, region_id: str) -> dict:
    matches = [r for r in som["regions"] if r["id"] == region_id]
    assert matches, f"no region {region_id!r}; have {[r['id'] for r in som['regions']]}"
    return matches[0]


def expected_id(origin: str, role: str, name: str, dom_path: str) -> str:
    """docs/contract.md#element-ids, recomputed with hashlib."""
    normalized = name.lower().strip()[:100]
    digest = hashlib.sha256(f"{origin}|{role}|{normalized}|{dom_path}".encode()).hexdigest()
    return "e_" + digest[:12]


def common_ends(a: str, b: str) -> tuple[int, int]:
    """Lengths of the common head of two strings and of their common tail (not overlapping it)."""
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head, tail
