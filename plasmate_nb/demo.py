"""``make demo`` / ``plasmate-nb demo``: a traced session on the bundled demo site, end to end.

It signs in with a password, picks a plan, ticks a box, follows links, then shows what the
trace kept (byte lengths, origins, keyed fingerprints) and what it did not (the values), checks
every retained event for replay, and closes with the final trace.
"""

from __future__ import annotations

import pandas as pd

from plasmate_nb.trace import compact_json

DEMO_EMAIL = "analyst@example.test"
DEMO_PASSWORD = "correct horse battery staple"  # typed into the page; must never reach the trace
EVENT_COLUMNS = [
    "sequence", "action", "outcome", "error_class", "target_role", "before_origin",
    "state_changed", "redacted_fields", "redacted_bytes", "duration_ms",
]  # fmt: skip


def _section(title: str) -> None:
    print(f"\n=== {title}")


def _table(frame: pd.DataFrame) -> None:
    with pd.option_context("display.width", 160, "display.max_columns", 20, "display.max_colwidth", 40):
        print(frame.to_string(index=False))


def run_demo() -> int:
    from plasmate_nb.demo_site import DemoSite
    from plasmate_nb.notebook import Session

    with DemoSite() as site, Session() as session:
        page = session.open(site.url("/login.html"), trace=True)
        _section(f"Opened {page.title!r} — the SOM elements the agent sees")
        _table(page.elements)

        session.type_text(page.find(role="text_input", label="Email"), DEMO_EMAIL)
        session.type_text(page.find(role="text_input", label="Password"), DEMO_PASSWORD)
        session.select_option(page.find(role="select", label="Plan"), "Team")
        session.toggle(page.find(role="checkbox", label="Remember me"))
        welcome = session.click(page.find(role="button", text="Sign in"))
        _section(f"Signed in: now on {welcome.title!r}")
        session.navigate(site.url("/details.html"))

        export = session.trace.export()
        events = session.trace.events()
        _section("Trace events (values are never kept: only their byte lengths)")
        _table(events[[column for column in EVENT_COLUMNS if column in events.columns]])
        exported = compact_json(export.payload)
        leaked = DEMO_PASSWORD in exported or DEMO_EMAIL in exported
        print(f"\npassword or email anywhere in the export: {leaked}")

        _section("Counters")
        status = session.trace.status()
        for name in ("retained_events", "retained_bytes", "next_sequence", "evicted_events",
                     "oversized_events", "cleared_events"):  # fmt: skip
            print(f"{name:>17}: {status.payload[name]}")

        _section("Replay validation of every retained event (nothing is ever executed)")
        _table(session.replay_validate_all(progress=False))

        final = session.close()
        _section("Final trace returned by close_page")
        print(repr(final))
    return 1 if leaked else 0
