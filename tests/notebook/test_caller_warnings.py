"""Notebook warnings are shown at the user's line (plasmate_nb/notebook/_caller_warnings.py).

The sync Session runs each call on a background loop; what the call warns is kept by the call's
own task and warned on the user's thread once the call has returned, at the first frame outside
plasmate_nb. Tasks the call starts, and a call the user stopped waiting for, warn at once.
"""

from __future__ import annotations

import asyncio
import warnings

import pytest

import plasmate_nb.notebook as nb
from plasmate_nb._loop import run_sync, spawn
from plasmate_nb.client.base import ToolError, Transport
from plasmate_nb.notebook._caller_warnings import collecting, warn_caller, warn_collected


@pytest.fixture
def backend() -> str:
    """The scripted engine: what is tested is where warnings are said, not the browser."""
    return "scripted"


def test_a_call_keeps_its_own_warnings_and_a_task_it_starts_warns_at_once() -> None:
    async def call() -> str:
        async def started() -> None:
            warn_caller("from a task the call started")

        await asyncio.create_task(started())
        warn_caller("from the call")
        return "done"

    coroutine = call()
    context, collected = collecting(coroutine)
    with pytest.warns(UserWarning) as said:
        assert run_sync(coroutine, context) == "done"
    assert [str(w.message) for w in said] == ["from a task the call started"]  # not kept: said at once
    assert collected.messages == ["from the call"]
    with pytest.warns(UserWarning, match="from the call") as again:
        warn_collected(collected)
    assert [w.filename for w in again] == [__file__]  # this line: the first frame outside the package


def test_a_call_the_user_stopped_waiting_for_warns_at_once() -> None:
    async def call() -> None:
        warn_caller("after the user left")

    coroutine = call()
    context, collected = collecting(coroutine)
    collected.closed = True  # as _run leaves it when the user interrupted the wait
    with pytest.warns(UserWarning, match="after the user left"):
        run_sync(coroutine, context)
    assert collected.messages == []  # nobody would read them


def test_a_sync_call_on_the_loop_thread_is_refused_without_a_never_awaited_warning(
    transport: Transport, login_url: str
) -> None:
    with nb.Session(transport) as s:
        s.open(login_url)

        async def on_the_loop() -> BaseException | None:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    s.scroll("down", 0)
                except RuntimeError as error:
                    refused: BaseException | None = error
                else:
                    refused = None
            assert [w for w in caught if issubclass(w.category, RuntimeWarning)] == []
            return refused

        refused = spawn(on_the_loop()).result(30)
        assert refused is not None and "use AsyncSession there" in str(refused)


def test_warnings_as_errors_never_hide_a_failed_calls_error(transport: Transport, login_url: str) -> None:
    with nb.Session(transport) as s:
        s.open(login_url)
        gone = nb.Session.attach(s.session_id, transport)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ToolError, match="Session not found"):
            gone.scroll("sideways", 0)  # fails (the session was closed): its error is what is said
