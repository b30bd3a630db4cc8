"""An external MCP agent drives the notebook's engine through the embedded server; the analyst
attaches, watches the dashboard move live, and validates the agent's replays."""

from __future__ import annotations

import asyncio
import time

import pytest

import plasmate_nb as pnb
from plasmate_nb.client import HttpTransport
from tests.support import element_id

WAIT_S = 30.0


async def _until(predicate, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "the dashboard did not update"
        await asyncio.sleep(0.05)


async def test_agent_session_is_watched_live_and_validated(demo) -> None:
    server = pnb.serve()
    agent = HttpTransport(server.url, token=server.token)  # the SDK client, as an agent would use it
    try:
        opened = await agent.call("open_page", {"url": demo.url("/login.html"), "trace": True})
        sid = opened["session_id"]
        assert sid in server.sessions()["session_id"].tolist()

        watcher = pnb.attach(sid)
        dashboard = watcher.trace.dashboard()
        assert dashboard.get_state()["next_sequence"]["value"] == 2

        email = element_id(opened, "text_input", "Email")
        await agent.call("type_text", {"session_id": sid, "element_id": email, "text": "agent@example.test"})
        await agent.call("scroll", {"session_id": sid, "pixels": 0, "element_id": email})
        await _until(lambda: dashboard.get_state()["next_sequence"]["value"] == 4)  # no manual refresh

        events = watcher.trace.events()
        assert events["action"].tolist() == ["open_page", "type_text", "scroll"]
        assert "agent@example.test" not in repr(dashboard.get_state()) + events.to_csv()
        plan = watcher.replay_validate(3)
        assert plan.status == "confirmation_required" and plan.payload["execution_available"] is False
        assert watcher.replay_validate(3, confirmed=True).status == "validated"
        assert watcher.replay_validate(2).drift == "state_drift"  # typing changed the live value

        dashboard.stop()
        final = watcher.close()
        assert final.events()["action"].tolist()[-1] == "close_page"
        assert sid not in server.sessions()["session_id"].tolist()
        assert server.token not in repr(server) and server.token not in server._repr_html_()
    finally:
        await agent.aclose()
        server.stop()


# -- pnb.examples.ScriptedAgent: the same, in a few lines ----------------------------------------


def _wait_until(predicate, what: str, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def test_scripted_agent_waits_to_be_watched_then_moves_the_dashboard(demo) -> None:
    server = pnb.serve()
    try:
        agent = pnb.examples.ScriptedAgent(server, demo, pause=0.05).open()
        watcher = pnb.attach(agent.session_id)
        dashboard = watcher.trace.dashboard()
        assert dashboard.get_state()["next_sequence"]["value"] == 2 and agent.steps_taken == 0  # it waits

        agent.start()
        seen = {2}

        def watching() -> bool:
            seen.add(dashboard.get_state()["next_sequence"]["value"])
            return agent.done

        _wait_until(watching, "the agent did not finish")
        assert agent.wait().steps_taken == len(agent.STEPS)
        last = 2 + len(agent.STEPS)
        _wait_until(
            lambda: dashboard.get_state()["next_sequence"]["value"] == last, "the dashboard did not update"
        )
        # It moved while the agent acted, with no manual refresh: at least one value between the
        # first and the last (refreshes of a busy burst may coalesce, so not necessarily all).
        assert len(seen | {last}) >= 3

        events = watcher.trace.events()
        assert events["action"].tolist() == ["open_page", *agent.STEPS]
        shown = repr(agent) + repr(dashboard.get_state()) + events.to_csv() + dashboard.snapshot_html()
        assert agent.password not in shown and agent.email not in shown and server.token not in shown

        dashboard.stop()
        final = agent.close()
        assert final.events()["action"].tolist() == ["open_page", *agent.STEPS, "close_page"]
        assert agent.session_id not in server.sessions()["session_id"].tolist()
    finally:
        server.stop()


def test_scripted_agent_joins_an_open_session_as_a_second_client(demo) -> None:
    server = pnb.serve()
    analyst = pnb.Session()
    try:
        analyst.open(demo.url("/index.html"))
        heard: list[str] = []
        unsubscribe = analyst.subscribe(heard.append)  # the agent's calls reach the analyst's session
        agent = pnb.examples.ScriptedAgent(server, demo.base_url, session_id=analyst.session_id, pause=0)
        agent.start().wait()
        _wait_until(lambda: heard.count("scroll") == 2, "the analyst's session did not hear the agent")
        unsubscribe()
        assert analyst.trace.events()["action"].tolist() == ["open_page", "navigate_to", *agent.STEPS]
        assert agent.close() is None  # not its session: it leaves it open
        assert analyst.trace.status().next_sequence == 3 + len(agent.STEPS)
    finally:
        analyst.close()
        server.stop()


def test_scripted_agent_says_why_it_stopped(demo) -> None:
    server = pnb.serve()
    try:
        agent = pnb.examples.ScriptedAgent(server, demo)
        with pytest.raises(RuntimeError, match="call start"):
            agent.wait()
        unreachable = pnb.examples.ScriptedAgent(server, "http://127.0.0.1:1", password="never-shown-pw")
        with pytest.raises(RuntimeError, match="scripted agent stopped: Failed to fetch") as failure:
            unreachable.start()
        assert "never-shown-pw" not in str(failure.value) + repr(unreachable)
        assert unreachable.session_id is None and unreachable.done
    finally:
        server.stop()
