"""``fetch_page``, ``extract_text``, ``extract_links`` and ``cache_status``
(docs/contract.md#stateless-page-tools).

All load their URL in a temporary context (:func:`plasmate_nb.browser.temporary.temporary_page`)
and, with JavaScript on, go through the SOM cache (:mod:`plasmate_nb.tools.som_cache`): the
content hash of the main document Chromium received decides whether the cached SOM of the final
URL (and selector) is still good; a hit skips the SOM compile, never the load.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from plasmate_nb.browser import Engine
from plasmate_nb.browser.temporary import temporary_page
from plasmate_nb.tools.arguments import check_arguments
from plasmate_nb.tools.catalogue import TOOLS_BY_NAME
from plasmate_nb.tools.som_cache import CacheEntry, SomCache, cache_key, content_hash, selector_key
from plasmate_nb.tools.som_selector import budget_payload, select_som
from plasmate_nb.tools.stateless_arguments import EXTRACT_LINKS, EXTRACT_TEXT
from plasmate_nb.trace.compact import compact_json, utf8_len

WEBMCP_EMPTY_JSON = compact_json({"contract_version": "plasmate.webmcp.v1", "tools": []})
BULLET = "• "  # U+2022 and a space, before each list item
CELL_SEPARATOR = " | "
ELLIPSIS = "..."
# Rust's char::is_whitespace (Unicode White_Space); unlike str.isspace it excludes U+001C–U+001F.
WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


def _narrow(selector: str | None) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def narrow(som: dict[str, Any]) -> dict[str, Any]:
        return select_som(som, selector) if selector and selector.strip() else som

    return narrow


async def page_som(
    engine: Engine, cache: SomCache, url: str, selector: str | None, *, javascript: bool = True
) -> dict[str, Any]:
    """The SOM of ``url``, narrowed by ``selector``; through the cache when JavaScript is on and
    the body of the document the page shows could be read (nothing else can vouch for an entry)."""
    narrow = _narrow(selector)
    async with temporary_page(engine, url, javascript=javascript) as loaded:
        if not javascript or loaded.source is None:
            return narrow((await loaded.compile()).data)
        digest = content_hash(loaded.source)
        hit = cache.lookup_selector(loaded.url, selector, digest, narrow, compact_json)
        if hit is not None:
            som: dict[str, Any] = hit.som
            return som
        compiled = await loaded.compile()
        html = await loaded.effective_html()
        som = compiled.data
        full = cache_key(loaded.url)
        cache.store(
            full,
            CacheEntry(
                digest,
                som,
                utf8_len(compiled.text),
                len(loaded.source),
                effective_html=html,
                webmcp=WEBMCP_EMPTY_JSON,
            ),
        )
        key = selector_key(loaded.url, selector)
        if key == full:
            return som
        narrowed = narrow(som)
        cache.store(key, CacheEntry(digest, narrowed, utf8_len(compact_json(narrowed)), len(loaded.source)))
        return narrowed


# ----- the tools ------------------------------------------------------------------------------------


async def fetch_page(engine: Engine, cache: SomCache, arguments: Any) -> Any:
    arguments = check_arguments(TOOLS_BY_NAME["fetch_page"], arguments)
    budget = arguments.get("budget")
    javascript = arguments.get("javascript", True)
    som = await page_som(engine, cache, arguments["url"], arguments.get("selector"), javascript=javascript)
    return budget_payload(som, budget)


async def extract_text(engine: Engine, cache: SomCache, arguments: Any) -> str:
    parsed = EXTRACT_TEXT.parse(arguments)
    som = await page_som(engine, cache, parsed["url"], parsed["selector"])
    return truncate_chars(page_text(som), parsed["max_chars"])


async def extract_links(engine: Engine, cache: SomCache, arguments: Any) -> str:
    parsed = EXTRACT_LINKS.parse(arguments)
    som = await page_som(engine, cache, parsed["url"], parsed["selector"])
    return "\n".join(page_links(som))


def cache_status(cache: SomCache) -> str:
    return compact_json(cache.snapshot())


# ----- pure renderings of a SOM -------------------------------------------------------------------------


def _elements(som: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every element in document order: each region's elements, depth-first through ``children``
    and then ``shadow.elements``."""

    def walk(element: Any) -> Iterator[dict[str, Any]]:
        if not isinstance(element, dict):
            return
        yield element
        for child in element.get("children") or ():
            yield from walk(child)
        shadow = element.get("shadow")
        if isinstance(shadow, dict):
            for child in shadow.get("elements") or ():
                yield from walk(child)

    for region in som.get("regions") or ():
        for element in region.get("elements") or ():
            yield from walk(element)


def page_text(som: dict[str, Any]) -> str:
    """The title (raw) and a blank line, then per element its text, list items (``• ``), a table's
    caption, headers and rows (cells joined with `` | ``); lines joined with ``\\n``."""
    parts: list[str] = []
    title = som.get("title")
    if isinstance(title, str) and title:
        parts += [title, ""]
    for element in _elements(som):
        text = element.get("text")
        if isinstance(text, str) and text:
            parts.append(text)
        attrs = element.get("attrs")
        if not isinstance(attrs, dict):
            continue
        for item in attrs.get("items") or ():
            item_text = item.get("text") if isinstance(item, dict) else None
            if isinstance(item_text, str):
                parts.append(BULLET + item_text)
        caption = attrs.get("caption")
        if isinstance(caption, str) and caption:
            parts.append(caption)
        headers = attrs.get("headers")
        if isinstance(headers, list):
            parts.append(CELL_SEPARATOR.join(cell for cell in headers if isinstance(cell, str)))
        for row in attrs.get("rows") or ():
            if isinstance(row, list):
                parts.append(CELL_SEPARATOR.join(cell for cell in row if isinstance(cell, str)))
    return "\n".join(parts)


def page_links(som: dict[str, Any]) -> list[str]:
    """The raw ``href`` of every ``link`` element in order, without ``""``, ``#`` and repeats."""
    seen: dict[str, None] = {}
    for element in _elements(som):
        if element.get("role") != "link":
            continue
        href = (element.get("attrs") or {}).get("href")
        if isinstance(href, str) and href not in ("", "#"):
            seen.setdefault(href, None)
    return list(seen)


def truncate_chars(text: str, max_chars: int | None) -> str:
    """At most ``max_chars`` characters, cut back to the last whitespace, then ``...``."""
    if max_chars is None or len(text) <= max_chars:
        return text
    prefix = text[:max_chars]
    for index in range(len(prefix) - 1, -1, -1):
        if prefix[index] in WHITESPACE:
            prefix = prefix[:index]
            break
    return prefix + ELLIPSIS
