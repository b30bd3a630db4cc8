"""Replay plans: the reference's checks in order and in words, the failing one marked, drift explained."""

from __future__ import annotations

import re
from html import escape as cell
from pathlib import Path

import pandas as pd
import pytest

import plasmate_nb
import plasmate_nb.notebook as nb
from plasmate_nb._loop import background_loop, run_sync
from plasmate_nb.client import InProcessTransport, LoopBoundTransport
from plasmate_nb.client.base import Transport
from plasmate_nb.notebook.replay import CHECK_NUMBERS, FAILED, NOT_REACHED, PASSED, SKIPPED
from plasmate_nb.tools import Dispatcher
from plasmate_nb.trace.constants import DRIFT_CODES, DRIFT_MESSAGES, MESSAGE_VALIDATED
from tests.scripted_engine import ScriptedEngine

ORDER = [
    "cross_session", "event_not_retained", "unsupported_action", "origin_drift", "page_drift",
    "target_missing", "target_ambiguous", "action_unavailable", "state_drift", "confirmation",
]  # fmt: skip


def _states(plan: nb.ReplayPlan) -> list[str]:
    return [check.state for check in plan.checks]


def _assert_failed_at(plan: nb.ReplayPlan, name: str) -> None:
    assert [c.name for c in plan.checks] == ORDER
    index = ORDER.index(name)
    assert _states(plan)[index] == FAILED
    assert set(_states(plan)[:index]) <= {PASSED, SKIPPED}
    assert set(_states(plan)[index + 1 :]) == ({NOT_REACHED} if index + 1 < len(ORDER) else set())
    text, html = repr(plan), plan._repr_html_()
    assert "execution_available: false" in text and "execution_available: <b>false</b>" in html
    if name == "event_not_retained":  # no event to check: no table of checks that never ran
        assert "<table" not in html and "not checked" not in text + html
        return
    positions = [html.index(f">{check}</td>") for check in ORDER]
    assert positions == sorted(positions)  # shown in the reference's order
    for check in plan.checks:  # each row: the check in words, then its result in words
        assert re.search(f">{re.escape(cell(check.meaning))}</td><td[^>]*>[✔✘·–] ", html)
        assert check.meaning in text and "_" not in check.meaning.replace("confirmed=True", "")


@pytest.fixture
def session(transport: Transport, login_url: str):
    with nb.Session(transport) as s:
        yield s


def test_refusals_each_mark_their_check(session: nb.Session, login_url: str) -> None:
    page = session.open(login_url)
    session.toggle(page.find(role="checkbox"))  # 2: changes state, same URL
    session.scroll()  # 3: no state change
    session.scroll()  # 4
    _assert_failed_at(session.replay_validate(99), "event_not_retained")
    _assert_failed_at(session.replay_validate(1), "unsupported_action")
    state = session.replay_validate(2)
    _assert_failed_at(state, "state_drift")
    assert state.drift == "state_drift" and "only keyed hashes" in state.explanation.lower()
    assert "what changed cannot be shown" in repr(state)
    session.click(page.find(role="link", text="Welcome"))
    drift = session.replay_validate(4)
    _assert_failed_at(drift, "page_drift")
    assert drift.status == "refused" and drift.message.startswith("current keyed page URL fingerprint")


def test_confirmation_then_validated(session: nb.Session, login_url: str) -> None:
    session.open(login_url)
    session.scroll()
    session.scroll()
    pending = session.replay_validate(3)
    assert pending.status == "confirmation_required" and pending.drift is None
    _assert_failed_at(pending, "confirmation")
    assert _states(pending)[5:8] == [SKIPPED] * 3  # a page scroll has no recorded target
    done = session.replay_validate(3, confirmed=True)
    assert done.status == "validated" and set(_states(done)) == {PASSED, SKIPPED}
    assert done.execution_available is False and done.payload["parameters"]["pixels"] == 300


def test_targeted_event_validates_with_its_target(session: nb.Session, login_url: str) -> None:
    page = session.open(login_url)
    session.toggle(page.find(role="checkbox"))
    session.toggle(page.find(role="checkbox"))  # back to the state event 2 started from
    assert session.replay_validate(3).drift == "state_drift"
    plan = session.replay_validate(2, confirmed=True)
    assert plan.status == "validated" and _states(plan)[5:8] == [PASSED] * 3
    assert plan.payload["target"]["role"] == "checkbox"


