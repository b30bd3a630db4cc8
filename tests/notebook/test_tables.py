"""Events tables, export files and the trace JSON Schema (load_trace / load_traces)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pandas as pd
import pytest

import plasmate_nb.notebook as nb
from plasmate_nb import errors
from plasmate_nb.analysis import audit, compare
from plasmate_nb.client.base import Transport
from plasmate_nb.notebook._tables import COMPACT_COLUMNS

TYPED = {
    "sequence": "Int64", "action": "string", "outcome": "string", "error_class": "string",
    "duration_ms": "Int64", "target_role": "string", "target_id": "string", "before_origin": "string",
    "after_origin": "string", "before_has_page": "boolean", "after_has_page": "boolean",
    "state_changed": "boolean", "url_changed": "boolean", "redacted_fields": "string",
    "redacted_bytes": "Int64", "append": "boolean", "direction": "string", "pixels": "Int64",
    "targeted": "boolean", "cookie_count": "Int64", "filter_present": "boolean",
}  # fmt: skip


@pytest.fixture
def export(transport: Transport, login_url: str) -> nb.TraceExport:
    with nb.Session(transport) as s:
        page = s.open(login_url)
        s.type_text(page.find(label="Email"), "ünïcode@example.com")
        s.select_option(page.find(label="Plan"), "team")
        s.scroll("up", 50)
        s.click(page.find(role="link", text="Welcome"))
        s.clear_cookies()
        return s.trace.export()


def test_events_table_is_typed_and_flat(export: nb.TraceExport, site_url: str) -> None:
    events = export.events(columns="all")
    assert {name: str(dtype) for name, dtype in events.dtypes.items()} == TYPED
    assert events["sequence"].tolist() == [1, 2, 3, 4, 5, 6]
    typed = events.iloc[1]
    assert typed["redacted_fields"] == "text" and typed["redacted_bytes"] == len(
        "ünïcode@example.com".encode()
    )
    assert typed["state_changed"] and not typed["url_changed"] and typed["target_role"] == "text_input"
    assert typed["target_id"].startswith("plasmate-trace-id:v1:")
    assert events.iloc[2]["redacted_fields"] == "value" and events.iloc[2]["redacted_bytes"] == 4
    scroll = events.iloc[3]
    assert (scroll["direction"], scroll["pixels"], scroll["targeted"], scroll["state_changed"]) == (
        "up",
        50,
        False,
        False,
    )
    assert events.iloc[4]["url_changed"] and not events.iloc[5]["filter_present"]
    opened = events.iloc[0]
    assert pd.isna(opened["before_origin"]) and opened["after_origin"] == site_url
    assert not opened["before_has_page"] and opened["after_has_page"]


def test_empty_events_table_keeps_columns(transport: Transport, login_url: str) -> None:
    with nb.Session(transport) as s:
        s.open(login_url, trace=False)
        events = s.trace.events(columns="all")
    assert events.empty and {name: str(dtype) for name, dtype in events.dtypes.items()} == TYPED


def test_to_json_load_trace_round_trip(export: nb.TraceExport, tmp_path: Path) -> None:
    path = export.to_json(tmp_path / "trace.json")
    loaded = nb.load_trace(path)
    assert loaded.payload == export.payload and loaded == export
    assert nb.load_trace(str(path)) == export
    assert nb.load_trace(path.read_text()) == export
    assert nb.load_trace(copy.deepcopy(export.payload)) == export
    close_payload = {"closed": True, "session_id": export.session_id, "final_trace": export.payload}
    assert nb.load_trace(close_payload) == export
    pd.testing.assert_frame_equal(loaded.events(), export.events())


def test_to_parquet(export: nb.TraceExport, tmp_path: Path) -> None:
    path = export.to_parquet(tmp_path / "events.parquet")
    table = pd.read_parquet(path)
    assert table["trace_id"].unique().tolist() == [export.trace_id]
    assert table["sequence"].tolist() == export.events()["sequence"].tolist()


def test_schema_is_draft_2020_12_with_patterns() -> None:
    schema = nb.schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$defs"]["url_fingerprint"]["pattern"] == "^plasmate-url:v1:[0-9a-f]{64}$"
    assert "close_page" in schema["$defs"]["event"]["properties"]["action"]["enum"]


def _broken(payload: dict, mutate) -> dict:
    document = copy.deepcopy(payload)
    mutate(document)
    return document


@pytest.mark.parametrize(
    ("mutate", "path", "words"),
    [
        (lambda d: d["events"][0].pop("outcome"), "$.events[0]", "the required field 'outcome' is missing"),
        (lambda d: d["events"][1]["before"].update(fingerprint="plasmate-state:v1:xyz"), "$.events[1].before.fingerprint", "does not match"),
        (lambda d: d["events"][2].update(action="teleport"), "$.events[2].action", "is not one of"),
        (lambda d: d["events"][1]["parameters"].update(text="leaked"), "$.events[1].parameters", "Additional properties"),
        (lambda d: d["events"][3].update(outcome="error"), "$.events[3]", "the required field 'error_class' is missing"),
        (lambda d: d.update(extra=1), "$", "Additional properties"),
        (lambda d: d.update(retained_events="6"), "$.retained_events", "is not of type 'integer'"),
        (lambda d: d.update(retained_events=5), "$.retained_events", "events has 6"),
        (lambda d: d.update(next_sequence=99), "$.next_sequence", "next_sequence - 1 must equal"),
    ],
)  # fmt: skip
def test_load_trace_rejects_malformed_documents_naming_the_path(export, mutate, path, words) -> None:
    with pytest.raises(nb.TraceFormatError) as caught:
        nb.load_trace(_broken(export.payload, mutate))
    error = caught.value
    assert error.path == path and words in str(error)
    # The path is shown where it says where in the document: not for the document as a whole.
    assert f"at {path}: " in str(error) if path != "$" else "$" not in str(error)
    assert error.hint == errors.TRACE_EXPORT_HINT


@pytest.mark.parametrize(
    "leak",
    [
        lambda d: d.update(retained_events="https://bank.test/acct?token=SECRET"),  # wrong type
        lambda d: d["events"][1]["before"].update(fingerprint="https://bank.test/?SECRET"),  # pattern
        lambda d: d["events"][2].update(action="SECRET"),  # enum
        lambda d: d.update(events={"note": "SECRET"}),  # an object where an array belongs
        lambda d: d.update(retained_events=4111111111111111),  # a card number where a count belongs
    ],
)
def test_load_trace_names_the_broken_value_without_quoting_it(export, leak) -> None:
    with pytest.raises(nb.TraceFormatError) as caught:
        nb.load_trace(_broken(export.payload, leak))
    assert "SECRET" not in str(caught.value) and "4111111111111111" not in str(caught.value)
    assert caught.value.path in str(caught.value)


def test_load_trace_rejects_non_json_and_missing_files(tmp_path: Path) -> None:
    with pytest.raises(nb.TraceFormatError, match=r"in JSON text: not valid JSON \("):
        nb.load_trace("{not json")
    with pytest.raises(nb.TraceFormatError, match=r"^cannot read the file .*absent\.json \(No such file"):
        nb.load_trace(tmp_path / "absent.json")
    with pytest.raises(
        nb.TraceFormatError, match=r"in JSON text: an array of 2 items is not of type 'object'\n"
    ):
        nb.load_trace("[1, 2]")


def test_load_trace_says_what_it_reads_when_given_something_else() -> None:
    """A list of paths (or anything else) used to fail inside pathlib: "expected str, bytes or
    os.PathLike object, not list"."""
    with pytest.raises(
        TypeError,
        match=r"^load_trace reads one export: .* not `list` \(for several exports, use pnb.load_traces\)$",
    ):
        nb.load_trace(["a.json", "b.json"])
    with pytest.raises(TypeError, match=r"not `int`$"):
        nb.load_trace(5)
    with pytest.raises(TypeError, match=r"^load_traces reads exports: .* not `list` among them$"):
        nb.load_traces([["a.json"]])


