"""``audit``: does a trace keep the contract's promises? For exports from any engine, ours or another.

An analyst receives exports they did not record. ``audit`` reads each one (a ``trace_export``
answer, a ``final_trace``, a whole ``close_page`` answer, or files and folders of them) and checks
it against docs/contract.md: structure, bounds and counters, privacy, and consistency. Each finding
names the source, the event sequence, the rule (:mod:`plasmate_nb.analysis.audit_rules`), what is
wrong and why it matters — and never the offending value: a report about a leaked secret shows its
kind, place and length only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from plasmate_nb import errors
from plasmate_nb.analysis import audit_checks as checks
from plasmate_nb.analysis._progress import progress_bar
from plasmate_nb.analysis.audit_rules import RULES_BY_ID
from plasmate_nb.notebook._export_files import read_export_bytes
from plasmate_nb.notebook._html import box, cell, counted, table
from plasmate_nb.notebook._tables import ReadableFrame
from plasmate_nb.notebook.export import is_json_text, plain_json
from plasmate_nb.trace.compact import file_label
from plasmate_nb.trace.constants import SCHEMA
from plasmate_nb.trace.json_text import JsonTextError, strict_loads

#: Columns of ``AuditReport.findings``, in order.
FINDING_COLUMNS: dict[str, Any] = {
    "source": pd.StringDtype(),
    "trace_id": pd.StringDtype(),
    "sequence": "Int64",
    "rule": pd.StringDtype(),
    "group": pd.StringDtype(),
    "section": pd.StringDtype(),
    "path": pd.StringDtype(),
    "message": pd.StringDtype(),
    "why": pd.StringDtype(),
}
_FILE_PATTERNS = ("*.json", "*.jsonl")


@dataclass(frozen=True)
class _Document:
    source: str
    payload: Any
    final_trace: bool  # known to be a close_page final_trace (sorted keys, the response ceiling)
    plain: bool  # JSON values only: read from text, or given in memory and unchanged by a round trip


@dataclass(frozen=True)
class _Unreadable:
    source: str
    reason: str


class AuditReport:
    """What ``audit`` found: ``findings`` (a DataFrame, one row per finding), ``ok``, ``documents``.

    Each finding has the ``source`` (file or input), the ``trace_id`` when it is a valid handle, the
    event ``sequence`` (or ``<NA>`` for the envelope), the ``rule`` id, its ``group`` and contract
    ``section``, the JSON ``path``, a ``message`` and ``why`` it matters. ``findings`` is a
    ``ReadableFrame``: a notebook shows each message and why whole, where pandas would cut them
    at 50 characters; computing on it gives plain DataFrames.

    >>> report = pnb.audit("traces/")
    >>> report.ok, report.documents
    >>> report.findings.groupby("rule").size()
    """

    def __init__(self, findings: pd.DataFrame, documents: int, unreadable: int) -> None:
        self.findings = ReadableFrame(findings)
        self.documents = documents
        self.unreadable = unreadable

    @property
    def ok(self) -> bool:
        """True when at least one export was read and nothing was found.

        >>> assert pnb.audit(s.trace.export()).ok
        """
        return self.documents > 0 and self.findings.empty

    def by_rule(self) -> ReadableFrame:
        """Finding counts per rule, with each rule's section and why (the most frequent first).

        A ``ReadableFrame``: a notebook shows each why whole, where pandas would cut it at 50
        characters; computing on it gives plain DataFrames.

        >>> report.by_rule()
        """
        if self.findings.empty:
            return ReadableFrame({"rule": [], "findings": [], "section": [], "why": []})
        counts = self.findings.groupby("rule", sort=False).size().rename("findings").reset_index()
        counts["section"] = [RULES_BY_ID[r].section for r in counts["rule"]]
        counts["why"] = [RULES_BY_ID[r].why for r in counts["rule"]]
        ranked = counts.sort_values("findings", ascending=False, kind="stable").reset_index(drop=True)
        return ReadableFrame(ranked)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (what ``plasmate-nb audit --json`` prints).

        >>> json.dumps(report.to_dict())
        """
        rows = self.findings.astype(object).where(self.findings.notna(), None).to_dict(orient="records")
        return {"ok": self.ok, "documents": self.documents, "unreadable": self.unreadable, "findings": rows}

    def summary(self) -> str:
        """One line: how many exports were audited and what was found.

        >>> report.summary()
        '3 exports audited: clean'
        """
        unread = f", {self.unreadable:,} unreadable" if self.unreadable else ""
        return f"{counted(self.documents, 'export')} audited{unread}: " + (
            "clean" if self.ok else counted(len(self.findings), "finding")
        )

    def __repr__(self) -> str:
        return f"AuditReport({self.summary()})"

    def _repr_html_(self) -> str:
        colour = "#1a7f37" if self.ok else "#cf222e"
        head = f"<div style='color:{colour}'><b>{cell(self.summary())}</b></div>"
        if self.findings.empty:
            return box("plasmate.trace.v1 audit", head)
        shown = ("source", "sequence", "rule", "path", "message", "why")
        records = self.to_dict()["findings"][:500]
        rows = [[record[name] for name in shown] for record in records]
        more = len(self.findings) - 500
        tail = f"<div>… and {more} more (see .findings)</div>" if more > 0 else ""
        return box("plasmate.trace.v1 audit", head + table(shown, rows, names=("source",)) + tail)


