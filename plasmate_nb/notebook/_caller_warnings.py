"""Warnings shown at the user's call, not on the background loop's thread.

The sync ``Session`` runs each call on a background loop (``session.py``). A warning raised
there would point at asyncio's frames, and Python shows each place once, so the async core
says its warnings through :func:`warn_caller`: awaited by the user (``AsyncSession``), it
warns at once at their call; inside a call the sync facade runs (:func:`collecting`), it is
kept and warned again on the user's thread when the call is over (:func:`warn_collected`).
"""

from __future__ import annotations

import warnings
from collections.abc import Coroutine
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")

_collected: ContextVar[list[str] | None] = ContextVar("plasmate_nb_caller_warnings", default=None)


def warn_caller(message: str, stacklevel: int) -> None:
    """Warn ``message`` (a ``UserWarning``) at the user's call: ``stacklevel`` is
    ``warnings.warn``'s in the caller of this, counted to the public method's caller."""
    collected = _collected.get()
    if collected is None:
        warnings.warn(message, UserWarning, stacklevel=stacklevel + 1)
    else:
        collected.append(message)


async def collecting(coroutine: Coroutine[Any, Any, T], into: list[str]) -> T:
    """Await ``coroutine``, keeping what it warns through :func:`warn_caller` in ``into``."""
    token = _collected.set(into)
    try:
        return await coroutine
    finally:
        _collected.reset(token)


def warn_collected(messages: list[str], stacklevel: int) -> None:
    """Warn each of ``messages``; ``stacklevel`` is ``warnings.warn``'s, counted from the caller of this."""
    for message in messages:
        warnings.warn(message, UserWarning, stacklevel=stacklevel + 1)
