"""How a session's action answers carry its page model: whole, or only what changed.

docs/contract.md#answers-that-carry-only-what-changed. ``open_page`` with ``som_answers:
"changes"`` makes every later action answer of that session carry ``changes`` (against the page
model of the session's previous answer, :mod:`plasmate_nb.tools.som_changes`) and ``som_digest``
instead of ``regions``. It still answers in full (``regions`` plus ``som_digest``) when there is
no previous answer, for ``navigate_to`` (a new document), when an action left for another
document (the URL changed beyond its fragment), and when the changes would be no shorter than
the whole SOM's text. The default, ``"full"``, is the reference's answer, byte for byte.

Per session that asked for changes, only what its last answer carried is kept: a reference to the
SOM dict the engine already holds (not a copy), its URL and digest. Sessions are weak keys, so a
closed session leaves nothing behind. Nothing here touches the trace: its state fingerprint is
over the full SOM whatever the answers carry.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any
from urllib.parse import urldefrag

from plasmate_nb.browser import BrowserSession
from plasmate_nb.errors import invalid_value
from plasmate_nb.tools.som_changes import diff_som, no_changes, som_digest
from plasmate_nb.trace import InvalidArguments, compact_json

FULL, CHANGES = "full", "changes"
SOM_ANSWER_MODES = (FULL, CHANGES)


@dataclass(frozen=True)
class _Answered:
    """The page model a session's last answer carried (in full or as changes)."""

    url: str | None
    som: dict[str, Any]
    digest: str


class SomAnswers:
    """The answer mode of each session, and the page model part of each action answer.

    >>> answers = SomAnswers()
    >>> answers.opened(session, answers.mode({"url": url, "som_answers": "changes"}))
    >>> answers.model(session)           # {"changes": {...}, "som_digest": "sha256:..."}
    """

    def __init__(self) -> None:
        self._last: weakref.WeakKeyDictionary[BrowserSession, _Answered | None] = weakref.WeakKeyDictionary()

    @staticmethod
    def mode(arguments: dict[str, Any]) -> str:
        """``open_page``'s ``som_answers`` (default ``"full"``); any other value is an argument error."""
        mode = arguments.get("som_answers", FULL)
        if mode not in SOM_ANSWER_MODES:
            raise InvalidArguments(invalid_value("string", 'one of "full", "changes" for `som_answers`'))
        return str(mode)

    def opened(self, session: BrowserSession, mode: str) -> None:
        """Record the mode ``open_page`` chose for ``session``."""
        if mode == CHANGES:
            self._last[session] = None

    def model(self, session: BrowserSession, *, new_document: bool = False) -> dict[str, Any]:
        """The page-model keys of an answer now: ``regions``, or ``changes`` (both with ``som_digest``
        in a changes session); the answer they go into becomes the base of the next changes."""
        som = session.som
        regions = som.data.get("regions", []) if som is not None else []
        if session not in self._last:
            return {"regions": regions}
        if som is None:
            self._last[session] = None
            return {"regions": regions}
        digest = som_digest(som.text)
        base = self._last[session]
        self._last[session] = _Answered(session.url, som.data, digest)
        full = {"regions": regions, "som_digest": digest}
        if base is None or new_document or _other_document(base.url, session.url):
            return full
        changed = diff_som(base.som, som.data, som.text) if digest != base.digest else no_changes()
        changes = {"base_digest": base.digest, **changed}
        if len(compact_json(changes)) >= len(som.text):
            return full
        return {"changes": changes, "som_digest": digest}


def _other_document(before: str | None, after: str | None) -> bool:
    if before is None or after is None:
        return True
    return urldefrag(before)[0] != urldefrag(after)[0]
