"""Run the SOM compiler (``compiler.js``) on a live Playwright page, out of the page's reach.

The compiler runs in an isolated JavaScript world (``world.py``): same DOM, none of the
page's globals or prototypes, so a page cannot tamper with the builtins it uses nor read or
change its id→node maps. One ``Runtime.evaluate`` per compile (one round trip) walks the live
DOM and returns the canonical SOM JSON string by value; the id→node map stays in that world
under a key chosen here and is reached through Playwright's content-script selector engine
(``resolve``), which hands back a real ElementHandle. ``dispose`` costs no round trip: it
forgets the map here at once and the world drops it with the next compile, or with the
document. Nothing is written into the DOM or onto the page's ``window``.

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

from playwright.async_api import ElementHandle, Page
from playwright.async_api import Error as PlaywrightError

from plasmate_nb.som.world import MISSING, WORLD_GLOBAL, IsolatedWorld, world_of

COMPILER_SOURCE: str = resources.files(__package__).joinpath("compiler.js").read_text(encoding="utf-8")


def factory_js(source: str) -> str:
    """A function source that returns the compiler object for ``source`` (compiler.js).

    ``run(budgetMs, key, drops, incremental)`` first drops the maps of disposed compiles
    (``drops``), then compiles (replaying what the last compile of this document recorded
    when ``incremental``; otherwise a full walk that leaves that record alone), keeps the
    node map under ``key`` and returns ``{json, stats}``, or ``{error}`` with a fixed code.
    ``resolve(key, id, drops)`` looks ``id`` up in a kept map.
    """
    return (
        "() => { const compile = " + source + ";\n"
        "const kept = { __proto__: null };\n"
        "const cache = { s: null };\n"
        "const drop = (keys) => { for (let i = 0; i < keys.length; i++) delete kept[keys[i]]; };\n"
        "return {\n"
        "  run(budgetMs, key, drops, incremental) {\n"
        "    drop(drops);\n"
        "    const r = compile(budgetMs, incremental ? cache : null, false);\n"
        "    if (r && typeof r.json === 'string') { kept[key] = r.nodes; return { json: r.json, stats: r.stats }; }\n"
        "    return { error: r && typeof r.error === 'string' ? r.error : 'no result' };\n"
        "  },\n"
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


# Installs the compiler object on the isolated world's global object.
INSTALL_JS = f"globalThis.{WORLD_GLOBAL} = ({factory_js(COMPILER_SOURCE)})()"
# Keys are ints of ours, written into the call's source (the drops as an array literal).
RUN_JS = (
    f"globalThis.{WORLD_GLOBAL} === undefined ? {MISSING!r} : "
    f"globalThis.{WORLD_GLOBAL}.run({{budget}}, {{key}}, [{{drops}}], {{incremental}})"
)
# Incremental recompiles (docs/contract.md#incremental-compile) unless a caller asks otherwise.
INCREMENTAL_DEFAULT = True

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
    # "fallbacks": k}, the counts over the document's compiles so far (never part of ``text``).
    stats: dict[str, Any] = field(repr=False, default_factory=dict)

    def __repr__(self) -> str:
        return f"CompiledSom(bytes={len(self.text.encode())})"

    async def resolve(self, element_id: str) -> ElementHandle | None:
        """The live element behind ``element_id``; None if unknown or no longer connected."""
        if not isinstance(element_id, str) or self.disposed:
            return None
        try:
            return await self.store.resolve(self.key, element_id)
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
        return await asyncio.wait_for(_compile(page, budget_ms, use), timeout)
    except TimeoutError:
        raise SomCompileError(f"SOM compile timed out after {timeout:g}s") from None
    except PlaywrightError:
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
        ),
        INSTALL_JS,
    )
    text = result.get("json") if isinstance(result, dict) else None
    if not isinstance(text, str):
        code = result.get("error") if isinstance(result, dict) else None
        raise SomCompileError(f"SOM compile failed in the page ({_safe_code(code)})")
    stats = result.get("stats")
    return CompiledSom(
        text=text,
        data=json.loads(text),
        store=world,
        key=key,
        stats=dict(stats) if isinstance(stats, dict) else {"mode": "uncached"},
    )


def _safe_code(code: Any) -> str:
    # compiler.js reports one of a few fixed codes; anything else is not repeated.
    return code if code in {"budget exceeded", "internal error", "no document"} else "unknown error"
