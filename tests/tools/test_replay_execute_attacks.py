"""Attacks on replay_execute (docs/contract.md#supervised-replay-execution): a page that changes
itself after the engine last looked, concurrent replays, failed originals, cleared traces,
hostile arguments, exact navigation URLs, and the supplied value leaking anywhere."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plasmate_nb.tools import Dispatcher
from plasmate_nb.trace import compact_json
from plasmate_nb.trace.compact import utf8_len
from tests.support import Caller
from tests.tools.test_replay_execute import Recorded, refusal


@pytest.fixture
def executing(dispatcher: Dispatcher) -> Caller:
    """The module's engine behind a dispatcher whose operator enabled execution."""
    return Caller(Dispatcher(dispatcher.engine, replay_execution=True))


async def live_checked(session: Recorded, element: str) -> bool:
    """Read the live DOM directly (no tool call: no event, no recompile)."""
    page = session.call.dispatcher.engine.get(session.sid)._page
    assert page is not None
    return bool(await page.evaluate(f"document.getElementById({element!r}).checked"))


async def test_a_page_that_changed_itself_since_the_last_action_is_not_executed_on(
    executing: Caller, fixture_server: str
) -> None:
    url = f"{fixture_server}/replay/self_changing.html"
    session = Recorded(executing, await executing.ok("open_page", url=url, trace=True))
    subscribe = session.id("checkbox", "Subscribe")
    await session.act("toggle", element_id=subscribe)  # 2: before unchecked
    await session.act("toggle", element_id=subscribe)  # 3: unchecked again, 2 validates
    await session.act("click", element_id=session.id("button", "Arm"))  # 4: the page will check it itself
    page = executing.dispatcher.engine.get(session.sid)._page
    assert page is not None
    await page.wait_for_function("document.getElementById('subscribe').checked", timeout=5000)

    plan = refusal(await session.replay(2, confirmed=True))
    assert (plan["status"], plan["drift"]) == ("refused", "state_drift")
    assert await live_checked(session, "subscribe")  # nothing clicked it back
    assert [e["action"] for e in await session.events()][-1] == "click"  # no new event
    await session.close()


async def test_a_change_no_mutation_observer_sees_still_refuses_execution(
    executing: Caller, fixture_server: str
) -> None:
    """The proof that the page is unchanged is a full walk, not an incremental compile: a shadow
    root attached to an element already compiled changes no node the observer watches."""
    url = f"{fixture_server}/replay/self_changing.html"
    session = Recorded(executing, await executing.ok("open_page", url=url, trace=True))
    subscribe = session.id("checkbox", "Subscribe")
    await session.act("toggle", element_id=subscribe)  # 2: before unchecked
    await session.act("toggle", element_id=subscribe)  # 3: unchecked again, 2 validates
    page = executing.dispatcher.engine.get(session.sid)._page
    assert page is not None
    await page.evaluate(
        "document.querySelector('h1').attachShadow({mode: 'open'}).innerHTML = '<button>Injected</button>'"
    )
    plan = refusal(await session.replay(2, confirmed=True))
    assert (plan["status"], plan["drift"]) == ("refused", "state_drift")
    assert not await live_checked(session, "subscribe")  # not executed
    assert [e["action"] for e in await session.events()][-1] == "toggle"  # no new event
    await session.close()


@pytest.mark.parametrize(
    ("action", "arguments", "undo", "executions"),
    [
        (
            "toggle",
            {"element_id": ("checkbox", "Remember me")},
            {"element_id": ("checkbox", "Remember me")},
            1,
        ),
        ("scroll", {"direction": "down", "pixels": 100}, {"direction": "up", "pixels": 100}, 2),
    ],
)
async def test_two_clients_replaying_one_event_each_get_a_fresh_validation(
    executing: Caller,
    fixture_server: str,
    action: str,
    arguments: dict[str, Any],
    undo: dict[str, Any],
    executions: int,
) -> None:
    session = await Recorded.open(executing, fixture_server)
    resolved = {k: session.id(*v) if isinstance(v, tuple) else v for k, v in arguments.items()}
    await session.act(action, **resolved)  # 2
    await session.act(action, **{k: session.id(*v) if isinstance(v, tuple) else v for k, v in undo.items()})
    recorded = (await session.events())[1]
    # A scroll changes nothing the SOM holds, so its state still validates after it ran once.
    assert (recorded["before"] == recorded["after"]) is (executions == 2)
    other = Caller(Dispatcher(executing.dispatcher.engine, replay_execution=True))
    replay = {
        "session_id": session.sid,
        "trace_id": await session.trace_id(),
        "sequence": 2,
        "confirmed": True,
    }
    results = await asyncio.gather(
        executing.dispatcher.call("replay_execute", replay), other.dispatcher.call("replay_execute", replay)
    )
    assert sum(not r.is_error for r in results) == executions
    for result in results:
        if result.is_error:
            assert refusal(result)["drift"] == "state_drift"
    assert [e["action"] for e in await session.events()].count(action) == 2 + executions
    await session.close()


