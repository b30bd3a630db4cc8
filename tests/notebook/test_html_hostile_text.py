"""Page- and file-controlled text in the notebook's HTML output is shown, never applied.

The escaping held against every markup attack tried (no live tag, event handler or javascript:
URL reached a repr); these are what an attack round found beyond it, each fixed in ``_html.py``
or its caller:

- bidirectional controls (U+202E ...) are written out, so a page title or a crafted export's
  trace_id cannot reorder what the analyst reads (in the TraceExport header an override ran on
  over the session id after it);
- a long unbroken string (a page title, a label, a crafted origin or role) may break, so it
  cannot stretch a title or a table far past the output area;
- a crafted origin holding ``$...$`` is drawn literally by ``fleet.plot()`` (matplotlib read it
  as math markup and raised);
- the dashboard card escapes an event's ``sequence`` (a server's ``trace_export`` answer is not
  validated: a remote or crafted server controls it).

Real pages are opened in the embedded Chromium (one browser for the whole module); the same
browser renders the reprs to measure them.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

import plasmate_nb as pnb
import plasmate_nb.notebook as nb
from plasmate_nb._loop import background_loop
from plasmate_nb.client import InProcessTransport, LoopBoundTransport
from plasmate_nb.tools import Dispatcher
from tests.scripted_engine import ScriptedEngine
from tests.tools.local_http import Answer, ScriptedServer, scripted

RLO, PDF = "\u202e", "\u202c"
BIDI_CONTROLS = ("\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069")
LONG_WORD = "W" * 3000
CONTAINER_PX = 800  # a notebook output area

PAGES: dict[str, str] = {
    "/bidi.html": (
        f"<!doctype html><html><head><title>Invoice {RLO}gnp.exe</title></head><body><main>"
        f"<h1>Pay {RLO}fdp.exe{PDF} now</h1>"
        f"<button aria-label='Open {RLO}txt.scr'>Open</button>"
        "</main></body></html>"
    ),
    "/long.html": (
        f"<!doctype html><html><head><title>{LONG_WORD}</title></head><body><main>"
        f"<p>{LONG_WORD}</p><button aria-label='{LONG_WORD}'>x</button>"
        "</main></body></html>"
    ),
}


@pytest.fixture(scope="module")
def hostile_site() -> Iterator[ScriptedServer]:
    with scripted({path: Answer(body=html) for path, html in PAGES.items()}) as server:
        yield server


@pytest.fixture(scope="module")
def browser_session(hostile_site: ScriptedServer) -> Iterator[pnb.Session]:
    """One session of the embedded engine (the only Chromium of the module)."""
    with pnb.Session() as s:
        yield s


def _measure(s: pnb.Session, site: ScriptedServer, html: str) -> dict[str, float]:
    """``html`` rendered in an 800 px wide output area of the session's Chromium: the widths."""
    key = f"/render-{len(site.routes)}.html"
    site.routes[key] = Answer(
        body="<!doctype html><html><head><meta charset=utf-8></head><body style='margin:0'>"
        f"<div id=out style='width:{CONTAINER_PX}px'>{html}</div></body></html>"
    )
    _go(s, site.url(key))
    return s.evaluate(
        "(() => { const out = document.getElementById('out');"
        " const widest = (sel) => Math.max(0, ...[...out.querySelectorAll(sel)].map(e => e.getBoundingClientRect().width));"
        " return {scroll: out.scrollWidth, table: widest('table'), title: widest('b')}; })()"
    )


def _go(s: pnb.Session, url: str) -> pnb.Page:
    return s.navigate(url) if s.session_id is not None else s.open(url)


