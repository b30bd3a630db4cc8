"""``Page``: the page an action left behind (title, origin, SOM elements), and ``find``.

Privacy: a page shows its origin, never its path, query, fragment or user info (the trace
keeps only the origin readable; the full ``url`` stays an attribute). Value-bearing
controls (text inputs, textareas, selects) show no ``text``: in a live SOM that is the
typed or selected value.

A page's text can hold a lone UTF-16 surrogate, which no UTF-8 message to a notebook can carry
(``print`` of one fails in the kernel): ``title`` and each ``Element``'s ``label`` and ``text``
show it as U+FFFD, as the tables do; ``regions`` is the SOM as the compiler wrote it.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import pandas as pd

from .. import errors
from .._loop import run_sync
from .._tracebacks import HintedError
from ..client.base import Transport
from ..trace.compact import clean_text
from ._html import box, cell, counted, table
from ._page_changes import changes_table
from ._tables import string_column
from .stateless import THUMBNAIL, Screenshot, take_screenshot

ELEMENT_COLUMNS = ("id", "role", "label", "text", "actions", "region")
VALUE_BEARING_ROLES = frozenset({"text_input", "textarea", "select"})


@dataclass(frozen=True)
class Element:
    """One SOM element as ``find`` returns it; actions accept it wherever an element id is expected.

    >>> email = page.find(label="Email")
    >>> email.id, email.role, email.actions
    """

    id: str
    role: str
    label: str | None
    text: str | None
    actions: tuple[str, ...]
    region: str | None

    def __str__(self) -> str:
        return self.id


def element_id(element: str | Element) -> str:
    return element.id if isinstance(element, Element) else element


def display_origin(url: str | None) -> str:
    """``scheme://host:port`` of ``url`` (port always shown), without user info or path."""
    if not url:
        return "(no page)"
    try:
        parts = urlsplit(url)
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
        host = parts.hostname
    except ValueError:
        return "(opaque origin)"
    if not host or parts.scheme not in ("http", "https"):
        return "(opaque origin)"
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}:{port}"


