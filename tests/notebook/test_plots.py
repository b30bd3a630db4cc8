"""Trace plots: retained bytes and events with drops marked where they happened, durations by outcome.

Drawn with matplotlib's Agg backend; the assertions read the artists' data (marker positions,
line values, colours), checked against counters and events the test observed itself.
"""

from __future__ import annotations

import copy
import itertools
import json
import sys
from datetime import datetime
from pathlib import Path

import matplotlib
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plasmate_nb.notebook as nb
from plasmate_nb.client.base import ToolError, Transport
from plasmate_nb.notebook._sightings import KEPT_SEQUENCES, Sightings
from plasmate_nb.notebook.plots import DROP_MARKS, OUTCOME_COLOURS, TraceFigure
from plasmate_nb.trace import TraceLog
from plasmate_nb.trace.compact import compact_json

matplotlib.use("Agg")

SCRIPTED = pytest.mark.parametrize("backend", ["scripted"])  # drawing needs no browser


def _collection(axes, label: str):
    found = [c for c in axes.collections if c.get_label() == label]
    assert len(found) <= 1, label
    return found[0] if found else None


def _xs(axes, label: str) -> list[float]:
    collection = _collection(axes, label)
    return [] if collection is None else [float(x) for x, _ in collection.get_offsets()]


def _line(axes, label: str):
    (line,) = [line for line in axes.get_lines() if line.get_label() == label]
    return line


@SCRIPTED
def test_live_plot_marks_each_eviction_and_clear_at_its_sequence(
    transport: Transport, login_url: str
) -> None:
    evictions, clears, observed = [], [], []
    with nb.Session(transport) as s:
        s.open(login_url)
        status = s.trace.status()
        observed.append((status.next_sequence - 1, status.retained_bytes))
        while len(evictions) < 3:  # watched after every action, as the dashboard does
            s.scroll("down", 0)
            now = s.trace.status()
            if now.evicted_events > status.evicted_events:
                evictions.append((now.next_sequence - 1, now.retained_bytes))
            status = now
            observed.append((status.next_sequence - 1, status.retained_bytes))
        s.trace.clear()
        clears.append(status.next_sequence - 1)
        observed.append((status.next_sequence - 1, 0))
        s.scroll("down", 0)
        figure = s.trace.plot(x="sequence")
        final = s.trace.status()
        observed.append((final.next_sequence - 1, final.retained_bytes))
    assert isinstance(figure, TraceFigure) and final.evicted_events == len(evictions)
    bytes_axes, events_axes = figure.axes_by_name["bytes"], figure.axes_by_name["events"]
    for axes in (bytes_axes, events_axes):
        assert _xs(axes, "eviction") == [sequence for sequence, _ in evictions]
        assert _xs(axes, "clear") == clears
        assert _xs(axes, "oversized drop") == []
    line = _line(bytes_axes, "retained, as watched")
    assert list(zip(line.get_xdata(), line.get_ydata(), strict=True)) == observed
    eviction = _collection(bytes_axes, "eviction")
    assert [tuple(offset) for offset in eviction.get_offsets()] == evictions
    assert matplotlib.colors.to_hex(eviction.get_facecolor()[0]) == DROP_MARKS["evicted_events"][2]
    bound = [line for line in bytes_axes.get_lines() if line.get_label().startswith("bound")]
    assert bound and set(bound[0].get_ydata()) == {49_152}


@SCRIPTED
def test_live_plot_has_a_notebook_time_axis_kept_out_of_the_trace(
    transport: Transport, login_url: str
) -> None:
    started = datetime.now()
    with nb.Session(transport) as s:
        s.open(login_url)
        s.trace.status()
        s.scroll("down", 0)
        s.trace.status()
        figure = s.trace.plot()  # x="time" by default for a live session
        export = s.trace.export()
    ended = datetime.now()
    line = _line(figure.axes_by_name["events"], "retained, as watched")
    times = list(line.get_xdata())
    assert all(isinstance(t, datetime) and started <= t <= ended for t in times) and times == sorted(times)
    assert line.get_ydata().tolist() == [1, 2]
    assert "not part of the trace" in figure.axes_by_name["events"].get_xlabel()
    assert nb.load_trace(export.payload) == export  # the schema-closed export gained nothing
    assert not any(key in json.dumps(export.payload) for key in ("first_seen", "observation", "wall"))
    with pytest.raises(ValueError, match="x='sequence'"):
        from plasmate_nb.notebook.plots import plot_trace

        plot_trace(export.payload, x="time")


