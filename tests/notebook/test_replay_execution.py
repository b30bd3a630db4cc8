"""``s.replay``: the notebook's side of replay_execute (docs/contract.md#supervised-replay-execution),
on the embedded engine with the operator's opt-in ``Session(replay_execution=True)``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import plasmate_nb as pnb
from plasmate_nb import errors
from plasmate_nb.client import InProcessTransport, ToolError
from plasmate_nb.client.embedded import embedded_dispatcher
from tests.support import wait_until_here

SECRET = "pa55-Phrase"


@pytest.fixture
def executing(fixture_server: str) -> Iterator[pnb.Session]:
    """A session whose embedded engine has replay execution on; off again afterwards (the
    embedded engine is the whole test process's)."""
    session = pnb.Session(replay_execution=True)
    try:  # open() turns execution on before it can fail: the finally must run for it too
        session.open(f"{fixture_server}/replay/controls.html")
        yield session
    finally:
        if session.session_id is not None:
            session.close()
        embedded_dispatcher().replay_execution = False


def test_a_validated_replay_executes_and_shows_what_changed(executing: pnb.Session) -> None:
    s = executing
    remember = s.page.find(role="checkbox", label="Remember me")
    s.toggle(remember)  # 2
    s.toggle(remember)  # 3: unchecked again, so 2 validates
    plan = s.replay_validate(2)
    assert plan.status == "confirmation_required" and plan.execution_available
    assert "s.replay(2, confirmed=True)" in s.replay_validate(2, confirmed=True).what_to_do

    done = s.replay(2, confirmed=True)
    assert (done.replayed_sequence, done.sequence) == (2, 4)
    assert done.before is not None and done.page is s.page
    changed = done.changes()
    assert list(changed["change"]) == ["changed"] and list(changed["role"]) == ["checkbox"]
    assert "Replayed event 2" in done._repr_html_()
    events = s.trace.events()
    assert list(events["action"])[-1] == "toggle" and len(events) == 4


def test_a_refusal_raises_with_its_plan_and_changes_nothing(executing: pnb.Session) -> None:
    s = executing
    note = s.page.find(role="text_input", label="Note")
    s.type_text(note, SECRET)  # 2
    s.clear(note)  # 3: empty again, so 2 validates
    before = (s.trace.status().retained_events, s.page.regions)

    with pytest.raises(pnb.ReplayRefused) as unconfirmed:
        s.replay(2)
    assert unconfirmed.value.plan.status == "confirmation_required"
    assert str(unconfirmed.value).startswith(errors.REPLAY_NOT_EXECUTED_PREFIX)
    with pytest.raises(pnb.ReplayRefused) as wrong_length:
        s.replay(2, confirmed=True, value="x")
    plan = wrong_length.value.plan
    assert plan.drift == "value_length_mismatch" and plan.action == "type_text"
    assert plan.checks[-1].name == "value" and "UTF-8 bytes" in (wrong_length.value.hint or "")
    assert "byte length" in str(pnb.explain("value_length_mismatch"))
    assert (s.trace.status().retained_events, s.page.regions) == before

    same_length = "y" * len(SECRET.encode())
    done = s.replay(2, confirmed=True, value=same_length)
    assert done.sequence == 4
    shown = "".join(
        [repr(done), done._repr_html_(), s.trace.events(columns="all").to_string(), repr(plan), str(plan)]
    )
    assert SECRET not in shown and same_length not in shown


def test_off_by_default_the_server_refuses_and_says_how_to_turn_it_on(fixture_server: str) -> None:
    with pnb.Session() as s:
        s.open(f"{fixture_server}/replay/controls.html")
        s.scroll("down", 100)
        with pytest.raises(ToolError) as refused:
            s.replay(2, confirmed=True)
        assert not isinstance(refused.value, pnb.ReplayRefused)
        assert "--enable-replay-execution" in refused.value.message
        assert refused.value.hint == errors.REPLAY_EXECUTION_HINT  # said to the notebook's user
        assert s.replay_validate(2).execution_available is False


def test_the_flag_is_for_the_embedded_engine_only() -> None:
    with pytest.raises(ValueError, match="--enable-replay-execution"):
        pnb.Session(InProcessTransport(embedded_dispatcher()), replay_execution=True)


def test_the_panel_executes_only_a_validated_confirmed_plan(executing: pnb.Session) -> None:
    s = executing
    remember = s.page.find(role="checkbox", label="Remember me")
    s.toggle(remember)  # 2
    s.toggle(remember)  # 3
    s.type_text(s.page.find(role="text_input", label="Note"), SECRET)  # 4
    s.clear(s.page.find(role="text_input", label="Note"))  # 5: 2 and 4 validate
    panel = s.replay_panel()
    assert panel.execute_button.layout.display == "none"  # until the server says it can execute

    panel.events.value = 2
    panel.validate(confirmed=False).result(timeout=30)
    assert panel.execute_button.layout.display is None and panel.execute_button.disabled
    panel.validate(confirmed=True).result(timeout=30)
    assert not panel.execute_button.disabled
    result = panel.execute().result(timeout=60)
    assert result is not None and result.sequence == 6
    assert "Replayed event 2" in panel.output.value and "checkbox" in panel.output.value
    assert panel.execute_button.disabled  # the plan is spent

    panel.events.value = 4  # a type_text: the panel never takes the value
    panel.validate(confirmed=True).result(timeout=30)
    assert panel.execute_button.disabled and "value=..." in panel.output.value
    assert SECRET not in str(panel.get_state())
    panel.stop()


def test_without_execution_the_panel_never_shows_execute(fixture_server: str) -> None:
    with pnb.Session() as s:
        s.open(f"{fixture_server}/replay/controls.html")
        s.scroll("down", 0)
        panel = s.replay_panel()
        panel.events.value = 2
        panel.validate(confirmed=True).result(timeout=30)
        assert panel.plan is not None and panel.plan.status == "validated"
        assert panel.execute_button.layout.display == "none" and panel.execute_button.disabled
        panel.stop()


def test_a_button_whose_call_fails_says_why_in_the_panel(executing: pnb.Session) -> None:
    """A press's work runs on the session's loop, where an exception reached no one: the panel
    kept its old output and Execute stayed disabled, so the button seemed to do nothing."""
    s = executing
    remember = s.page.find(role="checkbox", label="Remember me")
    s.toggle(remember)  # 2
    s.toggle(remember)  # 3: the page is as event 2 found it
    panel = s.replay_panel()
    panel.events.value = 2
    assert panel.validate(confirmed=True).result(timeout=30).status == "validated"
    embedded_dispatcher().replay_execution = False  # the operator turns execution off meanwhile
    shown = panel.output.value
    panel.execute_button.click()
    wait_until_here(lambda: panel.output.value != shown, 30, "the panel to show the failure")
    assert "replay_execute" in panel.output.value and "Traceback" not in panel.output.value
    assert not panel.validate_button.disabled  # the panel can be used again
    panel.stop()
