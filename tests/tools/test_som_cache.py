"""The SOM cache's keys, freshness, staleness, eviction and snapshot, with a fake clock
(docs/contract.md#the-som-cache). Pure: no browser."""

from __future__ import annotations

from plasmate_nb.tools.som_cache import CacheEntry, SomCache, cache_key, content_hash, selector_key
from plasmate_nb.trace import compact_json


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def entry(
    digest: str = "h", som_bytes: int = 10, html_bytes: int = 20, html: str | None = None
) -> CacheEntry:
    return CacheEntry(digest, {"regions": []}, som_bytes, html_bytes, effective_html=html)


def test_keys() -> None:
    assert cache_key(" HTTP://Example.COM:80/Path/?q=A#frag ") == "http://example.com/Path?q=A"
    assert cache_key("https://example.com") == "https://example.com/"
    assert cache_key("https://example.com/") == "https://example.com/"
    assert cache_key("https://example.com:8443/a/") == "https://example.com:8443/a"
    assert cache_key("not a url/#x") == "not a url"
    assert selector_key("https://e.com/a", " ACTION:CLICK ") == "https://e.com/a::selector=action:click"
    assert selector_key("https://e.com/a", "#MixedCase") == "https://e.com/a::selector=#MixedCase"
    assert selector_key("https://e.com/a", "  ") == "https://e.com/a"
    assert content_hash(b"x") == content_hash(b"x") != content_hash(b"y") and len(content_hash(b"")) == 16


def test_hit_stale_expiry_and_totals() -> None:
    clock = Clock()
    cache = SomCache(clock=clock)
    assert cache.lookup("k", "h") is None  # miss
    cache.store("k", CacheEntry("h", {}, 10, 20, effective_html="<p>", webmcp='{"tools":[]}'))
    assert cache.lookup("k", "h") is not None  # hit
    assert cache.lookup("k", "other") is None  # stale: kept
    clock.now += 301
    assert cache.lookup("k", "h") is None  # expired: removed
    snapshot = cache.snapshot()
    assert (snapshot["hits"], snapshot["stale_hits"], snapshot["misses"], snapshot["entries"]) == (1, 1, 2, 0)
    assert snapshot["total_som_bytes_served"] == 10 and snapshot["total_html_bytes_avoided"] == 20
    assert snapshot["total_webmcp_bytes_served"] == len('{"tools":[]}')


def test_hits_do_not_extend_life() -> None:
    clock = Clock()
    cache = SomCache(clock=clock)
    cache.store("k", entry())
    clock.now += 200
    assert cache.lookup("k", "h") is not None
    clock.now += 200
    assert cache.lookup("k", "h") is None


def test_lru_eviction_and_replacement() -> None:
    clock = Clock()
    cache = SomCache(max_entries=2, clock=clock)
    cache.store("a", entry())
    clock.now += 1
    cache.store("b", entry())
    clock.now += 1
    cache.lookup("a", "h")  # a is now the most recently used
    clock.now += 1
    cache.store("a", entry("h2"))  # replacing never evicts
    assert cache.evictions == 0
    cache.store("c", entry())
    assert cache.evictions == 1 and cache.lookup("b", "h") is None and cache.lookup("c", "h") is not None


def test_held_bytes_are_bounded_and_the_least_recently_used_go_first() -> None:
    """The reference bounds the count only, and one SOM of a large page is megabytes: 1000 of them
    held gigabytes. The SOM JSON and side documents of all entries together stay within
    ``max_bytes``, counted as they are stored (a store never measures the other entries again)."""
    clock = Clock()
    cache = SomCache(max_bytes=1000, clock=clock)
    for key in "abc":
        cache.store(key, CacheEntry("h", {}, 300, 1, effective_html="x" * 40))  # 340 bytes each
        clock.now += 1
    assert cache.evictions == 1 and cache.lookup("a", "h") is None  # 1,020 > 1,000: a went
    cache.lookup("b", "h")  # b is now the most recently used
    clock.now += 1
    cache.store("d", CacheEntry("h", {}, 600, 1))
    assert cache.evictions == 2 and cache.lookup("c", "h") is None and cache.lookup("b", "h") is not None
    assert cache.snapshot()["total_som_bytes"] + cache.snapshot()["total_effective_html_bytes"] <= 1000
    cache.store("b", CacheEntry("h", {}, 390, 1))  # a replacement's old bytes no longer count
    assert cache.evictions == 2
    cache.store("huge", CacheEntry("h", {}, 1001, 1))  # alone past the bound: not kept, nothing evicted
    assert cache.evictions == 2 and cache.lookup("huge", "h") is None and cache.snapshot()["entries"] == 2
    cache.store("b", CacheEntry("h2", {}, 1001, 1))  # nor kept as a replacement: the old one goes too
    assert cache.lookup("b", "h") is None and cache.snapshot()["entries"] == 1
    cache.store("e", CacheEntry("h", {}, 400, 1))  # d's 600 and e's 400: what went counts no more
    assert cache.evictions == 2 and cache.snapshot()["entries"] == 2


def test_an_expired_entry_removed_by_a_lookup_frees_its_bytes() -> None:
    clock = Clock()
    cache = SomCache(max_bytes=1000, clock=clock)
    cache.store("old", CacheEntry("h", {}, 900, 1))
    clock.now += 301
    assert cache.lookup("old", "h") is None  # expired: removed
    cache.store("new", CacheEntry("h", {}, 900, 1))
    assert cache.evictions == 0 and cache.lookup("new", "h") is not None


def test_selector_derivation_counts_like_the_reference() -> None:
    cache = SomCache(clock=Clock())
    narrow = lambda som: {"regions": som["regions"][:1]}  # noqa: E731
    assert cache.lookup_selector("https://e.com/", "nav", "h", narrow, compact_json) is None
    assert (cache.misses, cache.hits) == (2, 0)  # selector miss, then full miss
    cache.store(cache_key("https://e.com/"), CacheEntry("h", {"regions": [1, 2]}, 30, 5, effective_html="x"))
    derived = cache.lookup_selector("https://e.com/", "NAV", "h", narrow, compact_json)
    assert derived is not None and derived.som == {"regions": [1]}
    assert (cache.misses, cache.hits) == (3, 2)
    snapshot = cache.snapshot()
    assert (snapshot["entries"], snapshot["full_entries"], snapshot["selector_entries"]) == (2, 1, 1)
    assert snapshot["effective_html_entries"] == 1 and snapshot["total_effective_html_bytes"] == 1


def test_large_side_documents_are_not_kept() -> None:
    cache = SomCache(clock=Clock())
    cache.store("k", CacheEntry("h", {}, 1, 1, effective_html="x" * (256 * 1024 + 1), webmcp="{}"))
    snapshot = cache.snapshot()
    assert snapshot["effective_html_entries"] == 0 and snapshot["total_webmcp_bytes"] == 2
