"""``make demo`` / ``plasmate-nb demo``: a traced session on the bundled demo site, end to end.

It signs in with a password, picks a plan, ticks a box, follows links, then shows what the
trace kept (byte lengths, origins, keyed fingerprints) and what it did not (the values). It
validates one replay that passes (an action just recorded, on a page that has not changed
since) beside one that is refused, checks every retained event, and closes with the final trace.
"""

from __future__ import annotations

import pandas as pd

from plasmate_nb.trace import compact_json

DEMO_EMAIL = "analyst@example.test"
DEMO_PASSWORD = "correct horse battery staple"  # typed into the page; must never reach the trace


def _section(title: str) -> None:
    print(f"\n=== {title}")


def _table(frame: pd.DataFrame) -> None:
    with pd.option_context("display.width", 200, "display.max_columns", None, "display.max_colwidth", None):
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
        _table(events)
        exported = compact_json(export.payload)
        leaked = DEMO_PASSWORD in exported or DEMO_EMAIL in exported
        print(f"\npassword or email anywhere in the export: {leaked}")

        _section("Counters")
        status = session.trace.status()
        for name in ("retained_events", "retained_bytes", "next_sequence", "evicted_events",
                     "oversized_events", "cleared_events"):  # fmt: skip
            print(f"{name:>17}: {status.payload[name]}")

        _section("Replay: one plan that passes, one that is refused (nothing is ever executed)")
        # A scroll by 0 pixels changes nothing, so the page still matches the state it started from.
        session.scroll("down", 0)
        scrolled = session.trace.status().next_sequence - 1
        print(repr(session.replay_validate(scrolled, confirmed=True)))
        toggled = int(events.loc[events["action"] == "toggle", "sequence"].iloc[0])
        print(repr(session.replay_validate(toggled)))  # its page is gone: we signed in since

        _section("Replay validation of every retained event (nothing is ever executed)")
        _table(session.replay_validate_all(progress=False))

        final = session.close()
        _section("Final trace returned by close_page")
        print(repr(final))
    return 1 if leaked else 0
