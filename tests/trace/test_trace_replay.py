"""replay_validate: the 9 drift codes, confirmation_required, validated, check order, payloads."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from plasmate_nb.trace import PageState, ReplayRequest, TraceLog, compact_json, sanitize_parameters
from tests.trace.trace_testkit import URL, element, email_input, login_page, page, som, submit_button

REFUSAL_KEYS = [
    "drift",
    "execution",
    "execution_available",
    "message",
    "schema",
    "sequence",
    "side_effects",
    "status",
    "trace_id",
]
PLAN_KEYS = [
    "action",
    "drift",
    "execution",
    "execution_available",
    "message",
    "schema",
    "sequence",
    "session_id",
    "side_effects",
    "status",
    "target",
    "trace_id",
]
SID = "0b0e6b9b-6a1b-4b8e-9a1e-1f1d2c3b4a5e"


def traced(
    action: str, page_now: PageState, element_id: str | None = "e1", **arguments: Any
) -> tuple[TraceLog, int]:
    """A log holding one ``action`` event recorded against ``page_now``."""
    log = TraceLog(True)
    if element_id is not None:
        arguments["element_id"] = element_id
    target = log.target(page_now, element_id)
    state = log.state(page_now)
    sequence = log.record(
        action, sanitize_parameters(action, arguments, log.key), target, state, state, None, 4
    )
    return log, sequence


def ask(
    log: TraceLog, sequence: int, page_now: PageState, *, confirmed: bool = False, trace_id: str | None = None
) -> dict:
    request = ReplayRequest(SID, log.trace_id if trace_id is None else trace_id, sequence, confirmed)
    return log.replay_validate(request, page_now)


def refused(payload: dict, drift: str, message: str) -> None:
    assert list(payload) == REFUSAL_KEYS
    assert payload["status"] == "refused"
    assert payload["drift"] == drift
    assert payload["message"] == message
    assert payload["execution"] == "validation_only"
    assert payload["execution_available"] is False and payload["side_effects"] is False
    assert payload["schema"] == "plasmate.trace.v1"
    assert "session_id" not in payload and "action" not in payload and "target" not in payload


# -- the nine drift codes ---------------------------------------------------------------


def test_replay_cross_session() -> None:
    log, sequence = traced("click", login_page())
    payload = ask(log, sequence, login_page(), trace_id="not-the-live-trace")
    refused(payload, "cross_session", "trace_id does not belong to this session")
    assert payload["trace_id"] == "not-the-live-trace" and payload["sequence"] == sequence


def test_replay_event_not_retained() -> None:
    log, sequence = traced("click", login_page())
    refused(ask(log, 99, login_page()), "event_not_retained", "sequence is absent, evicted, or was cleared")
    refused(ask(log, 0, login_page()), "event_not_retained", "sequence is absent, evicted, or was cleared")
    log.clear()
    refused(
        ask(log, sequence, login_page()), "event_not_retained", "sequence is absent, evicted, or was cleared"
    )


def test_replay_event_not_retained_after_eviction() -> None:
    log, sequence = traced("click", login_page())
    for _ in range(200):
        log.record("scroll", {}, None, log.closed_state(), log.closed_state(), None, 0)
    assert ask(log, sequence, login_page())["drift"] == "event_not_retained"


@pytest.mark.parametrize("action", ["open_page", "close_page", "evaluate", "set_cookies", "clear_cookies"])
def test_replay_unsupported_action(action: str) -> None:
    log, sequence = traced(action, login_page(), element_id=None)
    refused(
        ask(log, sequence, login_page(), confirmed=True),
        "unsupported_action",
        "session lifecycle actions are not replay candidates",
    )


def test_replay_origin_drift() -> None:
    log, sequence = traced("click", login_page())
    elsewhere = page("http://127.0.0.1:9000/login", som(submit_button(), email_input()))
    refused(
        ask(log, sequence, elsewhere),
        "origin_drift",
        "current origin differs from the recorded pre-action origin",
    )


def test_replay_page_drift() -> None:
    log, sequence = traced("click", login_page())
    other_path = page(URL + "?next=/home", som(submit_button(), email_input()))
    refused(
        ask(log, sequence, other_path),
        "page_drift",
        "current keyed page URL fingerprint differs from the recorded pre-action URL",
    )


def test_replay_target_missing() -> None:
    log, sequence = traced("click", login_page())
    removed = page(URL, som(email_input()))
    refused(
        ask(log, sequence, removed),
        "target_missing",
        "recorded target is not present in the current session state",
    )


def test_replay_target_missing_when_the_role_differs() -> None:
    log, sequence = traced("click", login_page())
    changed = {**submit_button(), "role": "link"}
    assert ask(log, sequence, page(URL, som(changed, email_input())))["drift"] == "target_missing"


def test_replay_target_missing_without_a_current_som() -> None:
    log, sequence = traced("click", login_page())
    assert ask(log, sequence, PageState(URL, None, None))["drift"] == "target_missing"


def test_replay_target_ambiguous() -> None:
    log, sequence = traced("click", login_page())
    twice = page(
        URL, som(submit_button(), email_input(), element("e_host", "section", children=[submit_button()]))
    )
    refused(
        ask(log, sequence, twice),
        "target_ambiguous",
        "recorded target resolves to more than one current element",
    )


def test_replay_action_unavailable() -> None:
    # Actions are part of the stable key, so a lost action is seen through an element whose
    # key still matches: record on an element that has no click action at all.
    no_click = page(URL, som(element("e1", "button", label="Submit", actions=[]), email_input()))
    log, sequence = traced("click", no_click)
    refused(
        ask(log, sequence, no_click),
        "action_unavailable",
        "current target does not expose the recorded action",
    )


def test_replay_state_drift() -> None:
    log, sequence = traced("click", login_page())
    refused(
        ask(log, sequence, login_page(title="Login changed")),
        "state_drift",
        "current semantic state differs from the recorded pre-action state",
    )


# -- the two non-refusal outcomes -------------------------------------------------------


def test_replay_confirmation_required() -> None:
    log, sequence = traced("click", login_page())
    payload = ask(log, sequence, login_page())
    assert list(payload) == PLAN_KEYS
    assert payload == {
        "action": "click",
        "drift": None,
        "execution": "validation_only",
        "execution_available": False,
        "message": "Exact validation passed; explicit confirmation is still required for this mutating action",
        "schema": "plasmate.trace.v1",
        "sequence": sequence,
        "session_id": SID,
        "side_effects": False,
        "status": "confirmation_required",
        "target": dict(sorted(log.target(login_page(), "e1").items())),  # type: ignore[union-attr]
        "trace_id": log.trace_id,
    }
    assert "parameters" not in payload


def test_replay_validated() -> None:
    log, sequence = traced("type_text", login_page(), element_id="e2", text="hunter2", append=True)
    payload = ask(log, sequence, login_page(), confirmed=True)
    assert list(payload) == sorted(payload) == sorted([*PLAN_KEYS, "parameters"])
    assert payload["status"] == "validated"
    assert payload["message"] == (
        "Validation and confirmation contract passed; this slice returns a plan and does not execute it"
    )
    assert payload["parameters"] == {"append": True, "value": {"byte_length": 7, "redacted": True}}
    assert payload["execution"] == "validation_only"
    assert payload["execution_available"] is False and payload["side_effects"] is False
    assert payload["drift"] is None and payload["session_id"] == SID


def test_replay_target_is_rederived_from_the_live_element_with_sorted_keys() -> None:
    log, sequence = traced("click", login_page())
    recorded = log.export("s")["events"][0]["target"]
    # The same element, now nested differently: the live element is the one re-derived.
    moved = page(
        URL,
        som(
            email_input(),
            element("e_host", "section", shadow={"mode": "open", "elements": [submit_button()]}),
        ),
    )
    moved_state = log.state(moved)
    log2 = log.detached_copy()
    log2.record("click", {}, log2.target(moved, "e1"), moved_state, moved_state, None, 1)
    payload = ask(log2, sequence + 1, moved, confirmed=True)
    assert payload["status"] == "validated"
    assert list(payload["target"]) == ["provenance", "role", "stable_key", "target_id"]
    assert payload["target"] == dict(sorted(recorded.items()))


def test_replay_plan_for_an_event_without_target_has_null_target() -> None:
    log, sequence = traced("navigate_to", login_page(), element_id=None, url="http://127.0.0.1:8000/next")
    payload = ask(log, sequence, login_page())
    assert payload["status"] == "confirmation_required" and payload["target"] is None


# -- check order -------------------------------------------------------------------------


def test_replay_cross_session_wins_over_everything() -> None:
    log, _ = traced("close_page", login_page(), element_id=None)
    assert ask(log, 12345, PageState.closed(), trace_id="other")["drift"] == "cross_session"


def test_replay_event_not_retained_before_unsupported_action() -> None:
    log, _ = traced("evaluate", login_page(), element_id=None)
    assert ask(log, 2, login_page())["drift"] == "event_not_retained"


def test_replay_unsupported_action_before_page_checks() -> None:
    log, sequence = traced("set_cookies", login_page(), element_id=None, cookies=[])
    assert ask(log, sequence, PageState.closed())["drift"] == "unsupported_action"


def test_replay_origin_before_page_before_target_before_state() -> None:
    log, sequence = traced("click", login_page())
    everything_changed = page("https://example.com/other", som(email_input(), title="x"))
    assert ask(log, sequence, everything_changed)["drift"] == "origin_drift"
    same_origin = page(URL + "/other", som(email_input(), title="x"))
    assert ask(log, sequence, same_origin)["drift"] == "page_drift"
    same_url = page(URL, som(email_input(), title="x"))
    assert ask(log, sequence, same_url)["drift"] == "target_missing"
    target_kept = page(URL, som(submit_button(), title="x"))
    assert ask(log, sequence, target_kept)["drift"] == "state_drift"


def test_replay_null_origin_equals_null_origin() -> None:
    blank = page("about:blank", som(submit_button()))
    log, sequence = traced("click", blank)
    assert ask(log, sequence, blank)["status"] == "confirmation_required"
    assert ask(log, sequence, page("about:srcdoc", som(submit_button())))["drift"] == "page_drift"


def test_replay_event_without_target_skips_the_target_checks() -> None:
    log, sequence = traced("scroll", login_page(), element_id=None, direction="down")
    assert ask(log, sequence, login_page(), confirmed=True)["status"] == "validated"


def test_replay_target_that_did_not_resolve_at_record_time_skips_target_checks() -> None:
    log, sequence = traced("click", login_page(), element_id="e_gone")
    assert "target" not in log.export("s")["events"][0]
    assert ask(log, sequence, login_page())["status"] == "confirmation_required"


def test_replay_does_not_check_the_outcome() -> None:
    log = TraceLog(True)
    state = log.state(login_page())
    sequence = log.record(
        "click", {}, log.target(login_page(), "e1"), state, state, "Element not found in DOM", 1
    )
    assert ask(log, sequence, login_page(), confirmed=True)["status"] == "validated"


# -- action support table ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "needed", "arguments"),
    [
        ("click", "click", {}),
        ("type_text", "type", {"text": "x"}),
        ("select_option", "select", {"value": "x"}),
        ("toggle", "toggle", {}),
        ("clear", "clear", {}),
    ],
)
def test_replay_action_support_table(action: str, needed: str, arguments: dict) -> None:
    with_action = page(URL, som(element("e1", "group", actions=[needed])))
    log, sequence = traced(action, with_action, **arguments)
    assert ask(log, sequence, with_action)["status"] == "confirmation_required"
    other = {"click": "type"}.get(needed, "click")
    without = page(URL, som(element("e1", "group", actions=[other])))
    log, sequence = traced(action, without, **arguments)
    assert ask(log, sequence, without)["drift"] == "action_unavailable"


@pytest.mark.parametrize("action", ["scroll", "navigate_to"])
def test_replay_scroll_and_navigate_are_always_supported(action: str) -> None:
    bare = page(URL, som(element("e1", "paragraph")))  # no actions at all
    log, sequence = traced(action, bare, url=URL)
    assert ask(log, sequence, bare)["status"] == "confirmation_required"


# -- never executes, never leaks -----------------------------------------------------------


def test_replay_never_changes_the_log_or_the_page() -> None:
    log, sequence = traced("click", login_page())
    page_now = login_page()
    som_before = copy.deepcopy(page_now.som)
    export_before = compact_json(log.export("s"))
    for confirmed in (False, True):
        ask(log, sequence, page_now, confirmed=confirmed)
    assert compact_json(log.export("s")) == export_before and page_now.som == som_before


def test_replay_on_a_disabled_log_is_event_not_retained() -> None:
    log = TraceLog(False)
    assert ask(log, 1, login_page())["drift"] == "event_not_retained"
    assert ask(log, 1, login_page(), trace_id="x")["drift"] == "cross_session"


def test_replay_payloads_contain_no_raw_ids_or_labels() -> None:
    log, sequence = traced("click", login_page())
    for confirmed in (False, True):
        text = compact_json(ask(log, sequence, login_page(), confirmed=confirmed))
        assert '"e1"' not in text and "Submit" not in text and "submit-button" not in text and URL not in text
