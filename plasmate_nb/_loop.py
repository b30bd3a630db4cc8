"""One process-wide background event loop: home of the embedded engine and the sync facade.

Jupyter already runs an event loop in the kernel's main thread, so a sync wrapper cannot
``asyncio.run`` there. Every sync ``Session`` instead runs the async core on this single
daemon thread; Playwright objects are created on it and stay on it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None


def background_loop() -> asyncio.AbstractEventLoop:
    """The shared loop, started on first use."""
    global _loop, _thread
    with _lock:
        if _loop is None or _thread is None or not _thread.is_alive():
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def run() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            _thread = threading.Thread(target=run, name="plasmate-nb-loop", daemon=True)
            _thread.start()
            ready.wait()
            _loop = loop
        return _loop


def spawn(
    coro: Coroutine[Any, Any, T], loop: asyncio.AbstractEventLoop | None = None
) -> concurrent.futures.Future[T]:
    """Schedule ``coro`` on ``loop`` (default: the background loop) from any thread."""
    return asyncio.run_coroutine_threadsafe(coro, loop or background_loop())


def run_sync(coro: Coroutine[Any, Any, T], context: contextvars.Context | None = None) -> T:
    """Run ``coro`` on the background loop and wait for its result. Interrupted while waiting
    (Jupyter's Interrupt is a KeyboardInterrupt here), it cancels ``coro`` too: work nobody waits
    for any more must not go on unseen (a page loading, a session being opened). ``coro``'s task
    runs in a copy of ``context`` (default: the calling thread's)."""
    loop = background_loop()
    if threading.current_thread() is _thread:
        coro.close()
        # Blocking here would wait on ourselves forever.
        raise RuntimeError(
            "a sync Session method was called on the plasmate_nb loop thread; use AsyncSession there"
        )
    # The future exists before anything is scheduled: an interrupt that lands while the call is
    # being handed to the loop still reaches it (the coroutine then never starts).
    future: concurrent.futures.Future[T] = concurrent.futures.Future()
    try:
        loop.call_soon_threadsafe(_run_into, coro, future, context=context)
        return future.result()
    except BaseException:
        future.cancel()  # a no-op when the coroutine itself ended with this error
        raise


def _run_into(coro: Coroutine[Any, Any, T], future: concurrent.futures.Future[T]) -> None:
    """On the loop: run ``coro`` as a task whose outcome becomes ``future``'s, and which a
    cancelled ``future`` cancels."""
    if future.cancelled():
        coro.close()
        return
    task = asyncio.ensure_future(coro)
    loop = task.get_loop()

    def settle(done: asyncio.Task[T]) -> None:
        with contextlib.suppress(concurrent.futures.InvalidStateError):  # cancelled meanwhile
            if done.cancelled():
                future.cancel()
            elif (error := done.exception()) is not None:
                future.set_exception(error)
            else:
                future.set_result(done.result())

    task.add_done_callback(settle)
    future.add_done_callback(lambda ended: ended.cancelled() and loop.call_soon_threadsafe(task.cancel))
