"""An external MCP agent drives the notebook's engine through the embedded server; the analyst
attaches, watches the dashboard move live, and validates the agent's replays."""

from __future__ import annotations

import asyncio
import time

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
