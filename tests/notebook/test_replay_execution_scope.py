"""How far ``Session(replay_execution=True)`` reaches: the embedded engine is the process's, so the
opt-in is the process's too, and the agents of ``pnb.serve()`` get the tool from then on (the
documented scope: README, the ``AsyncSession`` docstring). Off by default for every entry point."""

from __future__ import annotations

import pytest

import plasmate_nb as pnb
from plasmate_nb.cli import build_parser
from plasmate_nb.client import HttpTransport, ToolError
from plasmate_nb.client.embedded import embedded_dispatcher


@pytest.mark.parametrize("command", ["serve", "mcp"])
def test_both_server_subcommands_are_off_unless_given_the_flag(command: str) -> None:
    parser = build_parser()
    assert parser.parse_args([command]).enable_replay_execution is False
    assert parser.parse_args([command, "--enable-replay-execution"]).enable_replay_execution is True


async def test_an_embedded_server_offers_execution_only_if_it_was_on_when_the_server_started(
    fixture_server: str,
) -> None:
    before = pnb.serve()  # started with execution off: unlisted, and refused, whatever happens later
    early = HttpTransport(before.url, token=before.token)
    analyst = pnb.Session(replay_execution=True)
    after: pnb.EmbeddedServer | None = None
    late: HttpTransport | None = None
    try:
        page = analyst.open(f"{fixture_server}/replay/controls.html")
        remember = page.find(role="checkbox", label="Remember me")
        analyst.toggle(remember)  # 2
        analyst.toggle(remember)  # 3: 2 validates
        replay = {
            "session_id": analyst.session_id,
            "trace_id": analyst.trace_id,
            "sequence": 2,
            "confirmed": True,
        }
        assert "replay_execute" not in {tool["name"] for tool in await early.list_tools()}
        with pytest.raises(ToolError, match="--enable-replay-execution"):
            await early.call("replay_execute", replay)
        assert analyst.trace.status().retained_events == 3  # nothing ran

        after = pnb.serve()  # the process's opt-in is on now: this server offers it
        late = HttpTransport(after.url, token=after.token)
        assert "replay_execute" in {tool["name"] for tool in await late.list_tools()}
        assert (await late.call("replay_execute", replay))["sequence"] == 4
    finally:
        for transport in (early, late):
            if transport is not None:
                await transport.aclose()
        if analyst.session_id is not None:
            analyst.close()
        for server in (before, after):
            if server is not None:
                server.stop()
        embedded_dispatcher().replay_execution = False
