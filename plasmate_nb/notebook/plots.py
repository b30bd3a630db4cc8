"""Plots of one trace: retained bytes and events against their bounds, drops marked, durations.

``TraceExport.plot()`` and ``s.trace.plot()`` draw here. This module is the only one that
imports matplotlib, and it is itself imported only when a plot is drawn, so ``import
plasmate_nb`` stays lean (matplotlib comes with the ``lab`` extra).

What can be drawn depends on what is known. An export (a file, or a final trace) is a
snapshot: the retained events and four counters. Over the sequence it shows the retained
events accumulating, exactly where oversized events left gaps, and the span before the
first retained event, whose sequences were evicted, cleared or oversized — an export
cannot say which each one was. A live session also has what the notebook watched: the
counters at each status or export it received (the dashboard fetches one after every
change), so it draws the retained bytes and events as they were, marks each eviction,
clear and oversized drop where the counters rose, and can use time as its axis (notebook
wall-clock, never part of a trace).
"""

from __future__ import annotations

import collections
import io
import itertools
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from matplotlib.axes import Axes
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
from matplotlib.figure import Figure

from ..trace.compact import compact_json
from ..trace.constants import MAX_BYTES, MAX_EVENTS
from ._sightings import Observation, TraceSightings

OUTCOME_COLOURS = {"success": "#2a9d8f", "error": "#d62828"}
#: Counter -> (marker label, marker, colour) of the drops a plot marks.
DROP_MARKS = {
    "evicted_events": ("eviction", "v", "#d62828"),
    "cleared_events": ("clear", "s", "#6a4c93"),
    "oversized_events": ("oversized drop", "X", "#e76f51"),
}
RETAINED_COLOUR = "#264653"
UNKNOWN_SPAN_COLOUR = "#bbbbbb"


class TraceFigure(Figure):
    """A matplotlib ``Figure`` of a trace that shows itself as a PNG in any notebook front end.

    ``axes_by_name`` holds its three axes: ``"bytes"``, ``"events"`` and ``"durations"``.

    >>> figure = s.trace.plot()
    >>> figure.axes_by_name["bytes"].set_yscale("log")
    >>> figure.savefig("trace.png")
    """

    axes_by_name: dict[str, Axes]

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", dpi=96)
        return buffer.getvalue()


def plot_trace(
    payload: dict[str, Any], sightings: TraceSightings | None = None, x: str = "sequence"
) -> TraceFigure:
    """Draw an export ``payload`` (with what the notebook watched, when given) over the sequence or time."""
    if x not in ("sequence", "time"):
        raise ValueError("x must be 'sequence' or 'time'")
    watched = list(sightings.observations) if sightings is not None else []
    if x == "time" and sightings is None:
        raise ValueError(
            "this trace has no notebook times (an export keeps none; only a live session's s.trace.plot() "
            "has them): plot over the sequence with x='sequence'"
        )
    figure = TraceFigure(figsize=(9, 8), layout="constrained")
    bytes_axes, events_axes, durations_axes = figure.subplots(3, 1)
    figure.axes_by_name = {"bytes": bytes_axes, "events": events_axes, "durations": durations_axes}
    figure.suptitle(_title(payload))
    first_seen = sightings.first_seen if sightings is not None else {}
    if len(watched) >= 2:
        _draw_watched(bytes_axes, events_axes, watched, x)
    else:
        _draw_snapshot(bytes_axes, events_axes, payload, first_seen, x)
    for axes, bound, name in ((bytes_axes, MAX_BYTES, "bytes"), (events_axes, MAX_EVENTS, "events")):
        axes.axhline(bound, color="#999999", linestyle="--", linewidth=1, label=f"bound ({bound:,} {name})")
        axes.set_ylabel(f"retained {name}")
        axes.set_ylim(0, bound * 1.08)
        axes.set_xlabel("time seen by this notebook (not part of the trace)" if x == "time" else "sequence")
        if x == "time":
            locator = AutoDateLocator()
            axes.xaxis.set_major_locator(locator)
            axes.xaxis.set_major_formatter(ConciseDateFormatter(locator))
        axes.legend(loc="upper left", fontsize="small")
    _draw_durations(durations_axes, payload["events"])
    return figure


def _title(payload: dict[str, Any]) -> str:
    return (
        f"trace {payload['trace_id']}: {payload['retained_events']} retained, "
        f"{payload['evicted_events']} evicted, {payload['oversized_events']} oversized, "
        f"{payload['cleared_events']} cleared"
    )


def _position(sequence: int, first_seen: dict[int, float], x: str) -> Any:
    if x == "sequence":
        return sequence
    seen = first_seen.get(sequence)
    return None if seen is None else datetime.fromtimestamp(seen)


