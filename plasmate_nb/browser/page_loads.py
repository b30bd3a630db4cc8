"""How many stateless page loads run at once: as many as there may be sessions.

Each ``fetch_page``, ``extract_text``, ``extract_links``, ``inspect_page`` or ``screenshot_page``
call loads its URL in a context of its own, so its own renderer process (each allowed up to the
renderer memory bound). Sessions are capped by ``max_sessions``; these loads were not, so an agent
that fired fifty at once had fifty renderers running. Beyond the bound a call waits its turn; its
own deadlines (a new context, the navigation) start when its load does.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator


class PageLoads:
    """At most ``limit`` loads at once; ``running`` and ``waiting`` say how many now."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.running = 0
        self.waiting = 0
        self._turns = asyncio.Semaphore(limit)

    def __repr__(self) -> str:
        return f"PageLoads(running={self.running}, waiting={self.waiting}, limit={self.limit})"

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """Hold one of the ``limit`` turns for the ``async with`` body (waiting for one first)."""
        self.waiting += 1
        try:
            await self._turns.acquire()
        finally:
            self.waiting -= 1
        self.running += 1
        try:
            yield
        finally:
            self.running -= 1
            self._turns.release()
