"""``TraceKey``: the per-session fingerprint key and the keyed fingerprints (docs/contract.md#fingerprints).

``fp(domain, value)`` is the lowercase hex HMAC-SHA-256, keyed with 32 random bytes, of::

    b"plasmate.trace.v1\\0" || u64be(len(domain)) || domain || u64be(len(value)) || value

The key never leaves this object: it is not an attribute (only a keyed HMAC state is
kept, under a mangled private name), it is absent from ``repr``, and the object refuses
``pickle``, ``copy`` and ``deepcopy``. Logs share one ``TraceKey`` object instead of
copying it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import struct
from collections.abc import Mapping
from typing import Any, NoReturn

from .compact import compact_json
from .constants import (
    CLOSED_STATE_INPUT,
    DOMAIN_SOM,
    DOMAIN_TARGET,
    DOMAIN_TARGET_ID,
    DOMAIN_URL,
    SCHEMA,
    STATE_PREFIX,
    TARGET_ID_PREFIX,
    TARGET_KEY_PREFIX,
    URL_PREFIX,
)

KEY_BYTES = 32
_CONTEXT = SCHEMA.encode("ascii") + b"\0"
_U64 = struct.Struct(">Q")
# attrs read into the stable key, in order (docs/contract.md#fingerprints).
_STABLE_ATTRS = ("name", "href", "input_type", "group", "placeholder")


def _wtf8(text: str) -> bytes:
    # Lone surrogates (possible in JSON-decoded strings) still give deterministic bytes.
    return text.encode("utf-8", "surrogatepass")


class TraceKey:
    """A session's secret fingerprint key. Create one per session; never copy it."""

    __slots__ = ("__mac",)

    def __init__(self) -> None:
        self.__mac = self.__keyed(secrets.token_bytes(KEY_BYTES))

    @classmethod
    def _from_bytes_for_tests(cls, key: bytes) -> TraceKey:
        """Private: a key with fixed bytes, only so tests can recompute HMACs by hand."""
        if not isinstance(key, bytes | bytearray) or len(key) != KEY_BYTES:
            raise ValueError("a TraceKey needs exactly 32 bytes")
        instance = cls.__new__(cls)
        instance.__mac = cls.__keyed(bytes(key))
        return instance

    @staticmethod
    def __keyed(key: bytes) -> Any:
        # The common prefix is absorbed once; each fingerprint copies this keyed state.
        return hmac.new(key, _CONTEXT, hashlib.sha256)

    def _fingerprint(self, domain: bytes, value: bytes | bytearray) -> str:
        """``fp(domain, value)``: 64 lowercase hex characters."""
        mac = self.__mac.copy()
        mac.update(_U64.pack(len(domain)) + domain + _U64.pack(len(value)))
        mac.update(value)
        digest: str = mac.hexdigest()
        return digest

    def url_fingerprint(self, url: str | None) -> str | None:
        """``plasmate-url:v1:`` + fp(``url``, the raw URL string), or ``None`` for no URL."""
        if url is None:
            return None
        return URL_PREFIX + self._fingerprint(DOMAIN_URL, _wtf8(url))

    def state_fingerprint(self, som_bytes: bytes | bytearray | memoryview | str | None) -> str:
        """``plasmate-state:v1:`` + fp(``som``, the SOM's canonical bytes; empty when no SOM)."""
        if som_bytes is None:
            som_bytes = b""
        elif isinstance(som_bytes, str):
            som_bytes = _wtf8(som_bytes)
        elif isinstance(som_bytes, memoryview):
            som_bytes = som_bytes.tobytes()  # len() of a memoryview counts items, not bytes
        return STATE_PREFIX + self._fingerprint(DOMAIN_SOM, som_bytes)

    def closed_state_fingerprint(self) -> str:
        """The state fingerprint of a closed session: fp(``som``, ``b"closed"``)."""
        return STATE_PREFIX + self._fingerprint(DOMAIN_SOM, CLOSED_STATE_INPUT)

    def target_id(self, element_id: str) -> str:
        """``plasmate-trace-id:v1:`` + fp(``target-id``, the raw SOM element id)."""
        if not isinstance(element_id, str):
            raise TypeError("element_id must be a string")
        return TARGET_ID_PREFIX + self._fingerprint(DOMAIN_TARGET_ID, _wtf8(element_id))

    def stable_key(self, element: Mapping[str, Any]) -> str:
        """``plasmate-trace-target:v1:`` + fp(``target``, :func:`stable_key_input`)."""
        return TARGET_KEY_PREFIX + self._fingerprint(DOMAIN_TARGET, stable_key_input(element))

    # -- nothing of the key may leave the object -------------------------------------------

    def __repr__(self) -> str:
        return "TraceKey(<secret>)"

    def __refuse(self, *_: object) -> NoReturn:
        raise TypeError("TraceKey holds a session secret and cannot be pickled or copied")

    __reduce__ = __reduce_ex__ = __getstate__ = __copy__ = __deepcopy__ = __refuse

    def __setstate__(self, state: object) -> NoReturn:
        raise TypeError("TraceKey holds a session secret and cannot be unpickled")


def stable_key_input(element: Mapping[str, Any]) -> bytes:
    """The compact JSON array of 9 strings-or-null that a stable key is computed over.

    ``[id, role, label, sorted(actions) joined by ",", attrs.name, attrs.href,
    attrs.input_type, attrs.group, attrs.placeholder]``. ``id``/``role``/``label`` are kept
    when they are strings; the actions entry is null when there are no (string) actions;
    an attr entry only when it is a non-empty string.
    """
    actions = element.get("actions")
    names = sorted(a for a in actions if isinstance(a, str)) if isinstance(actions, list) else []
    attrs = element.get("attrs")
    if not isinstance(attrs, Mapping):
        attrs = {}
    entries: list[str | None] = [
        _str_or_none(element.get("id")),
        _str_or_none(element.get("role")),
        _str_or_none(element.get("label")),
        ",".join(names) if names else None,
    ]
    for name in _STABLE_ATTRS:
        value = attrs.get(name)
        entries.append(value if isinstance(value, str) and value else None)
    return _wtf8(compact_json(entries))


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None