def _draw_watched(bytes_axes: Axes, events_axes: Axes, watched: Sequence[Observation], x: str) -> None:
    """The counters as watched: retained bytes and events per observation, drops where they rose."""
    xs: list[Any] = [o.sequence if x == "sequence" else datetime.fromtimestamp(o.time) for o in watched]
    for axes, name in ((bytes_axes, "retained_bytes"), (events_axes, "retained_events")):
        ys = [getattr(o, name) for o in watched]
        axes.step(xs, ys, where="post", color=RETAINED_COLOUR, label="retained, as watched")
        for counter, (label, marker, colour) in DROP_MARKS.items():
            rose = [
                (xs[i], ys[i])
                for i in range(1, len(watched))
                if getattr(watched[i], counter) > getattr(watched[i - 1], counter)
            ]
            if rose:
                axes.scatter(*zip(*rose, strict=True), marker=marker, color=colour, zorder=3, label=label)


def _draw_snapshot(
    bytes_axes: Axes, events_axes: Axes, payload: dict[str, Any], first_seen: dict[int, float], x: str
) -> None:
    """An export alone: the retained events accumulating, oversized gaps, the unknown span before them."""
    events = payload["events"]
    sequences = [e["sequence"] for e in events]
    sizes = [len(compact_json(e).encode("utf-8")) for e in events]
    last = payload["next_sequence"] - 1
    retained = set(sequences)
    first = sequences[0] if sequences else last + 1
    # After the first retained event, a missing sequence can only be an oversized event: an
    # eviction takes the oldest first and a clear takes everything, the first retained included.
    oversized = [s for s in range(first + 1, last + 1) if s not in retained]
    points = [(_position(s, first_seen, x), i, s) for i, s in enumerate(sequences)]
    points = [p for p in points if p[0] is not None]
    series = {"bytes": list(itertools.accumulate(sizes)), "events": list(range(1, len(sizes) + 1))}
    for axes, name in ((bytes_axes, "bytes"), (events_axes, "events")):
        if points:
            axes.step(
                [p[0] for p in points],
                [series[name][p[1]] for p in points],
                where="post",
                color=RETAINED_COLOUR,
                label="events retained now, accumulated",
            )
        gaps = [(_position(s, first_seen, x), _before(series[name], sequences, s)) for s in oversized]
        gaps = [g for g in gaps if g[0] is not None]
        if gaps:
            label, marker, colour = DROP_MARKS["oversized_events"]
            axes.scatter(*zip(*gaps, strict=True), marker=marker, color=colour, zorder=3, label=label)
        unknown = (_position(1, first_seen, x), _position(first - 1, first_seen, x))
        if first > 1 and None not in unknown:
            before = payload["oversized_events"] - len(oversized)
            axes.axvspan(
                unknown[0],
                unknown[1],
                color=UNKNOWN_SPAN_COLOUR,
                alpha=0.35,
                label=f"sequences 1–{first - 1}: {payload['evicted_events']} evicted, "
                f"{payload['cleared_events']} cleared, {before} oversized (which is which is not exported)",
            )


def _before(totals: list[int], sequences: list[int], sequence: int) -> int:
    """The accumulated total of the retained events before ``sequence``."""
    count = sum(1 for s in sequences if s < sequence)
    return totals[count - 1] if count else 0


def _draw_durations(axes: Axes, events: list[dict[str, Any]]) -> None:
    """Each retained event's duration, one column per action (first-seen order), coloured by outcome."""
    actions = list(dict.fromkeys(e["action"] for e in events))
    column = {action: i for i, action in enumerate(actions)}
    sizes = collections.Counter(e["action"] for e in events)
    placed: collections.Counter[str] = collections.Counter()
    xs: list[float] = []
    for event in events:  # the points of one column spread evenly around its centre, none hidden
        action, size = event["action"], sizes[event["action"]]
        xs.append(column[action] + (0.0 if size == 1 else 0.6 * placed[action] / (size - 1) - 0.3))
        placed[action] += 1
    for outcome, colour in OUTCOME_COLOURS.items():
        chosen = [i for i, e in enumerate(events) if e["outcome"] == outcome]
        if chosen:
            axes.scatter(
                [xs[i] for i in chosen],
                [events[i]["duration_ms"] for i in chosen],
                color=colour,
                label=outcome,
                alpha=0.8,
            )
    crowded = len(actions) > 5
    axes.set_xticks(
        range(len(actions)), actions, rotation=20 if crowded else 0, ha="right" if crowded else "center"
    )
    axes.set_xlim(-0.5, max(len(actions), 1) - 0.5)
    axes.set_ylim(bottom=0)
    axes.set_ylabel("duration (ms)")
    axes.set_title("duration of each retained event, by action", fontsize="medium")
    if events:
        axes.legend(title="outcome", loc="upper left", fontsize="small")
    else:
        axes.text(0.5, 0.5, "no retained events", transform=axes.transAxes, ha="center")
