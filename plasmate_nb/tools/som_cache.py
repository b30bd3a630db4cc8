"""The in-memory, bounded SOM cache and its ``cache_status`` snapshot
(docs/contract.md#the-som-cache).

One cache per :class:`~plasmate_nb.tools.dispatcher.Dispatcher` (so one per server process; the
HTTP transport shares it across MCP sessions). ``extract_text``, ``extract_links`` and
``fetch_page`` (with JavaScript on) use it. A page is always loaded first: the entry's content
hash is compared with the hash of what Chromium received for the main document, so a hit only
saves the SOM compile, never the fetch.

Keys are normalised URLs (fragment dropped, host lower-cased, a trailing ``/`` stripped unless
the path is ``/``), and ``<url>::selector=<sel>`` for a selector's filtered SOM. Entries live 300
seconds from their creation (a hit does not extend that); a new key beyond 1000 entries evicts
the least recently used one, and so does an entry that would take the entries past 128 MiB of
SOM JSON and side documents (the reference bounds the count only, and one SOM can be megabytes;
a parsed SOM takes several times its JSON in memory).
Pure Python, no browser.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from plasmate_nb.trace.compact import utf8_len

MAX_ENTRIES = 1000
TTL_SECONDS = 300.0
MAX_SIDE_BYTES = 256 * 1024  # effective HTML and the WebMCP catalog are dropped above this
# All entries' SOM JSON, effective HTML and WebMCP bytes together (several times that in memory:
# a SOM is held parsed).
MAX_HELD_BYTES = 128 * 1024 * 1024
SELECTOR_MARK = "::selector="
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}


def content_hash(body: bytes) -> str:
    """The content hash of a fetched document: 64-bit BLAKE2b, hex (the reference uses xxh3-64)."""
    return hashlib.blake2b(body, digest_size=8).hexdigest()


def cache_key(url: str) -> str:
    """``url`` normalised: trimmed, fragment dropped, scheme and host lower-cased, default port and a
    trailing ``/`` (unless the path is ``/``) removed; path case and query kept."""
    text = url.strip()
    try:
        parts = urlsplit(text)
        host = parts.hostname
        port = parts.port
    except ValueError:
        parts, host, port = None, None, None
    if parts is None or not parts.scheme or not host:
        cut = text.split("#", 1)[0]
        return cut.rstrip("/") or cut
    scheme = parts.scheme.lower()
    shown = f"[{host}]" if ":" in host else host
    userinfo = parts.netloc.rpartition("@")[0]
    netloc = (userinfo + "@" if userinfo else "") + shown
    if port is not None and port != _DEFAULT_PORTS.get(scheme):
        netloc += f":{port}"
    path = parts.path or "/"
    if path != "/":
        path = path.rstrip("/") or "/"
    return urlunsplit((scheme, netloc, path, parts.query, ""))


def selector_key(url: str, selector: str | None) -> str:
    """The key of ``selector``'s filtered SOM of ``url`` (the full key when the selector is blank)."""
    key = cache_key(url)
    sel = (selector or "").strip()
    if not sel:
        return key
    if not sel.startswith("#"):
        sel = sel.lower()
    return f"{key}{SELECTOR_MARK}{sel}"


@dataclass
class CacheEntry:
    content_hash: str
    som: dict[str, Any]
    som_bytes: int
    html_bytes: int
    effective_html: str | None = None
    webmcp: str | None = None
    created_at: float = 0.0
    last_accessed: float = 0.0
    hit_count: int = 0
    held_bytes: int = 0  # its SOM and side documents, set when stored (the byte bound)


