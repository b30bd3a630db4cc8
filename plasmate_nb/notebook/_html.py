"""Tiny HTML helpers shared by the reprs (escaping everything that came from a payload)."""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from html import escape
from typing import Any

from ..trace.compact import clean_text

STYLE = "font-family:var(--jp-ui-font-family,sans-serif);font-size:13px"


def counted(count: int, noun: str) -> str:
    """``count`` and ``noun``, plural unless it is one: ``counted(1, "cookie")`` is ``'1 cookie'``."""
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


def cell(value: Any) -> str:
    """``value`` as escaped HTML text; a lone surrogate (a page's text can hold one, a notebook's
    UTF-8 messages cannot) as U+FFFD."""
    return "" if value is None else escape(clean_text(str(value)))


# Inline styles, because notebook front ends right-align table cells and would do so to sentences.
_TEXT_CELL = "text-align:left;vertical-align:top;white-space:normal;overflow-wrap:break-word"
_NUMBER_CELL = "text-align:right;vertical-align:top;font-variant-numeric:tabular-nums"


def _td(value: Any) -> str:
    number = isinstance(value, numbers.Number) and not isinstance(value, bool)  # numpy bools are not Numbers
    return f"<td style='{_NUMBER_CELL if number else _TEXT_CELL}'>{cell(value)}</td>"


def table(header: Iterable[str], rows: Iterable[Iterable[Any]]) -> str:
    """An HTML table: headers and text left-aligned and whole (they wrap), numbers right-aligned."""
    head = "".join(f"<th style='text-align:left;vertical-align:bottom'>{cell(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(_td(v) for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def gauge(label: str, value: int, maximum: int) -> str:
    percent = 0 if maximum <= 0 else min(100, round(100 * value / maximum))
    return (
        f"<div>{cell(label)}: <b>{value:,}</b> / {maximum:,} "
        f"<progress value='{value}' max='{maximum}' style='width:12em'></progress> {percent}%</div>"
    )


def box(title: str, body: str) -> str:
    return f"<div style='{STYLE}'><div><b>{cell(title)}</b></div>{body}</div>"
