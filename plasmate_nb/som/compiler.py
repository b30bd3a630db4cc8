"""Run the SOM compiler (``compiler.js``) on a live Playwright page, out of the page's reach.

The compiler runs in an isolated JavaScript world (``world.py``): same DOM, none of the
page's globals or prototypes, so a page cannot tamper with the builtins it uses nor read or
change its id→node maps. One ``Runtime.evaluate`` per compile (one round trip) walks the live
DOM and returns the canonical SOM JSON string by value; the id→node map stays in that world
under a key chosen here and is reached through Playwright's content-script selector engine
(``locate``: a Playwright locator, what actions use; ``resolve``: an ElementHandle).
``dispose`` costs no round trip: it forgets the map here at once and the world drops it with
the next compile, or with the document. Nothing is written into the DOM or onto the page's ``window``.

The compiler object is installed once per document in that world and called again for
every compile: reusing the same function objects lets V8 keep their optimized code (a fresh
copy per compile runs cold, several times slower).
"""

from __future__ import annotations

import asyncio
import itertools
import json
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from playwright.async_api import ElementHandle, Locator, Page
from playwright.async_api import Error as PlaywrightError

from plasmate_nb.som.parse import Unchanged, parse_som
from plasmate_nb.som.world import MISSING, PAGE_CRASHED, WORLD_GLOBAL, IsolatedWorld, unless_crashed, world_of

COMPILER_SOURCE: str = resources.files(__package__).joinpath("compiler.js").read_text(encoding="utf-8")


def factory_js(source: str) -> str:
    """A function source that returns the compiler object for ``source`` (compiler.js).

    ``run(budgetMs, key, drops, incremental, have)`` first drops the maps of disposed compiles
    (``drops``), then compiles (replaying what the last compile of this document recorded
    when ``incremental``, unless comparing this document's stylesheets costs more than walking
    it; otherwise a full walk that leaves that record alone), keeps the
    node map under ``key`` and returns ``{json, stats}``, or, when the caller holds the text of
    the last incremental-capable compile (its key is ``have``), ``{delta, base, cut, length,
    stats}``; ``{error}`` with a fixed code. ``text(key)`` is the whole text of that compile
    again; ``resolve(key, id, drops)`` looks ``id`` up in a kept map.
    """
    return (
        "() => { const compile = " + source + ";\n"
        "const kept = { __proto__: null };\n"
        "const cache = { s: null, costly: false };\n"
        "let lastKey = 0, last = null;\n"
        + DELTA_JS
        + "const drop = (keys) => { for (let i = 0; i < keys.length; i++) delete kept[keys[i]]; };\n"
        "return {\n"
        "  run(budgetMs, key, drops, incremental, have) {\n"
        "    drop(drops);\n"
        "    const r = compile(budgetMs, incremental && !cache.costly ? cache : null, false);\n"
        "    if (r && typeof r.json === 'string') {\n"
        "      kept[key] = r.nodes;\n"
        "      const stats = { mode: 'uncached' };\n"
        "      if (incremental && cache.costly) stats[cache.costly] = true;\n"
        "      return { json: r.json, stats: incremental ? stats : r.stats };\n"
        "    }\n"
        "    if (r && r.parts) {\n"
        "      kept[key] = r.nodes;\n"
        "      const base = have === lastKey ? last : null;\n"
        "      lastKey = key; last = { parts: r.parts, meta: r.meta, cut: 0 };\n"
        "      if (base === null) {\n"
        "        const json = whole(last);\n"
        "        last.cut = json.length - last.meta.length;\n"
        "        return { json, stats: r.stats };\n"
        "      }\n"
        "      const d = delta(base, last);\n"
        "      last.cut = d.length - last.meta.length;\n"
        "      return { delta: d.segments, base: have, cut: base.cut, length: d.length, stats: r.stats };\n"
        "    }\n"
        "    return { error: r && typeof r.error === 'string' ? r.error : 'no result' };\n"
        "  },\n"
        "  text(key) { return key === lastKey ? whole(last) : null; },\n"
        "  resolve(key, id, drops) {\n"
        "    drop(drops);\n"
        "    const m = kept[key];\n"
        "    if (!m) return null;\n"
        "    let n = m.get(id);\n"
        "    if (!n) return null;\n"
        "    if (n.nodeType === 3) n = n.parentElement;\n"
        "    return n && n.isConnected ? n : null;\n"
        "  },\n"
        "}; }"
    )


