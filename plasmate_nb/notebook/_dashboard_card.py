"""The trace dashboard's card as HTML: a pure function of one export's payload and the bounds.

The live widget and the saved / static fallback show this same string, so JupyterLab, VS Code
or Colab-style frontends and a notebook rendered without widgets all show one card. It is laid
out with CSS flex and grid and relative widths only (it fits output areas from about 540 px up);
its events table scrolls inside a box of bounded height, newest event first, so the card's
height does not grow with the trace. Colours come from the frontend's theme variables where it
has them. Everything shown comes from the export (fingerprints are shortened, never decoded).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ._html import attribute, breakable_name, cell

#: A gauge turns amber at this share of its bound (inclusive), red once events were dropped.
NEAR_FULL_PERCENT = 80
LEVEL_COLOURS = {"ok": "#2e7d32", "near": "#e69500", "dropping": "#c62828"}
#: The counters shown as figures, with their labels, in display order.
FIGURES = {
    "next_sequence": "next sequence",
    "retained_events": "retained",
    "evicted_events": "evicted",
    "oversized_events": "oversized",
    "cleared_events": "cleared",
}
#: The events table's columns: header -> what it says (the header's hover text).
EVENT_COLUMNS = {
    "#": "sequence number",
    "action": "the traced tool",
    "outcome": "success, or error and its class",
    "target": "the target element's role",
    "origin": "page origin before the action (→ after, when it changed)",
    "ms": "duration in milliseconds",
    "changed": "what the action changed: the semantic page state and/or the URL",
    "redacted": "fields whose values were redacted, with their byte lengths",
    "state after": "keyed fingerprint of the page state after the action (hover for all of it)",
}
FINGERPRINT_SHOWN = 7  # hex digits shown of a fingerprint; the full value is in the hover text
TABLE_MAX_HEIGHT = "22em"

_MUTED = "opacity:.72"
_FONT = "font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:13px;line-height:1.4"
_SURFACE = "var(--jp-layout-color1,var(--vscode-editor-background,#fff))"
_RULE = "var(--jp-border-color2,rgba(127,127,127,.3))"
# Alarm text: no one red reads on both a white and a dark surface, so the alarm red is moved 40 %
# of the way to the text colour around it (darker in light themes, lighter in dark ones). A
# browser without color-mix drops that declaration when parsing and keeps the plain red (which a
# var() inside it would prevent).
_ALARM_TEXT = (
    f"color:{LEVEL_COLOURS['dropping']};color:color-mix(in srgb,{LEVEL_COLOURS['dropping']} 60%,currentColor)"
)


def gauge_level(value: int, maximum: int, dropping: bool) -> str:
    """``dropping`` once events were evicted or dropped, ``near`` from 80 % of the bound, else ``ok``.

    >>> gauge_level(80, 100, dropping=False)
    'near'
    """
    if dropping:
        return "dropping"
    if maximum > 0 and value * 100 >= NEAR_FULL_PERCENT * maximum:
        return "near"
    return "ok"


def _percent(value: int, maximum: int) -> int:
    return 0 if maximum <= 0 else min(100, value * 100 // maximum)


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}" + ("" if count == 1 else "s")


def explanation(payload: dict[str, Any], bounds: tuple[int, int]) -> str:
    """One plain-language line saying whether the trace still holds every event, and why not.

    >>> explanation(export.payload, (128, 49_152))
    'Within bounds: every event recorded so far is retained.'
    """
    max_events, max_bytes = bounds
    evicted, oversized = payload["evicted_events"], payload["oversized_events"]
    if evicted or oversized:
        lost = []
        if evicted:
            lost.append(
                f"the oldest {_plural(evicted, 'event')} evicted to stay within "
                f"{max_events:,} events and {max_bytes:,} bytes"
            )
        if oversized:
            lost.append(f"{_plural(oversized, 'event')} too large to keep dropped")
        return "Events are being lost: " + " and ".join(lost) + "; they are in no export."
    usage = (
        (_percent(payload["retained_events"], max_events), f"the {max_events:,}-event bound"),
        (_percent(payload["retained_bytes"], max_bytes), f"the {max_bytes:,}-byte bound"),
    )
    near = [f"{percent} % of {bound}" for percent, bound in usage if percent >= NEAR_FULL_PERCENT]
    if near:
        return f"Nearly full: {' and '.join(near)} used; the oldest events are evicted next."
    if payload["cleared_events"]:
        cleared = _plural(payload["cleared_events"], "event")
        return f"Within bounds: every event since the last clear is retained ({cleared} cleared)."
    return "Within bounds: every event recorded so far is retained."


def levels(payload: dict[str, Any], bounds: tuple[int, int]) -> dict[str, str]:
    """The level of each gauge, ``events`` and ``bytes``."""
    dropping = bool(payload["evicted_events"] or payload["oversized_events"])
    return {
        "events": gauge_level(payload["retained_events"], bounds[0], dropping),
        "bytes": gauge_level(payload["retained_bytes"], bounds[1], dropping),
    }


def _figure(name: str, label: str, value: int) -> str:
    alarm = name in ("evicted_events", "oversized_events") and value > 0
    colour = f";{_ALARM_TEXT}" if alarm else ""
    return (
        f"<div class='pnb-figure' data-counter='{name}' style='min-width:5.5em'>"
        f"<div style='font-size:20px;font-weight:600;line-height:1.2{colour}'>{value:,}</div>"
        f"<div style='font-size:11px;{_MUTED}'>{cell(label)}</div></div>"
    )


def figures_html(payload: dict[str, Any]) -> str:
    """The counters as labelled figures, in one wrapping row."""
    tiles = "".join(_figure(name, label, payload[name]) for name, label in FIGURES.items())
    return f"<div class='pnb-figures' style='display:flex;flex-wrap:wrap;gap:6px 20px'>{tiles}</div>"


def _gauge(name: str, label: str, value: int, maximum: int, level: str) -> str:
    percent = _percent(value, maximum)
    colour = LEVEL_COLOURS[level]
    return (
        f"<div class='pnb-gauge' data-gauge='{name}' data-level='{level}' style='min-width:0'>"
        f"<div style='display:flex;justify-content:space-between;gap:8px;flex-wrap:wrap'>"
        f"<span>{cell(label)}</span><span><b>{value:,}</b> / {maximum:,} · {percent} %</span></div>"
        f"<div role='progressbar' aria-label='{attribute(label)}' aria-valuenow='{value}' aria-valuemin='0' "
        f"aria-valuemax='{maximum}' style='height:8px;border-radius:4px;background:{_RULE};overflow:hidden'>"
        f"<div class='pnb-gauge-bar' style='width:{percent}%;min-width:{2 if value else 0}px;height:100%;"
        f"background:{colour}'></div></div></div>"
    )


def gauges_html(payload: dict[str, Any], bounds: tuple[int, int]) -> str:
    """Both bound gauges side by side (stacked when narrow), then the one-line explanation."""
    level = levels(payload, bounds)
    gauges = _gauge("events", "retained events", payload["retained_events"], bounds[0], level["events"])
    gauges += _gauge("bytes", "retained bytes", payload["retained_bytes"], bounds[1], level["bytes"])
    worst = max(level.values(), key=list(LEVEL_COLOURS).index)
    return (
        "<div style='display:grid;grid-template-columns:repeat(auto-fit,minmax(20em,1fr));gap:6px 24px'>"
        f"{gauges}</div><div class='pnb-explanation' data-level='{worst}' style='border-left:3px solid "
        f"{LEVEL_COLOURS[worst]};padding-left:8px'>{cell(explanation(payload, bounds))}</div>"
    )


def short_fingerprint(fingerprint: str | None) -> str:
    """A fingerprint's first hex digits, with the whole value in the hover text.

    >>> short_fingerprint("plasmate-state:v1:0123456789abcdef")
    "<span title='plasmate-state:v1:0123456789abcdef'>0123456…</span>"
    """
    if not fingerprint:
        return "—"
    digits = fingerprint.rsplit(":", 1)[-1]
    return f"<span title='{attribute(fingerprint)}'>{cell(digits[:FINGERPRINT_SHOWN])}…</span>"


def _breakable_origin(origin: str | None) -> str:
    """``scheme://host:port`` escaped, allowed to wrap after ``://`` (as ``cell`` has it) and before the port."""
    if not origin:
        return "—"
    shown = cell(origin)
    rest, colon, port = shown.rpartition(":")
    return f"{rest}<wbr>:{port}" if colon and port.isdigit() else shown


