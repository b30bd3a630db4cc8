"""replay_execute (docs/contract.md#supervised-replay-execution): off unless enabled; every refusal
executes nothing; a validated, confirmed replay runs once and is traced once; nothing can slip
between the checks and the execution."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plasmate_nb.tools import Dispatcher
from plasmate_nb.trace import compact_json
from tests.support import Caller, element_id

SECRET = "s3cret-Typed"


@pytest.fixture
def executing(dispatcher: Dispatcher) -> Caller:
    """The module's engine behind a dispatcher whose operator enabled execution."""
    return Caller(Dispatcher(dispatcher.engine, replay_execution=True))


class Recorded:
    """One traced session on the controls page, with helpers to look without touching."""

    def __init__(self, caller: Caller, payload: dict[str, Any]) -> None:
        self.call = caller
        self.sid: str = payload["session_id"]
        self.page = payload

    @classmethod
    async def open(cls, caller: Caller, base: str) -> Recorded:
        return cls(caller, await caller.ok("open_page", url=f"{base}/replay/controls.html", trace=True))

    def id(self, role: str, name: str) -> str:
        return element_id(self.page, role, name)

    async def act(self, tool: str, **arguments: Any) -> dict[str, Any]:
        self.page = await self.call.ok(tool, session_id=self.sid, **arguments)
        return self.page

    async def trace_id(self) -> str:
        return str((await self.call.ok("trace_status", session_id=self.sid))["trace_id"])

    def snapshot(self) -> str:
        """The live SOM, read from the engine (no tool call, so no event)."""
        return compact_json(self.call.dispatcher.engine.get(self.sid).view())

    async def state(self) -> tuple[str, str]:
        return self.snapshot(), compact_json(await self.call.ok("trace_status", session_id=self.sid))

    async def events(self) -> list[dict[str, Any]]:
        return list((await self.call.export(self.sid))["events"])

    async def replay(self, sequence: int, **arguments: Any) -> Any:
        return await self.call.dispatcher.call(
            "replay_execute",
            {"session_id": self.sid, "trace_id": await self.trace_id(), "sequence": sequence, **arguments},
        )

    async def close(self) -> None:
        await self.call.ok("close_page", session_id=self.sid)


def refusal(result: Any) -> dict[str, Any]:
    assert result.is_error, result.text
    prefix = "Replay not executed: "
    assert result.text.startswith(prefix), result.text
    plan: dict[str, Any] = json.loads(result.text.removeprefix(prefix))
    return plan


# ----- off by default ----------------------------------------------------------------------------


async def test_disabled_by_default_unlisted_and_refused(call: Caller, fixture_server: str) -> None:
    assert "replay_execute" not in {tool.name for tool in call.dispatcher.tools()}
    session = await Recorded.open(call, fixture_server)
    await session.act("toggle", element_id=session.id("checkbox", "Remember me"))
    before = await session.state()
    result = await session.replay(2, confirmed=True)
    assert result.is_error and "--enable-replay-execution" in result.text
    assert await session.state() == before
    plan = await call.ok(
        "replay_validate", session_id=session.sid, trace_id=await session.trace_id(), sequence=2
    )
    assert plan["execution_available"] is False
    await session.close()


async def test_enabled_it_is_listed_and_validation_says_so(executing: Caller, fixture_server: str) -> None:
    assert "replay_execute" in {tool.name for tool in executing.dispatcher.tools()}
    session = await Recorded.open(executing, fixture_server)
    plan = await executing.ok(
        "replay_validate", session_id=session.sid, trace_id=await session.trace_id(), sequence=1
    )
    assert plan["execution_available"] is True and plan["status"] == "refused"
    await session.close()


# ----- refusals execute nothing ------------------------------------------------------------------


