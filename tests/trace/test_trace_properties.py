"""Hypothesis properties: the log's bounds and counters under random appends and clears, and
that no secret placed anywhere in the inputs reaches a trace payload."""

from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import quote

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from plasmate_nb.trace import (
    MAX_BYTES,
    MAX_EVENT_BYTES,
    MAX_EVENTS,
    MAX_EXPORT_BYTES,
    TRACEABLE_ACTIONS,
    PageState,
    ReplayRequest,
    TraceLog,
    compact_json,
    sanitize_parameters,
)
from tests.trace.trace_testkit import KNOWN_KEY, element, log_with_known_key, page, som

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)))
SHORT_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
HUGE_TEXT = st.builds(lambda piece, times: piece * times, SHORT_TEXT.filter(bool), st.integers(200, 1500))
ANY_TEXT = st.one_of(st.just(""), TEXT, HUGE_TEXT)
JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | ANY_TEXT,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(SHORT_TEXT, children, max_size=3),
    max_leaves=6,
)
ARG_NAMES = st.sampled_from(
    [
        "url",
        "text",
        "value",
        "append",
        "direction",
        "pixels",
        "element_id",
        "cookies",
        "name",
        "domain",
        "expression",
        "session_id",
        "trace",
    ]
)
RAW_ARGUMENTS = st.one_of(
    st.dictionaries(st.one_of(ARG_NAMES, SHORT_TEXT), JSON_VALUE, max_size=6),
    JSON_VALUE,
)
ACTIONS = st.sampled_from([*TRACEABLE_ACTIONS, "get_cookies", "trace_export", "unknown_tool"])
ERRORS = st.one_of(st.none(), ANY_TEXT)
URLS = st.one_of(st.none(), ANY_TEXT, st.just("http://127.0.0.1:8000/a?b#c"), st.just("about:blank"))


@st.composite
def pages(draw: st.DrawFn) -> PageState:
    if draw(st.booleans()):
        return PageState.closed() if draw(st.booleans()) else PageState(draw(URLS), None, None)
    elements = [
        element(
            draw(st.sampled_from(["e1", "e2"])) if draw(st.booleans()) else draw(SHORT_TEXT),
            draw(st.sampled_from(["button", "link", "text_input"])),
            label=draw(ANY_TEXT),
            actions=draw(st.lists(st.sampled_from(["click", "type", "clear"]), max_size=3)),
            attrs={"name": draw(ANY_TEXT), "placeholder": draw(SHORT_TEXT)},
        )
        for _ in range(draw(st.integers(0, 3)))
    ]
    return page(draw(URLS), som(*elements, title=draw(ANY_TEXT)))


def event_size(event: dict[str, Any]) -> int:
    return len(compact_json(event).encode("utf-8"))


class TraceLogBounds(RuleBasedStateMachine):
    """Random appends (normal, bursts, oversized) and clears; the bounds hold after every step."""

    @initialize(enabled=st.booleans())
    def start(self, enabled: bool) -> None:
        self.log = TraceLog(enabled)
        self.enabled = enabled
        self.last_sequence = 0
        self.seen: set[int] = set()

    def _consumed(self, sequence: int, action: str) -> None:
        if not self.enabled or action not in TRACEABLE_ACTIONS:
            assert sequence == 0
            return
        assert sequence == self.last_sequence + 1  # strictly increasing, no gaps
        assert sequence not in self.seen  # never reused
        self.seen.add(sequence)
        self.last_sequence = sequence

    @rule(
        action=ACTIONS,
        arguments=RAW_ARGUMENTS,
        page_now=pages(),
        element_id=st.one_of(st.none(), ANY_TEXT),
        error=ERRORS,
        duration=st.integers(0, 10**7),
    )
    def append(
        self, action: str, arguments: Any, page_now: PageState, element_id: Any, error: Any, duration: int
    ) -> None:
        log = self.log
        target = log.target(page_now, element_id if element_id is not None else "e1")
        before = log.state(page_now)
        sequence = log.record(
            action,
            sanitize_parameters(action, arguments),
            target,
            before,
            log.state(page_now),
            error,
            duration,
        )
        self._consumed(sequence, action)

    @rule(count=st.integers(1, 140), direction=ANY_TEXT)
    def burst(self, count: int, direction: str) -> None:
        for _ in range(count):
            params = sanitize_parameters("scroll", {"direction": direction})
            sequence = self.log.record(
                "scroll", params, None, self.log.closed_state(), self.log.closed_state(), None, 1
            )
            self._consumed(sequence, "scroll")

    @rule(padding=st.one_of(ANY_TEXT, HUGE_TEXT, st.integers(3000, 9000).map(lambda n: "z" * n)))
    def append_raw(self, padding: str) -> None:
        closed = self.log.closed_state()
        sequence = self.log.record("click", {"pad": padding}, None, closed, closed, "Timeout", 2)
        self._consumed(sequence, "click")

    @rule(count=st.integers(1, 200))
    def burst_tiny(self, count: int) -> None:
        # Real events are >= ~690 bytes, so only tiny ones let the 128-event bound bind first.
        for _ in range(count):
            self._consumed(self.log.record("toggle", {}, None, {}, {}, None, 0), "toggle")

    @rule()
    def clear(self) -> None:
        retained = self.log.retained_events
        assert self.log.clear() == (retained if self.enabled else 0)
        assert self.log.retained_events == 0 and self.log.retained_bytes == 0

    @invariant()
    def bounds_and_counters_hold(self) -> None:
        status = self.log.status()
        export = self.log.export("sid")
        events = export["events"]
        assert status["retained_events"] <= MAX_EVENTS
        assert status["retained_bytes"] <= MAX_BYTES
        assert all(event_size(e) <= MAX_EVENT_BYTES for e in events)
        if self.enabled:
            assert status["retained_events"] == len(events)
            assert status["retained_bytes"] == sum(event_size(e) for e in events)
        else:
            assert events == [] and status["next_sequence"] == 1
        sequences = [e["sequence"] for e in events]
        assert sequences == sorted(set(sequences))
        assert all(0 < s < status["next_sequence"] for s in sequences)
        assert status["next_sequence"] - 1 == (
            status["retained_events"]
            + status["evicted_events"]
            + status["oversized_events"]
            + status["cleared_events"]
        )
        assert len(compact_json(export).encode()) <= MAX_EXPORT_BYTES
        assert compact_json(self.log.export("sid")) == compact_json(export)  # repeated exports identical
        for counter in ("evicted_events", "oversized_events", "cleared_events"):
            if status[counter]:
                event(f"reached {counter}")
        if status["retained_bytes"] + 800 > MAX_BYTES:
            event("byte bound binding")
        if status["retained_events"] == MAX_EVENTS:
            event("count bound binding")


