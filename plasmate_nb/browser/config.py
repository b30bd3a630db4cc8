"""Engine settings (docs/contract.md#browser-engine): capacity, bounded waits, URL policy, where the browser comes from."""

from __future__ import annotations

import math
import numbers
import os
from dataclasses import dataclass, field

from plasmate_nb import errors
from plasmate_nb._tracebacks import HintedError
from plasmate_nb.browser.discovery import ENV_ENDPOINT
from plasmate_nb.browser.policy import Resolver

ENV_RENDERER_MEMORY = "PLASMATE_NB_RENDERER_MEMORY_MB"
DEFAULT_RENDERER_MEMORY_MB = 2048
MIN_RENDERER_MEMORY_MB = 256  # an empty renderer is already 120-160 MB resident


def _endpoint_from_env() -> str | None:
    return os.environ.get(ENV_ENDPOINT) or None


class EnvironmentSettingError(HintedError, ValueError):
    """An environment variable holds a value the engine cannot use (the message names it).

    ``plasmate-nb serve`` prints the message and exits; the notebook's embedded engine adds a
    ``hint`` on when the setting is read, and the error shows without plasmate_nb's frames.

    >>> os.environ["PLASMATE_NB_RENDERER_MEMORY_MB"] = "lots"
    >>> pnb.Session().open(url)   # EnvironmentSettingError: the variable, and what it accepts
    """


def _seconds(value: object) -> float:
    """``value`` as a finite number of seconds, else NaN (which every comparison refuses)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return math.nan
    seconds = float(value)
    return seconds if math.isfinite(seconds) else math.nan


def renderer_memory_from_env() -> int | None:
    """``PLASMATE_NB_RENDERER_MEMORY_MB`` (0: no bound), else the default: how a notebook's
    embedded engine gets its bound, as ``serve --renderer-memory-mb`` gives a server's.
    ``EnvironmentSettingError`` (a ``ValueError``) for anything else."""
    text = os.environ.get(ENV_RENDERER_MEMORY, "").strip()
    if not text:
        return DEFAULT_RENDERER_MEMORY_MB
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value != 0 and value < MIN_RENDERER_MEMORY_MB:
        raise EnvironmentSettingError(
            errors.bad_renderer_memory_setting(ENV_RENDERER_MEMORY, MIN_RENDERER_MEMORY_MB)
        )
    return value or None


@dataclass(frozen=True)
class EngineConfig:
    """All times are seconds. ``endpoint`` (``ws://`` Playwright server or ``http://`` CDP)
    connects to a running browser instead of launching one."""

    max_sessions: int = 10
    idle_timeout: float | None = None
    navigation_timeout: float = 30.0
    action_timeout: float = 10.0
    evaluate_timeout: float = 15.0
    evaluate_result_limit: int = 1_048_576  # bytes (UTF-8) of an evaluate result's JSON; larger is an error
    settle_timeout: float = 2.0
    browser_timeout: float = 30.0  # for a new context or page: past it the browser is taken as wedged
    # A renderer past this many MB is stopped (browser/memory.py); None: no bound. Launched browsers only.
    renderer_memory_mb: int | None = field(default_factory=renderer_memory_from_env)
    allow_private_network: bool = True
    allowed_hosts: tuple[str, ...] = ()
    allowed_networks: tuple[str, ...] = ()  # CIDR; matches resolved addresses, not names
    headless: bool = True
    executable: str | None = None
    endpoint: str | None = field(default_factory=_endpoint_from_env)
    resolver: Resolver | None = field(
        default=None, compare=False, repr=False
    )  # the gate's DNS (tests inject one)

    def __post_init__(self) -> None:
        # A deadline of 0 would still start what it bounds (asyncio.timeout runs it to its first
        # wait), then report a timeout: a click sent, and said not to have been.
        for name in (
            "navigation_timeout",
            "action_timeout",
            "evaluate_timeout",
            "settle_timeout",
            "browser_timeout",
        ):
            if not _seconds(getattr(self, name)) > 0:
                raise ValueError(f"{name} must be a positive number of seconds")
        if self.idle_timeout is not None and not _seconds(self.idle_timeout) >= 0:
            raise ValueError("idle_timeout must be a number of seconds (0 or None: no reaping)")
        if isinstance(self.max_sessions, bool) or not (
            isinstance(self.max_sessions, int) and self.max_sessions >= 1
        ):
            raise ValueError("max_sessions must be at least 1")
        bound = self.renderer_memory_mb
        if bound is not None and not (isinstance(bound, int) and bound >= MIN_RENDERER_MEMORY_MB):
            raise ValueError(
                f"renderer_memory_mb must be at least {MIN_RENDERER_MEMORY_MB} (megabytes), or None for no bound"
            )
