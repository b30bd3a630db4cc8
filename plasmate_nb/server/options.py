"""Command-line options of ``plasmate-nb serve`` (kept import-light for ``--help``)."""

from __future__ import annotations

import argparse

DEFAULT_PORT = 9272
# Mirrors of the defaults in server/http.py and browser/config.py (imported lazily, not here).
DEFAULT_HEADER_TIMEOUT = 30.0
DEFAULT_BODY_TIMEOUT = 65.0
DEFAULT_SHUTDOWN_TIMEOUT = 5.0
DEFAULT_EVALUATE_RESULT_LIMIT = 1_048_576
DEFAULT_RENDERER_MEMORY_MB = 2048
MIN_RENDERER_MEMORY_MB = 256


TRANSPORT_ALIASES = {"streamable-http": "http"}


def _positive_seconds(text: str) -> float:
    value = float(text)
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value


def _idle_seconds(text: str) -> float:
    value = float(text)
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError("must be a number of seconds, 0 for never")
    return value


def _positive_bytes(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be a positive number of bytes")
    return value


def _positive_count(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _renderer_megabytes(text: str) -> int:
    value = int(text)
    if value != 0 and value < MIN_RENDERER_MEMORY_MB:
        raise argparse.ArgumentTypeError(
            f"must be at least {MIN_RENDERER_MEMORY_MB} (megabytes), or 0 for no bound"
        )
    return value


def _network(text: str) -> str:
    import ipaddress

    try:
        return str(ipaddress.ip_network(text, strict=False))
    except ValueError:
        raise argparse.ArgumentTypeError("must be a CIDR network such as 10.0.0.0/8") from None


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--transport",
        choices=("stdio", "http", "streamable-http"),
        default="stdio",
        type=lambda name: TRANSPORT_ALIASES.get(name, name),
        help="stdio (default) or http: streamable HTTP at /mcp (alias: streamable-http, "
        "the reference's name)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="loopback only: 127.0.0.1, ::1 or localhost")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument(
        "--token",
        default=None,
        help="bearer token (else $PLASMATE_NB_MCP_TOKEN, else generated); prefer the variable: "
        "arguments are visible to every local user",
    )
    parser.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN")
    parser.add_argument("--max-sessions", type=_positive_count, default=10)
    parser.add_argument(
        "--idle-timeout",
        type=_idle_seconds,
        default=None,
        metavar="SECONDS",
        help="close sessions idle this long (0: never)",
    )
    parser.add_argument(
        "--allow-private-network",
        action="store_true",
        help="let pages reach private, loopback and link-local destinations (blocked by default)",
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="HOST",
        help="let pages reach this host name or IP literal, as written in the URL (repeatable)",
    )
    parser.add_argument(
        "--allow-network",
        action="append",
        default=[],
        metavar="CIDR",
        type=_network,
        help="let pages reach addresses in this network however they are named, e.g. 10.0.0.0/8 (repeatable)",
    )
    parser.add_argument(
        "--enable-replay-execution",
        action="store_true",
        help="offer replay_execute: re-run a recorded action after replay_validate's checks pass "
        "with confirmed=true, in one critical section (off by default: the tool is unlisted and refuses)",
    )
    parser.add_argument(
        "--header-timeout",
        type=_positive_seconds,
        default=DEFAULT_HEADER_TIMEOUT,
        metavar="SECONDS",
        help="HTTP: time a client has to send a request's headers (then 408)",
    )
    parser.add_argument(
        "--body-timeout",
        type=_positive_seconds,
        default=DEFAULT_BODY_TIMEOUT,
        metavar="SECONDS",
        help="HTTP: time a client has to send a request's body once its headers are in (then 408)",
    )
    parser.add_argument(
        "--shutdown-timeout",
        type=_positive_seconds,
        default=DEFAULT_SHUTDOWN_TIMEOUT,
        metavar="SECONDS",
        help="HTTP: on SIGTERM/SIGINT, time open requests get to finish before they are cut off",
    )
    parser.add_argument(
        "--evaluate-result-limit",
        type=_positive_bytes,
        default=DEFAULT_EVALUATE_RESULT_LIMIT,
        metavar="BYTES",
        help="largest evaluate result (UTF-8 bytes of its JSON); larger ones are an error",
    )
    parser.add_argument(
        "--renderer-memory-mb",
        type=_renderer_megabytes,
        default=None,
        metavar="MB",
        help=f"stop a page whose renderer process grows past this (resident memory); the call "
        f"waiting on it fails and says so; 0: no bound (default: $PLASMATE_NB_RENDERER_MEMORY_MB, "
        f"else {DEFAULT_RENDERER_MEMORY_MB}; a launched browser only)",
    )
