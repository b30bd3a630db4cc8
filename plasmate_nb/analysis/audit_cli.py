"""``plasmate-nb audit PATH… [--json]``: the audit for shells and CI, with exit codes a script can test.

Exit status: 0 every export is clean, 1 findings, 2 an input could not be read (or held no export).
"""

from __future__ import annotations

import argparse
import json

from plasmate_nb.analysis.audit_report import audit

EXIT_CLEAN, EXIT_FINDINGS, EXIT_UNREADABLE = 0, 1, 2


def run_audit(args: argparse.Namespace) -> int:
    """Audit ``args.paths``, print the report, return the exit status.

    >>> run_audit(argparse.Namespace(paths=["traces/"], json=False))
    """
    report = audit(*args.paths)
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False, indent=1))
    else:
        for row in report.to_dict()["findings"]:
            where = row["source"] if row["sequence"] is None else f"{row['source']} seq {row['sequence']}"
            print(f"{where}: [{row['rule']}] {row['path']} {row['message']}")
        print(report.summary())
    if report.unreadable or report.documents == 0:
        return EXIT_UNREADABLE
    return EXIT_CLEAN if report.ok else EXIT_FINDINGS
