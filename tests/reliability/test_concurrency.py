"""Concurrency over streamable HTTP: many SDK clients on separate sessions and on one shared
session. No deadlock (every call bounded), no lost or duplicated events, no cross-talk between
sessions; on a shared session the trace order is the execution order (each event's ``before``
is the previous event's ``after``). Capacity errors when sessions run out, recovery after close."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools

from plasmate_nb.trace.som_walk import iter_elements
from tests.reliability.support import (
    FAST,
    SIZED,
    Remote,
    Sizes,
    assert_export_bounds,
    bounded,
    inprocess_server,
    record_figures,
    remote,
)
from tests.support import element_id

RUN_BOUND_S = 300.0


def _value(payload: dict, eid: str) -> str | None:
    element = next(e for e in iter_elements({"regions": payload["regions"]}) if e["id"] == eid)
    return (element.get("attrs") or {}).get("value")


def _length(client: int, step: int, sizes: Sizes) -> int:
    """A byte length unique to (client, step): the trace's redacted byte_length names the call."""
    return 1 + client * sizes.actions_per_client + step


async def _typist(client: Remote, sid: str, email: str, index: int, sizes: Sizes) -> list[int]:
    lengths = []
    for step in range(sizes.actions_per_client):
        text = "x" * _length(index, step, sizes)
        page = await client.ok("type_text", session_id=sid, element_id=email, text=text)
        assert _value(page, email) == text, "the response shows this call's own effect, nothing interleaved"
        lengths.append(len(text))
    return lengths


def _typed_lengths(export: dict) -> list[int]:
    return [
        event["parameters"]["value"]["byte_length"]
        for event in export["events"]
        if event["action"] == "type_text"
    ]


@SIZED
async def test_clients_on_separate_sessions_never_lose_or_mix_events(
    server_process, demo, sizes: Sizes
) -> None:
    clients = [Remote(server_process.url) for _ in range(sizes.clients)]
    try:
        pages = await asyncio.gather(
            *(c.ok("open_page", url=demo.url("/login.html"), trace=True) for c in clients)
        )
        sids = [page["session_id"] for page in pages]
        assert len(set(sids)) == len(sids)
        runs = [
            _typist(c, p["session_id"], element_id(p, "text_input", "Email"), i, sizes)
            for i, (c, p) in enumerate(zip(clients, pages, strict=True))
        ]
        typed = await bounded(asyncio.gather(*runs), RUN_BOUND_S, "separate-session run")
        for index, (client, sid) in enumerate(zip(clients, sids, strict=True)):
            export = await client.ok("trace_export", session_id=sid)
            assert_export_bounds(export)
            assert export["next_sequence"] - 1 == 1 + sizes.actions_per_client  # open + every action, once
            assert set(_typed_lengths(export)) <= set(typed[index]), "another session's events leaked in"
            await client.ok("close_page", session_id=sid)
    finally:
        await asyncio.gather(*(c.aclose() for c in clients))
    record_figures(
        sizes, "concurrency_separate", clients=sizes.clients, actions_per_client=sizes.actions_per_client
    )


@SIZED
async def test_clients_on_one_shared_session_are_serialised_in_trace_order(
    server_process, demo, sizes: Sizes
) -> None:
    clients = [Remote(server_process.url) for _ in range(sizes.clients)]
    try:
        page = await clients[0].ok("open_page", url=demo.url("/login.html"), trace=True)
        sid, email = page["session_id"], element_id(page, "text_input", "Email")
        runs = [_typist(c, sid, email, i, sizes) for i, c in enumerate(clients)]
        await bounded(asyncio.gather(*runs), RUN_BOUND_S, "shared-session run")
        export = await clients[0].ok("trace_export", session_id=sid)
        await clients[0].ok("close_page", session_id=sid)
    finally:
        await asyncio.gather(*(c.aclose() for c in clients))
    assert_export_bounds(export)
    total = sizes.clients * sizes.actions_per_client
    assert export["next_sequence"] - 1 == 1 + total  # no lost, no duplicated event
    events = export["events"]
    sequences = [event["sequence"] for event in events]
    assert sequences == list(range(sequences[0], sequences[0] + len(events))), (
        "retained events are consecutive"
    )
    for earlier, later in itertools.pairwise(events):
        assert later["before"] == earlier["after"], "an event's before is the previous event's after"
    owner = {
        _length(i, j, sizes): (i, j) for i in range(sizes.clients) for j in range(sizes.actions_per_client)
    }
    calls = [owner[length] for length in _typed_lengths(export)]
    assert len(set(calls)) == len(calls)
    for client in range(sizes.clients):
        steps = [step for who, step in calls if who == client]
        assert steps == sorted(steps), "each client's calls appear in the order it made them"
    record_figures(
        sizes,
        "concurrency_shared",
        clients=sizes.clients,
        actions_per_client=sizes.actions_per_client,
        events=total + 1,
        retained_checked=len(events),
        evicted=export["evicted_events"],
    )


async def test_capacity_errors_when_sessions_run_out_and_recovery_after_close(demo) -> None:
    limit = 3
    async with (
        inprocess_server(dataclasses.replace(FAST, max_sessions=limit)) as server,
        remote(server.url) as client,
    ):
        opened = await bounded(
            asyncio.gather(
                *(client.call("open_page", {"url": demo.url("/index.html")}) for _ in range(limit + 2))
            )
        )
        accepted = [o.payload["session_id"] for o in opened if o.ok]
        refused = [o.payload for o in opened if not o.ok]
        assert len(accepted) == limit
        assert refused == [f"Maximum sessions ({limit}) reached. Close a session first."] * 2
        assert (await client.ok("session_status"))["available_sessions"] == 0
        await client.ok("close_page", session_id=accepted.pop())
        accepted.append((await client.ok("open_page", url=demo.url("/welcome.html")))["session_id"])
        assert "Maximum sessions" in await client.error("open_page", url=demo.url("/index.html"))
        for sid in accepted:
            await client.ok("close_page", session_id=sid)
        assert (await client.ok("session_status"))["available_sessions"] == limit
