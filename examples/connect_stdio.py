"""Drive our MCP server over stdio from a notebook-style ``Session``.

Run: ``python examples/connect_stdio.py``. ``Session.connect(command=[...])`` starts
``python -m plasmate_nb serve --allow-private-network`` as a subprocess speaking MCP over
stdio (the same command an MCP client such as Claude Desktop would run), opens a traced
session on the bundled demo site, and reads the trace back through the MCP tools.
"""

from __future__ import annotations

import sys

import plasmate_nb as pnb

SERVER_COMMAND = [sys.executable, "-m", "plasmate_nb", "serve", "--allow-private-network"]


def main() -> int:
    with pnb.DemoSite() as site:
        # The server blocks loopback pages unless --allow-private-network: the demo site is one.
        session = pnb.Session.connect(command=SERVER_COMMAND)
        with session:
            page = session.open(site.url("/login.html"), trace=True)
            print(f"over stdio: opened {page.title!r}, {len(page.element_list)} SOM elements")
            session.type_text(page.find(label="Email"), "stdio@example.test")
            session.toggle(page.find(role="checkbox"))
            session.scroll("down", 0)
            status = session.trace.status()
            print(
                f"trace: {status.retained_events} events, {status.retained_bytes} bytes, "
                f"next_sequence {status.next_sequence}"
            )
            plan = session.replay_validate(4)
            print(f"replay_validate(4): {plan.status} ({plan.drift or 'no drift'})")
            final = session.close()
        print(
            f"final trace over stdio: {final.retained_events} events, last {final.events()['action'].iloc[-1]}"
        )
    ok = status.next_sequence == 5 and plan.status == "confirmation_required" and final.retained_events == 5
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
