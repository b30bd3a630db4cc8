"""Fleets of realistic synthetic exports, written fast: for trying fleet analysis, tests and benchmarks.

Every event is one the real trace core recorded: ``TraceLog.record`` runs once for each kind
of call (a site's page, an action on one of its elements, an outcome, a parameter variant),
with real sanitised parameters, targets, states and error classes, and its compact JSON
becomes a template whose sequence and duration are filled in per use. Exports are then
assembled as text, with the log's own bounds applied (eviction by count and bytes, oversized
drops, clears), so ``retained_bytes`` is exactly the sum of the event sizes and every counter
agrees. That makes 100,000 exports (about 4 million events) a matter of a minute, not an hour.

The mix is realistic rather than uniform: sites by a Zipf-like popularity, sessions mostly
long enough to fill the byte bound, clicks and typing most common, failures a few percent
(element lookups ``not_found``, navigations ``timeout``/``network``/``policy``, scripts
``execution``), durations log-normal per action. A quarter of the files are whole
``close_page`` answers (keys sorted, ending with the close event), a few are clears.
"""

from __future__ import annotations

import functools
import json
import random
import uuid
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from plasmate_nb.trace import MAX_BYTES, MAX_EVENTS, PageState, TraceLog, compact_json
from plasmate_nb.trace import sanitize_parameters as _sanitize
from plasmate_nb.trace.compact import sorted_json

#: (origin, weight): a few busy sites and a long tail.
SITES: tuple[tuple[str, float], ...] = (
    ("https://shop.example.com:443", 30.0),
    ("https://accounts.example.com:443", 18.0),
    ("https://news.example.org:443", 12.0),
    ("https://search.example.net:443", 9.0),
    ("http://127.0.0.1:8765", 7.0),
    ("https://docs.example.dev:443", 5.0),
    ("https://travel.example.com:443", 4.0),
    ("https://bank.example.com:443", 3.5),
    ("http://intranet.example.local:8080", 3.0),
    ("https://forms.example.org:443", 2.5),
    ("https://maps.example.net:443", 2.0),
    ("https://video.example.com:443", 1.5),
    ("https://jobs.example.org:443", 1.0),
    ("https://wiki.example.dev:443", 0.8),
    ("http://legacy.example.com:80", 0.5),
    ("https://status.example.net:443", 0.2),
)
_PATHS = ("/", "/search?q=private", "/item/42?ref=mail", "/cart", "/checkout/pay", "/account/settings")
#: (element id, role, SOM actions)
_ELEMENTS = (
    ("e_nav", "link", ["click"]),
    ("e_submit", "button", ["click"]),
    ("e_email", "textbox", ["type", "clear"]),
    ("e_plan", "combobox", ["select"]),
    ("e_terms", "checkbox", ["toggle", "click"]),
    ("e_more", "button", ["click"]),
)
_ACTION_ELEMENT = {
    "click": ("e_nav", "e_submit", "e_more", "e_terms"),
    "type_text": ("e_email",),
    "clear": ("e_email",),
    "select_option": ("e_plan",),
    "toggle": ("e_terms",),
}
#: (action, weight) of calls after open_page.
ACTION_MIX: tuple[tuple[str, float], ...] = (
    ("click", 30.0),
    ("type_text", 19.0),
    ("scroll", 14.0),
    ("navigate_to", 9.0),
    ("evaluate", 8.0),
    ("select_option", 6.0),
    ("toggle", 5.0),
    ("clear", 4.0),
    ("set_cookies", 2.5),
    ("clear_cookies", 1.5),
)
#: action -> (median ms, log-normal sigma)
_DURATIONS = {
    "open_page": (850.0, 0.5),
    "navigate_to": (600.0, 0.6),
    "click": (90.0, 0.7),
    "type_text": (45.0, 0.5),
    "select_option": (60.0, 0.5),
    "toggle": (50.0, 0.5),
    "clear": (30.0, 0.5),
    "scroll": (25.0, 0.6),
    "evaluate": (15.0, 0.9),
    "set_cookies": (6.0, 0.5),
    "clear_cookies": (5.0, 0.5),
    "close_page": (40.0, 0.4),
}
#: action -> (failure probability, ((error message, weight), ...)); the classifier names the class.
_FAILURES: dict[str, tuple[float, tuple[tuple[str, float], ...]]] = {
    "click": (0.05, (("Element not found: e_more", 8.0), ("Timeout after 5000ms", 2.0))),
    "type_text": (0.03, (("Element not found: e_email", 5.0), ("Invalid argument: text", 1.0))),
    "select_option": (0.06, (("Option not found", 4.0), ("Operation failed", 1.0))),
    "toggle": (0.03, (("Element not found: e_terms", 1.0),)),
    "clear": (0.02, (("Element not found: e_email", 1.0),)),
    "scroll": (0.005, (("Operation failed", 1.0),)),
    "navigate_to": (
        0.07,
        (
            ("Navigation timeout after 30000ms", 4.0),
            ("Failed to fetch page", 3.0),
            ("Outbound URL blocked by policy", 1.0),
        ),
    ),
    "evaluate": (0.09, (("JavaScript exception", 5.0), ("Execution context was destroyed", 1.0))),
    "set_cookies": (0.01, (("Invalid argument: cookies", 1.0),)),
    "clear_cookies": (0.0, ()),
}
_SEQUENCE_MARK = 987_654_321
_DURATION_MARK = 876_543_219
_BEFORE_MARK, _AFTER_MARK = "__before_state__", "__after_state__"
_SESSIONS_PER_SITE = 2  # keys per site and worker: fingerprints differ between sessions, as in life


