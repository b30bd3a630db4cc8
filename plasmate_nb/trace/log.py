"""``TraceLog``: one session's bounded, memory-only ``plasmate.trace.v1`` event log.

Rules (docs/contract.md#bounds, docs/contract.md#trace-envelopes):

- ``record`` on a disabled log, or for an untraced action, is a no-op returning 0.
  Otherwise it consumes ``sequence = next_sequence`` (never reused, never reset — also
  when the event is then dropped) and serialises the event once with ``compact_json``.
  Its size is the UTF-8 length of that text and is stored beside it; eviction subtracts
  the stored size and never re-serialises.
- An event over 4096 bytes is dropped (``oversized_events``). Otherwise the oldest events
  are evicted while 128 are retained or the new one would take the total past 49152
  bytes (``evicted_events``).
- ``clear`` drops everything retained (``cleared_events``) and keeps the sequence.
- Invariant, always: ``next_sequence - 1 == retained + evicted + oversized + cleared``.
- Only the error *class* is stored, never the message. Exports of an unchanged log are
  byte-identical; returned dicts are fresh copies, so callers cannot alter the log.

The log holds the session's :class:`TraceKey`, so it refuses ``pickle``/``copy`` too;
``detached_copy`` is the sanctioned copy (used by close_page's ``final_trace``).
"""

from __future__ import annotations

import json
import threading
import uuid
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

from .arguments import ReplayRequest
from .compact import clean_text, compact_json, sorted_json, utf8_len
from .constants import (
    FINAL_TRACE_OMITTED_REASON,
    MAX_BYTES,
    MAX_EVENT_BYTES,
    MAX_EVENTS,
    MAX_EXPORT_BYTES,
    OMITTED_FIELDS,
    OUTCOME_ERROR,
    OUTCOME_SUCCESS,
    REDACTION_POLICY,
    RETENTION,
    SCHEMA,
    STATUS_REFUSED,
    TARGET_PROVENANCE,
    TRACEABLE_ACTIONS,
    VALUE_HANDLING,
)
from .fingerprint import TraceKey
from .origin import origin
from .replay import LiveMatch, decide
from .sanitize import PendingUrlParameters, classify_error, redacted_fields
from .som_walk import find_element, iter_elements


@dataclass(frozen=True, slots=True, repr=False)
class PageState:
    """What the engine knows of a session's page now.

    ``som_text`` is the SOM's canonical JSON exactly as the compiler produced it (the
    state fingerprint is taken over its UTF-8 bytes, never over a re-serialisation);
    ``som`` is the same SOM parsed, used for target lookups. When only ``som`` is given
    its ``compact_json`` stands in for the text. ``PageState.closed()`` is the state of a
    closed session. The repr shows neither URL nor page content.
    """

    url: str | None
    som_text: str | None
    som: dict[str, Any] | None
    session_closed: bool = field(default=False, kw_only=True)

    @classmethod
    def closed(cls) -> PageState:
        return cls(None, None, None, session_closed=True)

    @property
    def has_page(self) -> bool:
        return not self.session_closed and (self.som_text is not None or self.som is not None)

    def som_bytes(self) -> bytes:
        if self.som_text is not None:
            return self.som_text.encode("utf-8", "surrogatepass")
        if self.som is not None:
            return compact_json(self.som).encode("utf-8", "surrogatepass")
        return b""

    def __repr__(self) -> str:
        return f"PageState(has_page={self.has_page}, session_closed={self.session_closed})"


class _Event:
    """One retained event: its serialised text and that text's UTF-8 size."""

    __slots__ = ("sequence", "size", "text")

    def __init__(self, sequence: int, text: str, size: int) -> None:
        self.sequence = sequence
        self.text = text
        self.size = size