@pytest.mark.parametrize("backend", ["scripted"])  # a reader of files: one backend makes them
def test_load_trace_names_an_unknown_key_by_its_size_only(export) -> None:
    document = copy.deepcopy(export.payload)
    document["events"][0]["parameters"]["password=SECRET"] = True
    with pytest.raises(nb.TraceFormatError) as caught:
        nb.load_trace(document)
    assert str(caught.value).endswith("Additional properties are not allowed (a key of 15 bytes unexpected)")
    assert caught.value.__context__ is None and caught.value.__cause__ is None  # no chained quote of it


def _first_key_twice(text: str, key: str, hidden: str) -> str:
    return text.replace(f'"{key}":', f'"{key}":{hidden},"{key}":', 1)


@pytest.mark.parametrize("backend", ["scripted"])  # a reader of files: one backend makes them
@pytest.mark.parametrize(
    ("edit", "why"),
    [
        # serde_json, the reference's reader, refuses a field given twice: a value hidden in the
        # first copy would be seen by one reader (DuckDB keeps the first) and not another.
        (
            lambda t: _first_key_twice(t, "parameters", '{"text":"hunter2"}'),
            "a key appears twice in one object",
        ),
        (lambda t: t.replace('"role":"', '"role":"\\ud800', 1), "a lone surrogate escape"),
        (lambda t: "[" * 100_000 + "]" * 100_000, "nested too deeply to read"),
    ],
)
def test_every_reader_refuses_json_python_would_read_loosely(export, tmp_path: Path, edit, why) -> None:
    path = tmp_path / "loose.json"
    path.write_text(edit(json.dumps(export.payload, separators=(",", ":"))))
    for read in (nb.load_trace, lambda p: nb.load_traces([p]), lambda p: compare(p, p)):
        with pytest.raises(nb.TraceFormatError, match=re.escape(f"{path}: not valid JSON ({why}")):
            read(path)
    report = audit(path)
    assert (report.documents, report.unreadable) == (0, 1)
    assert report.findings["message"].iloc[0].startswith(f"not valid JSON ({why}")


