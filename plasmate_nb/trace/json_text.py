"""Reading an export's JSON text as the reference's reader does: strictly, one meaning per file.

Python's ``json`` module keeps the last of two equal keys, reads a lone surrogate escape into a
string that cannot be written as UTF-8, and accepts ``NaN``. serde_json, reading into the
reference's structs, refuses all three. Every reader of exports (``load_trace``, ``load_traces``,
``pnb.audit``, ``pnb.compare``) parses with :func:`strict_loads`, which reads as serde_json does
(jiter, a JSON parser in Rust after it, with its duplicate-key check; about 1.2× ``json.loads``),
so a key given twice cannot hide a value from one reader that another shows, and a file that
parses here displays and writes back. Messages never quote the text.
"""

from __future__ import annotations

import re
from typing import Any

import jiter

# jiter's message: what went wrong, then " at line L column C".
_MESSAGE = re.compile(r"(?P<what>.*) at line (?P<line>\d+) column (?P<column>\d+)", re.DOTALL)
_LONE_SURROGATE = "a lone surrogate (half of a UTF-16 pair), which is not text"
_LONE_SURROGATE_ESCAPE = "a lone surrogate escape (half of a UTF-16 pair), which is not text"
# What the reference's reader refuses that Python's ``json`` reads, in our words (the duplicate-key
# message quotes the key, which can be the very secret a writer hid there).
_REFUSALS = (
    ("duplicate key", "a key appears twice in one object"),
    ("surrogate", _LONE_SURROGATE_ESCAPE),
    ("end of hex escape", _LONE_SURROGATE_ESCAPE),
    ("recursion limit", "nested too deeply to read"),
    ("number out of range", "a number too long to read"),
)


class JsonTextError(ValueError):
    """Not JSON text a strict reader reads; the message says why and where, never what is there.

    ``line`` (from 1) and ``column`` (in UTF-8 bytes, as jiter counts; 0 for empty text) are None
    when the text as a whole is refused.
    """

    def __init__(self, why: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(why if line is None else f"{why} at line {line} column {column}")
        self.why, self.line, self.column = why, line, column


def serde_loads(data: bytes, *, unique_keys: bool) -> Any:
    """``data`` parsed as serde_json parses it (jiter): UTF-8, no ``NaN``/``Infinity``, no lone
    surrogate, nesting about 200 deep; with ``unique_keys`` a key given twice is refused, without
    the last one wins (as serde_json reads into a ``Value``). Raises ``ValueError`` with jiter's
    message, in serde_json's words (the duplicate-key one quotes the key). No string cache:
    nothing of the text stays in the process."""
    return jiter.from_json(data, allow_inf_nan=False, cache_mode="none", catch_duplicate_keys=unique_keys)


def strict_loads(text: str) -> Any:
    """``json.loads(text)`` as serde_json reads it: refuses a key given twice in one object, a lone
    surrogate (escaped or not), ``NaN``/``Infinity``, nesting about 200 deep and anything else
    that is not JSON text, with ``JsonTextError``. Unlike serde_json, a number too large for a
    float (``1e400``) reads as infinity, as ``json.loads`` reads it; the schema takes no float.

    >>> strict_loads('{"a": 1, "a": 2}')
    Traceback (most recent call last):
    JsonTextError: a key appears twice in one object at line 1 column 14
    """
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a str given as text can hold one unescaped
        raise JsonTextError(_LONE_SURROGATE) from None
    try:
        return serde_loads(data, unique_keys=True)
    except ValueError as error:
        raise _refusal(str(error)) from None


def _refusal(message: str) -> JsonTextError:
    found = _MESSAGE.fullmatch(message)
    what = found["what"] if found else message
    why = next((ours for theirs, ours in _REFUSALS if theirs in what.lower()), None)
    if why is None:
        why = what if '"' not in what and "'" not in what else "not JSON text"
    return JsonTextError(why, int(found["line"]), int(found["column"])) if found else JsonTextError(why)
