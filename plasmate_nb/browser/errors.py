"""Errors of the browser engine. ``str(error)`` is the whole user-facing message, worded by
:mod:`plasmate_nb.errors`."""

from __future__ import annotations


class EngineError(Exception):
    """A failure of the engine or of a session lookup (e.g. ``Session not found: <id>``)."""

    @property
    def message(self) -> str:
        return str(self)


class ActionError(EngineError):
    """A failed action on a session; the session keeps its last good state."""
