"""Hostile pages (self-rewriting, trapped globals, throwing getters, 100-deep shadow roots)
never hang or crash the SOM compiler or an action: every call gives a result or an error,
within a bound, and the server keeps serving."""

from __future__ import annotations

import pytest

from plasmate_nb.trace.som_walk import iter_elements
from tests.reliability.support import assert_export_bounds, remote

HOSTILE_PAGES = ["rewrite.html", "globals.html", "getters.html", "shadow.html"]
ACTION_BY_ROLE = {"button": "click", "link": "click", "text_input": "type_text", "checkbox": "toggle"}


def _targets(payload: dict) -> list[tuple[str, str]]:
    """(tool, element_id) for the first element of each actionable role on the page."""
    seen: dict[str, str] = {}
    for element in iter_elements({"regions": payload.get("regions", [])}):
        seen.setdefault(element["role"], element["id"])
    return [(ACTION_BY_ROLE[role], eid) for role, eid in seen.items() if role in ACTION_BY_ROLE]


@pytest.mark.parametrize("name", HOSTILE_PAGES)
async def test_hostile_page_gives_results_or_errors_never_a_hang(fast_server, hostile, name) -> None:
    async with remote(fast_server.url) as client:
        opened = await client.call("open_page", {"url": f"{hostile}/{name}", "trace": True})
        if not opened.ok:  # a page the compiler refuses must say so, and leave nothing behind
            assert opened.payload.startswith(("Pipeline error", "Failed to fetch")), opened.payload
            return
        sid = opened.payload["session_id"]
        outcomes = []
        for tool, element_id in _targets(opened.payload):
            extra = {"text": "typed"} if tool == "type_text" else {}
            outcomes.append(await client.call(tool, {"session_id": sid, "element_id": element_id, **extra}))
        for tool, arguments in (
            ("scroll", {"direction": "bottom"}),
            ("evaluate", {"expression": "document.title"}),
            ("navigate_to", {"url": f"{hostile}/{name}"}),
        ):
            outcomes.append(await client.call(tool, {"session_id": sid, **arguments}))
        assert all(isinstance(o.payload, dict | str) for o in outcomes)
        export = await client.ok("trace_export", session_id=sid)
        assert_export_bounds(export)
        assert export["next_sequence"] == 2 + len(outcomes)  # one event per call, failures included
        closed = await client.ok("close_page", session_id=sid)
        assert closed["final_trace"]["events"][-1]["action"] == "close_page"
        assert (await client.ok("session_status"))["active_sessions"] == 0


async def test_deep_shadow_content_is_compiled_and_actionable(fast_server, hostile) -> None:
    async with remote(fast_server.url) as client:
        opened = await client.ok("open_page", url=f"{hostile}/shadow.html")
        roles = {e["role"]: e["id"] for e in iter_elements({"regions": opened["regions"]})}
        assert "button" in roles, "the innermost shadow root's button is in the SOM"
        await client.ok("click", session_id=opened["session_id"], element_id=roles["button"])
        await client.ok("close_page", session_id=opened["session_id"])


async def test_trapped_globals_compile_without_echoing_the_traps(fast_server, hostile) -> None:
    """Throwing window properties named like ours and patched builtins: the compiler still returns
    a SOM, and none of the patched functions' return values ("attacker", "trimmed") reach it (the
    compiler runs in an isolated world: tests/som/test_isolation.py shows the SOM is unchanged)."""
    async with remote(fast_server.url) as client:
        opened = await client.ok("open_page", url=f"{hostile}/globals.html", trace=True)
        text = str(opened["regions"]) + opened["title"]
        assert "Globals" in text and "attacker" not in text and "trimmed" not in text
        scrolled = await client.call("scroll", {"session_id": opened["session_id"], "direction": "down"})
        assert scrolled.ok or scrolled.payload.startswith(
            "Scroll failed: "
        )  # a patched push breaks page scripts
        await client.ok("close_page", session_id=opened["session_id"])


async def test_a_page_that_breaks_map_is_compiled_all_the_same(fast_server, hostile) -> None:
    """The compiler runs in an isolated world with its own ``Map``: a page that replaces the
    page world's with a throwing one is compiled as if it had not, its controls usable."""
    async with remote(fast_server.url) as client:
        opened = await client.ok("open_page", url=f"{hostile}/broken-map.html", trace=True)
        buttons = [e for r in opened["regions"] for e in r["elements"] if e["role"] == "button"]
        assert opened["title"] == "Broken Map" and [b.get("text") for b in buttons] == ["Go"]
        await client.ok("click", session_id=opened["session_id"], element_id=buttons[0]["id"])
        await client.ok("close_page", session_id=opened["session_id"])
        assert (await client.ok("session_status"))["active_sessions"] == 0
