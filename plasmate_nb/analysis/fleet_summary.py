"""``fleet(folder)``: what a whole fleet of exported traces looks like, answered by DuckDB.

An analyst with 100,000 exports wants the shape of the fleet before any single trace: which
actions run and fail, on which origins, with which error classes; how often traces hit their
bounds (evictions, oversized drops, logs near 128 events or 48 KiB); how long actions take;
how much of the record could be checked for replay at all. DuckDB reads the files itself
(``notebook/_export_sql.py``) into two in-memory tables, ``runs`` (one row per export) and
``events`` (one row per event); every summary is a SQL query over them, so nothing here holds a
Python object per event. ``to_parquet`` writes both as a partitioned dataset for Spark, Dask,
Polars or DuckDB when one machine is no longer enough.
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from plasmate_nb.analysis._progress import progress_bar
from plasmate_nb.notebook._export_sql import LEAN_COLUMNS, connect, events_sql, scan
from plasmate_nb.notebook._html import Figure, box, cell, counted, table
from plasmate_nb.notebook._tables import ReadableFrame
from plasmate_nb.notebook.export import COUNTERS, FinalTraceOmitted, TraceFormatError, load_trace
from plasmate_nb.trace.compact import file_label
from plasmate_nb.trace.constants import COARSE_ACTIONS, MAX_BYTES, MAX_EVENTS, UNSUPPORTED_REPLAY_ACTIONS

if TYPE_CHECKING:
    import duckdb

    from ._fleet_plots import FleetFigure

#: A trace is "near" a bound when it retains at least this share of it.
NEAR_BOUND = 0.9
#: The label of events whose page had no origin (``file:``, ``about:``, a closed session).
NO_ORIGIN = "(no origin)"
PERCENTILES = (0.5, 0.9, 0.99)
_LIFECYCLE = UNSUPPORTED_REPLAY_ACTIONS - COARSE_ACTIONS
#: The events table: what ``LEAN_COLUMNS`` reads, then ``origin`` (before, else after).
_EVENT_TYPES = {
    "sequence": "BIGINT",
    "action": "VARCHAR",
    "outcome": "VARCHAR",
    "error_class": "VARCHAR",
    "duration_ms": "BIGINT",
    "target_role": "VARCHAR",
    "before_origin": "VARCHAR",
    "after_origin": "VARCHAR",
    "origin": "VARCHAR",
}
#: Event columns of the ``events`` table and of the Parquet dataset, after ``trace_id``.
EVENT_FIELDS = tuple(_EVENT_TYPES)
_PLOTS = ("overview", "actions", "origins", "errors", "durations", "pressure")


def _sql_list(values: Iterable[str]) -> str:
    return ", ".join("'" + value.replace("'", "''") + "'" for value in sorted(values))


class Fleet:
    """A summary of many exports: tables (pandas DataFrames), plots and a Parquet export.

    Tables: ``runs`` (one row per export), ``by_action``, ``by_origin``, ``by_error_class``,
    ``failures`` (action × error class), ``durations`` (percentiles by action), ``pressure``
    (how often traces hit their bounds), ``replay`` (which events could be replay candidates),
    ``totals`` and ``problems`` (files that are not exports, each with the reason). ``query``
    runs any SQL over the ``runs`` and ``events`` tables. ``runs`` and ``problems`` hold file
    names and reasons longer than pandas shows (50 characters): they are ``ReadableFrame``s,
    shown whole in a notebook; computing on them gives plain DataFrames.

    >>> fleet = pnb.fleet("traces/")
    >>> fleet.by_action
    >>> fleet.pressure
    >>> fleet.query("SELECT origin, count(*) FROM events GROUP BY origin")
    >>> fleet.to_parquet("fleet-parquet/", partition_by=["action"])
    """

    def __init__(self, connection: duckdb.DuckDBPyConnection, folder: Path | None, files: int,
                 omitted: int, problems: pd.DataFrame) -> None:  # fmt: skip
        self._connection = connection
        self.folder = folder
        self._files = files
        self._omitted = omitted
        #: Files that could not be read as exports: ``file`` and ``error`` (what is wrong and,
        #: inside the document, where: ``TraceFormatError.detail``), a ``ReadableFrame`` that shows
        #: each reason whole.
        self.problems = ReadableFrame(problems)

    # -- queries --------------------------------------------------------------------------

    def query(self, sql: str, parameters: Sequence[Any] | None = None) -> pd.DataFrame:
        """Run SQL over the fleet's ``runs`` and ``events`` tables and return the answer as a DataFrame.

        >>> fleet.query("SELECT action, avg(duration_ms) FROM events GROUP BY action")
        """
        return self._connection.execute(sql, parameters or []).df()

    def _table(self, sql: str, index: str) -> pd.DataFrame:
        return self.query(sql).set_index(index)

    @functools.cached_property
    def runs(self) -> ReadableFrame:
        """One row per export: its file, ``trace_id``, counters, failures and total duration.

        A ``ReadableFrame``: a notebook shows each file name whole, where pandas would cut it at 50
        characters; computing on it gives plain DataFrames.

        >>> fleet.runs.sort_values("evicted_events").tail()
        """
        return ReadableFrame(self.query("SELECT * EXCLUDE (file_index) FROM runs ORDER BY file_index"))

    @functools.cached_property
    def totals(self) -> pd.Series:
        """Files, runs (exports), events, failures, omitted final-trace markers and problem files.

        >>> fleet.totals["events"]
        """
        runs, events, failures = self._connection.execute(
            "SELECT count(*), coalesce(sum(retained_events), 0), coalesce(sum(failures), 0) FROM runs"
        ).fetchone() or (0, 0, 0)
        return pd.Series(
            {"files": self._files, "runs": runs, "events": events, "failures": failures,
             "omitted": self._omitted, "problems": len(self.problems)},
            name="fleet", dtype="int64",
        )  # fmt: skip

    def _grouped(self, key: str) -> str:
        return f"""
            SELECT {key}, count(DISTINCT file_index) AS runs, count(*) AS events,
                   count(*) FILTER (outcome = 'error') AS failures,
                   count(*) FILTER (outcome = 'error') / count(*) AS failure_rate
            FROM events GROUP BY {key} ORDER BY events DESC, {key}
        """

    @functools.cached_property
    def by_action(self) -> pd.DataFrame:
        """Per action: runs using it, events, failures, failure rate, and whether it can be a replay candidate.

        >>> fleet.by_action.loc["click", "failure_rate"]
        """
        table = self._table(self._grouped("action"), "action")
        table["replay_candidate"] = ~table.index.isin(sorted(UNSUPPORTED_REPLAY_ACTIONS))
        return table

    @functools.cached_property
    def by_origin(self) -> pd.DataFrame:
        """Per origin (the page an action acted on; ``open_page`` counts where it arrived): runs, events, failures.

        >>> fleet.by_origin.head(10)
        """
        return self._table(self._grouped("origin"), "origin")

    @functools.cached_property
    def by_error_class(self) -> pd.DataFrame:
        """Per error class of the failed events: events, runs, share of all failures, and the action failing most.

        >>> fleet.by_error_class
        """
        return self._table(
            """
            SELECT error_class, count(*) AS events, count(DISTINCT file_index) AS runs,
                   count(*) / sum(count(*)) OVER () AS share,
                   arg_min(action, (-action_events, action)) AS top_action
            FROM (SELECT *, count(*) OVER (PARTITION BY error_class, action) AS action_events
                  FROM events WHERE outcome = 'error')
            GROUP BY error_class ORDER BY events DESC, error_class
            """,
            "error_class",
        )

    @functools.cached_property
    def failures(self) -> pd.DataFrame:
        """Failed events by action (rows) and error class (columns).

        >>> fleet.failures.loc["navigate_to"]
        """
        long = self.query(
            "SELECT action, error_class, count(*) AS events FROM events WHERE outcome = 'error' GROUP BY ALL"
        )
        table = long.pivot_table(index="action", columns="error_class", values="events", fill_value=0)
        return table.astype("int64").rename_axis(columns="error_class")

    @functools.cached_property
    def durations(self) -> pd.DataFrame:
        """``duration_ms`` by action: events, mean, p50, p90, p99 (linear interpolation, as pandas) and max.

        >>> fleet.durations[["p50", "p99"]]
        """
        quantiles = ", ".join(f"quantile_cont(duration_ms, {q}) AS p{round(q * 100)}" for q in PERCENTILES)
        return self._table(
            f"""
            SELECT action, count(*) AS events, avg(duration_ms) AS mean, {quantiles},
                   max(duration_ms) AS max
            FROM events GROUP BY action ORDER BY events DESC, action
            """,
            "action",
        )

    @functools.cached_property
    def pressure(self) -> pd.DataFrame:
        """How often traces hit their bounds: runs and share of runs with evictions, oversized drops,
        clears, and retained events or bytes at or above ``NEAR_BOUND`` (90%) of 128 / 49,152.

        >>> fleet.pressure.loc["evicted events > 0", "share"]
        """
        measures = {
            "evicted events > 0": "evicted_events > 0",
            "oversized events > 0": "oversized_events > 0",
            "cleared events > 0": "cleared_events > 0",
            f"retained events ≥ {NEAR_BOUND:.0%} of {MAX_EVENTS}": f"retained_events >= {NEAR_BOUND} * {MAX_EVENTS}",
            f"retained bytes ≥ {NEAR_BOUND:.0%} of {MAX_BYTES:,}": f"retained_bytes >= {NEAR_BOUND} * {MAX_BYTES}",
        }
        counted = ", ".join(f"count(*) FILTER ({condition})" for condition in measures.values())
        row = self._connection.execute(f"SELECT count(*), {counted} FROM runs").fetchone() or (0,)
        total, *hits = row
        return pd.DataFrame(
            {"runs": pd.array(hits, dtype="int64"), "share": [hit / total if total else 0.0 for hit in hits]},
            index=pd.Index(list(measures), name="measure"),
        )

    @functools.cached_property
    def replay(self) -> pd.DataFrame:
        """Events by what replay validation can do with them: replay candidates, session lifecycle
        (``open_page``/``close_page``) and coarse actions (scripts, cookies), with their share.

        >>> fleet.replay.loc["replay candidates", "share"]
        """
        kinds = {
            "replay candidates": f"action NOT IN ({_sql_list(UNSUPPORTED_REPLAY_ACTIONS)})",
            "session lifecycle": f"action IN ({_sql_list(_LIFECYCLE)})",
            "coarse (scripts, cookies)": f"action IN ({_sql_list(COARSE_ACTIONS)})",
        }
        counted = ", ".join(f"count(*) FILTER ({condition})" for condition in kinds.values())
        row = self._connection.execute(f"SELECT count(*), {counted} FROM events").fetchone() or (0,)
        total, *counts = row
        return pd.DataFrame(
            {
                "events": pd.array(counts, dtype="int64"),
                "share": [n / total if total else 0.0 for n in counts],
            },
            index=pd.Index(list(kinds), name="kind"),
        )

    @property
    def replay_share(self) -> float:
        """The share of events that are replay candidates (0.0 for a fleet without events).

        >>> f"{fleet.replay_share:.0%}"
        """
        shares = self.replay["share"]
        return float(shares.iloc[0])  # "replay candidates" is the first row

    # -- output ---------------------------------------------------------------------------

    def to_parquet(self, folder: str | Path, partition_by: str | Sequence[str] = ()) -> Path:
        """Write the fleet as a Parquet dataset into ``folder`` and return ``folder``.

        ``events/`` holds one row per event, Hive-partitioned by ``partition_by``, and
        ``runs.parquet`` one row per export; ``folder`` must not hold an earlier dataset.

        Any event column can partition: ``action``, ``outcome``, ``error_class``, ``origin``…
        Spark, Dask, Polars and DuckDB read the folder as it is.

        >>> fleet.to_parquet("fleet-parquet", partition_by=["action", "outcome"])
        >>> duckdb.sql("SELECT action, count(*) FROM read_parquet('fleet-parquet/events/**/*.parquet', hive_partitioning=true) GROUP BY action")
        """
        partitions = [partition_by] if isinstance(partition_by, str) else list(partition_by)
        unknown = [name for name in partitions if name not in ("trace_id", *EVENT_FIELDS)]
        if unknown:
            raise ValueError(f"cannot partition by {unknown}: choose from {['trace_id', *EVENT_FIELDS]}")
        target = Path(folder)
        events = target / "events"
        if events.exists() or (target / "runs.parquet").exists():
            # Files of an earlier dataset would be read as part of this one.
            raise FileExistsError(f"{target} already holds a fleet dataset: write to a new folder")
        events.mkdir(parents=True)
        columns = ", ".join(("trace_id", *EVENT_FIELDS))
        options = f", PARTITION_BY ({', '.join(partitions)}), OVERWRITE_OR_IGNORE" if partitions else ""
        destination = events if partitions else events / "events.parquet"
        self._connection.execute(
            f"COPY (SELECT {columns} FROM events ORDER BY file_index, sequence) TO '{_quoted(destination)}' "
            f"(FORMAT parquet{options})"
        )
        self._connection.execute(
            f"COPY (SELECT * EXCLUDE (file_index) FROM runs ORDER BY file_index) "
            f"TO '{_quoted(target / 'runs.parquet')}' (FORMAT parquet)"
        )
        return target

    def plot(self, kind: str = "overview") -> FleetFigure:
        """A matplotlib figure of the fleet, shown as a PNG in notebooks.

        ``kind``: ``"overview"`` (four panels), ``"actions"``, ``"origins"``, ``"errors"``,
        ``"durations"`` or ``"pressure"``. Needs matplotlib (``pip install 'plasmate_nb[lab]'``).

        >>> fleet.plot()
        >>> fleet.plot("durations")
        """
        try:
            from ._fleet_plots import plot_fleet  # lazy: matplotlib only when a plot is drawn
        except ImportError as error:
            if (error.name or "").partition(".")[0] != "matplotlib":
                raise
            raise ImportError("plotting a fleet needs matplotlib: pip install 'plasmate_nb[lab]'") from None

        if kind not in _PLOTS:
            raise ValueError(f"unknown plot {kind!r}: choose one of {list(_PLOTS)}")
        return plot_fleet(self, kind)

    def _repr_html_(self) -> str:
        totals = self.totals
        head = (
            f"<div>{counted(totals['runs'], 'run')} · {counted(totals['events'], 'event')}"
            f" · {counted(totals['failures'], 'failure')}"
            f" · {counted(totals['omitted'], 'omitted final trace')}"
            f" · {counted(totals['problems'], 'problem file')}"
            f" · replay candidates {self.replay_share:.1%} of events</div>"
        )
        sections = [
            ("Bounds pressure", self.pressure),
            ("By action", self.by_action),
            ("By error class", self.by_error_class),
            ("Durations by action (ms)", self.durations),
            ("By origin (top 15)", self.by_origin.head(15)),
        ]
        body = head + "".join(
            f"<div><b>{cell(title)}</b></div>{_html_table(frame)}" for title, frame in sections
        )
        if len(self.problems):
            shown = self.problems.head(20)
            body += "<div><b>Problem files</b></div>" + table(
                ("file", "error"), zip(shown["file"], shown["error"], strict=True), names=("file",)
            )
            if len(self.problems) > 20:
                body += f"<div>… and {len(self.problems) - 20:,} more (see .problems)</div>"
        return box("Fleet of plasmate.trace.v1 exports", body)

    def __repr__(self) -> str:
        t = self.totals
        return (
            f"Fleet(runs={t['runs']}, events={t['events']}, failures={t['failures']}, "
            f"omitted={t['omitted']}, problems={t['problems']})"
        )


# Columns that hold a fraction of a whole, shown as percentages.
_SHARES = frozenset({"share", "failure_rate"})
# Columns of milliseconds: shown with one decimal, whichever were whole.
_TIMES = frozenset({"mean", "p50", "p90", "p99", "max"})


def _html_table(frame: pd.DataFrame) -> str:
    """``frame`` as an HTML table, its index the first column: counts with thousands separators,
    shares as percentages, times to one decimal, flags as yes/no, absent values empty; an origin
    (a host name has no spaces to wrap at) may break anywhere."""
    frame = frame.reset_index()
    columns = [str(c) for c in frame.columns]
    rows = (
        [_shown(value, column) for value, column in zip(row, columns, strict=True)]
        for row in frame.itertuples(index=False)
    )
    return table(columns, rows, names=("origin",))


def _shown(value: Any, column: str) -> Any:
    if pd.api.types.is_scalar(value) and pd.isna(value):
        return ""
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, numbers.Real):
        if column in _SHARES:
            return Figure(f"{float(value):.1%}")
        if column in _TIMES:
            return Figure(f"{float(value):,.1f}")
        return Figure(f"{value:,}")
    return value


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")


_RUNS_SQL = f"""
    SELECT file_index, {{file}} AS file, doc.trace_id AS trace_id, doc.session_id AS session_id,
           {", ".join(f"doc.{name} AS {name}" for name in COUNTERS)},
           len(list_filter(doc.events, lambda e: e.outcome = 'error')) AS failures,
           coalesce(list_sum(list_transform(doc.events, lambda e: e.duration_ms)), 0) AS duration_ms
    FROM batch_documents WHERE kind = 'export'
