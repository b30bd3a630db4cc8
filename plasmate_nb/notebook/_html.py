"""Tiny HTML helpers shared by the reprs (escaping everything that came from a payload)."""

from __future__ import annotations

from collections.abc import Iterable
from html import escape
from typing import Any

STYLE = "font-family:var(--jp-ui-font-family,sans-serif);font-size:13px"


def cell(value: Any) -> str:
    return "" if value is None else escape(str(value))


def table(header: Iterable[str], rows: Iterable[Iterable[Any]]) -> str:
    head = "".join(f"<th style='text-align:left'>{cell(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def gauge(label: str, value: int, maximum: int) -> str:
    percent = 0 if maximum <= 0 else min(100, round(100 * value / maximum))
    return (
        f"<div>{cell(label)}: <b>{value:,}</b> / {maximum:,} "
        f"<progress value='{value}' max='{maximum}' style='width:12em'></progress> {percent}%</div>"
    )


def box(title: str, body: str) -> str:
    return f"<div style='{STYLE}'><div><b>{cell(title)}</b></div>{body}</div>"