async def test_an_event_that_failed_is_re_executed_and_fails_again_without_the_value(
    executing: Caller, fixture_server: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    session = await Recorded.open(executing, fixture_server)
    plan_box = session.id("select", "Plan")
    secret, replayed = "Gold-Plan!", "Zinc-Plan?"  # not options; equal byte lengths
    failed = await executing.dispatcher.call(
        "select_option", {"session_id": session.sid, "element_id": plan_box, "value": secret}
    )
    assert failed.is_error and secret not in failed.text
    recorded = (await session.events())[-1]
    assert recorded["outcome"] == "error"
    result = await session.replay(recorded["sequence"], confirmed=True, value=replayed)
    assert result.is_error and result.text == failed.text  # the action's own error: no value in it
    events = await session.events()
    assert events[-1]["outcome"] == "error" and events[-1]["sequence"] == recorded["sequence"] + 1
    seen = result.text + compact_json(events) + caplog.text
    seen += compact_json(await executing.ok("trace_status", session_id=session.sid))
    assert secret not in seen and replayed not in seen
    await session.close()


async def test_a_cleared_trace_replays_nothing(executing: Caller, fixture_server: str) -> None:
    session = await Recorded.open(executing, fixture_server)
    remember = session.id("checkbox", "Remember me")
    await session.act("toggle", element_id=remember)  # 2
    await session.act("toggle", element_id=remember)  # 3
    await executing.ok("trace_clear", session_id=session.sid)
    before = await session.state()
    assert refusal(await session.replay(2, confirmed=True))["drift"] == "event_not_retained"
    assert await session.state() == before
    await session.close()


BAD_ARGUMENTS: list[tuple[dict[str, Any], str]] = [
    ({"sequence": -1}, "invalid value"),
    ({"sequence": 2**64}, "invalid value"),
    ({"sequence": True}, "invalid type: boolean"),
    ({"sequence": 2.0}, "invalid type: floating point"),
    ({"sequence": "2"}, "invalid type: string"),
    ({"value": 12345}, "invalid type: integer"),
    ({"value": ["s3cret"]}, "invalid type: sequence"),
    ({"value": {"s3cret": 1}}, "invalid type: map"),
    ({"confirmed": "true"}, "invalid type: string"),
    ({"extra": "s3cret"}, "unknown field `extra`"),
]


async def test_hostile_arguments_are_refused_before_anything_runs(
    executing: Caller, fixture_server: str
) -> None:
    session = await Recorded.open(executing, fixture_server)
    remember = session.id("checkbox", "Remember me")
    await session.act("toggle", element_id=remember)  # 2
    await session.act("toggle", element_id=remember)  # 3
    base = {"session_id": session.sid, "trace_id": await session.trace_id(), "sequence": 2, "confirmed": True}
    before = await session.state()
    for change, expected in BAD_ARGUMENTS:
        result = await executing.dispatcher.call("replay_execute", {**base, **change})
        assert result.is_error and expected in result.text, (change, result.text)
        assert "s3cret" not in result.text
    for sequence in (0, 2**64 - 1):
        assert refusal(await session.replay(sequence, confirmed=True))["drift"] == "event_not_retained"
    huge = "\U0001f510" * 262_144  # 1 MiB of UTF-8
    for value in (huge, "\ud800abc", "abc\udfff"):
        result = await session.replay(2, confirmed=True, value=value)
        assert refusal(result)["drift"] == "value_length_mismatch"
        assert len(result.text) < 1000
    assert await session.state() == before
    await session.close()


async def test_a_navigation_replays_only_with_the_byte_identical_url(
    executing: Caller, fixture_server: str
) -> None:
    session = await Recorded.open(executing, fixture_server)
    port = fixture_server.rsplit(":", 1)[1]
    recorded_url = f"http://127.0.0.1:{port}/replay/other.html?q=1"
    await session.act("navigate_to", url=recorded_url)  # 2
    await session.act("navigate_to", url=f"{fixture_server}/replay/controls.html")  # 3
    variants = [
        f"HTTP://127.0.0.1:{port}/replay/other.html?q=1",  # scheme case
        f"http://127.0.0.1:{port}/replay/other.html?q=1#top",  # fragment
        f"http://127.0.0.1:{port}/replay/other.html?q=1/",  # trailing slash
        f"http://127.0.0.1:{port}/replay//other.html?q=1",  # same file, other path
        f"http://127.0.0.1:{port}/replay/other.html?q=1 ",  # trailing space
        f"http://localhost:{port}/replay/other.html?q=1",  # another host name for the same server
    ]
    before = await session.state()
    for variant in variants:
        result = await session.replay(2, confirmed=True, value=variant)
        assert refusal(result)["drift"] == "url_mismatch", variant
        assert variant not in result.text and "other.html" not in result.text
    assert await session.state() == before
    done = await session.replay(2, confirmed=True, value=recorded_url)
    assert not done.is_error and json.loads(done.text)["title"] == "Other page"
    assert "other.html" not in compact_json(await session.events())
    await session.close()


TYPED = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40).map(
    lambda t: f"Qz{t}zQ"
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(recorded=TYPED, supplied=TYPED)
async def test_a_supplied_value_never_leaks(
    executing: Caller, fixture_server: str, caplog: pytest.LogCaptureFixture, recorded: str, supplied: str
) -> None:
    caplog.set_level(logging.DEBUG)
    session = await Recorded.open(executing, fixture_server)
    note = session.id("text_input", "Note")
    await session.act("type_text", element_id=note, text=recorded)  # 2: recorded from an empty field
    await session.act("clear", element_id=note)  # 3: empty again
    errors = []
    for value in (recorded[::-1], supplied, None):  # the first has the recorded byte length
        arguments = {"confirmed": True} if value is None else {"confirmed": True, "value": value}
        result = await session.replay(2, **arguments)
        refused = result.text.startswith("Replay not executed")
        assert refused is (value is None or utf8_len(value) != utf8_len(recorded))
        if result.is_error:
            errors.append(result.text)
        else:  # the answer is the page the value went into, as a type_text call's is
            await session.act("clear", element_id=note)
    seen = "".join(errors) + compact_json(await session.call.export(session.sid)) + caplog.text
    seen += compact_json(await executing.ok("trace_status", session_id=session.sid))
    for secret in (recorded, recorded[::-1], supplied):
        for form in (secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]):
            assert form not in seen
    await session.close()