async def test_every_refusal_leaves_page_and_trace_unchanged(executing: Caller, fixture_server: str) -> None:
    session = await Recorded.open(executing, fixture_server)
    remember = session.id("checkbox", "Remember me")
    note = session.id("text_input", "Note")
    await session.act("type_text", element_id=note, text=SECRET)  # 2: before empty and unchecked
    await session.act("toggle", element_id=remember)  # 3
    await session.act("evaluate", expression="1")  # 4: coarse
    trace_id = await session.trace_id()

    cases: list[tuple[dict[str, Any], str]] = [
        ({"sequence": 2, "trace_id": "not-this-trace"}, "cross_session"),
        ({"sequence": 99}, "event_not_retained"),
        ({"sequence": 1}, "unsupported_action"),  # open_page
        ({"sequence": 4}, "unsupported_action"),  # evaluate
        ({"sequence": 2}, "state_drift"),  # the checkbox is checked now
    ]
    for arguments, drift in cases:
        before = await session.state()
        call = {"session_id": session.sid, "trace_id": trace_id, "confirmed": True, **arguments}
        plan = refusal(await executing.dispatcher.call("replay_execute", call))
        assert (plan["status"], plan["drift"]) == ("refused", drift)
        assert plan["execution_available"] is True and plan["side_effects"] is False
        assert await session.state() == before

    await session.act("toggle", element_id=remember)  # 5
    await session.act("clear", element_id=note)  # 6: empty and unchecked again: sequence 2 validates
    panel = session.id("button", "Toggle panel")
    await session.act("click", element_id=panel)  # 7
    await session.act("click", element_id=panel)  # 8: sequence 7 validates too
    before = await session.state()
    unconfirmed = refusal(await session.replay(2))
    assert unconfirmed["status"] == "confirmation_required"
    short = refusal(await session.replay(2, confirmed=True, value="abc"))  # recorded 12 bytes
    assert short["drift"] == "value_length_mismatch"
    missing = refusal(await session.replay(2, confirmed=True))
    assert missing["drift"] == "value_length_mismatch"
    needless = refusal(await session.replay(7, confirmed=True, value="x"))
    assert needless["drift"] == "value_length_mismatch"
    assert await session.state() == before

    await session.act("navigate_to", url=f"{fixture_server}/replay/other.html")  # 9
    before = await session.state()
    page_drift = refusal(await session.replay(7, confirmed=True))
    assert page_drift["drift"] == "page_drift"
    assert await session.state() == before
    await session.close()


async def test_a_navigation_replays_only_with_the_recorded_url(
    executing: Caller, fixture_server: str
) -> None:
    session = await Recorded.open(executing, fixture_server)
    other = f"{fixture_server}/replay/other.html"
    await session.act("navigate_to", url=other)  # 2
    await session.act("navigate_to", url=f"{fixture_server}/replay/controls.html")  # 3
    before = await session.state()
    wrong = refusal(await session.replay(2, confirmed=True, value=f"{fixture_server}/replay/else.html"))
    assert wrong["drift"] == "url_mismatch"
    assert refusal(await session.replay(2, confirmed=True))["drift"] == "url_mismatch"
    assert await session.state() == before
    done = json.loads((await session.replay(2, confirmed=True, value=other)).text)
    assert done["title"] == "Other page" and done["replayed_sequence"] == 2 and done["sequence"] == 4
    assert other not in compact_json(await session.events())
    await session.close()


# ----- validated, confirmed replays run once and are traced once -----------------------------------


async def test_each_replayable_action_executes_once_and_is_traced_once(
    executing: Caller, fixture_server: str
) -> None:
    session = await Recorded.open(executing, fixture_server)
    remember, note = session.id("checkbox", "Remember me"), session.id("text_input", "Note")
    plan_box, panel = session.id("select", "Plan"), session.id("button", "Toggle panel")
    typed_length = "x" * len(SECRET.encode())
    # (action, its arguments, the call that undoes it, the value replay_execute must be given)
    steps: list[tuple[str, dict[str, Any], tuple[str, dict[str, Any]], str | None]] = [
        ("click", {"element_id": panel}, ("click", {"element_id": panel}), None),
        ("toggle", {"element_id": remember}, ("toggle", {"element_id": remember}), None),
        ("scroll", {"direction": "down", "pixels": 200}, ("scroll", {"direction": "up", "pixels": 200}), None),
        ("type_text", {"element_id": note, "text": SECRET}, ("clear", {"element_id": note}), typed_length),
        (
            "select_option", {"element_id": plan_box, "value": "pro"},
            ("select_option", {"element_id": plan_box, "value": "basic"}), "pro",
        ),
        ("clear", {"element_id": note}, ("type_text", {"element_id": note, "text": "abc"}), None),
    ]  # fmt: skip
    for action, arguments, (undo, undo_arguments), value in steps:
        if action == "clear":
            await session.act("type_text", element_id=note, text="abc")  # something to clear
        await session.act(action, **arguments)
        recorded = (await session.events())[-1]
        await session.act(undo, **undo_arguments)  # the live state is the recorded before again
        last = (await session.events())[-1]["sequence"]

        replay_arguments = {"confirmed": True} if value is None else {"confirmed": True, "value": value}
        result = await session.replay(recorded["sequence"], **replay_arguments)
        assert not result.is_error, result.text
        answer = json.loads(result.text)
        new = [e for e in await session.events() if e["sequence"] > last]
        assert len(new) == 1, [e["action"] for e in new]
        event = new[0]
        assert answer["replayed_sequence"] == recorded["sequence"] and answer["sequence"] == event["sequence"]
        assert event["action"] == action and event["outcome"] == "success"
        assert event["before"] == recorded["before"]  # executed on exactly the validated state
        if action != "type_text":  # (typed text is the caller's: same length, other characters)
            assert event["after"] == recorded["after"], action  # it did what the recorded call did
        assert event["parameters"] == recorded["parameters"] and event.get("target") == recorded.get("target")
        assert "replay" not in compact_json(event)  # the event contract is unchanged
        assert "regions" in answer and "url" in answer
        await session.act(undo, **undo_arguments)
        if action == "clear":
            await session.act("clear", element_id=note)
    export = compact_json(await session.call.export(session.sid))
    assert SECRET not in export and typed_length not in export
    await session.close()