def _first(document: dict, where) -> dict:
    return next(event for event in document["events"] if where(event))


FAST_PATH_BREAKS = {  # each breaks the schema where the fast path's columns do not look
    "an event key holding a URL": lambda d: d["events"][0].update(note="https://bank.test/acct?x=1"),
    "typed text in parameters": lambda d: _first(d, lambda e: e["action"] == "type_text")[
        "parameters"
    ].update(text="hunter2"),
    "a negative duration": lambda d: d["events"][0].update(duration_ms=-5),
    "a boolean duration": lambda d: d["events"][0].update(duration_ms=True),
    "a duration no table holds": lambda d: d["events"][0].update(duration_ms=2**70),
    "an origin with a path": lambda d: d["events"][1]["before"].update(
        origin="https://bank.test:443/reset?t=1"
    ),
    "an error without its class": lambda d: _first(d, lambda e: e["outcome"] == "success").update(
        outcome="error"
    ),
    "a class on a success": lambda d: _first(d, lambda e: e["outcome"] == "success").update(
        error_class="policy"
    ),
    "a null class on a success": lambda d: _first(d, lambda e: e["outcome"] == "success").update(
        error_class=None
    ),
    "pixels no table holds": lambda d: _first(d, lambda e: e["action"] == "scroll")["parameters"].update(
        pixels=2**64
    ),
    "an event of another schema": lambda d: d["events"][0].update(schema="plasmate.trace.v2"),
    "a state key more": lambda d: d["events"][0]["after"].update(url="https://bank.test/"),
}


@pytest.mark.parametrize("backend", ["scripted"])  # a reader of files: one backend makes them
@pytest.mark.parametrize("name", FAST_PATH_BREAKS)
def test_fast_validation_refuses_what_a_table_would_show_wrongly(export, tmp_path: Path, name: str) -> None:
    document = copy.deepcopy(export.payload)
    FAST_PATH_BREAKS[name](document)
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(document))
    with pytest.raises(nb.TraceFormatError, match=re.escape(str(path))) as caught:
        nb.load_traces([path])
    assert "bank.test" not in str(caught.value) and "hunter2" not in str(caught.value)


