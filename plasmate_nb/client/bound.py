"""A transport that always runs on the loop that owns its resources.

Playwright objects and SDK client streams belong to the event loop that created them. The
embedded engine lives on the process-wide background loop, so a caller on any other loop
(Jupyter's kernel loop, a test's loop) reaches it through this wrapper.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from plasmate_nb.client.base import CallListener, Transport

T = TypeVar("T")


class LoopBoundTransport:
    def __init__(self, inner: Transport, loop: asyncio.AbstractEventLoop) -> None:
        self.inner = inner
        self.loop = loop

    def __repr__(self) -> str:
        return f"LoopBoundTransport({self.inner!r})"

    @property
    def observes_all_clients(self) -> bool:
        return bool(getattr(self.inner, "observes_all_clients", False))

    async def _on_owner(self, coro: Coroutine[Any, Any, T]) -> T:
        if asyncio.get_running_loop() is self.loop:
            return await coro
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        return await self._on_owner(self.inner.call(tool, arguments))

    async def list_tools(self) -> list[dict[str, Any]]:
        return await self._on_owner(self.inner.list_tools())

    def subscribe(self, callback: CallListener) -> Callable[[], None]:
        """Callbacks run on the owner loop's thread: observers must marshal to their own."""
        return self.inner.subscribe(callback)

    async def aclose(self) -> None:
        await self._on_owner(self.inner.aclose())