def _iter_raw(elements: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """SOM element dicts in document order, children and shadow roots included."""
    for raw in elements:
        yield raw
        yield from _iter_raw(raw.get("children") or [])
        shadow = raw.get("shadow")
        if isinstance(shadow, dict):
            yield from _iter_raw(shadow.get("elements") or [])


def _iter_elements(elements: list[dict[str, Any]], region: str | None) -> Iterator[Element]:
    for raw in _iter_raw(elements):
        role = raw.get("role", "")
        yield Element(
            id=raw.get("id", ""),
            role=role,
            label=_shown(raw.get("label")),
            text=None if role in VALUE_BEARING_ROLES else _shown(raw.get("text")),
            actions=tuple(raw.get("actions") or ()),
            region=region,
        )


#: How many options an unknown-option hint lists before it says how many more there are.
MAX_LISTED_OPTIONS = 12


def _shown(value: Any) -> Any:
    return clean_text(value) if isinstance(value, str) else value


def _fold(value: str | None) -> str:
    return " ".join(clean_text(value or "").split()).casefold()


class Page:
    """The page an action left behind: ``title``, ``url``, ``origin`` and its SOM elements.

    Displayed, it shows its origin (never the path, query or fragment) and the elements table;
    ``find`` picks the one element an action needs.

    >>> page = s.open("http://127.0.0.1:8765/login.html")
    >>> page.elements                          # id, role, label, text, actions, region
    >>> s.click(page.find(role="button", text="Sign in"))
    """

    def __init__(
        self, payload: dict[str, Any], transport: Transport | None = None, previous: Page | None = None
    ) -> None:
        self._transport = transport  # where screenshot() asks; None: the embedded engine
        self.url: str | None = payload.get("url")
        self.title: str | None = _shown(payload.get("title"))
        self.regions: list[dict[str, Any]] = payload.get("regions") or []
        self.scroll_position: float | None = payload.get("scroll_position")
        #: The answer's ``som_digest`` (sessions opened with ``som_answers="changes"``), else None.
        self.som_digest: str | None = payload.get("som_digest")
        # The regions of the page this one followed (shared, not copied; not the Page itself, so
        # a long session does not keep a chain of pages alive): what changes() compares with.
        self._previous_regions: list[dict[str, Any]] = previous.regions if previous is not None else []

    def changes(self) -> pd.DataFrame:
        """What the action that led here changed: elements added, removed and changed, one row each.

        Columns: change, id, role, label, text, region, fields (the names of a changed element's
        changed fields, e.g. ``attrs.value``, never their values). The first page of a session
        lists every element as added.

        >>> page = s.type_text(page.find(label="Email"), "analyst@example.test")
        >>> page.changes()                 # one row: changed, text_input, Email, attrs.value
        """
        return changes_table(self._previous_regions, self.regions, hidden_text=VALUE_BEARING_ROLES)

    def diff(self, other: Page) -> pd.DataFrame:
        """What changed from this page to ``other`` (any two pages, e.g. of one session), as ``changes()``.

        >>> first = s.open(url)
        >>> last = s.click(first.find(role="button", text="Sign in"))
        >>> first.diff(last).query("change == 'added'")
        """
        return changes_table(self.regions, other.regions, hidden_text=VALUE_BEARING_ROLES)

    def screenshot(self, width: int = THUMBNAIL[0], height: int = THUMBNAIL[1]) -> Screenshot:
        """A thumbnail ``Screenshot`` of this page's URL, taken now, only when asked (``screenshot_page``).

        It is a fresh visit of the URL in a ``width`` x ``height`` viewport (no session state:
        cookies, typed values and clicks are not in it). Blocking; in async code use
        ``await session.screenshot()`` or ``take_screenshot``. Never put into a trace.

        >>> page.screenshot()              # the last expression of a cell: shows the image
        """
        if not self.url:
            raise ValueError("this page has no URL to screenshot")
        return run_sync(take_screenshot(self._transport, self.url, width, height))

    @functools.cached_property
    def element_list(self) -> tuple[Element, ...]:
        """Every SOM element of the page as an ``Element``, in document order (children included)."""
        found: list[Element] = []
        for region in self.regions:
            found.extend(_iter_elements(region.get("elements") or [], region.get("role")))
        return tuple(found)

    def _select_options(self, element_id: object) -> list[str]:
        """The options the select ``element_id`` offers (its SOM's ``attrs.options``), for a hint."""
        for region in self.regions:
            for raw in _iter_raw(region.get("elements") or []):
                if raw.get("id") == element_id:
                    options = (raw.get("attrs") or {}).get("options") or []
                    listed = [_describe_option(o) for o in options if isinstance(o, dict)]
                    extra = len(listed) - MAX_LISTED_OPTIONS
                    return listed[:MAX_LISTED_OPTIONS] + ([f"and {extra} more"] if extra > 0 else [])
        return []

    @property
    def origin(self) -> str:
        """``scheme://host:port`` of the page (port always shown), the part a trace keeps readable.

        >>> page.origin        # e.g. 'http://127.0.0.1:8765'
        """
        return display_origin(self.url)

    @property
    def elements(self) -> pd.DataFrame:
        """The page's SOM elements as a table: id, role, label, text, actions, region.

        >>> page.elements.query("role == 'button'")
        """
        rows = self.element_list
        data: dict[str, list[str | None]] = {
            "id": [e.id for e in rows],
            "role": [e.role for e in rows],
            "label": [e.label for e in rows],
            "text": [e.text for e in rows],
            "actions": [", ".join(e.actions) for e in rows],
            "region": [e.region for e in rows],
        }
        return pd.DataFrame({k: string_column(v) for k, v in data.items()}, columns=ELEMENT_COLUMNS)

    def find_all(
        self,
        role: str | None = None,
        label: str | None = None,
        text: str | None = None,
        *,
        contains: bool = False,
    ) -> list[Element]:
        """Every element matching all the given criteria (case-insensitive; exact unless ``contains``).

        >>> page.find_all(role="link")
        """

        def matches(wanted: str | None, actual: str | None) -> bool:
            if wanted is None:
                return True
            wanted_f, actual_f = _fold(wanted), _fold(actual)
            return wanted_f in actual_f if contains else wanted_f == actual_f

        return [
            e
            for e in self.element_list
            if (role is None or e.role == role) and matches(label, e.label) and matches(text, e.text)
        ]

    def find(
        self,
        role: str | None = None,
        label: str | None = None,
        text: str | None = None,
        *,
        contains: bool = False,
    ) -> Element:
        """The one element matching all the given criteria; ``ElementNotFound`` / ``AmbiguousElement`` otherwise.

        Matching is case-insensitive and exact unless ``contains=True``; the errors list the
        nearest elements or every match.

        >>> page.find(label="Email")
        >>> page.find(role="button", text="sign", contains=True)
        """
        if role is None and label is None and text is None:
            raise MissingCriteria(errors.FIND_NEEDS_CRITERIA).with_hint(errors.FIND_CRITERIA_HINT)
        found = self.find_all(role, label, text, contains=contains)
        query = _describe_query(role, label, text, contains)
        if len(found) == 1:
            return found[0]
        if found:
            raise AmbiguousElement(query, found)
        raise ElementNotFound(query, self._near_matches(role, label or text or ""))

    def _near_matches(self, role: str | None, wanted: str) -> list[Element]:
        def score(e: Element) -> float:
            name = _fold(e.label or e.text)
            ratio = difflib.SequenceMatcher(None, _fold(wanted), name).ratio() if wanted else 0.0
            return ratio + (0.5 if role is not None and e.role == role else 0.0)

        ranked = sorted(self.element_list, key=score, reverse=True)
        return [e for e in ranked if e.label or e.text][:5]

    def _element_rows(self) -> list[tuple[Any, ...]]:
        return [(e.id, e.role, e.label, e.text, ", ".join(e.actions), e.region) for e in self.element_list]

    def _repr_html_(self) -> str:
        head = f"<div>{cell(self.origin)} <i>(path, query and fragment not shown)</i></div>"
        count = f"<div>{counted(len(self.element_list), 'element')}</div>"
        return box(
            f"Page: {self.title or '(untitled)'}", head + count + table(ELEMENT_COLUMNS, self._element_rows())
        )

    def __repr__(self) -> str:
        lines = [f"Page(title={self.title!r}, origin={self.origin!r}, elements={len(self.element_list)})"]
        for e in self.element_list[:40]:
            name = e.label if e.label is not None else e.text
            lines.append(f"  {e.id:<20} {e.role:<11} {name!r:<30} [{', '.join(e.actions)}]")
        if len(self.element_list) > 40:
            lines.append(f"  ... {len(self.element_list) - 40} more (see .elements)")
        return "\n".join(lines)


def _describe_query(role: str | None, label: str | None, text: str | None, contains: bool) -> str:
    parts = [f"{k}={v!r}" for k, v in (("role", role), ("label", label), ("text", text)) if v is not None]
    return ", ".join(parts) + (", contains=True" if contains else "")


def _describe_option(option: dict[str, Any]) -> str:
    text, value = option.get("text"), option.get("value")
    described = repr(text) if value in (None, text) else f"{text!r} (value {value!r})"
    return described + (" (disabled)" if option.get("disabled") else "")


def _describe(e: Element) -> str:
    return f"{e.id} ({e.role}, label={e.label!r}, text={e.text!r})"


class MissingCriteria(HintedError, TypeError):
    """``find`` was called without role=, label= or text=: nothing to match.

    >>> page.find(label="Email")   # what it needs
    """


class ElementNotFound(HintedError, LookupError):
    """No element matched ``find``; the message lists the nearest elements.

    >>> try:
    ...     page.find(label="Emial")
    ... except ElementNotFound as error:
    ...     error.near            # the closest elements, to pick from
    """

    def __init__(self, query: str, near: list[Element]) -> None:
        self.near = near
        hint = "; ".join(_describe(e) for e in near) or "the page has no labelled elements"
        super().__init__(f"no element matches {query}. Nearest: {hint}")
        self.with_hint(errors.FIND_HINT)


class AmbiguousElement(HintedError, LookupError):
    """More than one element matched ``find``; the message lists them.

    >>> try:
    ...     page.find(role="link")
    ... except AmbiguousElement as error:
    ...     error.matches         # narrow with label= or text=
    """

    def __init__(self, query: str, matches: list[Element]) -> None:
        self.matches = matches
        listed = "; ".join(_describe(e) for e in matches[:10])
        super().__init__(
            f"{len(matches)} elements match {query}: {listed}. Add role=, label= or text= to narrow it"
        )
        self.with_hint(errors.FIND_HINT)
