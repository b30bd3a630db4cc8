"""Summarise a fleet of traces: real exports beside synthetic ones, tables, Parquet, a DuckDB query.

Run: ``python examples/fleet_summary.py``. Two short traced sessions on the bundled demo site
are exported into a temporary folder next to 1,000 synthetic exports (events the real trace
core recorded, assembled with the log's bounds); ``pnb.fleet(folder)`` summarises them with
DuckDB, without a Python object per event. The fleet is then written as a Parquet dataset
partitioned by action and read back with a plain DuckDB query, as Spark, Dask or Polars would.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import duckdb

import plasmate_nb as pnb
from plasmate_nb.analysis import write_synthetic_fleet


def record(site: pnb.DemoSite, path: str, folder: Path, name: str) -> pnb.TraceExport:
    with pnb.Session() as session:
        page = session.open(site.url(path), trace=True)
        session.scroll("down", 200)
        links = page.find_all(role="link")
        if links:
            session.click(links[0])
        export = session.trace.export()
    export.to_json(folder / name)
    return export


def main() -> int:
    with pnb.DemoSite() as site, tempfile.TemporaryDirectory(prefix="plasmate-fleet-") as temp:
        folder = Path(temp) / "traces"
        write_synthetic_fleet(folder, 1_000, seed=1)
        real = [
            record(site, "/login.html", folder, "real-1.json"),
            record(site, "/details.html", folder, "real-2.json"),
        ]
        print(f"wrote 1000 synthetic and {len(real)} real exports")

        fleet = pnb.fleet(folder)
        totals = fleet.totals
        print(f"\n{totals['runs']} runs, {totals['events']} events, {totals['failures']} failures, "
              f"{totals['problems']} problem files")  # fmt: skip
        print("\nby action:")
        print(
            fleet.by_action[["runs", "events", "failures", "failure_rate"]].to_string(
                float_format="{:.3f}".format
            )
        )
        print("\nbounds pressure:")
        print(fleet.pressure.to_string(float_format="{:.1%}".format))
        print("\nduration percentiles (ms):")
        print(fleet.durations[["p50", "p90", "p99"]].to_string(float_format="{:.0f}".format))
        print(f"\nreplay candidates: {fleet.replay_share:.1%} of events")
        demo_origin = site.url("/").rstrip("/")
        print(f"demo site origin seen in {fleet.by_origin.loc[demo_origin, 'runs']} runs")

        out = fleet.to_parquet(Path(temp) / "parquet", partition_by=["action"])
        partitions = sorted(p.name for p in (out / "events").iterdir())
        print(f"\nParquet partitions: {len(partitions)} ({partitions[0]}, …)")
        query = f"""
            SELECT outcome, count(*) AS events
            FROM read_parquet('{out}/events/**/*.parquet', hive_partitioning = true)
            GROUP BY outcome ORDER BY outcome
        """
        by_outcome = dict(duckdb.sql(query).fetchall())
        print("DuckDB over the Parquet dataset:", by_outcome)
    ok = sum(by_outcome.values()) == totals["events"] and totals["runs"] == 1_002 and totals["problems"] == 0
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