def _origin(event: dict[str, Any]) -> str:
    before, after = event["before"]["origin"], event["after"]["origin"]
    if before == after:
        return _breakable_origin(before)
    return f"{_breakable_origin(before)} → {_breakable_origin(after)}"


def _changed(event: dict[str, Any]) -> str:
    before, after = event["before"], event["after"]
    changed = [
        name
        for name, key in (("state", "fingerprint"), ("url", "url_fingerprint"))
        if before[key] != after[key]
    ]
    return ", ".join(changed) or "—"


def _redacted(event: dict[str, Any]) -> str:
    fields = event["redaction"]["redacted_fields"]
    value = event["parameters"].get("value")
    length = f" ({value['byte_length']:,} B)" if isinstance(value, dict) else ""
    return cell(", ".join(fields) + length) if fields else "—"


def _outcome(event: dict[str, Any]) -> str:
    if event["outcome"] == "success":
        return "success"
    return f"<span style='{_ALARM_TEXT}'>{cell(event['outcome'])}: {cell(event.get('error_class'))}</span>"


_RIGHT = "text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums"
_NUMERIC = frozenset({"#", "ms", "events", "values"})  # headers of right-aligned columns


def _table(
    head: dict[str, str], rows: list[list[tuple[str, str]]], sticky: bool = False, width: str = "100%"
) -> str:
    """A compact table: ``head`` maps each header to its hover text; each cell is (HTML, extra CSS)."""
    pinned = f"position:sticky;top:0;background:{_SURFACE};" if sticky else ""
    header = "".join(
        f"<th title='{attribute(meaning)}' style='{pinned}text-align:{'right' if name in _NUMERIC else 'left'};"
        f"vertical-align:bottom;font-weight:600;"
        f"padding:3px;border-bottom:1px solid {_RULE}'>{cell(name)}</th>"
        for name, meaning in head.items()
    )
    body = "".join(
        "<tr>"
        + "".join(f"<td style='padding:2px 3px;vertical-align:top;{css}'>{html}</td>" for html, css in row)
        + "</tr>"
        for row in rows
    )
    return (
        f"<table style='border-collapse:collapse;width:{width};font-size:12px'>"
        f"<thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>"
    )