async def test_cross_session_trace_id_is_refused(transport: Transport, login_url: str) -> None:
    async with nb.AsyncSession(transport) as a, nb.AsyncSession(transport) as b:
        await a.open(login_url)
        await b.open(login_url)
        foreign = await a.replay_validate(1, trace_id=b.trace_id)  # e.g. an export of another session
        _assert_failed_at(foreign, "cross_session")
        assert foreign.payload["trace_id"] == b.trace_id and "session_id" not in foreign.payload
        assert (await a.replay_validate(1, trace_id=a.trace_id)).drift == "unsupported_action"  # its own


@pytest.mark.parametrize("drift", ORDER[:-1])
def test_checklist_for_every_drift_code(drift: str) -> None:
    payload = {"drift": drift, "execution": "validation_only", "execution_available": False, "message": "m",
               "schema": "plasmate.trace.v1", "sequence": 3, "side_effects": False, "status": "refused", "trace_id": "t"}  # fmt: skip
    plan = nb.ReplayPlan(payload)
    _assert_failed_at(plan, drift)
    assert plan.explanation == nb.DRIFT_EXPLANATIONS[drift]


def test_checks_are_numbered_as_the_contract_numbers_them() -> None:
    payload = {"drift": "state_drift", "execution": "validation_only", "execution_available": False, "message": "m",
               "schema": "plasmate.trace.v1", "sequence": 3, "side_effects": False, "status": "refused", "trace_id": "t"}  # fmt: skip
    plan = nb.ReplayPlan(payload)
    numbers = [line.strip().split(".")[0] for line in repr(plan).splitlines()[2:12]]
    assert numbers == [
        "1",
        "2",
        "3",
        "4",
        "5",
        "6a",
        "6b",
        "6c",
        "7",
        "8",
    ]  # docs/contract.md#replay-validation
    html = plan._repr_html_()
    assert html.index(">6a<") < html.index(">6c<") < html.index(">7<") < html.index(">8<")
    contract = (Path(plasmate_nb.__file__).parents[1] / "docs" / "contract.md").read_text(encoding="utf-8")
    for code, number in CHECK_NUMBERS.items():  # the contract's table gives each code its number
        if code in DRIFT_CODES:
            assert re.search(rf"^\| {number} \|[^\n]*`{code}`", contract, re.MULTILINE), code


def test_replay_validate_all(session: nb.Session, login_url: str) -> None:
    page = session.open(login_url)
    session.toggle(page.find(role="checkbox"))
    session.scroll()
    table = session.replay_validate_all(progress=False)
    assert list(table.columns) == ["sequence", "action", "status", "drift", "summary"]
    assert str(table["sequence"].dtype) == "Int64" and table["sequence"].tolist() == [1, 2, 3]
    assert table["status"].tolist() == ["refused", "refused", "confirmation_required"]
    assert table["action"].tolist() == ["open_page", "toggle", "scroll"]
    assert table["summary"].tolist() == [session.replay_validate(n).summary for n in (1, 2, 3)]
    assert table["drift"].tolist()[:2] == ["unsupported_action", "state_drift"] and pd.isna(
        table["drift"].iloc[2]
    )


def test_replay_validate_takes_sequences_straight_from_a_dataframe(
    transport: Transport, login_url: str
) -> None:
    with nb.Session(transport) as s:
        s.open(login_url)
        s.scroll(pixels=0)
        sequences = s.trace.events()["sequence"].to_numpy()  # numpy integers, not Python ints
        statuses = [s.replay_validate(sequence).status for sequence in sequences]
    assert statuses[0] == "refused" and len(statuses) == 2


def test_plans_name_the_action_and_say_the_outcome_in_words(session: nb.Session, login_url: str) -> None:
    page = session.open(login_url)
    session.toggle(page.find(role="checkbox"))
    session.scroll("down", 0)
    refused = session.replay_validate(2)
    assert "action" not in refused.payload and refused.action == "toggle"  # looked up in the trace
    assert "Replay plan for event 2 (toggle)" in refused._repr_html_() and "action='toggle'" in repr(refused)
    assert refused.summary == "Refused: the page's state changed since before the action."
    assert refused.what_to_do == nb.explain("state_drift").what_to_do
    gone = session.replay_validate(99)
    assert gone.action is None and "<b>Replay plan for event 99</b>" in gone._repr_html_()
    done = session.replay_validate(3, confirmed=True)
    assert done.action == "scroll" and done.message == MESSAGE_VALIDATED
    shown = done._repr_html_() + repr(done)
    assert "slice" not in shown and "nothing was executed" in done.summary.lower()