TestTraceLogBounds = TraceLogBounds.TestCase
TestTraceLogBounds.settings = settings(
    max_examples=60, stateful_step_count=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


# -- privacy ---------------------------------------------------------------------------------

SECRETS = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=2, max_size=40).map(
    lambda suffix: "S3cr3t" + suffix
)


def forms_of(secret: str) -> list[str]:
    """Every way the secret could show up in a compact JSON text."""
    data = secret.encode("utf-8")
    return [
        secret,
        compact_json(secret)[1:-1],  # JSON-escaped
        quote(secret, safe=""),  # percent-encoded, as placed in URLs
        hashlib.sha256(data).hexdigest(),
        hashlib.sha256(data).hexdigest().upper(),
    ]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(secret=SECRETS, other=SECRETS)
def test_no_secret_reaches_any_trace_payload(secret: str, other: str) -> None:
    q = quote(secret, safe="")
    urls = [
        f"https://{q}:{q}@example.com/",  # userinfo
        f"https://example.com/{q}/{secret}",  # path (encoded and raw)
        f"https://example.com/?token={q}",  # query
        f"https://example.com/#{q}",  # fragment
    ]
    secret_som = som(
        element(
            "e_" + secret,
            "button",
            label=secret,
            text=secret,
            actions=["click"],
            attrs={"name": secret, "href": "/" + q, "placeholder": secret, "group": secret},
        ),
        element(
            "e_field", "text_input", label=other, actions=["type", "clear"], attrs={"input_type": "password"}
        ),
        title=secret,
    )
    log = log_with_known_key()
    outputs: list[Any] = []
    for url in urls:
        page_now = page(url, secret_som)
        state = log.state(page_now)
        calls = [
            ("open_page", {"url": url, "trace": True}, None),
            ("navigate_to", {"session_id": "s", "url": url}, None),
            ("click", {"element_id": "e_" + secret}, "e_" + secret),
            ("type_text", {"element_id": "e_field", "text": secret, "append": True}, "e_field"),
            ("select_option", {"element_id": "e_" + secret, "value": secret}, "e_" + secret),
            ("toggle", {"element_id": "e_" + secret}, "e_" + secret),
            ("clear", {"element_id": "e_field"}, "e_field"),
            ("scroll", {"element_id": "e_" + secret}, "e_" + secret),
            ("evaluate", {"expression": f"document.cookie + '{secret}'"}, None),
            (
                "set_cookies",
                {"cookies": [{"name": secret, "value": secret, "domain": secret, "path": "/" + secret}]},
                None,
            ),
            ("clear_cookies", {"name": secret, "domain": secret, "url": url}, None),
            ("close_page", {"session_id": secret}, None),
        ]
        for index, (action, arguments, element_id) in enumerate(calls):
            error = None if index % 2 else f"Navigation failed: Authorization: Bearer {secret}"
            log.record(
                action,
                sanitize_parameters(action, arguments, log.key if index % 3 else None),
                log.target(page_now, element_id),
                state,
                state,
                error,
                5,
            )
        for sequence in range(1, log.next_sequence):
            for confirmed in (False, True):
                outputs.append(
                    log.replay_validate(ReplayRequest("sid", log.trace_id, sequence, confirmed), page_now)
                )
        outputs.append(repr(page_now))
    outputs += [
        log.status(),
        log.export("sid"),
        log.final_export("sid"),
        log.detached_copy().export("sid"),
        repr(log),
    ]
    text = compact_json(outputs)
    for value in (secret, other):
        for form in forms_of(value):
            assert form not in text
    assert KNOWN_KEY.hex() not in text and KNOWN_KEY.hex().upper() not in text
    assert "sha256" not in text.lower()
    assert "validated" in text  # the replay payloads really were produced
