"""``plasmate-nb serve``: one engine, one dispatcher, the chosen transport."""

from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import sys
from collections.abc import Awaitable

import anyio

from plasmate_nb.browser import Engine, EngineConfig
from plasmate_nb.server.http import HttpServer, ServerConfigError
from plasmate_nb.server.stdio import serve_stdio
from plasmate_nb.tools import Dispatcher


def engine_config_from_args(args: argparse.Namespace) -> EngineConfig:
    # An MCP server faces agents that follow untrusted pages: private destinations are blocked
    # unless the operator allows them (the notebook's embedded engine allows them by default).
    return EngineConfig(
        max_sessions=args.max_sessions,
        idle_timeout=args.idle_timeout,
        allow_private_network=args.allow_private_network,
        allowed_hosts=tuple(args.allow_host),
        allowed_networks=tuple(args.allow_network),
        evaluate_result_limit=args.evaluate_result_limit,
    )


async def _until_terminated(serving: Awaitable[None]) -> None:
    """``serving``, ended early by SIGTERM as by Ctrl-C: the way MCP clients stop a stdio server
    that did not leave when its stdin closed. The caller then closes the browser."""
    async with anyio.create_task_group() as tasks:

        async def end_on_sigterm() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM) as signals:
                async for _ in signals:
                    tasks.cancel_scope.cancel()

        tasks.start_soon(end_on_sigterm)
        await serving
        tasks.cancel_scope.cancel()


def serve_from_args(args: argparse.Namespace) -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s: %(message)s")
    engine = Engine(engine_config_from_args(args))
    dispatcher = Dispatcher(engine, replay_execution=args.enable_replay_execution)
    try:
        http = None
        if args.transport == "http":
            http = HttpServer(
                dispatcher,
                args.host,
                args.port,
                args.token,
                tuple(args.allow_origin),
                header_timeout=args.header_timeout,
                body_timeout=args.body_timeout,
                shutdown_timeout=args.shutdown_timeout,
            )
    except ServerConfigError as exc:
        print(exc, file=sys.stderr)
        return 2

    async def main() -> None:
        try:
            if http is None:
                await _until_terminated(serve_stdio(dispatcher))
                return
            await http.start()
            print(f"MCP HTTP endpoint: {http.url}", file=sys.stderr, flush=True)
            if http.generated_token:
                print(f"MCP HTTP capability token: {http.token}", file=sys.stderr, flush=True)
            await http.wait_closed()
        finally:
            await engine.aclose()

    try:
        with contextlib.suppress(KeyboardInterrupt):
            anyio.run(main)
    except ServerConfigError as exc:  # found at start-up: the port is taken, say
        print(exc, file=sys.stderr)
        return 2
    return 0