def audit(*sources: Any, progress: bool | None = None) -> AuditReport:
    """Audit exports against the contract: a dict, a ``TraceExport``, JSON text, files or folders.

    Folders are searched recursively for ``*.json`` (one document, or a JSON array of them) and
    ``*.jsonl`` (one per line). A ``close_page`` answer is audited through its ``final_trace``. An
    input that cannot be read or is not an export is reported under the rule ``unreadable``.
    A progress bar counts the files read (``progress=None`` shows it once the audit has run
    for ``_progress.PROGRESS_AFTER_S`` seconds; a widget in a notebook).

    >>> report = pnb.audit("traces/")          # or pnb.audit(s.trace.export(), "more.json")
    >>> report.ok
    >>> report.findings[["source", "sequence", "rule", "message"]]
    """
    rows: list[dict[str, Any]] = []
    documents = unreadable = 0
    inputs = list(_inputs(sources))
    files = sum(isinstance(item, Path) for item in inputs)
    with progress_bar(files, "audit", "file", progress) as bar:
        for item in _read(inputs, bar.update):
            if isinstance(item, _Unreadable):
                unreadable += 1
                rows.append(_row(item.source, None, ("unreadable", "$", None, item.reason)))
                continue
            documents += 1
            payload = item.payload
            trace_id = payload.get("trace_id") if isinstance(payload, dict) else None
            shown_id = trace_id if isinstance(trace_id, str) and checks.UUID4.fullmatch(trace_id) else None
            rows.extend(_row(item.source, shown_id, issue) for issue in _issues(item))
    frame = pd.DataFrame(
        {name: pd.array([row[name] for row in rows], dtype=dtype) for name, dtype in FINDING_COLUMNS.items()}
    )
    return AuditReport(frame, documents, unreadable)


def _row(source: str, trace_id: str | None, issue: checks.Issue) -> dict[str, Any]:
    rule_id, path, sequence, message = issue
    rule = RULES_BY_ID[rule_id]
    return {
        "source": source,
        "trace_id": trace_id,
        "sequence": sequence,
        "rule": rule_id,
        "group": rule.group,
        "section": rule.section,
        "path": path,
        "message": message,
        "why": rule.why,
    }


def _issues(document: _Document) -> list[checks.Issue]:
    """Every issue of one document: the schema's first, then the specific checks'."""
    payload = document.payload
    if not isinstance(payload, dict):
        return list(checks.schema_issues(payload, document.plain))
    specific: list[checks.Issue] = []
    if payload.get("omitted") is not None:
        specific.extend(checks.omitted_marker_issues(payload))
        specific.extend(checks.privacy_issues(payload))
    else:
        events = payload.get("events")
        last = events[-1] if isinstance(events, list) and events else None
        final_trace = document.final_trace or (isinstance(last, dict) and last.get("action") == "close_page")
        for group in (
            checks.key_order_issues(payload),
            checks.format_issues(payload),
            checks.parameter_issues(payload),
            checks.bounds_issues(payload, final_trace),
            checks.privacy_issues(payload),
            checks.consistency_issues(payload),
        ):
            specific.extend(group)
    # A schema error where a specific check already spoke adds nothing but a vaguer message.
    covered = {(rule, path) for rule, path, _, _ in specific}
    schema = [
        issue
        for issue in checks.schema_issues(payload, document.plain)
        if (issue[0], issue[1]) not in covered
    ]
    return list(dict.fromkeys(schema + specific))