@dataclass
class SomCache:
    max_entries: int = MAX_ENTRIES
    max_bytes: int = MAX_HELD_BYTES
    ttl: float = TTL_SECONDS
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    hits: int = 0
    stale_hits: int = 0
    misses: int = 0
    evictions: int = 0
    total_som_bytes_served: int = 0
    total_webmcp_bytes_served: int = 0
    total_html_bytes_avoided: int = 0
    _entries: dict[str, CacheEntry] = field(default_factory=dict, repr=False)
    _held: int = field(default=0, repr=False)  # the entries' held_bytes, summed

    # ----- lookups ---------------------------------------------------------------------------------

    def lookup(self, key: str, digest: str) -> CacheEntry | None:
        """The entry under ``key`` if it is fresh and was made from the same document."""
        now = self.clock()
        entry = self._entries.get(key)
        if entry is None or now - entry.created_at > self.ttl:
            if entry is not None:
                self._remove(key)
            self.misses += 1
            return None
        if entry.content_hash != digest:
            self.stale_hits += 1  # kept until it is overwritten
            return None
        entry.last_accessed = now
        entry.hit_count += 1
        self.hits += 1
        self.total_som_bytes_served += entry.som_bytes
        self.total_webmcp_bytes_served += utf8_len(entry.webmcp) if entry.webmcp is not None else 0
        self.total_html_bytes_avoided += entry.html_bytes
        return entry

    def lookup_selector(
        self,
        url: str,
        selector: str | None,
        digest: str,
        narrow: Callable[[dict[str, Any]], dict[str, Any]],
        encode: Callable[[Any], str],
    ) -> CacheEntry | None:
        """The filtered SOM of ``selector``: its own entry, else derived from a fresh full entry (stored,
        then looked up again, as the reference counts it)."""
        full = cache_key(url)
        key = selector_key(url, selector)
        if key == full:
            return self.lookup(full, digest)
        found = self.lookup(key, digest)
        if found is not None:
            return found
        base = self.lookup(full, digest)
        if base is None:
            return None
        narrowed = narrow(base.som)
        self.store(key, CacheEntry(digest, narrowed, utf8_len(encode(narrowed)), base.html_bytes))
        return self.lookup(key, digest)

    # ----- stores ----------------------------------------------------------------------------------

    def store(self, key: str, entry: CacheEntry) -> None:
        """Store ``entry`` under ``key``. Replacing never evicts by count; a new key beyond the count
        bound evicts the least recently used entry, and the byte bound evicts as many as it takes
        (an entry larger than the whole bound is not kept, nor is the one it replaced)."""
        now = self.clock()
        entry.created_at = entry.last_accessed = now
        for name in ("effective_html", "webmcp"):
            value = getattr(entry, name)
            if value is not None and utf8_len(value) > MAX_SIDE_BYTES:
                setattr(entry, name, None)
        sides = (entry.effective_html, entry.webmcp)
        entry.held_bytes = entry.som_bytes + sum(utf8_len(side) for side in sides if side is not None)
        if key in self._entries:
            self._remove(key)  # replaced: its bytes no longer count, nor does it by count
        if entry.held_bytes > self.max_bytes:
            return  # it alone would pass the byte bound: not kept (nor is what it replaced)
        if len(self._entries) >= self.max_entries:
            self._evict_oldest()
        while self._held + entry.held_bytes > self.max_bytes:
            self._evict_oldest()
        self._entries[key] = entry
        self._held += entry.held_bytes

    def _evict_oldest(self) -> None:
        oldest = min(self._entries, key=lambda k: self._entries[k].last_accessed)
        self._remove(oldest)
        self.evictions += 1

    def _remove(self, key: str) -> None:
        self._held -= self._entries.pop(key).held_bytes

    # ----- the cache_status payload ------------------------------------------------------------------

    def snapshot(self) -> dict[str, int]:
        """Counters and totals in the reference's field order (every held key counts, expired ones
        that no lookup has visited included)."""
        entries = self._entries
        return {
            "hits": self.hits,
            "stale_hits": self.stale_hits,
            "misses": self.misses,
            "evictions": self.evictions,
            "total_som_bytes_served": self.total_som_bytes_served,
            "total_webmcp_bytes_served": self.total_webmcp_bytes_served,
            "total_html_bytes_avoided": self.total_html_bytes_avoided,
            "entries": len(entries),
            "full_entries": sum(SELECTOR_MARK not in key for key in entries),
            "selector_entries": sum(SELECTOR_MARK in key for key in entries),
            "effective_html_entries": sum(e.effective_html is not None for e in entries.values()),
            "total_som_bytes": sum(e.som_bytes for e in entries.values()),
            "total_webmcp_bytes": sum(utf8_len(e.webmcp) for e in entries.values() if e.webmcp is not None),
            "total_html_bytes": sum(e.html_bytes for e in entries.values()),
            "total_effective_html_bytes": sum(
                utf8_len(e.effective_html) for e in entries.values() if e.effective_html is not None
            ),
            "max_hot_entries": self.max_entries,
        }
