"""Warnings shown at the user's line, not on the background loop's thread.

The sync ``Session`` runs each call on a background loop (``session.py``). A warning raised
there would point at asyncio's frames (and Python shows each place once), so the async core says
its warnings through :func:`warn_caller`. Awaited by the user (``AsyncSession``), it warns at
once. In a call the sync facade runs (:func:`collecting`), the call's own task keeps them, and
:func:`warn_collected` warns them on the user's thread when the call has returned. Either way
the warning names the first frame outside this package: the user's line (a warning from a task
the call started, or from a widget's button, names wherever that task runs).
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
import warnings
from collections.abc import Coroutine
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

PACKAGE = __name__.partition(".")[0]


@dataclass
class Collected:
    """What one call the sync facade runs warns, to be warned again on the user's thread."""

    call: Coroutine[Any, Any, Any]  # only its own task's warnings are kept, not those of tasks it starts
    messages: list[str] = field(default_factory=list)
    closed: bool = False  # the user's thread has stopped waiting: warn at once from then on


_collected: contextvars.ContextVar[Collected | None] = contextvars.ContextVar(
    "plasmate_nb_caller_warnings", default=None
)


def warn_caller(message: str) -> None:
    """Warn ``message`` (a ``UserWarning``) at the user's line, now or when their call returns."""
    collected = _collected.get()
    task = asyncio.current_task() if collected is not None else None
    if (
        collected is not None
        and not collected.closed
        and task is not None
        and task.get_coro() is collected.call
    ):
        collected.messages.append(message)
    else:
        warnings.warn(message, UserWarning, stacklevel=_users_level())


def collecting(call: Coroutine[Any, Any, Any]) -> tuple[contextvars.Context, Collected]:
    """A context to run ``call``'s task in (``run_sync(call, context)``) and what it will keep."""
    collected = Collected(call)
    context = contextvars.copy_context()
    context.run(_collected.set, collected)
    return context, collected


def warn_collected(collected: Collected) -> None:
    """Warn what ``collected`` kept, at the user's line (on the user's thread)."""
    collected.closed = True
    for message in collected.messages:
        warnings.warn(message, UserWarning, stacklevel=_users_level())


def _users_level() -> int:
    """``warnings.warn``'s stacklevel, called from a function here, for the first frame outside
    this package (the user's line; in a coroutine, the awaiting frames come first)."""
    caller: FrameType | None
    level, caller = 1, sys._getframe(1)  # 1: the function here that calls warnings.warn
    while caller is not None and caller.f_globals.get("__name__", "").partition(".")[0] == PACKAGE:
        caller, level = caller.f_back, level + 1
    return level
