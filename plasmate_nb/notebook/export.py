"""Trace objects over the tool payloads: ``TraceStatus``, ``TraceExport``, ``FinalTraceOmitted``,
``TraceCleared``, and the readers ``load_trace`` / ``load_traces``.

Everything here reads exported JSON only, so it shows exactly what an export contains.
"""

from __future__ import annotations

import functools
import itertools
import json
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pandas as pd

from ._html import box, cell, gauge, table
from ._tables import EVENT_COLUMNS, STRING, event_columns, events_frame, frame

COUNTERS = ("retained_events", "retained_bytes", "next_sequence", "evicted_events", "oversized_events", "cleared_events")
#: Bounds of plasmate.trace.v1; trace_status reports them, an export does not.
MAX_EVENTS = 128
MAX_BYTES = 49_152


class TraceFormatError(ValueError):
    """A document is not a plasmate.trace.v1 export; ``path`` is the failing JSON path."""

    def __init__(self, path: str, message: str, source: str | None = None) -> None:
        self.path = path
        where = f" in {source}" if source else ""
        super().__init__(f"not a plasmate.trace.v1 export{where}: {path}: {message}")


def _counters_html(payload: dict[str, Any]) -> str:
    return table(("counter", "value"), [(name, payload.get(name)) for name in COUNTERS if name in payload])


class TraceStatus:
    """The ``trace_status`` payload: tracing mode, trace_id, counters and bounds."""

    def __init__(self, payload: dict[str, Any]) -> None:
        self.payload = payload

    def __getattr__(self, name: str) -> Any:
        try:
            return self.payload[name]
        except KeyError:
            raise AttributeError(name) from None

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
    """The ``trace_clear`` payload: how many events were removed now, and the new status."""

    def __init__(self, payload: dict[str, Any]) -> None:
        self.payload = payload
        self.cleared_events: int = payload["cleared_events"]
        self.status = TraceStatus(payload["status"])

    def _repr_html_(self) -> str:
        return box(f"Trace cleared: {self.cleared_events} events removed", self.status._repr_html_())

    def __repr__(self) -> str:
        return f"TraceCleared(cleared_events={self.cleared_events}, status={self.status!r})"


class TraceExport:
    """A ``trace_export`` payload (or a close_page ``final_trace``) with tables and reprs."""

    def __init__(self, payload: dict[str, Any]) -> None:
        self.payload = payload

    trace_id = property(lambda self: self.payload["trace_id"])
    session_id = property(lambda self: self.payload["session_id"])
    retained_events = property(lambda self: self.payload["retained_events"])
    retained_bytes = property(lambda self: self.payload["retained_bytes"])
    next_sequence = property(lambda self: self.payload["next_sequence"])
    evicted_events = property(lambda self: self.payload["evicted_events"])
    oversized_events = property(lambda self: self.payload["oversized_events"])
    cleared_events = property(lambda self: self.payload["cleared_events"])

    @property
    def counters(self) -> dict[str, int]:
        return {name: self.payload[name] for name in COUNTERS}

    def events(self) -> pd.DataFrame:
        """One row per retained event, typed columns (see ``EVENT_COLUMNS``)."""
        return events_frame(self.payload["events"])

    def to_json(self, path: str | Path) -> Path:
        """Write the payload as compact JSON (the only way this object touches disk)."""
        target = Path(path)
        target.write_text(json.dumps(self.payload, separators=(",", ":"), ensure_ascii=False), encoding="utf-8")
        return target

    def to_parquet(self, path: str | Path) -> Path:
        """Write the events table, with a ``trace_id`` column, as Parquet."""
        target = Path(path)
        table_ = self.events()
        table_.insert(0, "trace_id", pd.array([self.trace_id] * len(table_), dtype=STRING))
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
        frame_ = self.events()
        events_html = frame_.to_html(index=False, na_rep="", max_rows=200) if len(frame_) else "<div>no retained events</div>"
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


class FinalTraceOmitted:
    """close_page's ``final_trace`` marker: the export exceeded the 64 KiB response ceiling."""

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
    """The shipped JSON Schema (Draft 2020-12) of an export or final_trace."""
    text = resources.files(__package__).joinpath("trace_v1.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


@functools.cache
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema())


_ENVELOPE_KEYS = frozenset(("schema", "trace_id", "session_id", "redaction_policy", "events", *COUNTERS))


