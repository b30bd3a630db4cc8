"""The one serialisation used wherever a trace payload becomes text.

``compact_json`` matches serde_json's compact output: no whitespace and non-ASCII
characters written as raw UTF-8 (not ``\\u`` escapes). Sizes are the UTF-8 length of it.
Floats differ only where Python writes an exponent, which only a page's own values reach
(``evaluate``): ``serde_floats`` lays those out as serde_json does.
"""

from __future__ import annotations

import json
import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def compact_json(obj: Any) -> str:
    """``json.dumps(obj, separators=(",", ":"), ensure_ascii=False)``."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


# serde_json writes a float with the same shortest digits as Python's repr, laid out differently
# where Python uses an exponent: "1e21" for "1e+21", "1.5e-7" for "1.5e-07", and "0.00001" for
# "1e-05" (fixed notation down to 1e-5). Python's fixed notation is serde_json's too.
_MAY_HAVE_EXPONENT = re.compile(r"\de[+-]\d")
_STRING_OR_EXPONENT_NUMBER = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|(-?)(\d)(?:\.(\d+))?e([+-]\d+)')


def serde_floats(text: str) -> str:
    """JSON ``text`` as ``json.dumps`` writes it, with each float in serde_json's layout."""
    if _MAY_HAVE_EXPONENT.search(text) is None:
        return text
    return _STRING_OR_EXPONENT_NUMBER.sub(_serde_float, text)


def _serde_float(match: re.Match[str]) -> str:
    sign, first, rest, exponent = match.groups()
    if first is None:  # a string: left as it is
        return match.group()
    if exponent == "-05":
        return f"{sign}0.0000{first}{rest or ''}"
    return f"{sign}{first}{'.' + rest if rest else ''}e{int(exponent)}"


def utf8_len(text: str) -> int:
    """UTF-8 byte length of ``text`` (lone surrogates count as 3 bytes, as WTF-8)."""
    return len(text.encode("utf-8", "surrogatepass"))


def is_text(text: str) -> bool:
    """Whether ``text`` encodes as UTF-8: it holds no lone surrogate (page text, a lone surrogate
    escape in JSON and a file name that is not UTF-8 can each bring one)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def not_text_at(value: Any) -> tuple[str | int, ...] | None:
    """Where a JSON-shaped ``value`` holds a string that is not text (``is_text``): the keys and
    indexes leading to it (to the object, for such a key; ``()`` for the value itself), the first
    in document order, or None. Iterative: any nesting depth is fine."""
    # Each entry: a value and the link (key, parent link) to it; a path is built only when found.
    # A key is checked when its value comes up, so keys and values are met in document order.
    pending: list[tuple[Any, tuple[Any, Any] | None]] = [(value, None)]
    while pending:
        item, link = pending.pop()
        if link is not None and isinstance(link[0], str) and not is_text(link[0]):
            return _path(link[1])
        if isinstance(item, str):
            if not is_text(item):
                return _path(link)
        elif isinstance(item, dict):
            pending.extend((inner, (key, link)) for key, inner in reversed(item.items()))
        elif isinstance(item, list | tuple):
            pending.extend((item[i], (i, link)) for i in range(len(item) - 1, -1, -1))
    return None


def _path(link: tuple[Any, Any] | None) -> tuple[str | int, ...]:
    keys = []
    while link is not None:
        key, link = link
        keys.append(key)
    return tuple(reversed(keys))


def clean_text(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, so it always encodes as UTF-8."""
    return text if is_text(text) else _SURROGATE.sub("\ufffd", text)


# The bidirectional embeddings, overrides and isolates: text holding U+202E reads backwards, and
# so does what follows it on the line.
_REORDERING = "\u202a-\u202e\u2066-\u2069"
# What a table, an HTML page or a terminal cannot take as it is: control characters, the
# bidirectional controls, and the lone surrogates that stand for the bytes of a file name that is
# not UTF-8 (os.fsdecode).
_UNSHOWN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f" + _REORDERING + "\ud800-\udfff]")
_REORDERING_CONTROL = re.compile("[" + _REORDERING + "]")


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x80 or 0xDC80 <= code <= 0xDCFF:  # a C0 control or DEL; a byte of a non-UTF-8 name
        return f"\\x{code & 0xFF:02x}"
    return f"\\u{code:04x}"  # a C1 or bidirectional control, another lone surrogate


def without_reordering(text: str) -> str:
    """``text`` with each bidirectional embedding, override or isolate written as its ``\\uXXXX``
    escape: shown, not applied, so a page title or a crafted handle cannot turn round what the
    reader sees after it. (The marks U+200E/U+200F, which right-to-left text uses, stay.)"""
    return _REORDERING_CONTROL.sub(_shown, text)


def file_label(path: object) -> str:
    """A file's path as tables, messages and a terminal show it: a byte of a name that is not
    UTF-8 and a control character (a name can hold a terminal escape sequence, or turn the line
    around) as escapes, so different names keep different labels. A label with an escape is a
    display form, not the path."""
    return _UNSHOWN.sub(_shown, str(path))


def escape_surrogates(text: str) -> str:
    """``text`` with each lone surrogate written as its lowercase ``\\uXXXX`` JSON escape (as the
    SOM compiler writes it), so JSON text that holds one is valid UTF-8."""
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def truncate_utf8(text: str, max_bytes: int) -> str:
    """The longest prefix of ``text`` whose UTF-8 form fits ``max_bytes`` (whole characters; a
    lone surrogate, which page text can hold, counts as its 3 WTF-8 bytes)."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    cut = max(0, max_bytes)
    while cut > 0 and data[cut] & 0xC0 == 0x80:  # back out of a character the limit splits
        cut -= 1
    return data[:cut].decode("utf-8", "surrogatepass")


def sorted_json(obj: Any) -> Any:
    """A copy of ``obj`` with every object's keys sorted (serde_json ``Value`` order)."""
    if isinstance(obj, dict):
        return {key: sorted_json(obj[key]) for key in sorted(obj)}
    if isinstance(obj, list | tuple):
        return [sorted_json(item) for item in obj]
    return obj
