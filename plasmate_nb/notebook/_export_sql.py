"""DuckDB reads folders of exports itself, so a fleet costs no Python object per event.

A fleet of 100,000 exports holds about 4 million events: parsed into dicts they need tens of
gigabytes and minutes. Here Python only reads each file's bytes (several times faster than
DuckDB's own ``read_text`` on many small files), one batch ahead on a thread while DuckDB
parses the previous batch: ``from_json`` turns every file into typed structs in parallel,
naming only the fields asked for, and plain SQL unnests the events into tables.

One structure reads both shapes ``load_trace`` accepts: a ``trace_export`` payload (or a
final trace saved on its own) and a whole ``close_page`` answer, whose ``final_trace``
member is the export (keys sorted; ``from_json`` matches keys by name, so order is moot).
Omitted final-trace markers are counted and skipped. A file the SQL checks reject (not JSON,
wrong shape, counters that disagree) is named by ``problem_files``; callers ask
``load_trace`` for its precise error, so messages come from one place.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pandas as pd

from plasmate_nb import errors
from plasmate_nb.trace.compact import file_label
from plasmate_nb.trace.constants import (
    ERROR_CLASSES,
    MAX_BYTES,
    MAX_EVENTS,
    MAX_HANDLE_BYTES,
    SCHEMA,
    TRACEABLE_ACTIONS,
)

from ._export_fields import COUNTERS
from ._export_files import read_export_bytes

if TYPE_CHECKING:
    import duckdb

Frame = TypeVar("Frame", bound=pd.DataFrame)

#: Files per batch: large enough to keep both cores parsing, small enough for bounded memory.
BATCH_FILES = 2048
#: How an export's JSON begins (its first key is fixed): compact, and as ``json.dumps`` writes it.
EXPORT_STARTS = ('{"schema":"' + SCHEMA + '",', '{"schema": "' + SCHEMA + '",')
#: Files per Arrow record batch. DuckDB scans one record batch per thread: a batch in one
#: chunk is parsed by one core (measured: about half the speed on two cores).
CHUNK_FILES = 64

_STATE = {"url_fingerprint": "VARCHAR", "origin": "VARCHAR", "fingerprint": "VARCHAR", "has_page": "BOOLEAN"}
#: Every field the events table of ``load_traces`` is built from.
FULL_EVENT: dict[str, Any] = {
    "sequence": "BIGINT",
    "action": "VARCHAR",
    "outcome": "VARCHAR",
    "error_class": "VARCHAR",
    "duration_ms": "BIGINT",
    "parameters": {
        "append": "BOOLEAN",
        "value": {"byte_length": "BIGINT"},
        "direction": "VARCHAR",
        "pixels": "BIGINT",
        "targeted": "BOOLEAN",
        "cookie_count": "BIGINT",
        "filter_present": "BOOLEAN",
    },
    "target": {"target_id": "VARCHAR", "role": "VARCHAR"},
    "before": _STATE,
    "after": _STATE,
    "redaction": {"redacted_fields": ["VARCHAR"]},
}
#: What a fleet summary needs: no fingerprints (the costly strings), so parsing is about twice as fast.
LEAN_EVENT: dict[str, Any] = {
    "sequence": "BIGINT",
    "action": "VARCHAR",
    "outcome": "VARCHAR",
    "error_class": "VARCHAR",
    "duration_ms": "BIGINT",
    "parameters": {"pixels": "BIGINT"},
    "target": {"role": "VARCHAR"},
    "before": {"origin": "VARCHAR"},
    "after": {"origin": "VARCHAR"},
    "redaction": {"policy": "VARCHAR"},
}

#: SQL over one unnested event ``e`` for each column of ``load_traces`` (same names and meaning).
FULL_COLUMNS: dict[str, str] = {
    "sequence": "e.sequence",
    "action": "e.action",
    "outcome": "e.outcome",
    "error_class": "e.error_class",
    "duration_ms": "e.duration_ms",
    "target_role": "e.target.role",
    "target_id": "e.target.target_id",
    "before_origin": "e.before.origin",
    "after_origin": "e.after.origin",
    "before_has_page": "e.before.has_page",
    "after_has_page": "e.after.has_page",
    "state_changed": "e.before.fingerprint IS DISTINCT FROM e.after.fingerprint",
    "url_changed": "e.before.url_fingerprint IS DISTINCT FROM e.after.url_fingerprint",
    "redacted_fields": (
        "CASE WHEN len(e.redaction.redacted_fields) > 0 THEN array_to_string(e.redaction.redacted_fields, ',') END"
    ),
    "redacted_bytes": "e.parameters.value.byte_length",
    "append": "e.parameters.append",
    "direction": "e.parameters.direction",
    "pixels": "e.parameters.pixels",
    "targeted": "e.parameters.targeted",
    "cookie_count": "e.parameters.cookie_count",
    "filter_present": "e.parameters.filter_present",
}
LEAN_COLUMNS: dict[str, str] = {
    name: FULL_COLUMNS[name]
    for name in ("sequence", "action", "outcome", "error_class", "duration_ms", "target_role")
} | {"before_origin": "e.before.origin", "after_origin": "e.after.origin"}
#: What every event must carry (a shape check, beside the typed read).
_EVENT_PRESENT = {
    "full": ("e.parameters", "e.before", "e.after", "e.redaction.redacted_fields", "e.duration_ms"),
    "lean": ("e.parameters", "e.before", "e.after", "e.redaction", "e.duration_ms"),
}


def _envelope(event: dict[str, Any]) -> dict[str, Any]:
    return {
        "schema": "VARCHAR",
        "trace_id": "VARCHAR",
        "session_id": "VARCHAR",
        **dict.fromkeys(COUNTERS, "BIGINT"),
        "omitted": "BOOLEAN",
        "events": [event],
    }


def _sql_text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _documents_sql(event: dict[str, Any], kind: str, *, guarded: bool) -> str:
    """SQL: one row per file of the registered ``batch``, with its export ``doc`` and its ``kind``.

    A file that starts as an export does (``EXPORT_STARTS``: the contract fixes the first key)
    is read with the export's own structure, which parses markedly faster; every other file
    (a ``close_page`` answer, an export written with other spacing or key order) with the wider
    one, which reads both shapes. Testing the start, not searching the whole text for
    ``"final_trace"``, saves a scan of every byte. ``guarded`` adds a ``json_valid`` test first: a second parse of every
    file, paid only by a batch in which ``from_json`` met a file that is not JSON.
    """
    envelope = _envelope(event)
    export_start = " OR ".join(f"starts_with(content, {_sql_text(start)})" for start in EXPORT_STARTS)
    close_structure = _sql_text(json.dumps({**envelope, "closed": "BOOLEAN", "final_trace": envelope}))
    own = ", ".join(f"{name} := d.{name}" for name in envelope)

    def parsed(structure: str) -> str:
        if guarded:
            return f"CASE WHEN json_valid(content) THEN from_json(content, {structure}) END"
        return f"from_json(content, {structure})"

    actions = ", ".join(_sql_text(action) for action in TRACEABLE_ACTIONS)
    present = " AND ".join(f"{field} IS NOT NULL" for field in _EVENT_PRESENT[kind])
    counters_ok = " AND ".join(f"doc.{name} >= 0" for name in COUNTERS)
    handles_ok = " AND ".join(
        f"length(doc.{name}) BETWEEN 1 AND {MAX_HANDLE_BYTES}" for name in ("trace_id", "session_id")
    )
    error_classes = ", ".join(_sql_text(name) for name in sorted(ERROR_CLASSES))
    events_ok = (
        f"list_bool_and(list_transform(doc.events, lambda e: e.action IN ({actions}) "
        f"AND e.outcome IN ('success', 'error') AND e.sequence IS NOT NULL AND {present} "
        f"AND (e.outcome = 'error') = (e.error_class IS NOT NULL) "
        f"AND coalesce(e.error_class IN ({error_classes}), true) AND e.duration_ms >= 0))"
    )
    # Strictly increasing sequences, the first at least 1 and the last below next_sequence.
    seq = "list_transform(doc.events, lambda e: e.sequence)"
    increasing = (
        f"list_bool_and(list_transform(list_zip([0] || {seq}, {seq} || [doc.next_sequence]), "
        "lambda p: p[1] < p[2]))"
    )
    return f"""
    WITH documents AS (
        SELECT file_index, {parsed(_sql_text(json.dumps(envelope)))} AS doc
        FROM batch WHERE {export_start}
        UNION ALL
        SELECT file_index,
               CASE WHEN d.closed IS NOT NULL AND d.final_trace IS NOT NULL THEN d.final_trace
                    ELSE struct_pack({own}) END AS doc
        FROM (SELECT file_index, {parsed(close_structure)} AS d
              FROM batch WHERE NOT ({export_start}))
    )
    SELECT file_index, doc,
        CASE
            WHEN doc.schema = {_sql_text(SCHEMA)} AND doc.omitted THEN 'omitted'
            WHEN doc.schema = {_sql_text(SCHEMA)} AND doc.omitted IS NULL
                 AND {handles_ok} AND {counters_ok}
                 AND doc.events IS NOT NULL AND len(doc.events) = doc.retained_events
                 AND doc.retained_events <= {MAX_EVENTS} AND doc.retained_bytes <= {MAX_BYTES}
                 AND doc.next_sequence >= 1
                 AND doc.next_sequence - 1 = doc.retained_events + doc.evicted_events
                     + doc.oversized_events + doc.cleared_events
                 AND coalesce({events_ok}, true) AND coalesce({increasing}, true)
            THEN 'export'
            ELSE 'problem'
        END AS kind
    FROM documents
    """


def connect() -> duckdb.DuckDBPyConnection:
    """A private in-memory DuckDB connection (DuckDB is imported on first use)."""
    import duckdb

    return duckdb.connect(":memory:")


def _read(batch: Sequence[tuple[int, Path]]) -> tuple[Any, list[int], list[tuple[int, str]]]:
    """The Arrow table of ``batch`` (``_arrow_batch``), its file indexes, and the files that are
    unreadable or not UTF-8. It runs on the reader thread, so joining the bytes overlaps parsing.
    (A lone surrogate escape DuckDB's parser refuses itself: such a file is a problem.)"""
    indexes: list[int] = []
    contents: list[bytes] = []
    problems: list[tuple[int, str]] = []
    for index, path in batch:
        try:
            data = read_export_bytes(path)
        except OSError as exc:
            problems.append((index, errors.cannot_read_file(exc.strerror or type(exc).__name__)))
            continue
        if not data.isascii():
            try:
                data.decode("utf-8")
            except UnicodeDecodeError as exc:
                problems.append((index, errors.not_utf8(exc.start)))
                continue
        indexes.append(index)
        contents.append(data)
    return _arrow_batch(indexes, contents), indexes, problems


def scan(
    connection: duckdb.DuckDBPyConnection,
    files: Sequence[Path],
    *,
    kind: str,
    on_batch: Callable[[str, int], None],
    progress: Callable[[int], object] = lambda _: None,
) -> list[tuple[int, str | None]]:
    """Read ``files`` batch by batch; for each, call ``on_batch(sql, size)`` while ``batch_documents`` exists.

    ``sql`` selects ``file_index, doc, kind`` from the registered batch (``kind`` is
    ``"full"`` or ``"lean"``: which event fields are read). Returns the problem files as
    ``(file_index, reason)``; ``reason`` is ``None`` where the SQL checks rejected the file.
    """
    import duckdb

    event = FULL_EVENT if kind == "full" else LEAN_EVENT
    fast, guarded = _documents_sql(event, kind, guarded=False), _documents_sql(event, kind, guarded=True)
    problems: list[tuple[int, str | None]] = []
    numbered = list(enumerate(files))
    batches = [numbered[start : start + BATCH_FILES] for start in range(0, len(numbered), BATCH_FILES)]
    with ThreadPoolExecutor(1, thread_name_prefix="plasmate-read") as reader:
        pending = reader.submit(_read, batches[0]) if batches else None
        for number in range(len(batches)):
            assert pending is not None
            table, indexes, unreadable = pending.result()
            pending = reader.submit(_read, batches[number + 1]) if number + 1 < len(batches) else None
            problems.extend(unreadable)
            connection.register("batch", table)
            del table
            try:
                connection.execute(f"CREATE OR REPLACE TEMP TABLE batch_documents AS {fast}")
            except duckdb.Error:  # a file that is not JSON: parse again behind json_valid
                try:
                    connection.execute(f"CREATE OR REPLACE TEMP TABLE batch_documents AS {guarded}")
                except duckdb.Error:  # still unreadable as a whole: load_trace will say why, file by file
                    problems.extend((index, None) for index in indexes)
                    connection.register("batch", _arrow_batch([], []))
                    connection.execute(f"CREATE OR REPLACE TEMP TABLE batch_documents AS {fast}")
            connection.unregister("batch")
            on_batch("batch_documents", len(batches[number]))
            problems.extend(
                (index, None)
                for (index,) in connection.execute(
                    "SELECT file_index FROM batch_documents WHERE kind = 'problem'"
                ).fetchall()
            )
            progress(len(batches[number]))
    connection.execute("DROP TABLE IF EXISTS batch_documents")
    return sorted(problems)


def _arrow_batch(indexes: list[int], contents: list[bytes]) -> Any:
    """An Arrow table (``file_index``, ``content``) over the batch's bytes, joined into one buffer.

    The bytes are known UTF-8 (``_read`` checked every non-ASCII file), so the string column is
    built straight from the joined buffer and its offsets.
    """
    import pyarrow as pa  # type: ignore[import-untyped]

    data = b"".join(contents)
    wide = len(data) >= 2**31
    offsets = pa.array([0, *itertools.accumulate(map(len, contents))], pa.int64() if wide else pa.int32())
    strings = (pa.LargeStringArray if wide else pa.StringArray).from_buffers(
        len(contents), offsets.buffers()[1], pa.py_buffer(data)
    )
    table = pa.table({"file_index": pa.array(indexes, pa.int64()), "content": strings})
    return pa.Table.from_batches(table.to_batches(max_chunksize=CHUNK_FILES), table.schema)


def events_sql(columns: dict[str, str], source: str = "batch_documents") -> str:
    """SQL: one row per event of the exports in ``source``, ``file_index`` and ``trace_id`` first."""
    selected = ", ".join(f"{expression} AS {name}" for name, expression in columns.items())
    return f"""
    SELECT file_index, trace_id, {selected} FROM (
        SELECT file_index, doc.trace_id AS trace_id, unnest(doc.events) AS e
        FROM {source} WHERE kind = 'export'
    )
    """


def load_events(files: Sequence[Path], fallback: Callable[[Sequence[Path]], Frame]) -> Frame:
    """``load_traces`` over ``files`` with DuckDB: the same table, row for row and dtype for dtype.

    ``fallback(paths)`` is the pandas path. Its answer for no files fixes the columns, dtypes
    and table class; files the SQL checks reject go through it too (it raises the precise
    ``TraceFormatError`` for a bad file, or reads a file whose values DuckDB would not take).
    """
    import numpy as np

    template = fallback([])
    connection = connect()
    parts: list[dict[str, Any]] = []
    sql = events_sql(FULL_COLUMNS) + " ORDER BY file_index, sequence"

    def collect(source: str, _: int) -> None:
        parts.append(connection.execute(sql).fetchnumpy())

    try:
        problems = scan(connection, files, kind="full", on_batch=collect)
    finally:
        connection.close()
    names = ["file_index", "trace_id", *FULL_COLUMNS]
    merged = {
        name: np.ma.concatenate([part[name] for part in parts]) if parts else np.ma.array([])
        for name in names
    }
    order = np.argsort(np.ma.getdata(merged["file_index"]), kind="stable")
    file_index = np.asarray(np.ma.getdata(merged["file_index"]), dtype=np.int64)[order]
    labels = np.array([file_label(path) for path in files], dtype=object)
    sources: dict[str, Any] = {
        "trace_id": merged["trace_id"][order],
        "source_file": labels[file_index] if len(files) else [],
    }
    sources.update({name: merged[name][order] for name in FULL_COLUMNS})
    table: Frame = type(template)(
        {name: _typed(sources[name], template.dtypes[name]) for name in template.columns}, copy=False
    )
    if not problems:
        return table
    extras = [
        (index, fallback([files[index]])) for index, _ in problems
    ]  # raises on a bad file, as pandas would
    combined = pd.concat([table, *(extra for _, extra in extras)], ignore_index=True)
    owners = np.concatenate([file_index, *(np.full(len(extra), index) for index, extra in extras)])
    return type(template)(combined.iloc[np.argsort(owners, kind="stable")].reset_index(drop=True))


def _typed(values: Any, dtype: Any) -> Any:
    """A pandas array of ``dtype`` from a DuckDB numpy column (masked where SQL had NULL)."""
    import numpy as np

    mask = np.ma.getmaskarray(values)
    data = np.ma.getdata(values)
    if dtype == "Int64":
        return pd.arrays.IntegerArray(np.asarray(data, dtype=np.int64), mask.copy())
    if dtype == "boolean":
        return pd.arrays.BooleanArray(np.asarray(data, dtype=bool), mask.copy())
    objects = np.asarray(data, dtype=object).copy()
    objects[mask] = None
    return pd.array(objects, dtype=dtype)