@pytest.mark.parametrize("backend", ["scripted"])  # a reader of files: one backend makes them
def test_a_surrogate_pair_escape_is_one_character(export) -> None:
    text = json.dumps(export.payload, separators=(",", ":")).replace('"role":"', '"role":"\\ud83d\\ude00', 1)
    roles = [
        event["target"]["role"] for event in nb.load_trace(text).payload["events"] if event.get("target")
    ]
    assert roles[0].startswith("\U0001f600")


def test_json_text_holding_a_raw_lone_surrogate_is_refused(export) -> None:
    text = json.dumps(export.payload, ensure_ascii=False).replace('"role": "', '"role": "\ud800', 1)
    with pytest.raises(nb.TraceFormatError, match=r"JSON text: not valid JSON \(a lone surrogate"):
        nb.load_trace(text)


@pytest.mark.parametrize("backend", ["scripted"])  # a reader of files: one backend makes them
def test_schema_valid_values_the_fast_path_takes_too(export, tmp_path: Path) -> None:
    """A JSON integer may be written 3.0; the fast path reads what the schema does."""
    document = copy.deepcopy(export.payload)
    document["events"][0]["duration_ms"] = 3.0
    path = tmp_path / "float.json"
    path.write_text(json.dumps(document))
    nb.load_trace(path)
    assert nb.load_traces([path])["duration_ms"].iloc[0] == 3


def test_a_file_that_is_not_utf8_names_itself(tmp_path: Path) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes('{"schema": "plasmate.trace.v1", "x": "caf\xe9"}'.encode("latin-1"))
    with pytest.raises(nb.TraceFormatError, match=re.escape(f"{path}: not UTF-8 text (byte 41)")):
        nb.load_trace(path)


@pytest.mark.parametrize("backend", ["scripted"])  # a reader of files: one backend makes them
def test_an_export_carrying_a_close_answers_keys_is_not_read_as_its_final_trace(
    export, tmp_path: Path
) -> None:
    smuggled = {**export.payload, "closed": True, "final_trace": {**export.payload, "trace_id": "other"}}
    with pytest.raises(nb.TraceFormatError, match=r"Additional properties are not allowed"):
        nb.load_trace(smuggled)
    answer = {"closed": True, "session_id": export.payload["session_id"], "final_trace": export.payload}
    assert nb.load_trace(answer).payload == export.payload  # a real close_page answer still reads


@pytest.mark.parametrize("backend", ["scripted"])  # a reader of files: one backend makes them
def test_to_json_never_empties_a_file_it_cannot_write(export, tmp_path: Path) -> None:
    path = export.to_json(tmp_path / "trace.json")
    written = path.read_bytes()
    broken = nb.TraceExport({**export.payload, "session_id": "\ud800"})
    with pytest.raises(UnicodeEncodeError):
        broken.to_json(path)
    assert path.read_bytes() == written


def test_load_trace_accepts_the_omitted_marker() -> None:
    marker = {
        "schema": "plasmate.trace.v1",
        "omitted": True,
        "reason": "bounded final trace export exceeded the MCP response ceiling",
    }
    assert isinstance(nb.load_trace(json.dumps(marker)), nb.FinalTraceOmitted)


