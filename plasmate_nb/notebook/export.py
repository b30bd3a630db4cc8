"""Trace objects over the tool payloads: ``TraceStatus``, ``TraceExport``, ``FinalTraceOmitted``,
``TraceCleared``, and the readers ``load_trace`` / ``load_traces``.

Everything here reads exported JSON only, so it shows exactly what an export contains.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from importlib import resources
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeGuard

from .. import errors
from .._tracebacks import HintedError
from ..trace.compact import compact_json, file_label, utf8_len
from ..trace.constants import SCHEMA
from ..trace.json_text import strict_loads
from ._export_fields import COUNTERS
from ._export_files import read_export_bytes
from ._html import box, cell, counted, gauge, table

# pandas (and the table helpers built on it) load inside the methods that build tables:
# load_trace and the trace objects' text forms need neither.
if TYPE_CHECKING:
    import jsonschema

    from ._tables import ReadableFrame
    from .plots import TraceFigure

#: Bounds of plasmate.trace.v1; trace_status reports them, an export does not.
MAX_EVENTS = 128
MAX_BYTES = 49_152


#: The fields of a trace_status payload, each an attribute of ``TraceStatus``.
STATUS_FIELDS: dict[str, str] = {
    "schema": "The trace format: ``plasmate.trace.v1``.",
    "enabled": "True when the session is traced (chosen once, by ``open(url, trace=...)``).",
    "trace_id": "The trace's id, stable for the browser session's whole life (clears included).",
    "retained_events": "How many events the trace retains now.",
    "retained_bytes": "The retained events' total size in bytes (their compact JSON).",
    "max_events": "The bound on retained events (128).",
    "max_bytes": "The bound on retained bytes (49,152).",
    "next_sequence": "The sequence number the next recorded event will get.",
    "evicted_events": "How many events were dropped, oldest first, to stay within the bounds.",
    "oversized_events": "How many events were never retained because one alone was too large.",
    "cleared_events": "How many events ``trace.clear()`` removed.",
    "retention": "The retention policy, in words.",
}
#: The envelope fields of an export (besides ``events``), each an attribute of ``TraceExport``.
EXPORT_FIELDS: dict[str, str] = {
    "trace_id": STATUS_FIELDS["trace_id"],
    "session_id": "The id of the browser session that recorded the trace.",
    **{name: STATUS_FIELDS[name] for name in COUNTERS},
}


def _payload_field(name: str, doc: str, owner: str) -> property:
    """A read-only attribute for ``payload[name]``, documented by ``doc`` and an example on ``owner``."""
    doc = f"{doc}\n\n>>> {owner}.{name}"

    def get(self: Any) -> Any:
        try:
            return self.payload[name]
        except KeyError:
            raise AttributeError(name) from None

    get.__name__ = get.__qualname__ = name
    get.__doc__ = doc
    return property(get, doc=doc)


class TraceFormatError(HintedError, ValueError):
    """A document is not a plasmate.trace.v1 export, or its file cannot be read.

    ``path`` is the failing JSON path (``$``, the whole document, when the file cannot be read
    or parsed); ``reason`` is what is wrong there and ``detail`` both, as a sentence; the
    message adds the file's name. The ``hint`` says what an export is, or to check the path.

    >>> try:
    ...     load_trace("not-a-trace.json")
    ... except TraceFormatError as error:
    ...     print(error.path)        # e.g. '$.events[3].sequence'
    """

    def __init__(self, path: str, message: str, source: str | None = None) -> None:
        self.path = path
        self.reason = message  # what is wrong there, without the file's name
        where = f" in {source}" if source else ""
        super().__init__(f"{errors.NOT_AN_EXPORT}{where}: {self.detail}")
        self.with_hint(errors.TRACE_EXPORT_HINT)

    @classmethod
    def _unreadable(cls, failure: OSError, source: str) -> TraceFormatError:
        """The file ``source`` cannot be read (``failure`` says why): said first, with its own hint."""
        reason = failure.strerror or type(failure).__name__
        error = cls.__new__(cls)
        Exception.__init__(error, errors.cannot_read_file(reason, source))
        error.path, error.reason = "$", errors.cannot_read_file(reason)
        folder = isinstance(failure, IsADirectoryError)
        return error.with_hint(errors.TRACE_FOLDER_HINT if folder else errors.TRACE_FILE_HINT)

    @property
    def detail(self) -> str:
        """What is wrong and where, without the file's name (the path only inside the document).

        >>> error.detail             # e.g. 'at $.events[3].sequence: sequences must increase ...'
        """
        return errors.export_finding(self.path, self.reason)


def _counters_html(payload: dict[str, Any]) -> str:
    return table(("counter", "value"), [(name, payload.get(name)) for name in COUNTERS if name in payload])


class TraceStatus:
    """A ``trace_status`` answer: tracing mode, trace_id, counters and bounds, as attributes.

    Every field is an attribute (they complete with Tab); ``payload`` is the answer as sent.

    >>> st = s.trace.status()
    >>> st.retained_events, st.max_events, st.evicted_events
    """

    # Read-only properties over ``payload``, documented by STATUS_FIELDS (set below the class).
    schema: str
    enabled: bool
    trace_id: str
    retained_events: int
    retained_bytes: int
    max_events: int
    max_bytes: int
    next_sequence: int
    evicted_events: int
    oversized_events: int
    cleared_events: int
    retention: str

    def __init__(self, payload: dict[str, Any]) -> None:
        self.payload = payload

    def __getattr__(self, name: str) -> Any:  # fields a server adds beyond the contract's
        try:
            return self.payload[name]
        except KeyError:
            raise AttributeError(name) from None

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | {k for k in self.payload if k.isidentifier()})

    def _repr_html_(self) -> str:
        p = self.payload
        body = (
            f"<div>tracing {'enabled' if p['enabled'] else 'disabled'} · trace_id <code>{cell(p['trace_id'])}</code></div>"
            + gauge("retained events", p["retained_events"], p["max_events"])
            + gauge("retained bytes", p["retained_bytes"], p["max_bytes"])
            + _counters_html(p)
            + f"<div><i>{cell(p.get('retention'))}</i></div>"
        )
        return box("Trace status", body)

    def __repr__(self) -> str:
        p = self.payload
        return (
            f"TraceStatus(enabled={p['enabled']}, trace_id={p['trace_id']!r}, "
            f"events={p['retained_events']}/{p['max_events']}, bytes={p['retained_bytes']}/{p['max_bytes']}, "
            f"next_sequence={p['next_sequence']}, evicted={p['evicted_events']}, "
            f"oversized={p['oversized_events']}, cleared={p['cleared_events']})"
        )


class TraceCleared:
    """A ``trace_clear`` answer: ``cleared_events`` removed now, and the new ``status``.

    >>> s.trace.clear().cleared_events
    """

    def __init__(self, payload: dict[str, Any]) -> None:
        self.payload = payload
        self.cleared_events: int = payload["cleared_events"]
        self.status = TraceStatus(payload["status"])

    def _repr_html_(self) -> str:
        return box(
            f"Trace cleared: {counted(self.cleared_events, 'event')} removed", self.status._repr_html_()
        )

    def __repr__(self) -> str:
        return f"TraceCleared(cleared_events={self.cleared_events}, status={self.status!r})"


class TraceExport:
    """A ``plasmate.trace.v1`` export (``trace_export``, a final trace, or a loaded file).

    The envelope fields are attributes, ``events()`` is the typed table and ``payload`` the
    JSON document itself; it touches disk only when asked (``to_json``, ``to_parquet``).

    >>> export = s.trace.export()
    >>> export.retained_events, export.events()
    >>> export.to_json("trace.json")
    """

    # Read-only properties over ``payload``, documented by EXPORT_FIELDS (set below the class).
    trace_id: str
    session_id: str
    retained_events: int
    retained_bytes: int
    next_sequence: int
    evicted_events: int
    oversized_events: int
    cleared_events: int

    def __init__(self, payload: dict[str, Any]) -> None:
        self.payload = payload

    @property
    def counters(self) -> dict[str, int]:
        """The six counters (retained, bytes, next sequence, evicted, oversized, cleared) as a dict.

        >>> final.counters["evicted_events"]
        """
        return {name: self.payload[name] for name in COUNTERS}

    def events(self, columns: str | Sequence[str] = "compact") -> ReadableFrame:
        """The retained events as a pandas table: one row per event, typed columns.

        ``columns="compact"`` (the default) keeps what reads at a glance (``COMPACT_COLUMNS``:
        sequence, action, outcome, error class, duration, target role, origins, what changed,
        what was redacted); ``columns="all"`` gives every column (``EVENT_COLUMNS``: also the
        target's keyed id, ``has_page`` flags and the sanitised parameters); a list picks columns.

        >>> export.events()                                  # the compact table
        >>> export.events(columns="all")                     # all 21 columns
        >>> export.events(["sequence", "action", "pixels"])
        """
        from ._tables import events_frame

        return events_frame(self.payload["events"], columns)

    def plot(self) -> TraceFigure:
        """A matplotlib figure of this export: retained bytes and events, drops, and durations by action.

        Over the sequence: bytes and events of the retained events, oversized drops where the
        sequence has a gap, and the span before the first retained event (evicted, cleared or
        oversized: an export cannot tell which one each was). Below, each event's duration by
        action, coloured by outcome. Needs matplotlib (``pip install 'plasmate_nb[lab]'``).
        A live session's ``s.trace.plot()`` adds what it watched happen, with a time axis.

        >>> pnb.load_trace("trace.json").plot()
        """
        return plotter()(self.payload)

    def to_json(self, path: str | Path) -> Path:
        """Write the export to ``path`` as compact JSON and return the path; ``load_trace`` reads it back.

        >>> export.to_json("trace.json")
        """
        target = Path(path)
        # Encoded first: a file that exists is never emptied by a value that cannot be written.
        target.write_bytes(
            json.dumps(self.payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        )
        return target

    def to_parquet(self, path: str | Path) -> Path:
        """Write the events table, with a leading ``trace_id`` column, to ``path`` as Parquet.

        >>> export.to_parquet("events.parquet")
        """
        import pandas as pd

        from ._tables import STRING

        target = Path(path)
        table_ = self.events(columns="all")
        table_.insert(
            0, "trace_id", pd.Series([self.trace_id] * len(table_), dtype=STRING, index=table_.index)
        )
        table_.to_parquet(target, index=False)
        return target

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TraceExport) and other.payload == self.payload

    __hash__ = None  # type: ignore[assignment]

    def _repr_html_(self) -> str:
        p = self.payload
        head = (
            f"<div>trace_id <code>{cell(p['trace_id'])}</code> · session <code>{cell(p['session_id'])}</code></div>"
            + gauge("retained events", p["retained_events"], MAX_EVENTS)
            + gauge("retained bytes", p["retained_bytes"], MAX_BYTES)
            + _counters_html(p)
            + f"<div><i>{cell(p['redaction_policy'])}</i></div>"
        )
        from ._tables import frame_html

        frame_ = self.events()
        events_html = frame_html(frame_) if len(frame_) else "<div>no retained events</div>"
        return box("plasmate.trace.v1 export", head + events_html)

    def __repr__(self) -> str:
        p = self.payload
        actions = ", ".join(f"{e['sequence']}:{e['action']}" for e in p["events"][-8:])
        more = "…, " if len(p["events"]) > 8 else ""
        return (
            f"TraceExport(trace_id={p['trace_id']!r}, events={p['retained_events']}, bytes={p['retained_bytes']}, "
            f"next_sequence={p['next_sequence']}, evicted={p['evicted_events']}, oversized={p['oversized_events']}, "
            f"cleared={p['cleared_events']}, last=[{more}{actions}])"
        )


def plotter() -> Callable[..., TraceFigure]:
    """``plots.plot_trace``, imported on first use (matplotlib loads only when a plot is drawn).

    >>> plotter()(export.payload).savefig("trace.png")
    """
    try:
        from .plots import plot_trace
    except ModuleNotFoundError as error:
        if (error.name or "").partition(".")[0] != "matplotlib":
            raise
        raise ModuleNotFoundError(
            "plots need matplotlib, which comes with the lab extra: pip install 'plasmate_nb[lab]' "
            "(or pip install matplotlib), then restart the kernel",
            name="matplotlib",
        ) from None
    return plot_trace


class FinalTraceOmitted:
    """The marker ``close()`` returns when the final trace exceeded the server's response ceiling.

    It is falsy and its ``reason`` says why; the trace is gone with the session, so call
    ``s.trace.export()`` before ``s.close()`` to keep a bounded export.

    >>> final = s.close()
    >>> if not final:
    ...     print(final.reason)
    """

    def __init__(self, payload: dict[str, Any]) -> None:
        self.payload = payload
        self.reason: str = payload.get("reason", "")

    def __bool__(self) -> bool:
        return False

    def _message(self) -> str:
        return (
            f"final trace omitted by the server: {self.reason}. The trace is gone with the session; "
            "call s.trace.export() before s.close() to keep a bounded export"
        )

    def _repr_html_(self) -> str:
        return box("Final trace omitted", f"<div>{cell(self._message())}</div>")

    def __repr__(self) -> str:
        return f"FinalTraceOmitted({self._message()!r})"


# -- reading exported JSON --------------------------------------------------------------------


@functools.cache
def schema() -> dict[str, Any]:
    """The shipped JSON Schema (Draft 2020-12) of an export or final trace, as a dict.

    >>> schema()["$id"]
    """
    text = resources.files(__package__).joinpath("trace_v1.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


@functools.cache
def schema_validator() -> jsonschema.Draft202012Validator:
    """The jsonschema validator of the export schema: it explains why a document is not an export.

    >>> [e.json_path for e in schema_validator().iter_errors({"schema": "x"})]
    """
    # Imported only to explain a rejection: importing jsonschema loads its format checkers, some
    # of which build parsers at import (over a second), and valid documents never need it.
    import jsonschema

    return jsonschema.Draft202012Validator(schema())


@functools.cache
def _fast_validator() -> Callable[[Any], Any]:
    """The same schema compiled to Python by fastjsonschema (once, on first use): accepts or rejects only.

    The schema uses no keyword newer than draft-07 (no $ref beside other keywords, no
    prefixItems, no unevaluated*), so draft-07 reads it as 2020-12 does; a test keeps the two
    validators in agreement.
    """
    import fastjsonschema

    draft07 = {**schema(), "$schema": "http://json-schema.org/draft-07/schema#"}
    # No defaults are filled in (the document is left as read), no format is checked (none is used).
    return fastjsonschema.compile(draft07, use_default=False, use_formats=False)


def schema_accepts(document: Any) -> bool:
    """Whether the compiled validator accepts ``document``. For a value parsed from JSON text,
    jsonschema then does too: there the two differ only where the compiled one is stricter (a
    string ending in a newline). In Python objects it also takes a tuple for an array."""
    from fastjsonschema import JsonSchemaValueException

    try:
        _fast_validator()(document)
    except JsonSchemaValueException:
        return False  # its message quotes keys: never shown
    return True


def plain_json(document: Any) -> bool:
    """Whether a document given in memory holds JSON values only: one that a JSON round trip
    leaves equal (a tuple becomes a list, a number key a string: neither compares equal)."""
    try:
        return bool(strict_loads(compact_json(document)) == document)
    except (TypeError, ValueError, RecursionError):  # not JSON-serialisable (a set, NaN, too deep)
        return False


def _validate(document: Any, source: str | None, *, parsed: bool) -> None:
    """Raise ``TraceFormatError`` unless ``document`` matches the schema.

    The compiled validator decides; only a rejection loads jsonschema, whose first error gives
    the precise path and message (where the two differ at the edges, jsonschema's verdict stands).
    Its yes stands for a document ``parsed`` from JSON text, or one of plain JSON values: in
    Python objects it also takes a tuple for an array.
    """
    if not (schema_accepts(document) and (parsed or plain_json(document))):
        _raise_first_error(schema_validator(), document, source)


_ENVELOPE_KEYS = frozenset(("schema", "trace_id", "session_id", "redaction_policy", "events", *COUNTERS))


def _plain_envelope(document: Any) -> bool:
    """The fast path of load_traces: a cheap exact check of an export envelope (no events).

    Anything unusual (including an omitted marker) goes to the full schema instead.
    """
    return (
        type(document) is dict
        and document.keys() == _ENVELOPE_KEYS
        and document["schema"] == SCHEMA
        and all(type(document[name]) is int and document[name] >= 0 for name in COUNTERS)
        and type(document["trace_id"]) is str
        and type(document["session_id"]) is str
        and 0 < len(document["trace_id"]) <= 64
        and 0 < len(document["session_id"]) <= 64
        and type(document["events"]) is list
        and len(document["events"]) <= MAX_EVENTS
        and document["retained_bytes"] <= MAX_BYTES
        and document["next_sequence"] >= 1
    )


def _raise_first_error(validator: jsonschema.Draft202012Validator, document: Any, source: str | None) -> None:
    from jsonschema.exceptions import best_match

    error = best_match(validator.iter_errors(document))
    if error is not None:
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            message = _unexpected_keys(error.instance, error.schema)
        elif error.validator == "required" and (missing := _REQUIRED.fullmatch(error.message)):
            message = errors.required_field_missing(missing[1])
        else:
            message = _without_value(error.message, error.instance)
        raise TraceFormatError(error.json_path, message, source)


#: jsonschema's message for a missing required property: the name is the schema's, not the file's.
_REQUIRED = re.compile(r"'(\w+)' is a required property")


def _unexpected_keys(instance: dict[str, Any], object_schema: Any) -> str:
    """jsonschema's "Additional properties" message, naming only keys the schema knows: another
    key may itself be the secret (``"password=hunter2": true``), so it is described by its size."""
    allowed = object_schema.get("properties", {}) if isinstance(object_schema, dict) else {}
    names = _schema_names()
    shown = [
        repr(key) if key in names else f"a key of {utf8_len(key)} bytes"
        for key in instance
        if key not in allowed
    ]
    return f"Additional properties are not allowed ({', '.join(shown)} unexpected)"


@functools.cache
def _schema_names() -> frozenset[str]:
    """Every property name the schema defines anywhere."""
    names: set[str] = set()
    stack: list[Any] = [schema()]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            names.update(node.get("properties", {}) if isinstance(node.get("properties"), dict) else ())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return frozenset(names)


def _without_value(message: str, instance: Any) -> str:
    """jsonschema's ``message`` with the offending value it starts with described, not quoted: the
    value of a document that breaks the contract may be the very URL or secret it should not hold."""
    quoted = repr(instance)
    if not message.startswith(quoted):
        return message
    if isinstance(instance, str):
        described = f"a string of {len(instance)} characters"
    elif isinstance(instance, dict):
        described = "an object"
    elif isinstance(instance, list):
        described = f"an array of {len(instance)} items"
    elif isinstance(instance, bool) or instance is None:
        return message
    else:
        described = "a number"
    return described + message.removeprefix(quoted)


def _check_counters(document: dict[str, Any], source: str | None, sequences: list[int] | None = None) -> None:
    """What a schema cannot say: the counters agree with the events and with each other."""
    events = document["events"]
    if document["retained_events"] != len(events):
        raise TraceFormatError(
            "$.retained_events", f"says {document['retained_events']} but events has {len(events)}", source
        )
    total = sum(
        document[k] for k in ("retained_events", "evicted_events", "oversized_events", "cleared_events")
    )
    if document["next_sequence"] - 1 != total:
        raise TraceFormatError(
            "$.next_sequence",
            "next_sequence - 1 must equal retained + evicted + oversized + cleared events",
            source,
        )
    sequences = [e["sequence"] for e in events] if sequences is None else sequences
    for index, (previous, current) in enumerate(itertools.pairwise([0, *sequences])):
        if current <= previous or current >= document["next_sequence"]:
            raise TraceFormatError(
                f"$.events[{index}].sequence", "sequences must increase and stay below next_sequence", source
            )


_JSON_TEXT = "JSON text"  # the label of a document given as text rather than a file


def is_json_text(source: object) -> TypeGuard[str]:
    """Whether a string source is JSON text rather than a path: it starts as JSON does and names
    nothing that exists (``"[run 1].json"`` and a folder ``"[batch 1]"`` are paths)."""
    if not isinstance(source, str) or not source.lstrip().startswith(("{", "[")):
        return False
    try:
        return not Path(source).exists()
    except (OSError, ValueError):  # far too long, or a NUL, for a file name
        return True


def _parse(source: str | Path | dict[str, Any], reader: str = "load_trace") -> tuple[Any, str | None]:
    if isinstance(source, dict):
        return source, None
    if not isinstance(source, str | os.PathLike):
        raise TypeError(errors.not_an_export_source(type(source).__name__, reader))
    if is_json_text(source):
        label = _JSON_TEXT
        text = source
    else:
        path = Path(source)
        label = file_label(path)
        try:
            text = read_export_bytes(path).decode("utf-8")
        except OSError as exc:
            raise TraceFormatError._unreadable(exc, label) from None
        except UnicodeDecodeError as exc:
            raise TraceFormatError("$", errors.not_utf8(exc.start), label) from None
    try:
        return strict_loads(text), label
    except ValueError as exc:
        raise TraceFormatError("$", errors.not_valid_json(exc), label) from None


def _unwrap_close_payload(document: Any) -> Any:
    # A whole close_page payload is accepted too: its trace is the final_trace member. An export
    # carrying those keys as well stays an export (whose schema refuses them): one file, one trace.
    if (
        isinstance(document, dict)
        and "final_trace" in document
        and "closed" in document
        and not {"schema", "events"} & document.keys()
    ):
        return document["final_trace"]
    return document


def load_trace(source: str | Path | dict[str, Any]) -> TraceExport | FinalTraceOmitted:
    """Read one exported trace from a file path, JSON text or dict, validated against the schema.

    Accepts a ``trace_export`` answer, a final trace or a whole ``close_page`` answer; returns a
    ``TraceExport`` (or a ``FinalTraceOmitted`` marker). ``TraceFormatError`` says what is wrong
    and, inside the document, where (its JSON path), or that the file cannot be read. Needs no
    browser: this is the pure reader.

    >>> export = load_trace("trace.json")
    >>> export.events()
    """
    document, label = _parse(source)
    return checked_trace(_unwrap_close_payload(document), label, parsed=not isinstance(source, dict))


def checked_trace(
    document: Any, source: str | None = None, *, parsed: bool = False
) -> TraceExport | FinalTraceOmitted:
    """``document`` as a ``TraceExport`` (or the omitted marker) once the schema and the counter
    rules accept it; ``TraceFormatError`` otherwise (``source`` names the document in it)."""
    _validate(document, source, parsed=parsed)
    if document.get("omitted") is True:
        return FinalTraceOmitted(document)
    _check_counters(document, source)
    return TraceExport(document)


#: ``load_traces(engine="auto")`` lets DuckDB read more files than this.
AUTO_DUCKDB_FILES = 1000


def load_traces(
    sources: str | Path | Iterable[str | Path | dict[str, Any]],
    *,
    validate: Literal["fast", "full"] = "fast",
    engine: Literal["auto", "pandas", "duckdb"] = "auto",
) -> ReadableFrame:
    """Read many exported traces into one events table, with ``trace_id`` and ``source_file``.

    ``sources``: a folder (every ``*.json`` in it, sorted), or paths / JSON texts / dicts;
    ``source_file`` is the file each row came from (empty for JSON texts and dicts).
    ``validate="fast"`` checks each envelope exactly and, while the columns are built, each
    event's keys, action, outcome, error class, duration, origins and role; anything unusual
    re-runs the full schema for a precise error. It does not check fingerprints' form, parameter
    values or other types inside events: for files from an unknown writer use
    ``validate="full"`` (every document through the full schema) or ``pnb.audit``. Omitted
    final-trace markers carry no events and are skipped.

    ``engine="duckdb"`` lets DuckDB read the files itself (paths only): the same table, parsed
    on every core, with no Python object per event until the table is built. Its checks are
    fewer: the envelope, each event's action, outcome, error class and duration, the counters;
    a value of the wrong type is converted where DuckDB can, and of a key given twice it reads
    the first (``load_trace`` and ``pnb.audit`` refuse such a file). ``"auto"`` (the default)
    uses it for more than ``AUTO_DUCKDB_FILES`` files; ``pnb.fleet(folder)`` summarises folders
    too big for one table without building it.

    >>> table = load_traces("traces/")
    >>> table.groupby("source_file")["action"].value_counts()
    >>> big = load_traces("fleet/", engine="duckdb")
    """
    if validate not in ("fast", "full"):
        raise ValueError("validate must be 'fast' or 'full'")
    if engine not in ("auto", "pandas", "duckdb"):
        raise ValueError("engine must be 'auto', 'pandas' or 'duckdb'")
    if isinstance(sources, str | Path) and Path(sources).is_dir():
        sources = sorted(Path(sources).glob("*.json"))
    elif isinstance(sources, str | Path | dict):
        sources = [sources]
    if engine != "pandas":
        sources = list(sources)
        paths = all(isinstance(s, Path) or (isinstance(s, str) and not is_json_text(s)) for s in sources)
        if engine == "duckdb" and (not paths or validate == "full"):
            raise ValueError(
                "engine='duckdb' reads files with fast validation: pass paths or a folder, validate='fast'"
            )
        if paths and validate == "fast" and (engine == "duckdb" or len(sources) > AUTO_DUCKDB_FILES):
            from ._export_sql import load_events  # lazy: DuckDB loads only for big folders

            files = [Path(source) for source in sources if not isinstance(source, dict)]
            return load_events(files, lambda subset: load_traces(subset, engine="pandas"))
    from ._tables import EVENT_COLUMNS, STRING, frame  # pandas: the answer is a DataFrame

    trace_ids: list[str] = []
    source_files: list[str | None] = []
    merged: dict[str, list[Any]] = {name: [] for name in EVENT_COLUMNS}
    spans: list[tuple[str | None, int, int]] = []  # each document's rows, for naming a failing one
    for source in sources:
        document, label = _parse(source, "load_traces")
        document = _unwrap_close_payload(document)
        if validate == "full" or not _plain_envelope(document):
            _validate(document, label, parsed=not isinstance(source, dict))
            if document.get("omitted") is True:
                continue
        try:
            columns = _checked_columns(document["events"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            _raise_first_error(schema_validator(), document, label)
            # The schema takes it; a table cannot (a duration beyond a 64-bit count).
            reason = str(exc) if isinstance(exc, ValueError) else f"a malformed event ({type(exc).__name__})"
            raise TraceFormatError("$.events", reason, label) from None
        _check_counters(document, label, columns["sequence"])
        spans.append((label, len(trace_ids), len(trace_ids) + len(document["events"])))
        trace_ids.extend([document["trace_id"]] * len(document["events"]))
        source_files.extend([None if label == _JSON_TEXT else label] * len(columns["sequence"]))
        for name, values in columns.items():
            merged[name].extend(values)
    try:
        return frame(merged, leading={"trace_id": (trace_ids, STRING), "source_file": (source_files, STRING)})
    except (TypeError, ValueError, OverflowError) as exc:  # a value a column cannot hold got past the checks
        # pandas' own message may quote the value (which may be what the export should not hold).
        failure = f"a value no table column holds ({type(exc).__name__}); load_trace() gives its path"
        raise TraceFormatError("$.events", failure, _first_failing(merged, spans)) from None


def _first_failing(merged: dict[str, list[Any]], spans: list[tuple[str | None, int, int]]) -> str | None:
    """The label of the first document whose rows alone cannot make a table (rare: only then)."""
    from ._tables import frame

    for label, start, end in spans:
        try:
            frame({name: values[start:end] for name, values in merged.items()}, leading={})
        except (TypeError, ValueError, OverflowError):
            return label
    return None


_DEFS = schema()["$defs"]
_ACTIONS = frozenset(_DEFS["event"]["properties"]["action"]["enum"])
_OUTCOMES = frozenset(("success", "error"))
_EVENT_KEYS = frozenset(_DEFS["event"]["properties"])
_STATE_KEYS = frozenset(_DEFS["state"]["properties"])
_ERROR_CLASSES = frozenset(_DEFS["event"]["properties"]["error_class"]["enum"])
_ORIGIN = re.compile(_DEFS["origin"]["pattern"])
#: The parameter keys any action may carry (the schema's per-action rules), checked at once.
_PARAMETER_NAMES = frozenset(
    name
    for rule in _DEFS["event"]["allOf"][1:]
    for name in rule["then"]["properties"]["parameters"].get("properties", {})
)
_INT64_MAX = 2**63 - 1  # the largest count a table column holds


def is_count(value: Any) -> bool:
    """A JSON integer (``3.0`` is one too) a table column holds."""
    if type(value) is float and value.is_integer():
        value = int(value)
    return type(value) is int and 0 <= value <= _INT64_MAX


def _checked_columns(events: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """The event columns, after the checks a table's reader relies on: every key one the schema
    names for its place (a parameter's, for some action), known actions, outcomes and error
    classes (an error with one, a success without), durations that are whole, non-negative
    counts a table holds, sequences that are counts, origins of the contract's form, roles that
    are words. Anything else raises: the full schema says where."""
    from ._tables import event_columns

    columns = event_columns(events)
    # Unions of key sets, taken in C: a few milliseconds for 100k events.
    if (
        not {SCHEMA}.issuperset(map(itemgetter("schema"), events))
        or not _EVENT_KEYS.issuperset(set().union(*events))
        or not _STATE_KEYS.issuperset(set().union(*map(itemgetter("before"), events)))
        or not _STATE_KEYS.issuperset(set().union(*map(itemgetter("after"), events)))
        or not _PARAMETER_NAMES.issuperset(set().union(*map(itemgetter("parameters"), events)))
    ):
        raise ValueError("an event with a key the contract does not name")
    if not _ACTIONS.issuperset(columns["action"]) or not _OUTCOMES.issuperset(columns["outcome"]):
        raise ValueError("unknown action or outcome")
    if not all(
        (outcome == "error") == (error_class in _ERROR_CLASSES)
        for outcome, error_class in zip(columns["outcome"], columns["error_class"], strict=True)
    ) or any("error_class" in event for event in events if event["outcome"] == "success"):
        raise ValueError("an error class that does not match the outcome")
    if not all(is_count(d) for d in columns["duration_ms"]):
        raise ValueError("a duration that is not a count of milliseconds a table holds")
    if not all(is_count(sequence) for sequence in columns["sequence"]):  # compared with the counters next
        raise ValueError("a sequence that is not a count")
    origins = {*columns["before_origin"], *columns["after_origin"]} - {None}
    # Matched as the schema's validator matches a pattern (a search, anchored by the pattern).
    if not all(type(o) is str and _ORIGIN.match(o) for o in origins):
        raise ValueError("an origin not of the form scheme://host:port")
    if not all(role is None or (type(role) is str and role) for role in columns["target_role"]):
        raise ValueError("a target role that is not a word")
    return columns


for _name, _doc in STATUS_FIELDS.items():
    setattr(TraceStatus, _name, _payload_field(_name, _doc, "s.trace.status()"))
for _name, _doc in EXPORT_FIELDS.items():
    setattr(TraceExport, _name, _payload_field(_name, _doc, "final"))
del _name, _doc