def _event_row(event: dict[str, Any]) -> list[tuple[str, str]]:
    target = event.get("target")
    return [
        (cell(event["sequence"]), _RIGHT),
        (breakable_name(event["action"]), ""),
        (_outcome(event), ""),
        (breakable_name(target["role"]) if target else "—", ""),
        (_origin(event), "min-width:8em;overflow-wrap:break-word"),  # a host on one line
        (f"{event['duration_ms']:,}", _RIGHT),
        (_changed(event), ""),
        (_redacted(event), ""),
        (short_fingerprint(event["after"]["fingerprint"]), "white-space:nowrap;font-family:monospace"),
    ]


def events_html(events: list[dict[str, Any]]) -> str:
    """The retained events, newest first, in a scroll box of bounded height with a sticky header."""
    if not events:
        return f"<div class='pnb-events' style='{_MUTED}'><i>no retained events</i></div>"
    first, last = events[0]["sequence"], events[-1]["sequence"]
    caption = (
        f"Retained events {first}–{last}, newest first ({_plural(len(events), 'row')}; scroll for older)"
    )
    rows = [_event_row(event) for event in reversed(events)]
    return (
        f"<div style='font-weight:600'>{cell(caption)}</div>"
        f"<div class='pnb-events' style='max-height:{TABLE_MAX_HEIGHT};overflow:auto;contain:inline-size;"
        f"border:1px solid {_RULE};"
        f"border-radius:4px'>{_table(EVENT_COLUMNS, rows, sticky=True)}</div>"
    )


#: The redaction panel's columns: header -> what it says.
REDACTION_COLUMNS = {
    "action": "the traced tool",
    "events": "retained events of this action",
    "redacted fields": "parameters whose values the trace never keeps",
    "values": "how many values were redacted",
    "byte lengths": "the redacted values' lengths in bytes (all the trace keeps of them)",
}


def redaction_html(payload: dict[str, Any]) -> str:
    """Per action: events, redacted fields, values redacted and their byte lengths; the omitted list."""
    by_action: dict[str, dict[str, Any]] = defaultdict(lambda: {"events": 0, "fields": set(), "lengths": []})
    omitted: set[str] = set()
    for event in payload["events"]:
        row = by_action[event["action"]]
        row["events"] += 1
        row["fields"].update(event["redaction"]["redacted_fields"])
        value = event["parameters"].get("value")
        if isinstance(value, dict):
            row["lengths"].append(value["byte_length"])
        omitted.update(event["redaction"]["omitted_fields"])
    rows = [
        [
            (cell(action), "white-space:nowrap"),
            (f"{r['events']:,}", _RIGHT),
            (cell(", ".join(sorted(r["fields"])) or "—"), ""),
            (f"{len(r['lengths']):,}", _RIGHT),
            (cell(", ".join(map(str, r["lengths"])) or "—"), "overflow-wrap:anywhere"),
        ]
        for action, r in sorted(by_action.items())
    ]
    omitted_text = ", ".join(sorted(omitted)) or "(no retained events)"
    return (
        f"<div class='pnb-redaction'><div><b>Redaction</b> — {cell(payload['redaction_policy'])}</div>"
        f"{_table(REDACTION_COLUMNS, rows, width='auto')}"
        f"<div style='{_MUTED};font-size:12px'>omitted by policy: {cell(omitted_text)}</div></div>"
    )


def side_by_side(main: str, aside: str) -> str:
    """``main`` and ``aside`` in one row when the card is wide enough, else ``aside`` below."""
    return (
        "<div style='display:flex;flex-wrap:wrap;gap:8px 20px;align-items:flex-start'>"
        f"<div style='flex:3 1 52em;min-width:0'>{main}</div><div style='flex:1 1 26em;min-width:0'>{aside}</div></div>"
    )


def card_html(header: str, body: str) -> str:
    """The card around ``header`` and ``body`` (both HTML): bordered, full width, never wider."""
    return (
        f"<div class='pnb-dashboard' style='{_FONT};box-sizing:border-box;width:100%;max-width:100%;"
        f"min-width:0;white-space:normal;border:1px solid {_RULE};border-radius:6px;padding:8px 10px;"
        f"display:flex;flex-direction:column;gap:8px'>"
        f"<div class='pnb-header' style='overflow-wrap:anywhere'>{header}</div>{body}</div>"
    )
