"""Reading an export's JSON text as the reference's reader does: strictly, one meaning per file.

Python's ``json`` module keeps the last of two equal keys, reads a lone surrogate escape into a
string that cannot be written as UTF-8, and raises ``RecursionError`` on deep nesting. serde_json,
reading into the reference's structs, refuses a field given twice and a lone surrogate. Every
reader of exports (``load_trace``, ``load_traces``, ``pnb.audit``, ``pnb.compare``) parses with
:func:`strict_loads`, so a key given twice cannot hide a value from one reader that another shows,
and a file that parses here displays and writes back. Messages never quote the text.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .compact import is_text, not_text_at

# A surrogate escape in the text: only then can a parsed string hold a lone surrogate (a file
# read as UTF-8 cannot carry one otherwise). Pairs are fine; they are checked after parsing.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class JsonTextError(ValueError):
    """Valid for Python's ``json``, refused by a strict reader; the message says why, not where."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    document = dict(pairs)
    if len(document) != len(pairs):
        raise JsonTextError("a key appears twice in one object")
    return document


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)


def strict_loads(text: str) -> Any:
    """``json.loads(text)``, refusing a key given twice in one object, a lone surrogate escape and
    nesting too deep to read (``JsonTextError``); invalid JSON raises ``json.JSONDecodeError``.

    >>> strict_loads('{"a": 1, "a": 2}')
    Traceback (most recent call last):
    JsonTextError: a key appears twice in one object
    """
    if not text.isascii() and not is_text(text):  # a str given as text can hold one unescaped
        raise JsonTextError("a lone surrogate (half of a UTF-16 pair), which is not text")
    try:
        document = _DECODER.decode(text)
    except RecursionError:
        raise JsonTextError("nested too deeply to read") from None
    if _SURROGATE_ESCAPE.search(text) and not_text_at(document) is not None:
        raise JsonTextError("a lone surrogate escape (half of a UTF-16 pair), which is not text")
    return document
