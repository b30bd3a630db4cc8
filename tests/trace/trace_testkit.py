"""Builders shared by the trace tests: SOM dicts, page states, logs with a known key."""

from __future__ import annotations

import contextlib
import copy
import hashlib
import hmac
import struct
import types
from collections.abc import Iterator
from typing import Any
from unittest import mock

from plasmate_nb.trace import PageState, TraceLog, compact_json
from plasmate_nb.trace import fingerprint as fingerprint_module

KNOWN_KEY = bytes(range(32))
URL = "http://127.0.0.1:8000/login"
ORIGIN = "http://127.0.0.1:8000"


def hand_fp(key: bytes, domain: bytes, value: bytes) -> str:
    """fp(domain, value) computed from the reference's byte layout, independently of the code."""
    message = (
        b"plasmate.trace.v1\x00"
        + struct.pack(">Q", len(domain))
        + domain
        + struct.pack(">Q", len(value))
        + value
    )
    return hmac.new(key, message, hashlib.sha256).hexdigest()


@contextlib.contextmanager
def known_key(key: bytes = KNOWN_KEY) -> Iterator[None]:
    """Every TraceKey created inside uses ``key`` (so tests can look for its hex)."""
    fake = types.SimpleNamespace(token_bytes=lambda n: key[:n])
    with mock.patch.object(fingerprint_module, "secrets", fake):
        yield


def log_with_known_key(enabled: bool = True, key: bytes = KNOWN_KEY) -> TraceLog:
    with known_key(key):
        return TraceLog(enabled)


def element(
    element_id: str = "e1",
    role: str = "button",
    *,
    label: str | None = None,
    text: str | None = None,
    actions: list[str] | None = None,
    attrs: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    out: dict[str, Any] = {"id": element_id, "role": role}
    if text is not None:
        out["text"] = text
    if label is not None:
        out["label"] = label
    if actions is not None:
        out["actions"] = actions
    if attrs is not None:
        out["attrs"] = attrs
    out.update(extra)
    return out


def submit_button(element_id: str = "e1") -> dict[str, Any]:
    return element(
        element_id,
        "button",
        label="Submit",
        text="Submit",
        actions=["click"],
        attrs={"name": "submit-button"},
    )


def email_input(element_id: str = "e2") -> dict[str, Any]:
    return element(
        element_id,
        "text_input",
        label="Email",
        actions=["type", "clear"],
        attrs={"name": "email", "input_type": "email", "placeholder": "you@example.test"},
    )


def som(*elements: dict[str, Any], title: str = "Login") -> dict[str, Any]:
    return {
        "som_version": "0.1",
        "url": URL,
        "title": title,
        "lang": "en",
        "regions": [{"id": "r_main", "role": "main", "elements": [copy.deepcopy(e) for e in elements]}],
    }


def page(url: str | None = URL, som_dict: dict[str, Any] | None = None) -> PageState:
    if som_dict is None:
        return PageState(url, None, None)
    return PageState(url, compact_json(som_dict), som_dict)


def login_page(title: str = "Login") -> PageState:
    return page(URL, som(submit_button(), email_input(), title=title))


def record_simple(log: TraceLog, action: str = "scroll", *, error: str | None = None, **params: Any) -> int:
    """Record an event with closed states and the given raw parameters."""
    from plasmate_nb.trace import sanitize_parameters

    closed = log.closed_state()
    return log.record(action, sanitize_parameters(action, params, log.key), None, closed, closed, error, 1)


def counters_hold(log: TraceLog) -> bool:
    s = log.status()
    return s["next_sequence"] - 1 == (
        s["retained_events"] + s["evicted_events"] + s["oversized_events"] + s["cleared_events"]
    )
