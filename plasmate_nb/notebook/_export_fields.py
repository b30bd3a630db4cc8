"""Field names of a ``plasmate.trace.v1`` export shared by the readers, with no heavy import.

``load_trace`` reads them without pandas or DuckDB; the DuckDB reader builds its SQL from them.
"""

from __future__ import annotations

#: The six counters of an export, in its field order.
COUNTERS = (
    "retained_events",
    "retained_bytes",
    "next_sequence",
    "evicted_events",
    "oversized_events",
    "cleared_events",
)
