"""Command-line options of ``plasmate-nb serve`` (kept import-light for ``--help``)."""

from __future__ import annotations

import argparse

DEFAULT_PORT = 9272


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--host", default="127.0.0.1", help="loopback only: 127.0.0.1, ::1 or localhost")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--token", default=None, help="bearer token (else $PLASMATE_NB_MCP_TOKEN, else generated)")
    parser.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN")
    parser.add_argument("--max-sessions", type=int, default=10)
    parser.add_argument("--idle-timeout", type=float, default=None, metavar="SECONDS")
    parser.add_argument("--allow-private-network", action="store_true")
    parser.add_argument("--allow-host", action="append", default=[], metavar="HOST")
