"""Tiny HTML helpers shared by the reprs (escaping everything that came from a payload)."""

from __future__ import annotations

import numbers
import re
from collections.abc import Iterable
from html import escape
from typing import Any

from ..trace.compact import clean_text, without_reordering

STYLE = "font-family:var(--jp-ui-font-family,sans-serif);font-size:13px"


def counted(count: int, noun: str) -> str:
    """``count`` and ``noun``, plural unless it is one: ``counted(1, "cookie")`` is ``'1 cookie'``."""
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


# A run of UNBROKEN_CHARS or more with no space is no word (a crafted origin, a page's title of one
# token): it may break every BREAK_EVERY characters, or it would stretch a table or a title past
# the output area.
UNBROKEN_CHARS = 48
BREAK_EVERY = 12
_UNBROKEN = re.compile(r"(\S{" + str(UNBROKEN_CHARS) + ",})")


def _shown_text(value: Any) -> str:
    # A lone surrogate (a page's text can hold one, a notebook's UTF-8 messages cannot) as U+FFFD;
    # bidirectional overrides written out, not applied.
    return without_reordering(clean_text(str(value)))


def cell(value: Any) -> str:
    """``value`` as escaped HTML text, for an element's content: lone surrogates as U+FFFD,
    bidirectional overrides as escapes, and a long run with no space, or an origin after its
    scheme, allowed to break."""
    if value is None:
        return ""
    runs = _UNBROKEN.split(_shown_text(value))
    for index in range(1, len(runs), 2):  # the runs the pattern matched
        run = runs[index]
        runs[index] = "<wbr>".join(escape(run[k : k + BREAK_EVERY]) for k in range(0, len(run), BREAK_EVERY))
    runs[::2] = [escape(text) for text in runs[::2]]
    return "".join(runs).replace("://", "://<wbr>")  # an origin may wrap after its scheme


def breakable_name(name: Any) -> str:
    """``name`` escaped, allowed to wrap after its underscores (``select_option``) when space is short.
    Any value (a DataFrame's column may be named by a number)."""
    return "_<wbr>".join(cell(part) for part in str(name).split("_"))


def attribute(value: Any) -> str:
    """``value`` escaped for a quoted attribute (a tooltip, a label), as ``cell`` shows it but whole."""
    return "" if value is None else escape(_shown_text(value))


class Figure(str):
    """A number already written as text (``"7.7%"``, ``"5,001"``): a table aligns it as a number."""

    __slots__ = ()


# Inline styles, because notebook front ends right-align table cells and would do so to sentences.
# A word too long for its column wraps where it must; a path or file name (no spaces to wrap at)
# may break anywhere, or one long name would push every other column out of sight.
# Half JupyterLab's padding across: a dozen columns then fit beside its file browser at 1440 px.
_PAD = "padding:.5em .25em"
_TEXT_CELL = f"text-align:left;vertical-align:top;white-space:normal;overflow-wrap:break-word;{_PAD}"
_NAME_CELL = f"text-align:left;vertical-align:top;white-space:normal;overflow-wrap:anywhere;{_PAD}"
_NUMBER_CELL = f"text-align:right;vertical-align:top;font-variant-numeric:tabular-nums;{_PAD}"
_HEAD_CELL = f"text-align:left;vertical-align:bottom;{_PAD}"


def _td(value: Any, name: bool) -> str:
    # numpy bools are not Numbers
    number = isinstance(value, Figure) or (isinstance(value, numbers.Number) and not isinstance(value, bool))
    style = _NUMBER_CELL if number else _NAME_CELL if name else _TEXT_CELL
    return f"<td style='{style}'>{cell(value)}</td>"


def table(header: Iterable[str], rows: Iterable[Iterable[Any]], *, names: Iterable[str] = ()) -> str:
    """An HTML table: headers and text left-aligned and whole (they wrap), numbers right-aligned;
    the columns ``names`` hold paths or file names, which may break anywhere."""
    header = list(header)
    name_columns = set(names)
    is_name = [h in name_columns for h in header]
    # Column names wrap after an underscore: headers no wider than their values.
    head = "".join(f"<th style='{_HEAD_CELL}'>{breakable_name(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(_td(v, i < len(is_name) and is_name[i]) for i, v in enumerate(row)) + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def gauge(label: str, value: int, maximum: int) -> str:
    percent = 0 if maximum <= 0 else min(100, round(100 * value / maximum))
    return (
        f"<div>{cell(label)}: <b>{value:,}</b> / {maximum:,} "
        f"<progress value='{value}' max='{maximum}' style='width:12em'></progress> {percent}%</div>"
    )


def box(title: str, body: str) -> str:
    return f"<div style='{STYLE}'><div><b>{cell(title)}</b></div>{body}</div>"
