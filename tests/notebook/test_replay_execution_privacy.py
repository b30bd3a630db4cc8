"""The value given to ``s.replay`` goes to the page only (docs/contract.md#supervised-replay-execution):
never into an exception, its hint, a repr, the trace's DataFrames, its status or a log line, whether
the replay is refused or its action fails."""

from __future__ import annotations

import logging

import pytest

import plasmate_nb as pnb
from plasmate_nb.client import ToolError
from plasmate_nb.client.embedded import embedded_dispatcher

RECORDED, SUPPLIED, WRONG_LENGTH = "Gold-Plan!", "Zinc-Plan?", "Much-Longer-Secret"


def shown(error: BaseException) -> str:
    parts = [str(error), repr(error), str(getattr(error, "hint", "")), str(getattr(error, "message", ""))]
    plan = getattr(error, "plan", None)
    if plan is not None:
        parts += [repr(plan), str(plan), plan._repr_html_()]
    return "".join(parts)


def test_a_failing_or_refused_replay_shows_no_value(
    fixture_server: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    try:
        with pnb.Session(replay_execution=True) as s:  # the embedded engine's opt-in: reset below
            s.open(f"{fixture_server}/replay/controls.html")
            _fail_and_refuse_a_replay(s, caplog)
    finally:
        embedded_dispatcher().replay_execution = False


def _fail_and_refuse_a_replay(s: pnb.Session, caplog: pytest.LogCaptureFixture) -> None:
    plan_box = s.page.find(role="select", label="Plan")
    with pytest.raises(ToolError):
        s.select_option(plan_box, RECORDED)  # 2: not an option, recorded as an error
    sequence = int(s.trace.events()["sequence"].iloc[-1])

    with pytest.raises(ToolError) as failed:  # the same byte length: it runs, and fails again
        s.replay(sequence, confirmed=True, value=SUPPLIED)
    assert not isinstance(failed.value, pnb.ReplayRefused)
    assert f"value of {len(SUPPLIED.encode())} bytes" in failed.value.message
    with pytest.raises(pnb.ReplayRefused) as refused:
        s.replay(sequence, confirmed=True, value=WRONG_LENGTH)
    assert refused.value.plan.drift == "value_length_mismatch"

    events = s.trace.events(columns="all")
    assert list(events["outcome"])[-2:] == ["error", "error"]  # the original and its replay
    seen = shown(failed.value) + shown(refused.value) + events.to_string() + caplog.text
    seen += repr(s.trace.status()) + repr(s) + str(s.trace.export().events)
    for secret in (RECORDED, SUPPLIED, WRONG_LENGTH):
        assert secret not in seen