class _Site:
    """One site under one session key: its pages and a cache of event templates."""

    def __init__(self, origin: str) -> None:
        self.log = TraceLog(True)
        self.urls = [origin + path for path in _PATHS]
        self.pages = [PageState(url, None, _som(url)) for url in self.urls]
        states = [*(self.log.state(page) for page in self.pages), self.log.closed_state()]
        #: each page's state object as text (index -1: the closed state), in both forms
        self.state_texts = [
            [compact_json(state) for state in states],
            [compact_json(sorted_json(state)) for state in states],
        ]
        self.templates: dict[tuple[Any, ...], str] = {}

    def event_text(self, key: tuple[Any, ...], form: int, sequence: int, duration: int) -> str:
        """One event as text: export field order (``form`` 0) or keys sorted as in a
        ``close_page`` answer (``form`` 1). Templates depend on the call, not on the pages."""
        action, before, after, element, variant, error = key
        states = self.state_texts[form]
        before_text = states[-1] if action == "open_page" else states[before]
        after_text = states[-1] if action == "close_page" else states[after]
        url_page = after if action in ("open_page", "navigate_to") else None
        template_key = (action, url_page, element, variant, error, form)
        template = self.templates.get(template_key)
        if template is None:
            template = self.templates[template_key] = self._record(*template_key)
        return template.format(s=sequence, d=duration, b=before_text, a=after_text)

    def _record(self, action: str, url_page: int | None, element: str | None, variant: int,
                error: str | None, form: int) -> str:  # fmt: skip
        log = self.log
        arguments: dict[str, Any] = {"element_id": element} if element else {}
        if url_page is not None:
            arguments = {"url": self.urls[url_page]}
        elif action == "type_text":
            arguments["text"] = "x" * (3 + 7 * variant)
            arguments["append"] = variant == 2
        elif action == "select_option":
            arguments["value"] = ("basic", "team", "enterprise")[variant]
        elif action == "scroll":
            arguments = {"direction": ("down", "up", "bottom")[variant], "pixels": 300 * (1 + variant)}
        elif action == "set_cookies":
            arguments = {"cookies": [{}] * (1 + variant)}
        elif action == "clear_cookies":
            arguments = {"name": "consent"} if variant else {}
        # An element that did not resolve leaves no target; any other failure happened on it.
        found = error is None or "not found" not in error.lower()
        target = log.target(self.pages[0], element) if found else None  # every page has the same elements
        state = log.state(self.pages[0])
        log.clear()
        log.record(action, _sanitize(action, arguments), target, state, state, error, _DURATION_MARK)
        event = log.export("template")["events"][0]
        event.update(sequence=_SEQUENCE_MARK, before=_BEFORE_MARK, after=_AFTER_MARK)
        return _templated(compact_json(sorted_json(event) if form else event))