"""


def fleet(folder: str | Path | Sequence[str | Path], *, progress: bool | None = None) -> Fleet:
    """Summarise a folder of exports (every ``*.json`` in it) or a list of files as a ``Fleet``.

    DuckDB reads the files itself, in batches of ``_export_sql.BATCH_FILES``, with a progress bar
    that moves a batch at a time (``progress=None`` shows it at the first batch done after
    ``_progress.PROGRESS_AFTER_S`` seconds; a widget in a notebook). Exports and whole ``close_page``
    answers are read; omitted final-trace markers are counted; anything else (not JSON, not
    an export, counters that disagree, an event whose error class, duration or outcome breaks
    the contract, a lone surrogate escape) is listed in ``Fleet.problems`` with its file named,
    never raised. The checks are DuckDB's (``load_traces(engine="duckdb")`` says which): a
    summary counts what it reads, so audit files from an unknown writer with ``pnb.audit``.

    >>> f = pnb.fleet("traces/")
    >>> f                      # totals, bounds pressure and the main tables
    >>> f.by_error_class
    """
    base: Path | None = None
    if isinstance(folder, str | Path):
        base = Path(folder)
        if not base.is_dir():
            raise NotADirectoryError(
                f"{base} is not a folder: pass a folder of *.json exports or a list of files"
            )
        files = sorted(base.glob("*.json"))
    else:
        files = [Path(path) for path in folder]
    connection = connect()
    columns = ", ".join(f"{name} {kind}" for name, kind in _EVENT_TYPES.items())
    connection.execute(f"CREATE TABLE events (file_index BIGINT, trace_id VARCHAR, {columns})")
    connection.execute(
        "CREATE TABLE runs (file_index BIGINT, file VARCHAR, trace_id VARCHAR, session_id VARCHAR, "
        + ", ".join(f"{name} BIGINT" for name in COUNTERS)
        + ", failures BIGINT, duration_ms BIGINT)"
    )
    names = [file_label(path.name if base is not None else path) for path in files]
    listing = pd.DataFrame({"file_index": range(len(names)), "file": pd.array(names, dtype=object)})
    connection.register("listing", listing)
    connection.execute(
        "CREATE TEMP TABLE file_names AS SELECT file_index::BIGINT AS file_index, file::VARCHAR AS file FROM listing"
    )
    connection.unregister("listing")
    omitted = 0
    events_insert = (
        f"INSERT INTO events SELECT *, coalesce(before_origin, after_origin, '{NO_ORIGIN}') AS origin "
        f"FROM ({events_sql(LEAN_COLUMNS)})"
    )
    runs_insert = "INSERT INTO runs " + _RUNS_SQL.format(
        file="(SELECT file FROM file_names f WHERE f.file_index = batch_documents.file_index)"
    )

    def insert(source: str, _: int) -> None:
        nonlocal omitted
        connection.execute(events_insert)
        connection.execute(runs_insert)
        (count,) = connection.execute(f"SELECT count(*) FROM {source} WHERE kind = 'omitted'").fetchone() or (
            0,
        )
        omitted += count

    with progress_bar(len(files), "fleet", "file", progress) as bar:
        rejected = scan(connection, files, kind="lean", on_batch=insert, progress=bar.update)
    problems: list[tuple[str, str]] = []
    for index, reason in rejected:
        # Reasons found while reading (unreadable, not UTF-8) are load_trace's (errors.py's) words.
        error = _reason(files[index]) if reason is None else reason
        if error is None:
            omitted += 1
        else:
            problems.append((names[index], error))
    connection.execute("DROP TABLE file_names")
    frame = pd.DataFrame(problems, columns=["file", "error"])
    return Fleet(connection, base, len(files), omitted, frame)


def _reason(path: Path) -> str | None:
    """Why ``load_trace`` rejects ``path`` (``None``: it is an omitted marker after all)."""
    try:
        trace = load_trace(path)
    except TraceFormatError as error:
        return error.detail  # the file is named beside it
    if isinstance(trace, FinalTraceOmitted):
        return None
    return "DuckDB could not read a value of this export with its contract type; load_trace() reads it"
