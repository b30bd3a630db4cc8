"""``plasmate-nb`` / ``python -m plasmate_nb``: serve, demo, find-browser, audit."""

from __future__ import annotations

import argparse
import os
import sys


def _find_browser(_: argparse.Namespace) -> int:
    from plasmate_nb.browser.discovery import ENV_ENDPOINT, BrowserNotFound, find_chromium

    if os.environ.get(ENV_ENDPOINT):
        print(f"endpoint: {os.environ[ENV_ENDPOINT]}")
        return 0
    try:
        location = find_chromium()
    except BrowserNotFound as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"{location.source}: {location.executable or 'managed by playwright'}")
    return 0


def _demo(args: argparse.Namespace) -> int:
    from plasmate_nb.demo import run_demo

    return run_demo()


def _serve(args: argparse.Namespace) -> int:
    from plasmate_nb.server.cli import serve_from_args

    return serve_from_args(args)


def _audit(args: argparse.Namespace) -> int:
    from plasmate_nb.analysis.audit_cli import run_audit

    return run_audit(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="plasmate-nb",
        description="Inspect, teach and validate plasmate.trace.v1 browser sessions: run the MCP server, "
        "the demo, audit exported traces, or find the browser the engine would use.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    commands.add_parser("find-browser", help="print the Chromium the engine would use").set_defaults(
        run=_find_browser
    )
    commands.add_parser("demo", help="run the end-to-end demo on the bundled demo site").set_defaults(
        run=_demo
    )

    audit = commands.add_parser(
        "audit", help="check exported traces against the contract (exit 0 clean, 1 findings, 2 unreadable)"
    )
    audit.add_argument("paths", nargs="+", metavar="PATH", help="export files (*.json, *.jsonl) or folders")
    audit.add_argument("--json", action="store_true", help="print the report as one JSON document")
    audit.set_defaults(run=_audit)

    from plasmate_nb.server.options import add_serve_arguments

    # `mcp` is the reference's subcommand name, which its SDKs spawn as `<binary> mcp`.
    for name, help_text in (("serve", "run the MCP server (stdio by default)"), ("mcp", "the same as serve")):
        serve = commands.add_parser(name, help=help_text)
        add_serve_arguments(serve)
        serve.set_defaults(run=_serve)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.run(args) or 0)