# -- reading inputs ------------------------------------------------------------------------------


def _inputs(sources: tuple[Any, ...]) -> Iterator[_Document | _Unreadable | Path]:
    """What there is to audit: documents given in memory, and the files to read (folders listed)."""
    for index, source in enumerate(sources):
        label = f"input[{index}]" if len(sources) > 1 else "input"
        yield from _expand(source, label)


def _read(
    inputs: list[_Document | _Unreadable | Path], done: Callable[[int], object]
) -> Iterator[_Document | _Unreadable]:
    for item in inputs:
        if isinstance(item, Path):
            yield from _file(item)
            done(1)
        else:
            yield item


def _expand(source: Any, label: str) -> Iterator[_Document | _Unreadable | Path]:
    payload = getattr(source, "payload", None)
    if isinstance(payload, dict):  # a TraceExport or FinalTraceOmitted
        yield from _recognise(payload, label, plain=plain_json(payload))
    elif isinstance(source, dict):
        yield from _recognise(source, label, plain=plain_json(source))
    elif is_json_text(source):
        yield from _parsed(source, "JSON text")
    elif isinstance(source, str | Path):
        yield from _path(Path(source))
    elif isinstance(source, Iterable):
        for index, item in enumerate(source):
            yield from _expand(item, f"{label}[{index}]")
    else:
        yield _Unreadable(label, f"a {type(source).__name__} is neither an export, JSON text nor a path")


def _path(path: Path) -> Iterator[_Unreadable | Path]:
    if not path.is_dir():
        yield path
        return
    # Whatever is not a folder is listed (a link to nothing, a pipe): reading it says why it is
    # unreadable, in fleet's words. Skipped, it would go uncounted.
    files = sorted({f for pattern in _FILE_PATTERNS for f in path.rglob(pattern) if not f.is_dir()})
    if not files:
        yield _Unreadable(file_label(path), "the folder holds no *.json or *.jsonl file")
    yield from files


def _file(path: Path) -> Iterator[_Document | _Unreadable]:
    label = file_label(path)
    try:
        text = read_export_bytes(path).decode("utf-8")
    except OSError as exc:  # load_trace's words, as fleet.problems and load_trace say it
        yield _Unreadable(label, errors.cannot_read_file(exc.strerror or type(exc).__name__))
        return
    except UnicodeDecodeError as exc:
        yield _Unreadable(label, errors.not_utf8(exc.start))
        return
    if path.suffix == ".jsonl":
        # Lines end at "\n" only: a JSON string may hold U+2028 or U+0085 raw, which splitlines() splits at.
        lines = [(number, line) for number, line in enumerate(text.split("\n"), 1) if line.strip()]
        if not lines:
            yield _Unreadable(label, "the file is empty")
        for number, line in lines:
            yield from _parsed(line, f"{label}:{number}")
    else:
        yield from _parsed(text, label)


def _parsed(text: str, label: str) -> Iterator[_Document | _Unreadable]:
    try:
        document = strict_loads(text)
    except JsonTextError as exc:  # a duplicate key could hide a value from the checks
        yield _Unreadable(label, errors.not_valid_json(exc))
        return
    if isinstance(document, list):
        if not document:
            yield _Unreadable(label, "an empty JSON array")
        for index, item in enumerate(document):
            yield from _recognise(item, f"{label}[{index}]", plain=True)
    else:
        yield from _recognise(document, label, plain=True)


def _recognise(document: Any, label: str, plain: bool) -> Iterator[_Document | _Unreadable]:
    if not isinstance(document, dict):
        yield _Unreadable(label, f"a JSON {type(document).__name__}, not an export object")
    elif "closed" in document and "session_id" in document and "events" not in document:
        if "final_trace" in document:
            yield _Document(f"{label} final_trace", document["final_trace"], final_trace=True, plain=plain)
        else:
            yield _Unreadable(label, "a close_page answer without final_trace (the session was not traced)")
    elif document.get("schema") == SCHEMA or {"events", "trace_id", "omitted"} & document.keys():
        yield _Document(label, document, final_trace=False, plain=plain)
    else:
        yield _Unreadable(label, "not a plasmate.trace.v1 export or a close_page answer")