@functools.cache
def _sites() -> list[list[_Site]]:
    """This process's sites, built once: their templates then serve every chunk it writes."""
    return [[_Site(origin) for _ in range(_SESSIONS_PER_SITE)] for origin, _ in SITES]


def _som(url: str) -> dict[str, Any]:
    elements = [{"id": i, "role": role, "label": i[2:], "actions": actions} for i, role, actions in _ELEMENTS]
    return {
        "title": url.rsplit("/", 1)[-1] or "Home",
        "url": url,
        "regions": [{"role": "main", "elements": elements}],
    }


def _templated(text: str) -> str:
    text = text.replace("{", "{{").replace("}", "}}")
    text = text.replace(json.dumps(_BEFORE_MARK), "{b}").replace(json.dumps(_AFTER_MARK), "{a}")
    return text.replace(str(_SEQUENCE_MARK), "{s}").replace(str(_DURATION_MARK), "{d}")


class _Writer:
    """Writes exports for one worker: its own sites (keys) and random stream."""

    def __init__(self, seed: int, mean_calls: float, failure_scale: float, close_share: float) -> None:
        self.rng = random.Random(seed)
        self.sites = _sites()
        self.site_weights = [weight for _, weight in SITES]
        self.actions = [action for action, _ in ACTION_MIX]
        self.action_weights = [weight for _, weight in ACTION_MIX]
        self.mean_calls = mean_calls
        self.failure_scale = failure_scale
        self.close_share = close_share

    def export_text(self) -> str:
        """One export. The log keeps, first in first out, the longest suffix of events within
        its bounds, so the suffix is built backwards from the last call and stops at the first
        event that would not fit: a long session costs no more than a short one."""
        rng = self.rng
        site = rng.choice(rng.choices(self.sites, self.site_weights)[0])
        closing = rng.random() < self.close_share
        form = 1 if closing else 0
        calls = max(1, round(rng.expovariate(1.0 / self.mean_calls))) + closing
        clear_after = rng.randrange(1, calls) if calls > 1 and rng.random() < 0.03 else 0
        oversize_at = rng.randrange(clear_after + 1, calls + 1) if rng.random() < 0.004 else 0
        texts: list[str] = []
        retained_bytes = 0
        page = rng.randrange(len(site.pages))  # the page after the event being built
        for sequence in range(calls, clear_after, -1):
            if sequence == oversize_at:  # an event over MAX_EVENT_BYTES is counted, never kept
                continue
            key = self._call(site, sequence, calls, closing, page)
            median, sigma = _DURATIONS[key[0]]
            duration = int(rng.lognormvariate(0.0, sigma) * median)
            if key[-1] is not None and "imeout" in key[-1]:
                duration = 30_000 + rng.randrange(500)
            text = site.event_text(key, form, sequence, duration)
            size = len(text.encode("utf-8"))
            if len(texts) == MAX_EVENTS or retained_bytes + size > MAX_BYTES:
                break
            texts.append(text)
            retained_bytes += size
            page = key[1]
        oversized = 1 if oversize_at else 0
        # A clear removed what was retained then: at most what fits, at most what came before.
        cleared = min(clear_after - (0 < oversize_at <= clear_after), 40) if clear_after else 0
        texts.reverse()
        return _envelope_text(
            str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            texts,
            {
                "retained_events": len(texts),
                "retained_bytes": retained_bytes,
                "next_sequence": calls + 1,
                "evicted_events": calls - len(texts) - oversized - cleared,
                "oversized_events": oversized,
                "cleared_events": cleared,
            },
            closing,
        )

    def _call(self, site: _Site, sequence: int, calls: int, closing: bool, after: int) -> tuple[Any, ...]:
        """The template key of call ``sequence`` that left the session on page ``after``."""
        rng = self.rng
        if sequence == 1:
            return ("open_page", after, after, None, 0, None)
        if closing and sequence == calls:
            return ("close_page", after, after, None, 0, None)
        action = rng.choices(self.actions, self.action_weights)[0]
        probability, messages = _FAILURES[action]
        error = None
        if messages and rng.random() < probability * self.failure_scale:
            error = rng.choices([m for m, _ in messages], [w for _, w in messages])[0]
        element = rng.choice(_ACTION_ELEMENT[action]) if action in _ACTION_ELEMENT else None
        before = after
        if error is None and (action == "navigate_to" or (element == "e_nav" and rng.random() < 0.6)):
            before = rng.randrange(len(site.pages))
        variant = rng.randrange(3) if action in ("type_text", "select_option", "scroll", "set_cookies") else 0
        if action == "clear_cookies":
            variant = rng.randrange(2)
        return (action, before, after, element, variant, error)


