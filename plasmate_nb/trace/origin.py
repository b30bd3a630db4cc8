"""``origin(url)``: the readable part of a URL that a trace keeps (docs/contract.md#origins).

The result is the URL standard's tuple origin serialised as ``scheme://host:port`` with
the port **always** present, defaults included (``https://example.com:443``). User info,
path, query and fragment are dropped. ``None`` for anything without a tuple origin.

Decisions (a small, dependency-free subset of the WHATWG URL parser, enough to agree with
Chromium on what a page's origin is):

- Special schemes with a tuple origin: ``http`` (80), ``https`` (443), ``ws`` (80),
  ``wss`` (443), ``ftp`` (21). ``file:`` and every non-special scheme (``data:``,
  ``about:``, ``javascript:``, ``mailto:``, ``chrome-error:``, ``foo://host``) are opaque:
  ``None``.
- ``blob:`` follows the URL standard (and the Rust ``url`` crate the reference uses):
  ``blob:https://x/uuid`` has the origin of its inner URL, ``https://x:443``, when that
  inner URL is http(s); any other blob URL is opaque (``None``).
- Authority parsing as the URL standard does it for special schemes: leading/trailing
  C0 controls and spaces stripped, tab/CR/LF removed, any run of ``/`` or ``\\`` after
  ``scheme:`` skipped, ``\\`` ends the authority like ``/``, the *last* ``@`` ends user
  info, the first ``:`` outside brackets starts the port.
- Host: percent-decoded, non-ASCII labels converted with IDNA (Python's stdlib codec),
  lower-cased, forbidden code points rejected; a host ending in a number is parsed as an
  IPv4 address (``127.1`` and ``0x7f.0.0.1`` become ``127.0.0.1``); bracketed IPv6
  addresses are validated and written in the standard compressed form
  (``[::ffff:7f00:1]``); zone identifiers are rejected.
- Port: ASCII digits only, at most 65535; empty means the default. Anything else,
  an empty host, or a missing scheme gives ``None``.
"""

from __future__ import annotations

import encodings.idna
import ipaddress
import re
from urllib.parse import unquote_to_bytes

DEFAULT_PORTS: dict[str, int] = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_STRIP = "".join(chr(c) for c in range(0x21))  # C0 controls and space
# Forbidden domain code points: C0 controls, space, # % / : < > ? @ [ \ ] ^ | and DEL.
_FORBIDDEN_HOST = re.compile(r"[\x00-\x20#%/:<>?@\[\\\]^|\x7f]")


def origin(url: object) -> str | None:
    """``scheme://host:port`` of ``url``, or ``None`` when it is opaque or unparseable."""
    if not isinstance(url, str):
        return None
    return _origin(url, allow_blob=True)


def scheme(url: str) -> str | None:
    """The lower-cased scheme of ``url`` as the URL standard reads it, or ``None``."""
    match = _SCHEME.match(clean(url))
    return match.group()[:-1].lower() if match else None


def clean(url: str) -> str:
    """``url`` as the URL standard reads it first: C0 controls and spaces stripped at both ends,
    tabs and newlines removed."""
    return url.strip(_STRIP).replace("\t", "").replace("\n", "").replace("\r", "")


def userinfo_and_rest(url: str) -> tuple[str, str]:
    """``(user info, the rest)`` of a special-scheme ``url``, read as :func:`origin` reads it: any
    run of ``/`` or ``\\`` after the scheme skipped, a ``\\`` ending the authority like a ``/``, the
    last ``@`` ending the user info. ``the rest`` starts at the path (or ``?``/``#``)."""
    text = clean(url)
    match = _SCHEME.match(text)
    authority, rest = _authority(text[match.end() :].lstrip("/\\") if match else text)
    return authority.rpartition("@")[0], rest


def _authority(after_scheme: str) -> tuple[str, str]:
    """``(authority, the rest)``: the authority ends at the first ``/``, ``\\``, ``?`` or ``#``."""
    end = min((found for found in map(after_scheme.find, "/\\?#") if found != -1), default=len(after_scheme))
    return after_scheme[:end], after_scheme[end:]


