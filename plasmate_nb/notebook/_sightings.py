"""When this notebook first saw each event of a trace, and the counters it saw over time.

A trace carries no wall-clock time, and never will: times are notebook-side facts about
watching, kept on the session object (``AsyncTrace``) and used only to give a live
session's plot a time axis. Every ``trace_status`` / ``trace_export`` / ``trace_clear``
answer the session receives is noted here (the dashboard fetches one after every change).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: Sequences whose first-seen time is kept per trace (older ones are gone from the trace anyway).
KEPT_SEQUENCES = 1024
#: Counter snapshots kept per trace.
KEPT_OBSERVATIONS = 4096


@dataclass(frozen=True)
class Observation:
    """The counters of one trace as the notebook saw them at ``time`` (seconds since the epoch)."""

    time: float
    sequence: int  # next_sequence - 1: the last sequence the trace had handed out by then
    retained_events: int
    retained_bytes: int
    evicted_events: int
    oversized_events: int
    cleared_events: int


@dataclass
class TraceSightings:
    """What the notebook saw of one trace: first-seen time per sequence, and counter snapshots."""

    first_seen: dict[int, float] = field(default_factory=dict)
    observations: deque[Observation] = field(default_factory=lambda: deque(maxlen=KEPT_OBSERVATIONS))


class Sightings:
    """First-seen times and counter snapshots, per trace_id, as a session received them."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._traces: dict[str, TraceSightings] = {}

    def of(self, trace_id: str) -> TraceSightings:
        """What was seen of ``trace_id`` (empty if nothing was)."""
        return self._traces.get(trace_id, TraceSightings())

    def saw(self, payload: dict[str, Any]) -> None:
        """Note a ``trace_status`` or ``trace_export`` payload received now."""
        trace_id, next_sequence = payload.get("trace_id"), payload.get("next_sequence")
        if not isinstance(trace_id, str) or not isinstance(next_sequence, int):
            return  # an omitted marker or a disabled trace's odd answer: nothing to note
        now = self._clock()
        seen = self._traces.setdefault(trace_id, TraceSightings())
        last = seen.observations[-1].sequence if seen.observations else 0
        # Every sequence handed out since the last look exists (or was dropped) by now.
        for sequence in range(max(last + 1, next_sequence - KEPT_SEQUENCES), next_sequence):
            seen.first_seen.setdefault(sequence, now)
        for event in payload.get("events", ()):
            seen.first_seen.setdefault(event["sequence"], now)
        observation = Observation(
            now,
            next_sequence - 1,
            *(
                payload[name]
                for name in (
                    "retained_events",
                    "retained_bytes",
                    "evicted_events",
                    "oversized_events",
                    "cleared_events",
                )
            ),
        )
        if not seen.observations or _counters(seen.observations[-1]) != _counters(observation):
            seen.observations.append(observation)
        if len(seen.first_seen) > KEPT_SEQUENCES:
            oldest = next_sequence - KEPT_SEQUENCES
            seen.first_seen = {k: v for k, v in seen.first_seen.items() if k >= oldest}


def _counters(observation: Observation) -> tuple[int, ...]:
    return (
        observation.sequence,
        observation.retained_events,
        observation.retained_bytes,
        observation.evicted_events,
        observation.oversized_events,
        observation.cleared_events,
    )
