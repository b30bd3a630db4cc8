"""Matplotlib figures of a ``Fleet`` (imported only when a plot is drawn).

Drawn on a ``Figure`` object, never through pyplot's global state, so plotting in a script or
a kernel leaves no figure open behind the caller's back; the figure shows itself as a PNG.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

from matplotlib.figure import Figure

if TYPE_CHECKING:
    from matplotlib.axes import Axes

#: A ``Fleet`` (typed loosely: fleet_summary.py imports this module, not the other way round).
Fleet = Any


class FleetFigure(Figure):
    """A matplotlib ``Figure`` of a fleet that shows itself as a PNG in any notebook front end.

    >>> figure = fleet.plot()
    >>> figure.savefig("fleet.png")
    """

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", dpi=96)
        return buffer.getvalue()


def _literal(labels: Any) -> list[str]:
    """Labels from the exports as matplotlib draws them literally: a ``$`` pair would start its
    math markup (and a crafted origin holding ``$\\foo{$`` stopped the figure from drawing)."""
    return [str(label).replace("$", r"\$") for label in labels]


def _actions(fleet: Fleet, ax: Axes) -> None:
    table = fleet.by_action.sort_values("events")
    ok = table["events"] - table["failures"]
    ax.barh(_literal(table.index), ok, label="success", color="#4c78a8")
    ax.barh(_literal(table.index), table["failures"], left=ok, label="error", color="#e45756")
    ax.set_title("events by action")
    ax.set_xlabel("events")
    ax.legend(loc="lower right")


def _origins(fleet: Fleet, ax: Axes) -> None:
    table = fleet.by_origin.head(12).sort_values("events")
    ax.barh(_literal(table.index), table["runs"], color="#72b7b2")
    ax.set_title("runs by origin (top 12)")
    ax.set_xlabel("runs")


def _errors(fleet: Fleet, ax: Axes) -> None:
    table = fleet.failures
    if table.empty:
        ax.text(0.5, 0.5, "no failures", ha="center", va="center")
        ax.set_axis_off()
        return
    left, labels = None, _literal(table.index)
    for error_class in table.columns:
        values = table[error_class]
        ax.barh(labels, values, left=left, label=_literal([error_class])[0])
        left = values if left is None else left + values
    ax.set_title("failures by action and error class")
    ax.set_xlabel("failed events")
    ax.legend(loc="lower right", fontsize="small")


def _durations(fleet: Fleet, ax: Axes) -> None:
    table = fleet.durations.sort_values("p50")
    labels = _literal(table.index)
    ax.barh(labels, table["p99"], color="#bab0ac", label="p99")
    ax.barh(labels, table["p90"], color="#9d755d", label="p90")
    ax.barh(labels, table["p50"], color="#4c78a8", label="p50")
    ax.set_xscale("log")
    ax.set_title("duration by action (ms)")
    ax.legend(loc="lower right")


def _pressure(fleet: Fleet, ax: Axes) -> None:
    table = fleet.pressure
    ax.barh(_literal(table.index[::-1]), table["share"][::-1] * 100, color="#f58518")
    ax.set_xlim(0, 100)
    ax.set_title("bounds pressure (% of runs)")
    ax.set_xlabel("% of runs")


_PANELS = {"actions": _actions, "origins": _origins, "errors": _errors, "durations": _durations,
           "pressure": _pressure}  # fmt: skip


def plot_fleet(fleet: Fleet, kind: str) -> FleetFigure:
    """The ``kind`` figure of ``fleet``: one panel, or the four-panel overview."""
    if kind == "overview":
        figure = FleetFigure(figsize=(13, 8), layout="constrained")
        for ax, name in zip(
            figure.subplots(2, 2).flat, ("actions", "errors", "durations", "pressure"), strict=True
        ):
            _PANELS[name](fleet, ax)
        figure.suptitle(f"{fleet.totals['runs']:,} runs · {fleet.totals['events']:,} events")
        return figure
    figure = FleetFigure(figsize=(8, 4.5), layout="constrained")
    _PANELS[kind](fleet, figure.subplots())
    return figure
