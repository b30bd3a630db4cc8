"""Files an analyst's folder can hold that are not what a reader expects: each is a result (a
``TraceFormatError``, an ``unreadable`` finding, a ``fleet.problems`` row), never a hang, a raw
Python error or a traceback, and every reader gives the same file the same verdict."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import plasmate_nb as pnb
from plasmate_nb.analysis import _progress
from plasmate_nb.errors import NOT_A_REGULAR_FILE
from plasmate_nb.trace import TraceLog, compact_json

ROOT = Path(__file__).resolve().parents[2]


def _export(scrolls: int = 2) -> str:
    log = TraceLog(True)
    closed = log.closed_state()
    for pixels in range(scrolls):
        log.record("scroll", {"direction": "down", "pixels": pixels, "targeted": False}, None, closed, closed,
                   None, 3)  # fmt: skip
    return compact_json(log.export(str(uuid.uuid4())))


def _verdicts(folder: Path, name: str) -> tuple[str | None, str | None, str | None]:
    """What load_trace, pnb.audit and pnb.fleet say of ``folder / name`` (None: read as an export)."""
    try:
        pnb.load_trace(folder / name)
        loaded = None
    except pnb.TraceFormatError as error:
        loaded = error.detail
    unreadable = pnb.audit(folder / name).findings.query("rule == 'unreadable'")["message"].tolist()
    problems = pnb.fleet([folder / name], progress=False).problems["error"].tolist()
    return loaded, (unreadable or [None])[0], (problems or [None])[0]


@pytest.mark.parametrize(
    "text",
    [
        "",  # empty
        "\ufeff" + _export(),  # a byte order mark: not JSON text
        _export()[:-40],  # truncated
        _export().replace('"duration_ms":3', '"duration_ms":NaN', 1),
        _export().replace('"duration_ms":3', '"duration_ms":Infinity', 1),
        _export().replace('"direction":"down"', '"direction":"\\ud800"', 1),  # a lone surrogate escape
        "[" * 100_000 + "]" * 100_000,  # nested far beyond any export
    ],
    ids=["empty", "bom", "truncated", "nan", "infinity", "lone-surrogate", "deep"],
)
def test_text_that_is_not_strict_json_is_refused_alike_by_every_reader(tmp_path: Path, text: str) -> None:
    (tmp_path / "x.json").write_text(text, encoding="utf-8")
    loaded, audited, summarised = _verdicts(tmp_path, "x.json")
    assert loaded is not None and loaded.startswith("not valid JSON (")
    assert loaded == audited == summarised


# fleet is a summary: DuckDB reads each file once, leniently (a strict second parse would cost
# about half its time again), and its docstring sends files from an unknown writer to pnb.audit.
@pytest.mark.parametrize(
    "text",
    [
        _export()[:-1] + ',"session_id":"other"}',  # a key given twice: DuckDB reads the first
        _export().replace('"outcome":"success"', '"outcome":"success","outcome":"error"', 1),
        _export().replace('"evicted_events":0', '"evicted_events":false', 1),  # DuckDB converts it
        _export().replace('"duration_ms":3', '"duration_ms":3.5', 1),
        _export()[:-1] + ',"x":' + "[" * 100_000 + "]" * 100_000 + "}",  # nested beyond the strict reader
    ],
    ids=["duplicate-envelope-key", "duplicate-event-key", "bool-counter", "float-duration", "deep-inside"],
)
def test_what_only_a_strict_reader_refuses_fleet_counts_and_audit_finds(tmp_path: Path, text: str) -> None:
    (tmp_path / "x.json").write_text(text, encoding="utf-8")
    loaded, _, summarised = _verdicts(tmp_path, "x.json")
    assert loaded is not None and not pnb.audit(tmp_path / "x.json").ok
    assert summarised is None and pnb.fleet(tmp_path, progress=False).totals["runs"] == 1


def test_a_named_pipe_among_the_exports_is_a_problem_not_a_hang(tmp_path: Path) -> None:
    (tmp_path / "ok.json").write_text(_export())
    os.mkfifo(tmp_path / "pipe.json")  # no one ever writes it: reading it would wait forever
    loaded, audited, summarised = _verdicts(tmp_path, "pipe.json")
    assert loaded == audited == summarised == f"cannot read the file ({NOT_A_REGULAR_FILE})"
    fleet = pnb.fleet(tmp_path, progress=False)
    assert (fleet.totals["runs"], list(fleet.problems["file"])) == (1, ["pipe.json"])
    # A folder's pipe is named, not skipped: fleet lists it too.
    report = pnb.audit(tmp_path)
    assert (report.documents, report.unreadable) == (1, 1)
    with pytest.raises(pnb.TraceFormatError, match="not a regular file"):
        pnb.load_traces(tmp_path)


def test_a_pipe_a_process_writes_is_never_opened(tmp_path: Path) -> None:
    """Opening the pipe let its writer go on into a reader that closed at once: the writer died of
    SIGPIPE. The readers look before they open, so the writer still waits for its own reader."""
    os.mkfifo(tmp_path / "live.json")
    writer = subprocess.Popen(["sh", "-c", "yes | head -c 200000 > live.json"], cwd=tmp_path)
    try:
        assert pnb.audit(tmp_path).unreadable == 1
        _verdicts(tmp_path, "live.json")
        assert writer.poll() is None  # still waiting: no reader ever opened the pipe
    finally:
        # Its own reader, at last. Read-write: the open never waits, nor does a read see an end of
        # file before the writer has come (this end writes too); a writer already gone is a timeout.
        descriptor = os.open(tmp_path / "live.json", os.O_RDWR)
        drained = 0
        try:
            while drained < 200_000 and select.select([descriptor], [], [], 30)[0]:
                drained += len(os.read(descriptor, 65536))
        finally:
            os.close(descriptor)
        assert drained == 200_000 and writer.wait(timeout=30) == 0


def test_a_link_to_a_device_that_never_ends_is_refused(tmp_path: Path) -> None:
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    loaded, audited, summarised = _verdicts(tmp_path, "zero.json")
    assert loaded == audited == summarised and "not a regular file" in loaded


def test_a_folder_given_as_a_file_still_says_it_is_a_folder(tmp_path: Path) -> None:
    (tmp_path / "runs.json").mkdir()
    with pytest.raises(pnb.TraceFormatError) as caught:
        pnb.load_trace(tmp_path / "runs.json")
    assert "(Is a directory)" in str(caught.value) and "load_traces(folder)" in caught.value.hint


def test_an_unreadable_file_is_named_by_every_reader(tmp_path: Path) -> None:
    path = tmp_path / "locked.json"
    path.write_text(_export())
    path.chmod(0)
    try:
        if os.access(path, os.R_OK):
            pytest.skip("this user reads a file of mode 000 (root): permissions cannot lock it")
        loaded, audited, summarised = _verdicts(tmp_path, "locked.json")
        assert loaded == audited == summarised == "cannot read the file (Permission denied)"
    finally:
        path.chmod(0o644)


def test_a_link_loop_in_a_folder_ends(tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "a.json").write_text(_export())
    (tmp_path / "runs" / "loop").symlink_to("..")
    report = pnb.audit(tmp_path)
    assert (report.documents, report.unreadable) == (1, 0)


def test_a_sequence_of_the_wrong_type_is_a_trace_format_error_in_every_table_reader(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(_export().replace('"sequence":1', '"sequence":"one"', 1))
    with pytest.raises(pnb.TraceFormatError) as by_trace:
        pnb.load_trace(tmp_path / "a.json")
    for engine in ("pandas", "duckdb"):
        with pytest.raises(pnb.TraceFormatError) as by_table:
            pnb.load_traces(tmp_path, engine=engine)
        assert str(by_table.value) == str(by_trace.value)
    assert "$.events[0].sequence" in str(by_trace.value) and "one" not in by_trace.value.detail


def test_counters_that_contradict_the_events_are_audit_findings(tmp_path: Path) -> None:
    document = json.loads(_export(3))
    document["retained_events"], document["evicted_events"] = 2, 5
    report = pnb.audit(document)
    assert {"retained-events", "counter-invariant"} <= set(report.findings["rule"])


@pytest.mark.parametrize("read", ["audit", "fleet"])
def test_a_long_read_shows_progress_once_it_has_run_a_while_or_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, read: str
) -> None:
    for index in range(3):
        (tmp_path / f"t{index}.json").write_text(_export())
    run = getattr(pnb, read)
    monkeypatch.setattr(_progress, "PROGRESS_AFTER_S", 3600.0)  # a read that ends before it
    run(tmp_path)
    assert capsys.readouterr().err == ""
    run(tmp_path, progress=True)
    assert f"{read}: 100%" in capsys.readouterr().err
    monkeypatch.setattr(_progress, "PROGRESS_AFTER_S", 0.0)  # one that has run long enough
    run(tmp_path)
    assert "3/3" in capsys.readouterr().err
    run(tmp_path, progress=False)
    assert capsys.readouterr().err == ""


def test_an_interrupted_cli_audit_says_so_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from plasmate_nb import cli
    from plasmate_nb.analysis import audit_cli

    def interrupted(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(audit_cli, "audit", interrupted)
    assert cli.main(["audit", "traces/"]) == audit_cli.EXIT_INTERRUPTED
    assert capsys.readouterr().err == "audit interrupted: nothing was reported\n"


def test_a_cli_audit_interrupted_while_it_prints_says_so_without_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from plasmate_nb import cli
    from plasmate_nb.analysis import audit_cli

    (tmp_path / "a.json").write_text(_export())

    def interrupted(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(audit_cli, "_print", interrupted)
    assert cli.main(["audit", str(tmp_path)]) == audit_cli.EXIT_INTERRUPTED
    assert capsys.readouterr().err == "\naudit interrupted: the report above is cut short\n"


def test_the_cli_draws_no_progress_bar_where_no_one_watches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from plasmate_nb import cli

    for index in range(3):
        (tmp_path / f"t{index}.json").write_text(_export())
    monkeypatch.setattr(_progress, "PROGRESS_AFTER_S", 0.0)  # a bar would show at once
    assert cli.main(["audit", str(tmp_path)]) == 0  # stderr is captured: not a terminal
    assert "3/3" not in capsys.readouterr().err


def _cli(*args: str, **options: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "plasmate_nb", "audit", *args], text=True, cwd=ROOT, timeout=120, **options
    )  # type: ignore[call-overload]


def test_the_cli_prints_no_traceback_when_its_reader_stops_reading(tmp_path: Path) -> None:
    document = json.loads(_export())
    document["retained_events"] = 7  # a finding: there is something to print
    (tmp_path / "bad.json").write_text(json.dumps(document))
    for extra in ((), ("--json",)):
        reader, writer = os.pipe()
        os.close(reader)  # as `| head` does once it has what it wanted: every write fails
        with os.fdopen(writer, "w") as closed_pipe:
            done = _cli(str(tmp_path), *extra, stdout=closed_pipe, stderr=subprocess.PIPE)
        assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
        assert done.returncode == 1  # the verdict stands


def test_the_cli_names_a_path_holding_a_newline_on_one_line(tmp_path: Path) -> None:
    (tmp_path / "two\nlines.json").write_text("{")
    done = _cli(str(tmp_path), capture_output=True)
    assert done.returncode == 2 and "two\\x0alines.json" in done.stdout
    assert len(done.stdout.splitlines()) == 2 and "Traceback" not in done.stderr