# The answer to an incremental compile is the change from the last text this world sent (the
# caller holds it): the SOM of a large page is a megabyte, one changed element a few bytes.
# A recording compile answers its text in parts (region headers, each element's cached JSON,
# separators) and the meta block (its byte counts change with any length change), so the whole
# text is never built in the page. Two segments, each [common prefix, common suffix, middle] in
# UTF-16 units: the parts before the meta block compared part by part (an unchanged element is
# the very string it was), the meta block unit by unit, never splitting a surrogate pair. ``cut``
# is where the meta block starts in the old text (kept with each text, never summed again),
# ``length`` the new text's length.
META_MARK = ',"meta":{"html_bytes":'
DELTA_JS = (
    "const whole = (t) => { let s = ''; for (let i = 0; i < t.parts.length; i++) s += t.parts[i]; return s + t.meta; };\n"
    "const segment = (a, b) => {\n"
    "  const n = Math.min(a.length, b.length);\n"
    "  let p = 0; while (p < n && a.charCodeAt(p) === b.charCodeAt(p)) p++;\n"
    "  if (p > 0 && p < n && (a.charCodeAt(p - 1) & 0xfc00) === 0xd800) p--;\n"
    "  let s = 0; while (s < n - p && a.charCodeAt(a.length - 1 - s) === b.charCodeAt(b.length - 1 - s)) s++;\n"
    "  if (s > 0 && (b.charCodeAt(b.length - s) & 0xfc00) === 0xdc00) s--;\n"
    "  return [p, s, b.slice(p, b.length - s)];\n"
    "};\n"
    "const delta = (a, b) => {\n"
    "  const x = a.parts, y = b.parts, n = Math.min(x.length, y.length);\n"
    "  let i = 0, head = 0; while (i < n && x[i] === y[i]) head += y[i++].length;\n"
    "  let k = 0, tail = 0;\n"
    "  while (k < n - i && x[x.length - 1 - k] === y[y.length - 1 - k]) tail += y[y.length - 1 - k++].length;\n"
    "  let middle = '', cut = head + tail;\n"
    "  for (let j = i; j < y.length - k; j++) { middle += y[j]; cut += y[j].length; }\n"
    "  return { segments: [[head, tail, middle], segment(a.meta, b.meta)], length: cut + b.meta.length };\n"
    "};\n"
)


# Installs the compiler object on the isolated world's global object.
INSTALL_JS = f"globalThis.{WORLD_GLOBAL} = ({factory_js(COMPILER_SOURCE)})()"
# Keys are ints of ours, written into the call's source (the drops as an array literal).
RUN_JS = (
    f"globalThis.{WORLD_GLOBAL} === undefined ? {MISSING!r} : "
    f"globalThis.{WORLD_GLOBAL}.run({{budget}}, {{key}}, [{{drops}}], {{incremental}}, {{have}})"
)
TEXT_JS = f"globalThis.{WORLD_GLOBAL} === undefined ? null : globalThis.{WORLD_GLOBAL}.text({{key}})"
# Incremental recompiles (docs/contract.md#incremental-compile) unless a caller asks otherwise.
INCREMENTAL_DEFAULT = True

# ``resolve``'s bound: the engine answers at once, found or not.
RESOLVE_MS = 5000
# Used when the caller gives no timeout: the walk stops itself after this long.
DEFAULT_BUDGET_S = 30.0

_keys = itertools.count(1)


class SomCompileError(RuntimeError):
    """The SOM could not be compiled; the message never contains page content."""


@dataclass
class CompiledSom:
    text: str  # canonical JSON; the state fingerprint is taken over text.encode()
    data: dict[str, Any] = field(repr=False)
    store: IsolatedWorld = field(repr=False)  # keeps this compile's id -> Node map
    key: int = field(repr=False, default=0)  # this compile's map in ``store``
    disposed: bool = field(repr=False, default=False)
    # How this compile ran: {"mode": "full"|"incremental"|"uncached", "full": n, "incremental": m,
    # "fallbacks": k, "roots": r}, the counts over the document's compiles so far and the shadow
    # roots it watches (never part of ``text``);
    # {"mode": "uncached", "costly_styles": True} for a document whose stylesheets cost more to
    # compare than the page to walk, {"mode": "uncached", "too_deep": True} for one nested deeper
    # than a recording walk goes (docs/contract.md#incremental-compile).
    stats: dict[str, Any] = field(repr=False, default_factory=dict)

    def __repr__(self) -> str:
        return f"CompiledSom(bytes={len(self.text.encode())})"

    async def resolve(self, element_id: str) -> ElementHandle | None:
        """The live element behind ``element_id``; None if unknown or no longer connected."""
        located = await self.locate(element_id)
        try:
            return await located.element_handle(timeout=RESOLVE_MS) if located is not None else None
        except PlaywrightError:  # NOT_CONNECTED: the engine found no node for the id
            return None

    async def locate(self, element_id: str) -> Locator | None:
        """A locator for the element behind ``element_id`` (what actions use); None for a
        malformed id or a disposed compile. Acting on a node that is gone fails at once with
        ``NOT_CONNECTED`` (``world.py``)."""
        if not isinstance(element_id, str) or self.disposed:
            return None
        try:
            return await self.store.locate(self.key, element_id)
        except PlaywrightError:
            return None

    async def dispose(self) -> None:
        """Release the map: at once here, in the isolated world with its next compile."""
        if not self.disposed:
            self.disposed = True
            self.store.released.append(self.key)


