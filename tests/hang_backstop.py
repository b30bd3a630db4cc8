"""A backstop for tests that hang past pytest-timeout (loaded with ``-p`` in pyproject).

pytest-timeout fails a hung test once, by a signal. A test that hangs again after that (Hypothesis
replays a failing example with no limit left) or hangs in its teardown would still run until CI
kills the whole run, and CI keeps only the tail of the output. Past twice the test's limit plus a
minute, this prints every thread's stack and then, last, the test's name, and ends the run.
"""

from __future__ import annotations

import faulthandler
import os
import threading
from collections.abc import Iterator

import pytest

GRACE_S = 60.0
_real_stderr = pytest.StashKey[int]()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_real_stderr] = os.dup(2)  # output capture has not taken fd 2 yet


def pytest_unconfigure(config: pytest.Config) -> None:
    os.close(config.stash[_real_stderr])


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    limit = _limit(item)
    if not limit:  # timeouts off (make soak)
        return (yield)
    backstop = threading.Timer(2 * limit + GRACE_S, _end_the_run, (item, 2 * limit + GRACE_S))
    backstop.daemon = True
    backstop.start()
    try:
        return (yield)
    finally:
        backstop.cancel()


def _limit(item: pytest.Item) -> float:
    """The test's pytest-timeout limit in seconds (0: none)."""
    marker = item.get_closest_marker("timeout")
    if marker is not None and marker.args:
        return float(marker.args[0])
    return float(item.config.getoption("timeout", None) or item.config.getini("timeout") or 0)


def _end_the_run(item: pytest.Item, seconds: float) -> None:
    fd = item.config.stash[_real_stderr]
    faulthandler.dump_traceback(fd, all_threads=True)
    os.write(
        fd,
        f"\n{item.nodeid} hung: still running after {seconds:g} s; every thread's stack is above\n".encode(),
    )
    os._exit(3)