def test_load_traces_across_files(
    export: nb.TraceExport, tmp_path: Path, transport: Transport, login_url: str
) -> None:
    with nb.Session(transport) as s:
        s.open(login_url)
        other = s.trace.export()
    export.to_json(tmp_path / "a.json")
    other.to_json(tmp_path / "b.json")
    (tmp_path / "notes.txt").write_text("ignored")
    table = nb.load_traces(tmp_path)
    assert list(table.columns) == ["trace_id", "source_file", *TYPED]
    assert str(table["trace_id"].dtype) == "string" and str(table["sequence"].dtype) == "Int64"
    assert table.groupby("trace_id").size().to_dict() == {export.trace_id: 6, other.trace_id: 1}
    assert table.groupby("source_file").size().to_dict() == {
        str(tmp_path / "a.json"): 6,
        str(tmp_path / "b.json"): 1,
    }
    full = nb.load_traces([tmp_path / "a.json", other.payload], validate="full")
    pd.testing.assert_frame_equal(full.drop(columns="source_file"), table.drop(columns="source_file"))
    assert full["source_file"].tolist() == [str(tmp_path / "a.json")] * 6 + [pd.NA]
    from_text = nb.load_traces([json.dumps(other.payload)])
    assert from_text["source_file"].isna().all()


@pytest.mark.parametrize("validate", ["fast", "full"])
def test_load_traces_rejects_malformed_event_with_source_and_path(
    export, tmp_path: Path, validate: str
) -> None:
    export.to_json(tmp_path / "good.json")
    bad = _broken(export.payload, lambda d: d["events"][2]["before"].pop("origin"))
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(nb.TraceFormatError) as caught:
        nb.load_traces(tmp_path, validate=validate)
    assert "bad.json" in str(caught.value) and caught.value.path == "$.events[2].before"


def test_load_traces_fast_path_names_envelope_paths_and_skips_omitted(export: nb.TraceExport) -> None:
    bad = _broken(export.payload, lambda d: d.update(retained_bytes=-1))
    with pytest.raises(nb.TraceFormatError) as caught:
        nb.load_traces([export.payload, bad])
    assert caught.value.path == "$.retained_bytes"
    marker = {"schema": "plasmate.trace.v1", "omitted": True, "reason": "too big"}
    assert len(nb.load_traces([marker, export.payload])) == export.retained_events


# -- readable by default: compact columns, whole sentences -----------------------------------------


def test_events_default_is_compact_and_columns_all_gives_every_column(export: nb.TraceExport) -> None:
    everything = export.events(columns="all")
    compact = export.events()
    assert list(compact.columns) == list(COMPACT_COLUMNS) and set(COMPACT_COLUMNS) < set(everything.columns)
    pd.testing.assert_frame_equal(pd.DataFrame(compact), pd.DataFrame(everything[list(COMPACT_COLUMNS)]))
    picked = export.events(["sequence", "direction", "pixels"])
    assert list(picked.columns) == ["sequence", "direction", "pixels"]
    assert picked["pixels"].dropna().tolist() == [50]
    with pytest.raises(ValueError, match=r"unknown event column.*'colour'.*'compact', 'all'"):
        export.events(["sequence", "colour"])


