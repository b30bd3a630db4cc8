"""``plasmate-nb serve``: one engine, one dispatcher, the chosen transport."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Callable, Iterator

import anyio

from plasmate_nb.browser import Engine, EngineConfig
from plasmate_nb.browser.config import renderer_memory_from_env
from plasmate_nb.server.http import HttpServer, ServerConfigError
from plasmate_nb.server.stdio import serve_stdio
from plasmate_nb.tools import Dispatcher


def engine_config_from_args(args: argparse.Namespace) -> EngineConfig:
    # An MCP server faces agents that follow untrusted pages: private destinations are blocked
    # unless the operator allows them (the notebook's embedded engine allows them by default).
    bound = args.renderer_memory_mb
    return EngineConfig(
        max_sessions=args.max_sessions,
        idle_timeout=args.idle_timeout,
        allow_private_network=args.allow_private_network,
        allowed_hosts=tuple(args.allow_host),
        allowed_networks=tuple(args.allow_network),
        evaluate_result_limit=args.evaluate_result_limit,
        # The command line's bound, else the environment's (or the default).
        renderer_memory_mb=renderer_memory_from_env() if bound is None else bound or None,
    )


async def _serve_stdio_then_close(dispatcher: Dispatcher, engine: Engine) -> None:
    """Serve on stdio until stdin ends, Ctrl-C, or SIGTERM (how MCP clients stop a server that
    outlives its stdin), then close the browser. A SIGTERM while it closes is ignored: the closing
    is under way, and the default action would cut it short."""
    serving = anyio.CancelScope()
    with _first_sigterm_calls(serving.cancel):
        try:
            with serving:
                await serve_stdio(dispatcher)
        finally:
            await engine.aclose()


@contextlib.contextmanager
def _first_sigterm_calls(callback: Callable[[], object]) -> Iterator[None]:
    """While the block runs, the first SIGTERM calls ``callback`` and later ones are ignored. Where
    the loop cannot take signals (not the main thread, Windows) SIGTERM keeps its default."""
    loop = asyncio.get_running_loop()
    received = False

    def on_sigterm() -> None:
        nonlocal received
        if not received:
            received = True
            callback()

    try:
        loop.add_signal_handler(signal.SIGTERM, on_sigterm)
    except (NotImplementedError, RuntimeError, ValueError):
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


def serve_from_args(args: argparse.Namespace) -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s: %(message)s")
    try:
        config = engine_config_from_args(args)
    except ValueError as exc:  # a setting from the environment (the command line checks its own)
        print(f"plasmate-nb serve: {exc}", file=sys.stderr)
        return 2
    engine = Engine(config)
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
        if http is None:
            await _serve_stdio_then_close(dispatcher, engine)
            return
        try:
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
