"""``plasmate-nb audit PATH… [--json]``: the audit for shells and CI, with exit codes a script can test.

Exit status: 0 every export is clean, 1 findings, 2 an input could not be read (or held no export),
130 interrupted. A reader that stops early (``| head``) cuts the report, not the verdict.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from plasmate_nb.analysis.audit_report import AuditReport, audit

EXIT_CLEAN, EXIT_FINDINGS, EXIT_UNREADABLE, EXIT_INTERRUPTED = 0, 1, 2, 130


def run_audit(args: argparse.Namespace) -> int:
    """Audit ``args.paths``, print the report, return the exit status.

    >>> run_audit(argparse.Namespace(paths=["traces/"], json=False))
    """
    try:
        # The progress bar only where a person watches: a CI log would collect its redraws.
        report = audit(*args.paths, progress=None if sys.stderr.isatty() else False)
    except KeyboardInterrupt:
        print("audit interrupted: nothing was reported", file=sys.stderr)
        return EXIT_INTERRUPTED
    try:
        _print(report, as_json=args.json)
        sys.stdout.flush()  # a closed pipe is met here, inside the guard, not at exit
    except BrokenPipeError:
        # The reader has what it wanted. Output still buffered would fail again at exit: it goes nowhere.
        nowhere = os.open(os.devnull, os.O_WRONLY)
        os.dup2(nowhere, sys.stdout.fileno())
        os.close(nowhere)
    except KeyboardInterrupt:
        print("\naudit interrupted: the report above is cut short", file=sys.stderr)
        return EXIT_INTERRUPTED
    if report.unreadable or report.documents == 0:
        return EXIT_UNREADABLE
    return EXIT_CLEAN if report.ok else EXIT_FINDINGS


def _print(report: AuditReport, *, as_json: bool) -> None:
    if as_json:
        print(json.dumps(report.to_dict(), ensure_ascii=False, indent=1))
    else:
        for row in report.to_dict()["findings"]:
            where = row["source"] if row["sequence"] is None else f"{row['source']} seq {row['sequence']}"
            print(f"{where}: [{row['rule']}] {row['path']} {row['message']}")
        print(report.summary())