def _cells(html: str) -> list[str]:
    """The text of every <td> of ``html`` (tags stripped)."""
    return [re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", html)]


@pytest.mark.parametrize("backend", ["scripted"])
def test_html_tables_show_every_column_and_whole_left_aligned_sentences(
    transport: Transport, login_url: str
) -> None:
    with nb.Session(transport) as s:
        page = s.open(login_url)
        s.toggle(page.find(role="checkbox"))
        s.scroll("down", 0)
        plans = s.replay_validate_all(progress=False)
        events = s.trace.events(columns="all")
        export_html = s.trace.export()._repr_html_()
    assert isinstance(plans, pd.DataFrame) and isinstance(events, pd.DataFrame)
    html = plans._repr_html_()
    longest = max(plans["summary"], key=len)
    assert len(longest) > pd.get_option("display.max_colwidth")  # pandas itself would cut it
    assert longest in _cells(html) and "…" not in html and "..." not in html
    summary_cells = re.findall(r"<td style='([^']*)'>(?:Refused|Could be)", html)
    assert len(summary_cells) == len(plans) and all("text-align:left" in style for style in summary_cells)
    assert re.search(r"<td style='text-align:right[^']*'>3</td>", html)  # numbers stay right-aligned
    headers = re.findall(r"<th style=[^>]*>(.*?)</th>", events._repr_html_())
    # 21 columns: more than pandas' notebook default of 20 shows; each name may wrap after an underscore.
    assert [h.replace("<wbr>", "") for h in headers] == list(TYPED)
    assert "state_<wbr>changed" in headers and all("_" not in h.replace("_<wbr>", "") for h in headers)
    assert all(name in repr(events) for name in TYPED)  # the text repr hides no column either
    assert "…" not in export_html and all(
        f">{name}</th>" in export_html.replace("<wbr>", "") for name in COMPACT_COLUMNS
    )
    assert type(plans[plans["status"] == "refused"]) is pd.DataFrame  # computations give plain frames


def test_readable_frames_in_a_terminal_left_align_text_and_leave_missing_values_blank() -> None:
    from plasmate_nb.notebook._tables import ReadableFrame

    table = ReadableFrame(
        {"action": ["open_page", "click"], "n": [1, 22], "message": [None, "a whole sentence"]}
    )
    lines = repr(table).splitlines()
    assert lines[1].split()[1] == "open_page" and lines[2].index("click") == lines[1].index("open_page")
    assert lines[2].index("a whole sentence") == lines[0].index(
        "message"
    )  # under its header, not pushed right
    assert "NaN" not in repr(table) and "None" not in repr(table)
    long = ReadableFrame({"word": [f"w{i}" for i in range(500)]})
    assert "[500 rows x 1 columns]" in repr(long) and len(repr(long).splitlines()) < 30


def test_a_long_readable_frame_shows_its_head_and_tail_and_reads_only_those_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fleet's ``runs`` holds a row per export (100,000 in the benchmark): the notebook view
    reads the ten rows it shows, not every row (0.5 s for 100,000, then cut to ten)."""
    from plasmate_nb.notebook._tables import ReadableFrame

    table = ReadableFrame({"n": range(100_000), "word": [f"w{i}" for i in range(100_000)]})
    read = 0
    isna = pd.isna

    def counting(value: object) -> object:
        nonlocal read
        read += 1
        return isna(value)

    monkeypatch.setattr(pd, "isna", counting)
    html = table._repr_html_()
    monkeypatch.undo()
    min_rows = pd.get_option("display.min_rows")
    assert read == min_rows * len(table.columns)  # the head and the tail, each cell once
    cells = re.findall(r"<td[^>]*>(.*?)</td>", html)
    assert cells[:2] == ["0", "w0"] and cells[-2:] == ["99999", "w99999"]
    assert f"⋮ {100_000 - min_rows} rows not shown" in html
    assert "100,000 rows × 2 columns" in html


@pytest.mark.parametrize("backend", ["scripted"])  # a reader of files: one backend makes them
@pytest.mark.parametrize(
    "name", ["a negative duration", "an error without its class", "a class on a success"]
)
def test_duckdb_refuses_what_its_checks_cover(export, tmp_path: Path, name: str) -> None:
    document = copy.deepcopy(export.payload)
    FAST_PATH_BREAKS[name](document)
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(document, separators=(",", ":")))
    with pytest.raises(nb.TraceFormatError, match=re.escape(str(path))):
        nb.load_traces([path], engine="duckdb")
    assert nb.load_traces([export.to_json(tmp_path / "good.json")], engine="duckdb").shape[0] == len(
        export.payload["events"]
    )


def test_an_origin_in_a_table_may_wrap_after_its_scheme() -> None:
    # Two origin columns of a dozen no longer push an events table past the output area.
    from plasmate_nb.notebook._html import table

    html = table(["before_origin"], [["http://127.0.0.1:8080"], ["https://a.test"]])
    assert "http://<wbr>127.0.0.1:8080" in html and "https://<wbr>a.test" in html
    assert "before_<wbr>origin" in html


def test_a_table_whose_columns_are_named_by_numbers_still_shows() -> None:
    from plasmate_nb.notebook._tables import ReadableFrame

    table = ReadableFrame({"a_b": [1]})
    table[7] = 2  # pandas lets a column be named by any value
    headers = re.findall(r"<th style=[^>]*>(.*?)</th>", table._repr_html_())
    assert headers == ["a_<wbr>b", "7"]
