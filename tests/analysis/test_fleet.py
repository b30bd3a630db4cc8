"""pnb.fleet: its summaries equal pandas' answers, bounds pressure is counted right, Parquet round
trips through DuckDB with its partitions, load_traces' DuckDB path equals the pandas path, and
files that are not exports are reported with their name instead of stopping the run.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import plasmate_nb as pnb
from plasmate_nb.analysis.synthetic import write_synthetic_fleet
from plasmate_nb.notebook._html import cell
from plasmate_nb.trace import TraceLog, compact_json
from plasmate_nb.trace.compact import sorted_json
from tests.analysis import fleet_reference

ROOT = Path(__file__).resolve().parents[2]


def _scroll_export(scrolls: int) -> dict:
    log = TraceLog(True)
    closed = log.closed_state()
    for pixels in range(scrolls):
        log.record("scroll", {"direction": "down", "pixels": pixels, "targeted": False}, None, closed, closed,
                   None, 3)  # fmt: skip
    return log.export("s_test")


def _assert_same_summary(fleet: pnb.Fleet, files: list[Path]) -> None:
    expected = fleet_reference.summary(files)
    assert fleet.totals.to_dict() == expected["totals"]
    assert sorted(fleet.problems["file"]) == sorted(expected["problems"])
    options = {"check_dtype": False, "check_index_type": False, "check_names": False, "rtol": 1e-9}
    for name in ("by_action", "by_origin", "by_error_class", "durations"):
        pd.testing.assert_frame_equal(getattr(fleet, name), expected[name], **options, obj=name)
    assert fleet.pressure["runs"].tolist() == expected["pressure_runs"]
    assert fleet.replay["events"].tolist() == expected["replay_events"]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    exports=st.integers(0, 25),
    seed=st.integers(0, 2**16),
    mean_calls=st.floats(1, 400),
    failure_scale=st.floats(0, 6),
    close_share=st.floats(0, 1),
    omitted=st.integers(0, 2),
)
def test_fleet_summaries_equal_the_pandas_answers(
    tmp_path_factory: pytest.TempPathFactory, exports: int, seed: int, mean_calls: float,
    failure_scale: float, close_share: float, omitted: int,
) -> None:  # fmt: skip
    folder = tmp_path_factory.mktemp("fleet")
    write_synthetic_fleet(folder, exports, seed=seed, mean_calls=mean_calls, failure_scale=failure_scale,
                          close_share=close_share)  # fmt: skip
    marker = {"schema": "plasmate.trace.v1", "omitted": True, "reason": "too large"}
    for number in range(omitted):
        (folder / f"omitted-{number}.json").write_text(json.dumps({"closed": True, "final_trace": marker}))
    files = sorted(folder.glob("*.json"))
    fleet = pnb.fleet(folder, progress=False)
    _assert_same_summary(fleet, files)
    assert fleet.totals["omitted"] == omitted
    assert fleet.totals["runs"] == exports


def _many_small_events(count: int) -> dict:
    """An export with ``count`` minimal events. Real events are over 384 bytes, so the byte bound
    always binds before 128 events; the fleet reads the counters as exported (auditing their byte
    sums is ``pnb.audit``'s job), which lets this one stand for an engine with smaller events."""
    state = {"url_fingerprint": None, "origin": None, "fingerprint": "plasmate-state:v1:" + "0" * 64,
             "has_page": False}  # fmt: skip
    events = [
        {"schema": "plasmate.trace.v1", "sequence": n, "action": "scroll", "parameters": {}, "before": state,
         "after": state, "outcome": "success", "duration_ms": 1,
         "redaction": {"policy": "plasmate.trace.v1", "redacted_fields": []}}
        for n in range(1, count + 1)
    ]  # fmt: skip
    export = _scroll_export(0)
    export.update(retained_events=count, retained_bytes=30_000, next_sequence=count + 1, events=events)
    return export


def test_bounds_pressure_counts_each_bound(tmp_path: Path) -> None:
    full = _scroll_export(140)  # the byte bound binds first: some evicted, retained bytes near 48 KiB
    cleared = TraceLog(True)
    closed = cleared.closed_state()
    cleared.record("click", {}, None, closed, closed, "Element not found: e1", 1)
    cleared.clear()
    cleared.record("click", {}, None, closed, closed, None, 2)
    oversized = _scroll_export(2)  # an event counted as oversized: next_sequence moves on, nothing retained
    oversized.update(next_sequence=oversized["next_sequence"] + 1, oversized_events=1)
    documents = {"full": full, "small": _scroll_export(3), "cleared": cleared.export("s"),
                 "oversized": oversized, "many": _many_small_events(120)}  # fmt: skip
    for name, document in documents.items():
        (tmp_path / f"{name}.json").write_text(compact_json(document), encoding="utf-8")
    fleet = pnb.fleet(tmp_path, progress=False)
    assert fleet.problems.empty
    pressure = fleet.pressure["runs"].to_dict()
    assert pressure == {
        "evicted events > 0": 1, "oversized events > 0": 1, "cleared events > 0": 1,
        "retained events ≥ 90% of 128": 1, "retained bytes ≥ 90% of 49,152": 1,
    }  # fmt: skip
    assert fleet.pressure["share"].tolist() == [0.2] * 5
    runs = fleet.runs.set_index("file")
    assert runs.loc["full.json", "evicted_events"] == 140 - runs.loc["full.json", "retained_events"] > 0
    assert runs.loc["full.json", "retained_bytes"] >= 0.9 * 49_152
    assert fleet.by_error_class.empty and fleet.totals["failures"] == 0  # the failed click was cleared


def test_evictions_come_with_byte_bound_pressure_on_realistic_exports(tmp_path: Path) -> None:
    # Real events are 0.5-1.3 KB: an eviction leaves the log within one event of 48 KiB, so
    # every export that evicted (and was not cleared since) is near the byte bound, none near 128.
    write_synthetic_fleet(tmp_path, 30, seed=7, mean_calls=2000)
    fleet = pnb.fleet(tmp_path, progress=False)
    runs = fleet.runs
    evicting = runs[(runs["evicted_events"] > 0) & (runs["cleared_events"] == 0)]
    assert len(evicting) >= 20
    assert (evicting["retained_bytes"] >= 0.9 * 49_152).all() and (runs["retained_bytes"] <= 49_152).all()
    near_bytes = int(fleet.pressure.loc["retained bytes ≥ 90% of 49,152", "runs"])
    assert near_bytes == int((runs["retained_bytes"] >= 0.9 * 49_152).sum()) >= len(evicting)
    assert int(fleet.pressure.loc["retained events ≥ 90% of 128", "runs"]) == 0


def test_to_parquet_round_trips_through_duckdb_with_partitions(tmp_path: Path) -> None:
    folder = write_synthetic_fleet(tmp_path / "fleet", 20, seed=3, mean_calls=30, failure_scale=4)
    fleet = pnb.fleet(folder, progress=False)
    out = fleet.to_parquet(tmp_path / "parquet", partition_by=["outcome", "action"])
    partitions = {p.relative_to(out / "events").parts[:2] for p in (out / "events").rglob("*.parquet")}
    expected = {(f"outcome={o}", f"action={a}") for o, a in fleet.query(
        "SELECT DISTINCT outcome, action FROM events").itertuples(index=False)}  # fmt: skip
    assert partitions == expected
    back = duckdb.sql(f"SELECT * FROM read_parquet('{out}/events/**/*.parquet', hive_partitioning=true)").df()
    columns = ["trace_id", "sequence", "action", "outcome", "error_class", "duration_ms", "origin"]
    original = fleet.query(f"SELECT {', '.join(columns)} FROM events").sort_values(["trace_id", "sequence"])
    again = back[columns].sort_values(["trace_id", "sequence"])
    pd.testing.assert_frame_equal(
        again.reset_index(drop=True), original.reset_index(drop=True), check_dtype=False
    )
    runs = duckdb.sql(f"SELECT * FROM read_parquet('{out}/runs.parquet')").df()
    # fleet.runs is a ReadableFrame (a DataFrame that displays whole): the values are what must agree.
    pd.testing.assert_frame_equal(runs, fleet.runs, check_dtype=False, check_frame_type=False)
    with pytest.raises(ValueError, match="cannot partition by"):
        fleet.to_parquet(tmp_path / "other", partition_by="url")
    with pytest.raises(FileExistsError, match="already holds a fleet dataset"):
        fleet.to_parquet(out, partition_by="action")  # old partitions would mix with the new ones
    flat = fleet.to_parquet(tmp_path / "flat")
    assert [p.name for p in (flat / "events").iterdir()] == ["events.parquet"]
    assert duckdb.sql(f"SELECT count(*) FROM '{flat}/events/events.parquet'").fetchall() == [(len(original),)]


def test_load_traces_duckdb_path_equals_the_pandas_path(tmp_path: Path) -> None:
    write_synthetic_fleet(tmp_path, 25, seed=11, mean_calls=40, failure_scale=3, close_share=0.5)
    empty = _scroll_export(0)
    (tmp_path / "empty.json").write_text(compact_json(empty), encoding="utf-8")
    pretty = sorted_json({"closed": True, "final_trace": _scroll_export(2), "session_id": "s_test"})
    (tmp_path / "pretty.json").write_text(json.dumps(pretty, indent=2), encoding="utf-8")
    # Exports as json.dumps writes them (spaced; indented): read like the compact ones.
    (tmp_path / "spaced.json").write_text(json.dumps(_scroll_export(3)), encoding="utf-8")
    (tmp_path / "indented.json").write_text(json.dumps(_scroll_export(4), indent=1), encoding="utf-8")
    # A value DuckDB reads but the contract's types do not allow: it takes the pandas path.
    odd = _scroll_export(1)
    odd["events"][0]["parameters"]["pixels"] = 2**63 - 1
    (tmp_path / "wide-pixels.json").write_text(compact_json(odd), encoding="utf-8")
    by_pandas = pnb.load_traces(tmp_path, engine="pandas")
    by_duckdb = pnb.load_traces(tmp_path, engine="duckdb")
    pd.testing.assert_frame_equal(by_duckdb, by_pandas)
    assert len(by_duckdb) > 100


def test_load_traces_duckdb_path_raises_the_pandas_error_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(compact_json(_scroll_export(2)), encoding="utf-8")
    broken = _scroll_export(3)
    broken["retained_events"] = 2
    (tmp_path / "b.json").write_text(compact_json(broken), encoding="utf-8")
    with pytest.raises(pnb.TraceFormatError) as by_pandas:
        pnb.load_traces(tmp_path, engine="pandas")
    with pytest.raises(pnb.TraceFormatError) as by_duckdb:
        pnb.load_traces(tmp_path, engine="duckdb")
    assert str(by_duckdb.value) == str(by_pandas.value) and "b.json" in str(by_duckdb.value)


def test_malformed_files_are_reported_with_their_names(tmp_path: Path) -> None:
    write_synthetic_fleet(tmp_path, 3, seed=5, mean_calls=10)
    bad = {
        "truncated.json": '{"schema":"plasmate.trace.v1","trace_id":',
        "array.json": "[1, 2, 3]",
        "latin1.json": b'{"note": "caf\xe9"}',
        "counters.json": compact_json({**_scroll_export(2), "next_sequence": 9}),
        "sequence.json": compact_json(_reordered(_scroll_export(3))),
        "action.json": compact_json(_renamed_action(_scroll_export(1))),
    }
    for name, content in bad.items():
        path = tmp_path / name
        path.write_bytes(content) if isinstance(content, bytes) else path.write_text(
            content, encoding="utf-8"
        )
    fleet = pnb.fleet(tmp_path, progress=False)
    problems = fleet.problems.set_index("file")["error"]
    assert sorted(problems.index) == sorted(bad)
    assert (
        problems["truncated.json"].startswith("not valid JSON (")
        and problems["latin1.json"] == "not UTF-8 text (byte 13)"
    )
    assert problems["array.json"] == "an array of 3 items is not of type 'object'"
    assert problems["counters.json"].startswith("at $.next_sequence: next_sequence - 1 must equal")
    assert problems["sequence.json"].startswith("at $.events[") and "sequence" in problems["sequence.json"]
    # The file column names the file; the error says what and, inside the document, where (as
    # load_trace's message does after the file's name), without repeating the file.
    assert not any(name in problems[name] for name in bad)
    for name in bad:
        with pytest.raises(pnb.TraceFormatError) as caught:
            pnb.load_trace(tmp_path / name)
        assert str(caught.value).endswith(f": {problems[name]}")
    assert fleet.totals["runs"] == 3 and fleet.totals["problems"] == len(bad)
    html = fleet._repr_html_()
    assert "Problem files" in html and "6 problem files" in html


def test_runs_and_problems_show_each_file_name_and_reason_whole_in_a_notebook(tmp_path: Path) -> None:
    """A harness names its exports after the run (here 62 characters) and a reason is a sentence:
    pandas cut both at 50 characters (``display.max_colwidth``). Global pandas options stay."""
    name = "agent-run-2026-12-07T09-38-50Z-checkout-flow-attempt-0001.json"
    (tmp_path / name).write_text(compact_json(_scroll_export(2)), encoding="utf-8")
    (tmp_path / "counters.json").write_text(compact_json({**_scroll_export(2), "next_sequence": 9}))
    (tmp_path / "truncated.json").write_text('{"schema":"plasmate.trace.v1","trace_id":')
    fleet = pnb.fleet(tmp_path, progress=False)
    reasons = list(fleet.problems["error"])
    assert len(name) > 50 and len(reasons) == 2 and all(len(reason) > 50 for reason in reasons)
    for table, texts in ((fleet.runs, [name]), (fleet.problems, reasons)):
        html, text = table._repr_html_(), repr(table)
        assert re.findall(r"<th style=[^>]*>(.*?)</th>", html.replace("<wbr>", "")) == list(table.columns)
        for whole in texts:
            assert cell(whole) in html and whole in text
        assert type(table[table.index >= 0]) is pd.DataFrame  # computing gives plain pandas
    assert pd.get_option("display.max_colwidth") == 50
    assert type(fleet.runs.set_index("file")) is pd.DataFrame and fleet.runs.loc[0, "file"] == name
    clean = pnb.fleet([tmp_path / name], progress=False).problems
    assert clean.empty and list(clean.columns) == ["file", "error"] and "0 rows" in clean._repr_html_()


def _reordered(export: dict) -> dict:
    export["events"][0], export["events"][1] = export["events"][1], export["events"][0]
    return export


def _renamed_action(export: dict) -> dict:
    export["events"][0]["action"] = "teleport"
    return export


def test_fleet_views_and_plots(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    write_synthetic_fleet(tmp_path, 15, seed=9, mean_calls=50, failure_scale=3)
    fleet = pnb.fleet(tmp_path, progress=False)
    html = fleet._repr_html_()
    assert "Bounds pressure" in html and "By action" in html and "replay candidates" in html
    assert "/checkout/pay" not in html and "?q=" not in html  # origins only, never paths or queries
    assert repr(fleet).startswith("Fleet(runs=15")
    # Each table is one header row (its index a column), shares as percentages, flags as words.
    assert 'class="dataframe"' not in html and html.count("<thead><tr>") == 5
    rate = fleet.by_action["failure_rate"].iloc[0]
    assert f">{rate:.1%}</td>" in html and (">yes</td>" in html or ">no</td>" in html)
    assert "15 runs · " in html and "0 problem files" in html
    for kind in ("overview", "actions", "origins", "errors", "durations", "pressure"):
        figure = fleet.plot(kind)
        assert figure.axes, kind
    with pytest.raises(ValueError, match="unknown plot"):
        fleet.plot("pie")
    assert 0.0 < fleet.replay_share < 1.0
    assert fleet.failures.to_numpy().sum() == fleet.totals["failures"]


def test_plots_say_how_to_install_matplotlib_when_it_is_missing(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(compact_json(_scroll_export(2)), encoding="utf-8")
    code = (
        "import sys; sys.modules['matplotlib'] = None\n"
        "import plasmate_nb as pnb\n"
        f"fleet = pnb.fleet({str(tmp_path)!r}, progress=False)\n"
        "try:\n    fleet.plot()\nexcept ImportError as error:\n    print(error)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert "pip install 'plasmate_nb[lab]'" in done.stdout


def test_bench_fleet_runs_on_a_tiny_fleet(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_fleet.py"), "--exports", "200", "--data",
         str(tmp_path / "data"), "--dry"],
        capture_output=True, text=True, timeout=300, cwd=ROOT, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (row,) = json.loads(done.stdout)["rows"]
    assert row["exports"] == 200 and row["same_answers"] is True and row["speedup_x"] > 0


def test_pnb_fleet_is_the_function_even_after_its_module_is_imported() -> None:
    import plasmate_nb.analysis.fleet_summary as module  # the module's name differs from the function's

    assert pnb.fleet is module.fleet and pnb.analysis.fleet is module.fleet and callable(pnb.fleet)