def _origin(url: str, *, allow_blob: bool) -> str | None:
    text = clean(url)
    match = _SCHEME.match(text)
    if match is None:
        return None
    scheme = match.group()[:-1].lower()
    rest = text[match.end() :]
    if scheme == "blob":
        if not allow_blob:
            return None
        inner = _origin(rest, allow_blob=False)
        return inner if inner is not None and inner.split(":", 1)[0] in ("http", "https") else None
    default_port = DEFAULT_PORTS.get(scheme)
    if default_port is None:
        return None
    authority = _authority(rest.lstrip("/\\"))[0]
    had_userinfo = "@" in authority
    hostport = authority.rpartition("@")[2]
    if had_userinfo and not hostport:
        return None
    parsed = _split_host_port(hostport)
    if parsed is None:
        return None
    raw_host, raw_port = parsed
    host = _parse_host(raw_host)
    if host is None:
        return None
    if raw_port == "":
        port = default_port
    elif raw_port.isascii() and raw_port.isdigit():
        port = int(raw_port)
        if port > 65535:
            return None
    else:
        return None
    return f"{scheme}://{host}:{port}"


def _split_host_port(hostport: str) -> tuple[str, str] | None:
    if hostport.startswith("["):
        close = hostport.find("]")
        if close == -1:
            return None
        host, after = hostport[: close + 1], hostport[close + 1 :]
        if after and not after.startswith(":"):
            return None
        return host, after[1:]
    host, _, port = hostport.partition(":")
    if "[" in host or "]" in host:
        return None
    return host, port


def _parse_host(raw: str) -> str | None:
    if not raw:
        return None
    if raw.startswith("["):
        return _parse_ipv6(raw[1:-1])
    if "%" in raw:
        try:
            raw = unquote_to_bytes(raw).decode("utf-8")
        except UnicodeError:  # not UTF-8 once decoded, or a lone surrogate beside the escapes
            return None
    host = _domain_to_ascii(raw)
    if not host or _FORBIDDEN_HOST.search(host):
        return None
    if _ends_in_number(host):
        return _parse_ipv4(host)
    return host


def _domain_to_ascii(domain: str) -> str | None:
    if domain.isascii():
        return domain.lower()
    labels = domain.replace("\u3002", ".").replace("\uff0e", ".").replace("\uff61", ".").split(".")
    out = []
    for label in labels:
        if label.isascii():
            out.append(label.lower())
            continue
        try:
            out.append(encodings.idna.ToASCII(label).decode("ascii").lower())
        except (UnicodeError, ValueError):
            return None
    return ".".join(out)


def _ends_in_number(host: str) -> bool:
    parts = host.split(".")
    if parts[-1] == "":
        if len(parts) == 1:
            return False
        parts.pop()
    last = parts[-1]
    if last and last.isascii() and last.isdigit():
        return True
    return _ipv4_number(last) is not None


def _ipv4_number(part: str) -> int | None:
    if not part or not part.isascii():
        return None
    radix = 10
    if part[:2] in ("0x", "0X"):
        part, radix = part[2:], 16
        if not part:
            return 0
    elif len(part) > 1 and part[0] == "0":
        part, radix = part[1:], 8
    try:
        return int(part, radix) if part.isalnum() else None
    except ValueError:
        return None


def _parse_ipv4(host: str) -> str | None:
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    if len(parts) > 4:
        return None
    numbers = []
    for part in parts:
        number = _ipv4_number(part)
        if number is None:
            return None
        numbers.append(number)
    if any(n > 255 for n in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        return None
    address = numbers[-1]
    for index, number in enumerate(numbers[:-1]):
        address += number * 256 ** (3 - index)
    return ".".join(str((address >> shift) & 0xFF) for shift in (24, 16, 8, 0))


def _parse_ipv6(text: str) -> str | None:
    if not text or "%" in text:
        return None
    try:
        packed = ipaddress.IPv6Address(text).packed
    except ValueError:
        return None
    pieces = [int.from_bytes(packed[i : i + 2], "big") for i in range(0, 16, 2)]
    # The first longest run of two or more zero pieces is compressed (URL standard).
    best_start, best_len, start = -1, 1, None
    for index, piece in enumerate([*pieces, 1]):
        if piece == 0 and index < 8:
            if start is None:
                start = index
        elif start is not None:
            if index - start > best_len:
                best_start, best_len = start, index - start
            start = None
    if best_start == -1:
        body = ":".join(f"{p:x}" for p in pieces)
    else:
        head = ":".join(f"{p:x}" for p in pieces[:best_start])
        tail = ":".join(f"{p:x}" for p in pieces[best_start + best_len :])
        body = f"{head}::{tail}"
    return f"[{body}]"
