"""Run the in-page SOM compiler (``compiler.js``) on a live Playwright page.

One ``evaluate`` per compile (one round trip): it walks the live DOM and returns the
canonical SOM JSON string by value. The id→node map it built stays in the page, kept by the
per-page compiler object (see below) under a key chosen here, and is reached only through
that object's JSHandle (``resolve``). ``dispose`` costs no round trip: it forgets the map
here at once and the page drops it with the next call on that page (the next compile or
resolve), or with the page itself. Nothing is written into the DOM or onto ``window``.

The compiler object is kept per page as a JSHandle: calling the same function object
again lets V8 reuse its optimized code (a fresh copy per compile runs cold, several times
slower). A navigation destroys that handle; the next compile notices and makes a new one.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import weakref
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from playwright.async_api import ElementHandle, JSHandle, Page
from playwright.async_api import Error as PlaywrightError

COMPILER_SOURCE: str = resources.files(__package__).joinpath("compiler.js").read_text(encoding="utf-8")


def factory_js(source: str) -> str:
    """A function source that returns the compiler object for ``source`` (compiler.js).

    ``run(budgetMs, key, drops)`` first drops the maps of disposed compiles (``drops``),
    then compiles, keeps the node map under ``key`` and returns the JSON string, or
    ``{error}`` with a fixed code. ``resolve(key, id, drops)`` looks ``id`` up in a kept map. The store is a null-prototype object literal (no page builtin involved), and
    the methods are own properties of a literal, so page prototypes cannot intercept them.
    """
    return (
        "() => { const compile = " + source + ";\n"
        "const kept = { __proto__: null };\n"
        "const drop = (keys) => { for (let i = 0; i < keys.length; i++) delete kept[keys[i]]; };\n"
        "return {\n"
        "  run(budgetMs, key, drops) {\n"
        "    drop(drops);\n"
        "    const r = compile(budgetMs);\n"
        "    if (r && typeof r.json === 'string') { kept[key] = r.nodes; return r.json; }\n"
        "    return { error: r && typeof r.error === 'string' ? r.error : 'no result' };\n"
        "  },\n"
        "  resolve(key, id, drops) {\n"
        "    drop(drops);\n"
        "    const m = kept[key];\n"
        "    if (!m) return null;\n"
        "    let n = null;\n"  # a Map, or a null-prototype object if the page broke Map
        "    try { n = Object.getPrototypeOf(m) === null ? m[id] : m.get(id); } catch (e) { return null; }\n"
        "    if (!n) return null;\n"
        "    if (n.nodeType === 3) n = n.parentElement;\n"
        "    return n && n.isConnected ? n : null;\n"
        "  },\n"
        "}; }"
    )


# evaluate_handle calls a function source; this one returns the compiler object.
FACTORY_JS = factory_js(COMPILER_SOURCE)
# Keys are ints of ours, written into the call's source (the drops as an array literal):
# arguments stay scalars, as a page may have broken the builtins Playwright would use to
# rebuild an array argument.
RUN_JS = "(api, budgetMs) => api.run(budgetMs, {key}, [{drops}])"
RESOLVE_JS = "(api, id) => api.resolve({key}, id, [{drops}])"

# Used when the caller gives no timeout: the in-page walk stops itself after this long.
DEFAULT_BUDGET_S = 30.0

_keys = itertools.count(1)


class SomCompileError(RuntimeError):
    """The SOM could not be compiled; the message never contains page content."""


class _Store:
    """The page's compiler object (keeper of the id -> Node maps) and the keys to drop there."""

    __slots__ = ("handle", "released")

    def __init__(self, handle: JSHandle) -> None:
        self.handle = handle
        self.released: list[int] = []

    def take_released(self) -> str:
        keys, self.released = self.released, []
        return ",".join(map(str, keys))


@dataclass
class CompiledSom:
    text: str  # canonical JSON; the state fingerprint is taken over text.encode()
    data: dict[str, Any] = field(repr=False)
    store: _Store = field(repr=False)  # keeps this compile's id -> Node map in the page
    key: int = field(repr=False, default=0)  # this compile's map in ``store``
    disposed: bool = field(repr=False, default=False)

    def __repr__(self) -> str:
        return f"CompiledSom(bytes={len(self.text.encode())})"

    async def resolve(self, element_id: str) -> ElementHandle | None:
        """The live element behind ``element_id``; None if unknown or no longer connected."""
        if not isinstance(element_id, str) or self.disposed:
            return None
        try:
            js = RESOLVE_JS.format(key=self.key, drops=self.store.take_released())
            handle = await self.store.handle.evaluate_handle(js, element_id)
        except PlaywrightError:
            return None
        element = handle.as_element()
        if element is None:
            await handle.dispose()
        return element

    async def dispose(self) -> None:
        """Release the in-page map: at once here, in the page with its next compile or resolve."""
        if not self.disposed:
            self.disposed = True
            self.store.released.append(self.key)


async def compile_page(page: Page, timeout: float | None = None) -> CompiledSom:
    """Compile the SOM of ``page`` as it stands now; raise SomCompileError on failure."""
    budget_ms = int((timeout if timeout is not None else DEFAULT_BUDGET_S) * 1000)
    try:
        return await asyncio.wait_for(_compile(page, budget_ms), timeout)
    except TimeoutError:
        raise SomCompileError(f"SOM compile timed out after {timeout:g}s") from None
    except PlaywrightError:
        # Playwright's message can quote page state; say only what happened.
        raise SomCompileError("SOM compile failed: the page's JavaScript context was unavailable") from None


_compilers: weakref.WeakKeyDictionary[Page, _Store] = weakref.WeakKeyDictionary()


async def _compile(page: Page, budget_ms: int) -> CompiledSom:
    key = next(_keys)
    store = _compilers.get(page)
    result: Any = None
    if store is not None:
        try:
            result = await store.handle.evaluate(
                RUN_JS.format(key=key, drops=store.take_released()), budget_ms
            )
        except PlaywrightError:
            _compilers.pop(page, None)  # its execution context is gone (navigation), with its maps
            store = None
    if store is None:
        store = _Store(await page.evaluate_handle(FACTORY_JS))
        _compilers[page] = store
        result = await store.handle.evaluate(RUN_JS.format(key=key, drops=""), budget_ms)
    if not isinstance(result, str):
        code = result.get("error") if isinstance(result, dict) else None
        raise SomCompileError(f"SOM compile failed in the page ({_safe_code(code)})")
    return CompiledSom(text=result, data=json.loads(result), store=store, key=key)


def _safe_code(code: Any) -> str:
    # compiler.js reports one of a few fixed codes; anything else is not repeated.
    return code if code in {"budget exceeded", "internal error", "no document"} else "unknown error"