_EVENTS_MARK = "__events__"


@functools.cache
def _empty_export() -> dict[str, Any]:
    """The trace core's export envelope (its field order and redaction policy), events aside."""
    return TraceLog(True).export("")


def _envelope_text(trace_id: str, session_id: str, events: list[str], counters: dict[str, int],
                   closing: bool) -> str:  # fmt: skip
    payload = {**_empty_export(), "session_id": session_id, "trace_id": trace_id, **counters}
    payload["events"] = [_EVENTS_MARK]
    if closing:
        document = sorted_json({"closed": True, "final_trace": payload, "session_id": session_id})
    else:
        document = payload
    return compact_json(document).replace(json.dumps([_EVENTS_MARK]), "[" + ",".join(events) + "]")


def _write_chunk(folder: str, start: int, stop: int, seed: int, options: tuple[float, float, float]) -> int:
    writer = _Writer(seed * 1_000_003 + start, *options)
    target = Path(folder)
    for index in range(start, stop):
        (target / f"trace-{index:06d}.json").write_text(writer.export_text(), encoding="utf-8")
    return stop - start


def write_synthetic_fleet(
    folder: str | Path,
    exports: int,
    *,
    seed: int = 0,
    mean_calls: float = 200.0,
    failure_scale: float = 1.0,
    close_share: float = 0.25,
    workers: int = 1,
) -> Path:
    """Write ``exports`` realistic synthetic exports (``trace-000000.json`` …) into ``folder``.

    ``mean_calls`` is the mean number of traced calls per session (exponentially distributed;
    at 200 most sessions fill the 48 KiB byte bound: about 40 retained events per export), ``failure_scale``
    multiplies every action's failure rate, ``close_share`` is the share of whole
    ``close_page`` answers. ``workers`` > 1 writes chunks in parallel processes. The same
    arguments give the same actions, outcomes and counts (fingerprints use fresh keys).

    >>> from plasmate_nb.analysis import write_synthetic_fleet
    >>> folder = write_synthetic_fleet("fleet/", 2_000, workers=2)
    >>> pnb.fleet(folder)
    """
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    options = (float(mean_calls), float(failure_scale), float(close_share))
    chunk = 500
    chunks = [(start, min(exports, start + chunk)) for start in range(0, exports, chunk)]
    if workers <= 1 or len(chunks) <= 1:
        for start, stop in chunks:
            _write_chunk(str(target), start, stop, seed, options)
        return target
    with ProcessPoolExecutor(workers) as pool:
        for done in [pool.submit(_write_chunk, str(target), a, b, seed, options) for a, b in chunks]:
            done.result()
    return target
