"""What ``evaluate`` answers: the page's value as the reference's clients receive it.

The reference's worker hands back ``String(value)`` (objects JSON-stringified) and serde_json
reads that text back (docs/contract.md#answers): "undefined" and "" are null, text that parses as
JSON is that value, anything else stays a string. serde_json reads an integer as one when it fits
64 bits (signed or not) and as a float otherwise (``-0`` as the float ``-0.0``), and refuses a
number no float can hold, a lone surrogate escape and nesting 128 deep: the text then stays a
string. It writes floats in its own layout (``serde_floats``). Python's ``json`` does none of that:
left to it, ``"1e400"`` came back as a bare ``Infinity``, which no JSON parser takes.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

from plasmate_nb.trace.compact import compact_json, not_text_at, serde_floats

_INTEGERS = (-(2**63), 2**64 - 1)  # what serde_json reads as an integer: i64 or u64
_JS_NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}
_JS_EXPONENT_FROM = 1e21  # from here on, String(number) writes an exponent
_SERDE_DEPTH = 128  # serde_json refuses arrays and objects nested this deep
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def map_evaluate_result(value: Any) -> Any:
    """``value`` (as Playwright hands it over) as the reference answers it.

    NaN and the infinities stay the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"`` (also when
    the page returns those strings: they are no JSON); ``-0`` is ``0``; a JavaScript number with an
    integer value below 1e21 reads as serde_json reads its ``String``: an integer when it fits
    64 bits, else a float."""
    if isinstance(value, bool):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return _JS_NON_FINITE[str(value)]
        if value.is_integer() and abs(value) < _JS_EXPONENT_FROM:
            return _serde_integer(str(int(Decimal(repr(value)))))  # String() writes the short digits
        return value
    if isinstance(value, int):  # a number with an integer value, or a BigInt
        digits = format(Decimal(value), "f")  # any length (str() stops at 4,300 digits)
        try:
            return _serde_integer(digits)
        except ValueError:
            return digits  # no float holds it: serde_json refuses it, the text stays
    if not isinstance(value, str):
        return value
    if value in ("undefined", ""):
        return None
    try:
        parsed = json.loads(value, parse_constant=_not_json, parse_int=_serde_integer, parse_float=_finite)
    except (ValueError, RecursionError):
        return value
    if _too_deep(parsed, value) or (_SURROGATE_ESCAPE.search(value) and not_text_at(parsed) is not None):
        return value
    return parsed


def evaluate_answer_text(payload: Any) -> str:
    """The answer's JSON text, floats as serde_json writes them."""
    return serde_floats(compact_json(payload))


def _serde_integer(text: str) -> int | float:
    if text == "-0":
        return -0.0
    number = int(text)
    if _INTEGERS[0] <= number <= _INTEGERS[1]:
        return number
    try:
        return _finite(str(float(number)))
    except OverflowError:
        raise ValueError("number out of range") from None


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError("number out of range")
    return number


def _too_deep(parsed: Any, text: str) -> bool:
    """Whether ``parsed`` nests arrays and objects ``_SERDE_DEPTH`` deep (``text`` is its JSON:
    fewer brackets than that cannot)."""
    if text.count("[") + text.count("{") < _SERDE_DEPTH:
        return False
    level: list[Any] = [parsed]  # the values at one depth (the text's own value is at 1)
    for _ in range(_SERDE_DEPTH - 1):
        level = [
            inner
            for item in level
            if isinstance(item, dict | list)
            for inner in (item.values() if isinstance(item, dict) else item)
        ]
    return any(isinstance(item, dict | list) for item in level)


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")