def test_an_event_not_retained_says_once_which_events_are(session: nb.Session, login_url: str) -> None:
    session.open(login_url)
    session.scroll()
    session.scroll()
    plan = session.replay_validate(999)
    assert plan.drift == "event_not_retained" and plan.retained == (1, 2, 3)
    assert plan.summary == "Refused: event 999 is not retained (retained: 1–3)."
    assert plan.explanation == nb.explain("event_not_retained").meaning
    text, html = repr(plan), plan._repr_html_()
    for shown in (text, html):
        assert shown.count("retained: 1–3") == 1 and shown.count("not retained") == 1, shown
        assert "no retained event" not in shown.lower() and "not checked" not in shown, shown
        assert "s.trace.events()" in shown  # where the retained events are listed
    assert len(text.splitlines()) == 5
    assert (
        plan.payload["drift"] == "event_not_retained" and "retained" not in plan.payload
    )  # the tool's answer
    session.trace.clear()
    cleared = session.replay_validate(2)
    assert cleared.retained == () and cleared.summary == "Refused: event 2 is not retained (no event is)."


def test_retained_sequences_read_as_ranges() -> None:
    payload = {"drift": "event_not_retained", "execution": "validation_only", "execution_available": False,
               "message": "m", "schema": "plasmate.trace.v1", "sequence": 4, "side_effects": False,
               "status": "refused", "trace_id": "t"}  # fmt: skip
    assert nb.ReplayPlan(payload, retained=[1, 2, 3, 5, 7, 8, 9]).summary == (
        "Refused: event 4 is not retained (retained: 1–3, 5, 7–9)."
    )
    many = nb.ReplayPlan(payload, retained=range(1, 40, 2)).summary  # 20 lone events, gaps between
    assert many == "Refused: event 4 is not retained (retained: 1, 3, 5, …, 37, 39; 20 events)."
    unknown = nb.ReplayPlan(payload)  # made from a payload alone: which are retained is not known
    assert unknown.retained is None and unknown.summary == "Refused: event 4 is not retained."


def test_a_refused_replay_of_an_event_not_retained_names_the_retained_ones(login_url: str, demo) -> None:
    engine = ScriptedEngine(demo.base_url)
    dispatcher = Dispatcher(engine)
    dispatcher.replay_execution = True  # the operator's opt-in, on this test's own engine
    try:
        with nb.Session(LoopBoundTransport(InProcessTransport(dispatcher), background_loop())) as s:
            s.open(login_url)
            s.scroll()
            with pytest.raises(nb.ReplayRefused) as refused:
                s.replay(999, confirmed=True)
    finally:
        run_sync(engine.aclose())
    assert refused.value.plan.retained == (1, 2)
    assert str(refused.value) == "Replay not executed: Refused: event 999 is not retained (retained: 1–2)."


def test_explain_every_code_from_one_source() -> None:
    assert [code for code, _ in nb.CHECKS] == [*DRIFT_CODES, "confirmation"] == ORDER
    assert plasmate_nb.explain is nb.explain
    for code in DRIFT_CODES:
        explained = nb.explain(code)
        assert explained.status == "refused" and explained.message == DRIFT_MESSAGES[code]
        assert explained.meaning == nb.DRIFT_EXPLANATIONS[code] and explained.check == dict(nb.CHECKS)[code]
        text = str(explained)
        assert text.startswith(f"{code} (refused): ") and f"What to do: {explained.what_to_do}" in text
        assert explained.result.lower() not in explained.meaning.lower()  # the meaning does not repeat it
        assert cell(explained.what_to_do) in explained._repr_html_()
    pending = nb.explain("confirmation_required")
    assert pending.status == "confirmation_required" and "confirmed=True" in pending.what_to_do
    with pytest.raises(ValueError, match=r"unknown replay code 'drifted'.*state_drift"):
        nb.explain("drifted")


@pytest.mark.parametrize("backend", ["scripted"])
def test_panel_buttons_wait_for_a_pick_and_labels_fit(transport: Transport, login_url: str) -> None:
    with nb.Session(transport) as s:
        page = s.open(login_url)
        s.select_option(page.find(label="Plan"), "team")
        panel = s.replay_panel()
        try:
            assert panel.events.value is None
            assert panel.validate_button.disabled and panel.confirm_button.disabled
            assert list(panel.events.options) == [
                ("1 · open_page · success", 1),
                ("2 · select_option on select · success", 2),
            ]
            layout = panel.events.layout
            assert layout.width == "auto" and panel.events.style.description_width == "initial"
            panel.events.value = 2
            assert not panel.validate_button.disabled and not panel.confirm_button.disabled
            s.scroll()  # the list follows the trace and keeps the pick
            panel.refresh().result(timeout=30)
            assert panel.events.value == 2 and len(panel.events.options) == 3
            panel.events.value = None
            assert panel.confirm_button.disabled
        finally:
            panel.stop()