# ----- atomicity -----------------------------------------------------------------------------------

MUTATIONS = st.lists(st.sampled_from(["toggle", "type", "panel", "replay"]), min_size=3, max_size=8)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=MUTATIONS)
async def test_concurrent_clients_never_see_an_execution_on_a_drifted_state(
    executing: Caller, fixture_server: str, operations: list[str]
) -> None:
    session = await Recorded.open(executing, fixture_server)
    remember, note = session.id("checkbox", "Remember me"), session.id("text_input", "Note")
    panel = session.id("button", "Toggle panel")
    await session.act("toggle", element_id=remember)  # 2
    await session.act("toggle", element_id=remember)  # 3: sequence 2 validates now
    trace_id = await session.trace_id()
    recorded = next(e for e in await session.events() if e["sequence"] == 2)
    others = [Caller(Dispatcher(executing.dispatcher.engine)) for _ in operations]

    async def run(operation: str, caller: Caller) -> Any:
        arguments: dict[str, Any] = {"session_id": session.sid}
        if operation == "replay":
            return await executing.dispatcher.call(
                "replay_execute", {**arguments, "trace_id": trace_id, "sequence": 2, "confirmed": True}
            )
        tool, extra = {
            "toggle": ("toggle", {"element_id": remember}),
            "type": ("type_text", {"element_id": note, "text": "z"}),
            "panel": ("click", {"element_id": panel}),
        }[operation]
        return await caller.dispatcher.call(tool, {**arguments, **extra})

    results = await asyncio.gather(*(run(op, caller) for op, caller in zip(operations, others, strict=True)))
    events = {e["sequence"]: e for e in await session.events()}
    for operation, result in zip(operations, results, strict=True):
        if operation != "replay" or result.is_error:
            continue
        executed = events[json.loads(result.text)["sequence"]]
        assert executed["before"] == recorded["before"]
        assert executed["action"] == "toggle" and executed["target"] == recorded["target"]
    await session.close()


async def test_origin_and_action_refusals_execute_nothing(
    executing: Caller, fixture_server: str, demo
) -> None:
    session = await Recorded.open(executing, fixture_server)
    panel = session.id("button", "Toggle panel")
    failed = await executing.dispatcher.call(
        "type_text", {"session_id": session.sid, "element_id": panel, "text": "abc"}
    )
    assert failed.is_error  # 2: recorded, with the button as its target
    before = await session.state()
    plan = refusal(await session.replay(2, confirmed=True, value="xyz"))
    assert plan["drift"] == "action_unavailable"  # a button offers no "type"
    assert await session.state() == before

    await session.act("click", element_id=panel)  # 3
    await session.act("click", element_id=panel)  # 4: 3 would validate here
    await session.act("navigate_to", url=demo.url("/login.html"))  # 5: another origin
    before = await session.state()
    plan = refusal(await session.replay(3, confirmed=True))
    assert plan["drift"] == "origin_drift"
    assert await session.state() == before
    await session.close()


def test_an_ambiguous_target_is_refused_before_anything_could_run() -> None:
    """Two live elements with one stable key cannot happen in a real page (the compiler makes ids
    unique), so the decision is shown on the trace core, where replay_plan names no element."""
    from plasmate_nb.trace import PageState, TraceLog, parse_replay_request, sanitize_parameters

    twin = {"id": "e_twin", "role": "button", "text": "Buy", "actions": ["click"]}
    som = {"title": "Shop", "regions": [{"id": "r_main", "role": "main", "elements": [dict(twin)]}]}
    log = TraceLog(enabled=True)
    page = PageState("https://shop.test/", None, som)
    state = log.state(page)
    log.record("click", sanitize_parameters("click", {}), log.target(page, "e_twin"), state, state, None, 5)
    doubled = {**som, "regions": [{**som["regions"][0], "elements": [dict(twin), dict(twin)]}]}
    request = parse_replay_request(
        {"session_id": "s", "trace_id": log.trace_id, "sequence": 1, "confirmed": True}
    )
    plan, element = log.replay_plan(request, PageState("https://shop.test/", None, doubled))
    assert (plan["status"], plan["drift"], element) == ("refused", "target_ambiguous", None)