def _plain_envelope(document: Any) -> bool:
    """The fast path of load_traces: a cheap exact check of an export envelope (no events).

    Anything unusual (including an omitted marker) goes to the full schema instead.
    """
    return (
        type(document) is dict
        and document.keys() == _ENVELOPE_KEYS
        and document["schema"] == "plasmate.trace.v1"
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
    error = jsonschema.exceptions.best_match(validator.iter_errors(document))
    if error is not None:
        raise TraceFormatError(error.json_path, error.message, source)


def _check_counters(document: dict[str, Any], source: str | None, sequences: list[int] | None = None) -> None:
    """What a schema cannot say: the counters agree with the events and with each other."""
    events = document["events"]
    if document["retained_events"] != len(events):
        raise TraceFormatError("$.retained_events", f"says {document['retained_events']} but events has {len(events)}", source)
    total = sum(document[k] for k in ("retained_events", "evicted_events", "oversized_events", "cleared_events"))
    if document["next_sequence"] - 1 != total:
        raise TraceFormatError(
            "$.next_sequence", "next_sequence - 1 must equal retained + evicted + oversized + cleared events", source
        )
    sequences = [e["sequence"] for e in events] if sequences is None else sequences
    for index, (previous, current) in enumerate(itertools.pairwise([0, *sequences])):
        if current <= previous or current >= document["next_sequence"]:
            raise TraceFormatError(f"$.events[{index}].sequence", "sequences must increase and stay below next_sequence", source)


def _parse(source: str | Path | dict[str, Any]) -> tuple[Any, str | None]:
    if isinstance(source, dict):
        return source, None
    if isinstance(source, str) and source.lstrip().startswith(("{", "[")):
        label = "JSON text"
        text = source
    else:
        path = Path(source)
        label = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise TraceFormatError("$", f"cannot read file ({exc.strerror})", label) from None
    try:
        return json.loads(text), label
    except ValueError as exc:
        raise TraceFormatError("$", f"invalid JSON ({exc})", label) from None


def _unwrap_close_payload(document: Any) -> Any:
    # A whole close_page payload is accepted too: its trace is the final_trace member.
    if isinstance(document, dict) and "final_trace" in document and "closed" in document:
        return document["final_trace"]
    return document


def load_trace(source: str | Path | dict[str, Any]) -> TraceExport | FinalTraceOmitted:
    """A ``TraceExport`` from a file path, JSON text or dict (trace_export or final_trace).

    Validated against the shipped JSON Schema; ``TraceFormatError`` names the failing path.
    """
    document, label = _parse(source)
    document = _unwrap_close_payload(document)
    _raise_first_error(_validator(), document, label)
    if document.get("omitted") is True:
        return FinalTraceOmitted(document)
    _check_counters(document, label)
    return TraceExport(document)


def load_traces(sources: str | Path | Iterable[str | Path | dict[str, Any]], *, validate: str = "fast") -> pd.DataFrame:
    """One events table across many exports, with a leading ``trace_id`` column.

    ``sources``: a folder (every ``*.json`` in it, sorted), or paths / JSON texts / dicts.
    ``validate="fast"`` checks each envelope exactly and each event's shape while the
    columns are built; any anomaly re-runs the full schema for a precise error.
    ``validate="full"`` runs the full schema on every document first. Omitted final-trace
    markers carry no events and are skipped.
    """
    if validate not in ("fast", "full"):
        raise ValueError("validate must be 'fast' or 'full'")
    if isinstance(sources, str | Path) and Path(sources).is_dir():
        sources = sorted(Path(sources).glob("*.json"))
    elif isinstance(sources, str | Path | dict):
        sources = [sources]
    trace_ids: list[str] = []
    merged: dict[str, list[Any]] = {name: [] for name in EVENT_COLUMNS}
    for source in sources:
        document, label = _parse(source)
        document = _unwrap_close_payload(document)
        if validate == "full" or not _plain_envelope(document):
            _raise_first_error(_validator(), document, label)
            if document.get("omitted") is True:
                continue
        try:
            columns = _checked_columns(document["events"])
        except (KeyError, TypeError, ValueError, AttributeError):
            _raise_first_error(_validator(), document, label)
            raise
        _check_counters(document, label, columns["sequence"])
        trace_ids.extend([document["trace_id"]] * len(document["events"]))
        for name, values in columns.items():
            merged[name].extend(values)
    try:
        return frame(merged, leading={"trace_id": (trace_ids, STRING)})
    except (TypeError, ValueError) as exc:  # a value of the wrong type slipped past the shape checks
        raise TraceFormatError("$.events", f"a value has the wrong type ({exc}); load it with load_trace() for its path") from None


_ACTIONS = frozenset(schema()["$defs"]["event"]["properties"]["action"]["enum"])
_OUTCOMES = frozenset(("success", "error"))


def _checked_columns(events: list[dict[str, Any]]) -> dict[str, list[Any]]:
    columns = event_columns(events)
    if not _ACTIONS.issuperset(columns["action"]) or not _OUTCOMES.issuperset(columns["outcome"]):
        raise ValueError("unknown action or outcome")
    return columns