@SCRIPTED
def test_export_plot_from_a_file_marks_oversized_gaps_and_the_unknown_span(
    transport: Transport, login_url: str, tmp_path: Path
) -> None:
    with nb.Session(transport) as s:
        page = s.open(login_url)
        for _ in range(3):
            s.toggle(page.find(role="checkbox"))
        s.scroll("down", 0)
        s.scroll("down", 0)
        recorded = s.trace.export().payload
    # As if sequence 1 had been evicted and 3 and 5 had been too large to keep: an export has
    # only the survivors and the counters.
    payload = copy.deepcopy(recorded)
    payload["events"] = [e for e in payload["events"] if e["sequence"] not in (1, 3, 5)]
    kept = payload["events"]
    payload.update(
        retained_events=len(kept),
        retained_bytes=sum(len(compact_json(e).encode()) for e in kept),
        evicted_events=1,
        oversized_events=2,
    )
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    figure = nb.load_trace(path).plot()
    for name, totals in (("bytes", list(itertools.accumulate(len(compact_json(e).encode()) for e in kept))),
                         ("events", list(range(1, len(kept) + 1)))):  # fmt: skip
        axes = figure.axes_by_name[name]
        line = _line(axes, "events retained now, accumulated")
        assert (
            line.get_xdata().tolist() == [e["sequence"] for e in kept] and line.get_ydata().tolist() == totals
        )
        assert _xs(axes, "oversized drop") == [3, 5]  # gaps after the first retained event
        assert _xs(axes, "eviction") == [] and _xs(axes, "clear") == []
        (span,) = [p for p in axes.patches if p.get_label().startswith("sequences 1–1:")]
        assert "1 evicted, 0 cleared, 0 oversized" in span.get_label()
        assert axes.get_xlabel() == "sequence"


@SCRIPTED
def test_durations_by_action_coloured_by_outcome(transport: Transport, login_url: str) -> None:
    with nb.Session(transport) as s:
        page = s.open(login_url)
        s.type_text(page.find(label="Email"), "plotted@example.test")
        with pytest.raises(ToolError):
            s.type_text(page.find(role="button", text="Sign in"), "not a text box")
        s.scroll("down", 0)
        export = s.trace.export()
    figure = export.plot()
    axes = figure.axes_by_name["durations"]
    actions = [tick.get_text() for tick in axes.get_xticklabels()]
    assert actions == list(dict.fromkeys(export.events()["action"]))
    events = export.payload["events"]
    for outcome, colour in OUTCOME_COLOURS.items():
        collection = _collection(axes, outcome)
        chosen = [e for e in events if e["outcome"] == outcome]
        assert chosen and collection is not None
        offsets = collection.get_offsets()
        assert [round(x) for x, _ in offsets] == [actions.index(e["action"]) for e in chosen]
        assert [y for _, y in offsets] == [e["duration_ms"] for e in chosen]
        assert matplotlib.colors.to_hex(collection.get_facecolor()[0]) == colour
    assert [e["action"] for e in events if e["outcome"] == "error"] == ["type_text"]
    png = figure._repr_png_()
    assert png.startswith(b"\x89PNG") and "plotted@example.test" not in " ".join(
        t.get_text() for t in figure.findobj(matplotlib.text.Text)
    )


def _status(trace_id: str, next_sequence: int, evicted: int = 0) -> dict:
    return {
        "trace_id": trace_id, "next_sequence": next_sequence, "retained_events": next_sequence - 1 - evicted,
        "retained_bytes": 100 * (next_sequence - 1 - evicted), "evicted_events": evicted,
        "oversized_events": 0, "cleared_events": 0,
    }  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(steps=st.lists(st.tuples(st.integers(0, 40), st.booleans()), min_size=1, max_size=40))
def test_first_seen_is_the_first_look_that_covered_a_sequence(steps: list[tuple[int, bool]]) -> None:
    clock = itertools.count(1000.0)
    sightings = Sightings(clock=lambda: next(clock))
    expected: dict[int, float] = {}
    next_sequence, looks = 1, []
    for grown, twice in steps:
        next_sequence += grown
        for _ in range(2 if twice else 1):  # a repeated look changes nothing
            sightings.saw(_status("t1", next_sequence))
            looks.append(next_sequence)
            now = 1000.0 + len(looks) - 1
            for sequence in range(1, next_sequence):
                expected.setdefault(sequence, now)
    seen = sightings.of("t1")
    kept = {s: t for s, t in expected.items() if s >= next_sequence - KEPT_SEQUENCES}
    assert {s: t for s, t in seen.first_seen.items() if s in kept} == kept
    assert [o.sequence for o in seen.observations] == sorted({n - 1 for n in looks})
    assert sightings.of("another trace").first_seen == {}  # keyed by trace_id


def test_sightings_stay_bounded_over_a_long_session() -> None:
    sightings = Sightings(clock=itertools.count().__next__)
    for next_sequence in range(2, 3 * KEPT_SEQUENCES, 7):
        sightings.saw(_status("t1", next_sequence, evicted=max(0, next_sequence - 129)))
    seen = sightings.of("t1")
    assert len(seen.first_seen) <= KEPT_SEQUENCES + 7 and max(seen.first_seen) == next_sequence - 1


def test_a_missing_matplotlib_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    log = TraceLog(True)
    closed = log.closed_state()
    log.record("scroll", {"direction": "down", "pixels": 0, "targeted": False}, None, closed, closed, None, 1)
    export = nb.TraceExport(log.export("s_plot"))
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.setitem(sys.modules, name, None)  # as if it were not installed
    monkeypatch.delitem(sys.modules, "plasmate_nb.notebook.plots", raising=False)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'plasmate_nb\[lab\]'") as missing:
        export.plot()
    assert missing.value.name == "matplotlib"
