"""Run the in-page SOM compiler (``compiler.js``) on a live Playwright page.

One ``evaluate_handle`` walks the live DOM and leaves ``{json, nodes}`` in the page; the
JSON string is read back once. The id→node map stays in the page, reachable only through
the JSHandle kept here, so nothing is written into the DOM or onto ``window``.

The compiler function itself is kept per page as a JSHandle too: calling the same function
object again lets V8 reuse its optimized code (a fresh copy per compile runs cold, several
times slower). A navigation destroys that handle; the next compile notices and makes a new one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import weakref
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from playwright.async_api import ElementHandle, JSHandle, Page
from playwright.async_api import Error as PlaywrightError

COMPILER_SOURCE: str = resources.files(__package__).joinpath("compiler.js").read_text(encoding="utf-8")

# evaluate_handle calls a function source; wrapping it returns the function object instead.
FACTORY_JS = "() => " + COMPILER_SOURCE
RUN_JS = "(compile, budgetMs) => compile(budgetMs)"

# Used when the caller gives no timeout: the in-page walk stops itself after this long.
DEFAULT_BUDGET_S = 30.0

READ_RESULT_JS = "r => (r && typeof r.json === 'string') ? r.json : (r && typeof r.error === 'string' ? {error: r.error} : {error: 'no result'})"

# Accepts both shapes compiler.js may leave behind: a Map, or a null-prototype object
# (used when the page has replaced the built-in Map).
RESOLVE_JS = """(m, id) => {
  let n = null;
  try { n = Object.getPrototypeOf(m) === null ? m[id] : m.get(id); } catch (e) { return null; }
  if (!n) return null;
  if (n.nodeType === 3) n = n.parentElement;
  return n && n.isConnected ? n : null;
}"""


class SomCompileError(RuntimeError):
    """The SOM could not be compiled; the message never contains page content."""


@dataclass
class CompiledSom:
    text: str  # canonical JSON; the state fingerprint is taken over text.encode()
    data: dict[str, Any] = field(repr=False)
    nodes: JSHandle = field(repr=False)  # in-page id -> Node map

    def __repr__(self) -> str:
        return f"CompiledSom(bytes={len(self.text.encode())})"

    async def resolve(self, element_id: str) -> ElementHandle | None:
        """The live element behind ``element_id``; None if unknown or no longer connected."""
        if not isinstance(element_id, str):
            return None
        try:
            handle = await self.nodes.evaluate_handle(RESOLVE_JS, element_id)
        except PlaywrightError:
            return None
        element = handle.as_element()
        if element is None:
            await handle.dispose()
        return element

    async def dispose(self) -> None:
        """Release the in-page map (a closed page has released it already)."""
        with contextlib.suppress(PlaywrightError):
            await self.nodes.dispose()


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


_compilers: weakref.WeakKeyDictionary[Page, JSHandle] = weakref.WeakKeyDictionary()


async def _run_compiler(page: Page, budget_ms: int) -> JSHandle:
    cached = _compilers.get(page)
    if cached is not None:
        try:
            return await cached.evaluate_handle(RUN_JS, budget_ms)
        except PlaywrightError:
            _compilers.pop(page, None)  # its execution context is gone (navigation)
    compiler = await page.evaluate_handle(FACTORY_JS)
    _compilers[page] = compiler
    return await compiler.evaluate_handle(RUN_JS, budget_ms)


async def _compile(page: Page, budget_ms: int) -> CompiledSom:
    handle = await _run_compiler(page, budget_ms)
    try:
        text, nodes = await asyncio.gather(handle.evaluate(READ_RESULT_JS), handle.get_property("nodes"))
    finally:
        await handle.dispose()
    if not isinstance(text, str):
        await nodes.dispose()
        code = text.get("error") if isinstance(text, dict) else None
        raise SomCompileError(f"SOM compile failed in the page ({_safe_code(code)})")
    return CompiledSom(text=text, data=json.loads(text), nodes=nodes)


def _safe_code(code: Any) -> str:
    # compiler.js reports one of a few fixed codes; anything else is not repeated.
    return code if code in {"budget exceeded", "internal error", "no document"} else "unknown error"