class _Text(HTMLParser):
    """The text a browser would lay out, and the tags and attributes the HTML holds."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parsed(html: str) -> _Text:
    parser = _Text()
    parser.feed(html)
    parser.close()
    return parser


def _bidi_in(html: str) -> list[str]:
    """Bidirectional controls a browser would apply (as characters or character references)."""
    text = "".join(_parsed(html).text)
    return [f"U+{ord(c):04X}" for c in text if c in BIDI_CONTROLS]


BASE_EXPORT: dict[str, Any] | None = None


def _base_export() -> dict[str, Any]:
    """A real two-event export (open_page, type_text) of the scripted engine: a valid payload."""
    global BASE_EXPORT
    if BASE_EXPORT is None:
        from plasmate_nb.demo_site import DemoSite

        with DemoSite() as site:
            engine = ScriptedEngine(site.base_url)
            transport = LoopBoundTransport(InProcessTransport(Dispatcher(engine)), background_loop())
            with nb.Session(transport) as s:
                page = s.open(site.url("/login.html"))
                s.type_text(page.find(label="Email"), "analyst@example.test")
                BASE_EXPORT = copy.deepcopy(s.trace.export().payload)
    return copy.deepcopy(BASE_EXPORT)


def _crafted(mutate: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    payload = _base_export()
    mutate(payload)
    return payload


# -- 1. bidirectional overrides from a page --------------------------------------------------------


def test_bidi_overrides_in_a_page_are_shown_not_applied(
    browser_session: pnb.Session, hostile_site: ScriptedServer
) -> None:
    # "Invoice <RLO>gnp.exe" would read "Page: Invoice exe.png" (the title box, the elements table).
    page = _go(browser_session, hostile_site.url("/bidi.html"))
    assert RLO in (page.title or "")  # the page really holds it
    html = page._repr_html_()
    assert _bidi_in(html) == [], f"bidi controls reach the Page HTML: {_bidi_in(html)}"


# -- 2. bidirectional overrides from a crafted export ------------------------------------------------


def test_a_crafted_trace_id_cannot_reverse_the_session_id_after_it(
    browser_session: pnb.Session, hostile_site: ScriptedServer
) -> None:
    # trace_id and session_id share one line; an RLO in trace_id (the schema's handle is any 1-64
    # characters) would run on to the end of it and reverse the session id.
    payload = _crafted(
        lambda p: p.update(trace_id=f"{RLO}run-1", session_id="0b7e1c7a-3f0e-4d8e-9c55-8d9f0f6b5a21")
    )
    html = pnb.load_trace(payload)._repr_html_()
    _measure(browser_session, hostile_site, html)  # rendered in Chromium: where do the two ids land?
    trace_box, session_box = browser_session.evaluate(
        "[...document.querySelectorAll('#out code')].slice(0, 2).map(c => { const r = c.getBoundingClientRect();"
        " return [r.left, r.right]; })"
    )
    assert session_box[0] >= trace_box[1], (
        f"the session id is drawn left of the trace id (session {session_box}, trace {trace_box}): "
        "the trace_id's U+202E reversed the rest of the line"
    )
    assert _bidi_in(html) == [], f"bidi controls reach the TraceExport HTML: {_bidi_in(html)}"


@pytest.mark.parametrize("view", ["compare", "fleet"])
def test_bidi_overrides_in_crafted_origins_and_roles_are_shown_not_applied(view: str, tmp_path: Path) -> None:
    # The role and origin columns of compare and fleet (file names go through file_label).
    hostile_origin = f"http://{RLO}moc.knab:443"

    def mutate(p: dict[str, Any]) -> None:
        for event in p["events"]:
            for side in ("before", "after"):
                if event[side]["origin"] is not None:
                    event[side]["origin"] = hostile_origin
            if "target" in event:
                event["target"]["role"] = f"{RLO}text_input"
        p["events"][0]["parameters"]["origin"] = hostile_origin

    payload = _crafted(mutate)
    if view == "compare":
        html = pnb.compare(_base_export(), payload, labels=("good", "crafted"))._repr_html_()
    else:
        (tmp_path / "run.json").write_text(json.dumps(payload), encoding="utf-8")
        html = pnb.fleet(tmp_path)._repr_html_()
    assert _bidi_in(html) == [], f"bidi controls reach the {view} HTML: {_bidi_in(html)}"


# -- 3. layout: long unbroken strings ---------------------------------------------------------------


def test_a_long_page_title_and_label_wrap_within_the_output_area(
    browser_session: pnb.Session, hostile_site: ScriptedServer
) -> None:
    # The box title and an auto-layout table's columns are as wide as their longest unbreakable
    # run: a 3000-character title and label made them 36,810 px and 5,123 px wide.
    page = _go(browser_session, hostile_site.url("/long.html"))
    html = page._repr_html_()
    # The header shows the title's start and its length; the whole title is page.title.
    assert page.title == LONG_WORD and "(3,000 characters)" in html and "(3,000 characters)" in repr(page)
    assert "W" * 201 not in html.replace("<wbr>", "")
    widths = _measure(browser_session, hostile_site, html)
    assert max(widths["title"], widths["table"]) <= CONTAINER_PX, (
        f"in an {CONTAINER_PX}px output area the title is {widths['title']:.0f}px and the elements "
        f"table {widths['table']:.0f}px wide"
    )


def test_a_crafted_long_role_or_origin_does_not_widen_the_events_table(
    browser_session: pnb.Session, hostile_site: ScriptedServer
) -> None:
    # The events table is wider than an output area anyway (it scrolls); one long value must not
    # widen it further (a 600-character role made it 5,343 px wide).
    def mutate(p: dict[str, Any]) -> None:
        p["events"][1]["target"]["role"] = "r" * 600
        long_origin = "http://" + "a" * 250 + ".test:80"
        p["events"][1]["after"]["origin"] = long_origin

    plain = _measure(browser_session, hostile_site, pnb.load_trace(_base_export())._repr_html_())
    widths = _measure(browser_session, hostile_site, pnb.load_trace(_crafted(mutate))._repr_html_())
    assert widths["table"] <= plain["table"] + 40, (widths["table"], plain["table"])


# -- 4. matplotlib mathtext in fleet plots -------------------------------------------------------------


def test_a_crafted_origin_with_dollar_signs_is_drawn_literally(tmp_path: Path) -> None:
    # Origins become tick labels, which matplotlib would read as math between two "$" ("\foo" is
    # an unknown symbol: drawing raised ValueError).
    pytest.importorskip("matplotlib")
    origin = "http://a$\\foo{$b.test:80"

    def mutate(p: dict[str, Any]) -> None:
        for event in p["events"]:
            for side in ("before", "after"):
                if event[side]["origin"] is not None:
                    event[side]["origin"] = origin
        p["events"][0]["parameters"]["origin"] = origin

    (tmp_path / "good.json").write_text(json.dumps(_base_export()), encoding="utf-8")
    (tmp_path / "crafted.json").write_text(json.dumps(_crafted(mutate)), encoding="utf-8")
    fleet = pnb.fleet(tmp_path)
    figure = fleet.plot("origins")  # fleet.plot()'s overview has no origins panel
    assert figure._repr_png_().startswith(b"\x89PNG")  # what a notebook calls to show it


# -- 5. the dashboard card's unescaped sequence -------------------------------------------------------


def test_the_dashboard_card_escapes_an_event_sequence() -> None:
    # A server's export with such a sequence is refused (tests/notebook/test_trace_answers.py);
    # the card escapes it all the same, should anything else ever hand it one.
    from plasmate_nb.notebook._dashboard_card import events_html

    evil = "<img src=x onerror=alert(document.domain)>"
    events = _crafted(lambda p: p["events"][-1].update(sequence=evil))["events"]
    html = events_html(events)
    tags = [tag for tag, _ in _parsed(html).tags]
    handlers = [name for _, attrs in _parsed(html).tags for name, _ in attrs if name.startswith("on")]
    assert "img" not in tags and not handlers, f"live markup in the dashboard card: {evil!r} -> {handlers}"
    assert "&lt;img" in html  # shown, as text