class TraceLog:
    """A session's trace: ``enabled`` fixed at creation, a fresh ``trace_id`` (UUID v4)."""

    __slots__ = (
        "_cleared",
        "_enabled",
        "_events",
        "_events_json",
        "_evicted",
        "_key",
        "_lock",
        "_next_sequence",
        "_oversized",
        "_retained_bytes",
        "_trace_id",
    )

    def __init__(self, enabled: bool) -> None:
        self._enabled = bool(enabled)
        self._trace_id = str(uuid.uuid4())
        self._key = TraceKey()
        self._events: deque[_Event] = deque()
        self._events_json: str | None = "[]"
        self._retained_bytes = 0
        self._next_sequence = 1
        self._evicted = 0
        self._oversized = 0
        self._cleared = 0
        self._lock = threading.Lock()

    # -- read-only views -----------------------------------------------------------------

    @property
    def enabled(self) -> bool:
        return self._enabled

    @property
    def trace_id(self) -> str:
        return self._trace_id

    @property
    def key(self) -> TraceKey:
        """The session's fingerprint key object (for ``sanitize_parameters``); never its bytes."""
        return self._key

    @property
    def next_sequence(self) -> int:
        return self._next_sequence

    @property
    def retained_events(self) -> int:
        return len(self._events)

    @property
    def retained_bytes(self) -> int:
        return self._retained_bytes

    @property
    def evicted_events(self) -> int:
        return self._evicted

    @property
    def oversized_events(self) -> int:
        return self._oversized

    @property
    def cleared_events(self) -> int:
        return self._cleared

    # -- page states and targets ---------------------------------------------------------

    def state(self, page: PageState) -> dict[str, Any]:
        """``{"url_fingerprint","origin","fingerprint","has_page"}`` of ``page`` under this key."""
        if page.session_closed:
            return self.closed_state()
        return {
            "url_fingerprint": self._key.url_fingerprint(page.url),
            "origin": origin(page.url),
            "fingerprint": self._key.state_fingerprint(page.som_bytes()),
            "has_page": page.has_page,
        }

    def closed_state(self) -> dict[str, Any]:
        """The state of a closed session (before of open_page, after of close_page)."""
        return {
            "url_fingerprint": None,
            "origin": None,
            "fingerprint": self._key.closed_state_fingerprint(),
            "has_page": False,
        }

    def target(self, page: PageState, element_id: Any) -> dict[str, Any] | None:
        """The ReplayTarget of SOM element ``element_id`` of ``page``, or ``None``: also for an
        element without a role, which no SOM of the compiler has (a target's role is a word)."""
        if page.som is None or not isinstance(element_id, str):
            return None
        element = find_element(page.som, element_id)
        return None if element is None or _role(element) is None else self._target_of(element)

    def _target_of(self, element: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "provenance": TARGET_PROVENANCE,
            "target_id": self._key.target_id(element["id"]),
            "stable_key": self._key.stable_key(element),
            "role": _role(element),
        }

    # -- recording -----------------------------------------------------------------------

    def record(
        self,
        action: str,
        parameters: Mapping[str, Any],
        target: Mapping[str, Any] | None,
        before: Mapping[str, Any],
        after: Mapping[str, Any],
        error_message: str | None,
        duration_ms: float,
    ) -> int:
        """Append one event; return the sequence it consumed (0: disabled or not traced).

        ``error_message`` is ``None`` on success; otherwise only its class is kept.
        Raises ``TypeError``/``ValueError`` for arguments that cannot form an event, in
        which case no sequence is consumed.
        """
        if not self._enabled or action not in TRACEABLE_ACTIONS:
            return 0
        if (
            not isinstance(parameters, Mapping)
            or not isinstance(before, Mapping)
            or not isinstance(after, Mapping)
        ):
            raise TypeError("parameters, before and after must be mappings")
        if target is not None and not isinstance(target, Mapping):
            raise TypeError("target must be a mapping or None")
        if isinstance(duration_ms, bool) or not isinstance(duration_ms, int | float):
            raise TypeError("duration_ms must be a number")
        duration = max(0, int(duration_ms))  # NaN/inf raise here, before a sequence is used
        with self._lock:
            sequence = self._next_sequence
            event: dict[str, Any] = {
                "schema": SCHEMA,
                "sequence": sequence,
                "action": action,
                "parameters": sorted_json(
                    parameters.resolve(self._key)
                    if isinstance(parameters, PendingUrlParameters)
                    else dict(parameters)
                ),
            }
            if target is not None:
                event["target"] = dict(target)
            event["before"] = dict(before)
            event["after"] = dict(after)
            if error_message is None:
                event["outcome"] = OUTCOME_SUCCESS
            else:
                event["outcome"] = OUTCOME_ERROR
                event["error_class"] = classify_error(error_message)
            event["duration_ms"] = duration
            event["redaction"] = {
                "policy": SCHEMA,
                "value_handling": VALUE_HANDLING,
                "redacted_fields": redacted_fields(action),
                "omitted_fields": list(OMITTED_FIELDS),
            }
            text = compact_json(event)
            size = len(text.encode("utf-8"))  # raises on lone surrogates: nothing consumed yet
            self._next_sequence = sequence + 1
            if size > MAX_EVENT_BYTES or size > MAX_BYTES:
                self._oversized += 1
                return sequence
            events = self._events
            while events and (len(events) >= MAX_EVENTS or self._retained_bytes + size > MAX_BYTES):
                self._retained_bytes -= events.popleft().size
                self._evicted += 1
            events.append(_Event(sequence, text, size))
            self._retained_bytes += size
            self._events_json = None
            return sequence

    def clear(self) -> int:
        """Drop every retained event; return how many. The sequence is kept."""
        with self._lock:
            removed = len(self._events)
            self._events.clear()
            self._retained_bytes = 0
            self._cleared += removed
            self._events_json = "[]"
            return removed

    # -- payloads ------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """The trace_status payload (struct order)."""
        with self._lock:
            return {
                "schema": SCHEMA,
                "enabled": self._enabled,
                "trace_id": self._trace_id,
                "retained_events": len(self._events),
                "retained_bytes": self._retained_bytes,
                "max_events": MAX_EVENTS,
                "max_bytes": MAX_BYTES,
                "next_sequence": self._next_sequence,
                "evicted_events": self._evicted,
                "oversized_events": self._oversized,
                "cleared_events": self._cleared,
                "retention": RETENTION,
            }

    def export(self, session_id: str) -> dict[str, Any]:
        """The trace_export payload (struct order); ``events`` is ``[]`` when disabled."""
        with self._lock:
            if self._events_json is None:
                self._events_json = "[" + ",".join(e.text for e in self._events) + "]"
            events_json = self._events_json
            payload: dict[str, Any] = {
                "schema": SCHEMA,
                "trace_id": self._trace_id,
                "session_id": session_id,
                "retained_events": len(self._events),
                "retained_bytes": self._retained_bytes,
                "next_sequence": self._next_sequence,
                "evicted_events": self._evicted,
                "oversized_events": self._oversized,
                "cleared_events": self._cleared,
                "redaction_policy": REDACTION_POLICY,
            }
        payload["events"] = json.loads(events_json) if self._enabled else []
        return payload

    def final_export(self, session_id: str) -> dict[str, Any]:
        """close_page's ``final_trace``: the export, or the omitted marker above 64 KiB."""
        payload = self.export(session_id)
        if utf8_len(compact_json(payload)) > MAX_EXPORT_BYTES:
            return {"schema": SCHEMA, "omitted": True, "reason": FINAL_TRACE_OMITTED_REASON}
        return payload

    def detached_copy(self) -> TraceLog:
        """A copy with the same trace_id, events and counters, sharing this key object."""
        with self._lock:
            copy = TraceLog.__new__(TraceLog)
            copy._enabled = self._enabled
            copy._trace_id = self._trace_id
            copy._key = self._key
            copy._events = deque(self._events)  # _Event records are never mutated
            copy._events_json = self._events_json
            copy._retained_bytes = self._retained_bytes
            copy._next_sequence = self._next_sequence
            copy._evicted = self._evicted
            copy._oversized = self._oversized
            copy._cleared = self._cleared
            copy._lock = threading.Lock()
            return copy

    # -- replay --------------------------------------------------------------------------

    def replay_validate(self, request: ReplayRequest, page: PageState) -> dict[str, Any]:
        """The replay_validate payload for ``request`` against the live ``page``. Never executes."""
        return self.replay_plan(request, page)[0]

    def replay_plan(self, request: ReplayRequest, page: PageState) -> tuple[dict[str, Any], str | None]:
        """replay_validate's payload, and the SOM id of the one live element that matched the
        recorded target (``None`` when the event has no target or the plan was refused)."""
        with self._lock:
            text = next((e.text for e in self._events if e.sequence == request.sequence), None)
        event = json.loads(text) if text is not None and self._enabled else None
        som = None if page.session_closed else page.som
        found: list[LiveMatch] = []

        def live_matches(recorded: Mapping[str, Any]) -> list[LiveMatch]:
            # Equal stable key and role, as the reference matches. The element id is the
            # first entry of the stable-key input, so an equal stable key implies an equal
            # target_id: checking that short HMAC first skips the 9-entry JSON for the rest.
            role, stable_key = recorded.get("role"), recorded.get("stable_key")
            target_id = recorded.get("target_id")
            key = self._key
            for element in iter_elements(som):
                element_id = element.get("id")
                if not isinstance(element_id, str) or not _role_is(element, role):
                    continue
                if target_id is not None and key.target_id(element_id) != target_id:
                    continue
                if key.stable_key(element) == stable_key:
                    found.append((element, self._target_of(element)))
            return found

        payload = decide(
            request,
            trace_id=self._trace_id,
            event=event,
            current=self.state(page),
            live_matches=live_matches,
        )
        matched = payload["status"] != STATUS_REFUSED and len(found) == 1
        return payload, found[0][0]["id"] if matched else None

    # -- nothing of the key may leave through the log --------------------------------------

    def __repr__(self) -> str:
        return (
            f"TraceLog(enabled={self._enabled}, trace_id={self._trace_id!r}, "
            f"retained_events={len(self._events)}, next_sequence={self._next_sequence})"
        )

    def __refuse(self, *_: object) -> NoReturn:
        raise TypeError("TraceLog holds a session secret; use detached_copy() instead of pickle/copy")

    __reduce__ = __reduce_ex__ = __getstate__ = __copy__ = __deepcopy__ = __refuse


def _role(element: Mapping[str, Any]) -> str | None:
    role = element.get("role")
    return clean_text(role) if isinstance(role, str) and role else None


def _role_is(element: Mapping[str, Any], role: Any) -> bool:
    """``_role(element) == role``, without cleaning the common (ASCII) case."""
    raw = element.get("role")
    if isinstance(raw, str) and not raw.isascii():
        return bool(clean_text(raw) == role)
    return bool((raw if isinstance(raw, str) and raw else None) == role)
