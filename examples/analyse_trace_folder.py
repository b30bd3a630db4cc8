"""Export a few traces to a temporary folder, load them all back, and summarise them.

Run: ``python examples/analyse_trace_folder.py``. Three short traced sessions on the
bundled demo site are written with ``TraceExport.to_json``; ``load_traces(folder)`` reads
them into one events table (with a ``trace_id`` column) that pandas summarises. The folder is
a temporary directory, removed at the end.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import plasmate_nb as pnb


def record(site: pnb.DemoSite, path: str, steps: int) -> pnb.TraceExport:
    with pnb.Session() as session:
        page = session.open(site.url(path), trace=True)
        for _ in range(steps):
            session.scroll("down", 100)
        links = page.find_all(role="link")
        if links:
            session.click(links[0])
        return session.trace.export()


def main() -> int:
    with pnb.DemoSite() as site, tempfile.TemporaryDirectory(prefix="plasmate-traces-") as folder:
        exports = [
            record(site, "/login.html", 2),
            record(site, "/details.html", 4),
            record(site, "/drift.html", 1),
        ]
        for number, export in enumerate(exports, 1):
            export.to_json(Path(folder) / f"trace-{number}.json")
        print(f"wrote {len(exports)} traces to a temporary folder")

        table = pnb.load_traces(folder)
        per_trace = table.groupby("trace_id").agg(
            events=("sequence", "size"),
            actions=("action", "nunique"),
            errors=("outcome", lambda column: int((column == "error").sum())),
            total_ms=("duration_ms", "sum"),
        )
        print(f"\nloaded {len(table)} events from {table['trace_id'].nunique()} traces")
        per_trace.index = [f"{trace_id[:8]}…" for trace_id in per_trace.index]
        print(per_trace.to_string())
        print("\nevents per action:")
        print(table["action"].value_counts().to_string())
        print("\norigins seen:", ", ".join(sorted(table["before_origin"].dropna().unique())))
        one = pnb.load_trace(Path(folder) / "trace-2.json")
        assert one == exports[1]  # a round trip through JSON gives the same export back
    ok = len(table) == sum(e.retained_events for e in exports) and table["trace_id"].nunique() == 3
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