async def compile_page(
    page: Page, timeout: float | None = None, *, incremental: bool | None = None
) -> CompiledSom:
    """Compile the SOM of ``page`` as it stands now; raise SomCompileError on failure.

    ``incremental`` (default ``INCREMENTAL_DEFAULT``): replay the unchanged parts of the
    last compile of this document; the text is byte-identical to a full compile either way.
    ``False`` walks everything and leaves the kept record untouched.
    """
    budget_ms = int((timeout if timeout is not None else DEFAULT_BUDGET_S) * 1000)
    use = INCREMENTAL_DEFAULT if incremental is None else incremental
    try:
        async with asyncio.timeout(timeout):
            return await unless_crashed(page, _compile(page, budget_ms, use))
    except TimeoutError:
        raise SomCompileError(f"SOM compile timed out after {timeout:g}s") from None
    except PlaywrightError as error:
        if str(error) == PAGE_CRASHED:  # ours (unless_crashed): no page text in it
            raise SomCompileError(f"SOM compile failed: {PAGE_CRASHED}") from None
        # Playwright's message can quote page state; say only what happened.
        raise SomCompileError("SOM compile failed: the page's JavaScript context was unavailable") from None


async def _compile(page: Page, budget_ms: int, incremental: bool) -> CompiledSom:
    key = next(_keys)
    world = await world_of(page)
    result = await world.evaluate(
        RUN_JS.format(
            budget=budget_ms,
            key=key,
            drops=world.take_released(),
            incremental="true" if incremental else "false",
            have=world.last_key if incremental else -1,
        ),
        INSTALL_JS,
    )
    text = result.get("json") if isinstance(result, dict) else None
    unchanged = None
    if isinstance(result, dict) and "delta" in result:
        text, unchanged = _apply_delta(world, result) or (None, None)
        if text is None:  # not the base we hold: ask for the whole text once
            whole = await world.evaluate(TEXT_JS.format(key=key), INSTALL_JS)
            text = whole if isinstance(whole, str) else None
    if not isinstance(text, str):
        code = result.get("error") if isinstance(result, dict) else None
        raise SomCompileError(f"SOM compile failed in the page ({_safe_code(code)})")
    if incremental:
        parsed = parse_som(text, unchanged)
        world.last_key, world.last_text, world.last_parse = key, text, parsed
        data = parsed.data
    else:
        data = json.loads(text)
    stats = result.get("stats")
    return CompiledSom(
        text=text,
        data=data,
        store=world,
        key=key,
        stats=dict(stats) if isinstance(stats, dict) else {"mode": "uncached"},
    )


def _apply_delta(world: IsolatedWorld, result: dict[str, Any]) -> tuple[str, Unchanged | None] | None:
    """The text a delta answer describes, from the last text ``world`` sent, and what of that
    text it keeps (for ``parse_som``); None if unusable."""
    old = world.last_text
    segments: Any = result.get("delta")  # the shapes are checked by _is_delta
    cut: Any = result.get("cut")
    length: Any = result.get("length")
    if old is None or result.get("base") != world.last_key or not _is_delta(segments, cut, length):
        return None
    wide = not old.isascii() or not all(middle.isascii() for _, _, middle in segments)
    # JavaScript counts UTF-16 units: outside ASCII, slice the UTF-16 encoding.
    unit = 2 if wide else 1
    base: Any = old.encode("utf-16-le") if wide else old
    mark: Any = META_MARK.encode("utf-16-le") if wide else META_MARK
    if not base.startswith(mark, cut * unit):
        return None
    first = base[: cut * unit]  # the part before the meta block (the regions lie in it)
    out: list[Any] = []
    for part, (prefix, suffix, middle) in zip((first, base[cut * unit :]), segments, strict=True):
        if prefix + suffix > len(part) // unit:
            return None
        out += [part[: prefix * unit], middle.encode("utf-16-le") if wide else middle]
        out.append(part[len(part) - suffix * unit :] if suffix else part[:0])
    joined, new_cut = base[:0].join(out), sum(len(piece) for piece in out[:3])
    if len(joined) != length * unit or not joined.startswith(mark, new_cut):
        return None
    text = joined.decode("utf-16-le") if wide else joined
    if world.last_parse is None:
        return text, None
    # The kept head and tail of that first part, in characters.
    head, tail, _ = segments[0]
    if wide:
        head = len(first[: head * 2].decode("utf-16-le", "surrogatepass"))
        tail = len(first[len(first) - tail * 2 :].decode("utf-16-le", "surrogatepass")) if tail else 0
        old_end, new_end = old.find(META_MARK), text.find(META_MARK)
    else:
        old_end, new_end = cut, new_cut
    return text, Unchanged(world.last_parse, head, old_end - tail, new_end - old_end)


def _is_delta(segments: Any, cut: Any, length: Any) -> bool:
    """The shape DELTA_JS answers: two [prefix, suffix, middle] segments and two counts."""

    def count(value: Any) -> bool:
        return type(value) is int and value >= 0

    return (
        count(cut)
        and count(length)
        and isinstance(segments, list)
        and len(segments) == 2
        and all(
            isinstance(s, list) and len(s) == 3 and count(s[0]) and count(s[1]) and isinstance(s[2], str)
            for s in segments
        )
    )


def _safe_code(code: Any) -> str:
    # compiler.js reports one of a few fixed codes; anything else is not repeated.
    return code if code in {"budget exceeded", "internal error", "no document"} else "unknown error"
