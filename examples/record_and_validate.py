"""Record a traced browser session from plain Python, then validate every event for replay.

Run: ``python examples/record_and_validate.py``. Starts the bundled demo site on a free
loopback port, signs in on it with the embedded engine, prints the trace and a replay plan
for every retained event, and exits 0 when the trace kept no typed value.
"""

from __future__ import annotations

import json
import secrets
import sys

import plasmate_nb as pnb


def main() -> int:
    password = secrets.token_urlsafe(12)  # typed into the page; must never reach the trace
    with pnb.DemoSite() as site, pnb.Session() as session:
        page = session.open(site.url("/login.html"), trace=True)
        session.type_text(page.find(label="Email"), "script@example.test")
        session.type_text(page.find(label="Password"), password)
        session.toggle(page.find(role="checkbox", label="Remember me"))
        welcome = session.click(page.find(role="button", text="Sign in"))
        session.scroll("down", 0)
        print(f"signed in: now on {welcome.title!r} at {welcome.origin}")

        export = session.trace.export()
        text = json.dumps(export.payload, ensure_ascii=False)
        leaked = password in text or "script@example.test" in text
        events = export.events()
        print(f"recorded {len(events)} events; typed values in the export: {'yes' if leaked else 'none'}")
        print(
            events[["sequence", "action", "outcome", "target_role", "redacted_bytes"]].to_string(index=False)
        )

        plans = session.replay_validate_all(progress=False)
        print("\nreplay validation (nothing is executed):")
        print(plans[["sequence", "action", "status", "drift"]].to_string(index=False))
        final = session.close()
        print(
            f"\nfinal trace: {final.retained_events} events, next_sequence {final.next_sequence}, "
            f"last action {final.events()['action'].iloc[-1]}"
        )
    ok = not leaked and plans["status"].iloc[-1] == "confirmation_required"
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
