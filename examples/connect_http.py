"""Drive our MCP server over streamable HTTP, with a bearer token.

Run: ``python examples/connect_http.py``. Starts
``python -m plasmate_nb serve --transport http --port <free> --allow-private-network`` as a
subprocess, its token in ``PLASMATE_NB_MCP_TOKEN`` (a ``--token`` argument is readable by every
local user in the process list), reads ``MCP HTTP endpoint: <url>`` from its stderr, connects with
``Session.connect(url, token=...)`` and runs a short traced session on the bundled demo site.
The server is stopped at the end.
"""

from __future__ import annotations

import os
import queue
import secrets
import socket
import subprocess
import sys
import threading

import plasmate_nb as pnb

ENDPOINT_PREFIX = "MCP HTTP endpoint: "
START_TIMEOUT_S = 60.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(token: str) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "plasmate_nb", "serve", "--transport", "http", "--port", str(free_port()),
               "--allow-private-network"]  # fmt: skip
    server = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, env={**os.environ, "PLASMATE_NB_MCP_TOKEN": token})  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:  # keep reading stderr so the server never blocks on a full pipe
        assert server.stderr is not None
        for line in server.stderr:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    while True:
        try:
            line = lines.get(timeout=START_TIMEOUT_S)
        except queue.Empty:
            server.kill()
            raise RuntimeError("the MCP server did not print its endpoint in time") from None
        if line.startswith(ENDPOINT_PREFIX):
            return server, line[len(ENDPOINT_PREFIX) :].strip()


def main() -> int:
    token = secrets.token_urlsafe(24)
    server, url = start_server(token)
    try:
        print(f"MCP server listening at {url}")
        with pnb.DemoSite() as site:
            session = pnb.Session.connect(url, token=token)
            with session:
                page = session.open(site.url("/details.html"), trace=True)
                print(f"over HTTP: opened {page.title!r}, {len(page.element_list)} SOM elements")
                session.toggle(page.find(role="checkbox", label="Gift wrap"))
                session.scroll("down", 0)
                events = session.trace.events()
                print(events[["sequence", "action", "target_role", "state_changed"]].to_string(index=False))
                plan = session.replay_validate(3, confirmed=True)
                print(f"replay_validate(3, confirmed=True): {plan.status}")
                final = session.close()
        print(f"final trace over HTTP: {final.retained_events} events")
        ok = len(events) == 3 and plan.status == "validated" and final.retained_events == 4
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=5)
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