@pytest.mark.parametrize("replay_first", [True, False])
async def test_a_session_closed_concurrently_either_runs_the_replay_first_or_refuses_it(
    executing: Caller, fixture_server: str, replay_first: bool
) -> None:
    session = await Recorded.open(executing, fixture_server)
    remember = session.id("checkbox", "Remember me")
    await session.act("toggle", element_id=remember)  # 2
    await session.act("toggle", element_id=remember)  # 3
    replay = {
        "session_id": session.sid,
        "trace_id": await session.trace_id(),
        "sequence": 2,
        "confirmed": True,
    }
    calls = [
        executing.dispatcher.call("replay_execute", replay),
        executing.dispatcher.call("close_page", {"session_id": session.sid}),
    ]
    replayed, closed = await asyncio.gather(*(calls if replay_first else calls[::-1]))
    if not replay_first:
        replayed, closed = closed, replayed
    assert not closed.is_error
    final = [e["action"] for e in json.loads(closed.text)["final_trace"]["events"]]
    if replay_first:  # the lock orders them: the execution is in the final trace
        assert json.loads(replayed.text)["sequence"] == 4 and final == [
            "open_page",
            *["toggle"] * 3,
            "close_page",
        ]
    else:  # the session was gone before the replay's turn: nothing ran
        assert replayed.is_error and "not found" in replayed.text.lower()
        assert final == ["open_page", "toggle", "toggle", "close_page"]


async def test_an_element_id_reused_by_another_element_is_judged_by_its_stable_key(
    executing: Caller, fixture_server: str
) -> None:
    url = f"{fixture_server}/replay/tricky.html"
    session = Recorded(executing, await executing.ok("open_page", url=url, trace=True))
    await session.act("click", element_id=session.id("button", "Go"))  # 2: changes nothing
    recorded_target = (await session.events())[-1]["target"]
    # An identical node under the same id: the same semantic target on the same state, so it runs
    # (identity is semantic: a page's event handlers are not part of the state).
    await session.act("click", element_id=session.id("button", "Clone"))  # 3
    done = await session.replay(2, confirmed=True)
    assert not done.is_error and (await session.events())[-1]["target"] == recorded_target
    # Another element under the same id: the recorded target is gone.
    await session.act("click", element_id=session.id("button", "Rename"))  # 5
    before = await session.state()
    assert refusal(await session.replay(2, confirmed=True))["drift"] == "target_missing"
    assert await session.state() == before
    await session.close()


async def test_a_field_that_rejects_the_value_fails_without_showing_it(
    executing: Caller, fixture_server: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    url = f"{fixture_server}/replay/tricky.html"
    session = Recorded(executing, await executing.ok("open_page", url=url, trace=True))
    amount = session.id("text_input", "Amount")  # an <input type=number>
    secret, supplied = "not-a-number!", "also-no-digit"  # equal byte lengths
    arguments = {"session_id": session.sid, "element_id": amount, "text": secret}
    failed = await executing.dispatcher.call("type_text", arguments)  # 2: the field refuses letters
    assert failed.is_error
    result = await session.replay(2, confirmed=True, value=supplied)
    assert result.is_error and not result.text.startswith("Replay not executed")
    events = await session.events()
    assert [e["outcome"] for e in events[-2:]] == ["error", "error"]
    seen = failed.text + result.text + compact_json(events) + caplog.text
    assert secret not in seen and supplied not in seen
    await session.close()
