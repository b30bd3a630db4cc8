"""Playwright engine: Chromium discovery/launch/connect, sessions, actions, URL policy and the
egress gate that enforces it."""

from plasmate_nb.browser.config import EngineConfig
from plasmate_nb.browser.discovery import (
    ENV_ENDPOINT,
    ENV_EXECUTABLE,
    BrowserLocation,
    BrowserNotFound,
    find_chromium,
)
from plasmate_nb.browser.egress import EgressGate, GateLimits, Refusal
from plasmate_nb.browser.engine import Engine
from plasmate_nb.browser.errors import ActionError, EngineError
from plasmate_nb.browser.policy import PolicyViolation, UrlPolicy
from plasmate_nb.browser.session import BrowserSession

__all__ = [
    "ENV_ENDPOINT",
    "ENV_EXECUTABLE",
    "ActionError",
    "BrowserLocation",
    "BrowserNotFound",
    "BrowserSession",
    "EgressGate",
    "Engine",
    "EngineConfig",
    "EngineError",
    "GateLimits",
    "PolicyViolation",
    "Refusal",
    "UrlPolicy",
    "find_chromium",
]
