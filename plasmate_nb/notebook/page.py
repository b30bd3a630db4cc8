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
import heapq
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .. import errors
from .._loop import run_sync
from .._tracebacks import HintedError
from ..client.base import Transport
from ..trace.compact import clean_text, file_label
from ..trace.origin import origin
from ._html import box, cell, counted, table
from ._page_changes import changes_table
from ._tables import string_column
from .stateless import THUMBNAIL, Screenshot, take_screenshot

ELEMENT_COLUMNS = ("id", "role", "label", "text", "actions", "region")
# A page's title is shown up to this many characters (the SOM cuts a paragraph at 200 too).
TITLE_SHOWN_CHARS = 200
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
    """``scheme://host:port`` of an http(s) ``url`` (port always shown), without user info or path:
    the trace's ``origin()``, so a display never reads more of a URL as its host than a trace does."""
    if not url:
        return "(no page)"
    readable = origin(url)
    if readable is None or not readable.startswith(("http://", "https://")):
        return "(opaque origin)"
    return readable


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
#: ``ElementNotFound`` lists this many nearest elements, one line each, with at most this much of a name.
MAX_NEAREST = 3
NEAREST_NAME_CHARS = 32
#: An ambiguous ``find`` lists this many of its matches, one line each (``error.matches`` has all).
AMBIGUOUS_SHOWN = 10
#: A find error repeats what was asked, each value cut to this many characters.
QUERY_VALUE_CHARS = 40
#: How alike (difflib's ratio, case and spacing folded) a role, label or text must be to be suggested.
SUGGESTION_CUTOFF = 0.6
#: A hint is one line of at most this many characters; a longer suggested value is cut to its
#: first words (up to this many characters) and found with ``contains=True``.
MAX_HINT_CHARS = 120
SUGGESTED_WORDS_CHARS = 40
#: Likeness below this is not worked out exactly (nothing that unlike is near).
NEAR_FLOOR = 0.3
#: The nearest elements listed are first those of the role asked for, and without a role asked
#: for, elements a user acts on before the text around them.
ROLE_PREFERENCE = 0.5
INTERACTIVE_PREFERENCE = 0.2
#: A label asked for as text (or the other way round) counts this much of its likeness.
OTHER_FIELD_WEIGHT = 0.9


def _shown(value: Any) -> Any:
    return clean_text(value) if isinstance(value, str) else value


def _plain(value: str) -> str:
    """An id, role or action for a line of text: what no terminal or UTF-8 message takes as it
    is (a lone surrogate, a control or bidirectional character a server sent) as an escape."""
    return file_label(value)


def _fold(value: str | None) -> str:
    return " ".join(clean_text(value or "").split()).casefold()


class Page:
    """The page an action left behind: ``title``, ``url``, ``origin`` and its SOM elements.

    Displayed, it shows its origin (never the path, query or fragment) and the elements table;
    ``find`` picks the one element an action needs.

    >>> page = s.open(site.url("/login.html"))      # site = pnb.DemoSite().start()
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
        nearest elements (and, when one is close, the call that finds it: ``did you mean
        page.find(label='Email')?``) or every match.

        >>> page.find(label="Email")
        >>> page.find(role="button", text="sign", contains=True)
        """
        if role is None and label is None and text is None:
            raise MissingCriteria(errors.FIND_NEEDS_CRITERIA).with_hint(errors.FIND_CRITERIA_HINT)
        found = self.find_all(role, label, text, contains=contains)
        query = _describe_query(role, label, text, contains, clip=QUERY_VALUE_CHARS)
        if len(found) == 1:
            return found[0]
        criteria = {k: v for k, v in (("role", role), ("label", label), ("text", text)) if v is not None}
        if found:
            raise AmbiguousElement(query, found, given=tuple(criteria))
        likeness = _Likeness(contains)
        suggestion = self._suggestion(criteria, likeness)
        near = self._nearest(criteria, likeness, suggestion[1] if suggestion else None)
        raise ElementNotFound(query, near, suggestion[0] if suggestion else None)

    def _nearest(self, criteria: dict[str, str], likeness: _Likeness, first: Element | None) -> list[Element]:
        """The ``MAX_NEAREST`` named elements closest to ``criteria``, ``first`` (the suggested one) first."""

        def closeness(e: Element) -> float:
            wanted = [(f, v) for f, v in criteria.items() if f != "role"]
            if not wanted:  # role only: how close the role's name is
                return likeness.of(criteria["role"], e.role)
            ratio = sum(likeness.name(e, f, v) for f, v in wanted) / len(wanted)
            role = criteria.get("role")
            return ratio + _preference(e, role) + (ROLE_PREFERENCE if e.role == role else 0.0)

        named = [e for e in self.element_list if (e.label or e.text) and e is not first]
        ranked = heapq.nlargest(MAX_NEAREST - (first is not None), named, key=closeness)  # stable
        return ([first] if first is not None else []) + ranked

    def _suggestion(self, criteria: dict[str, str], likeness: _Likeness) -> tuple[str, Element] | None:
        """The call (and the element it finds) closest to ``criteria`` with one of them corrected.

        Each criterion in turn is taken as the mistake: among the elements matching the others
        (so of the role asked for, if the role is not the mistake), the one whose role, label or
        text (a label asked for as text too, and the other way round) is closest by
        :mod:`difflib`'s ratio, at least ``SUGGESTION_CUTOFF``; a wrong role next to a label or
        text that matches needs no likeness. Without a role asked for, interactive elements come
        before paragraphs and headings. The call adds the element's role when it would
        otherwise match several.
        """
        contains = likeness.contains
        best: tuple[float, dict[str, str], Element] | None = None
        for mistaken, wanted in criteria.items():
            others = {f: v for f, v in criteria.items() if f != mistaken}
            for e in self.find_all(**others, contains=contains):
                for fixed, score in likeness.corrections(e, mistaken, wanted, others):
                    score += _preference(e, criteria.get("role"))
                    if best is None or score > best[0]:
                        best = (score, fixed, e)
        if best is None:
            return None
        _, fixed, e = best
        if "role" not in fixed and len(self.find_all(**fixed, contains=contains)) > 1:
            fixed = {"role": e.role, **fixed}  # e.g. a button and a heading both say "Sign in"
        call = _find_call(fixed, contains)
        if len(errors.find_suggestion_hint(call)) > MAX_HINT_CHARS:
            shortened = self._shortened_call(fixed, e)
            return (shortened, e) if shortened else None
        return call, e

    def _shortened_call(self, fixed: dict[str, str], e: Element) -> str | None:
        """A call finding ``e`` by the first words of its long label or text (``contains=True``)."""
        short = {f: _first_words(v, SUGGESTED_WORDS_CHARS) if f != "role" else v for f, v in fixed.items()}
        call = _find_call(short, True)
        if (
            self.find_all(**short, contains=True) != [e]
            or len(errors.find_suggestion_hint(call)) > MAX_HINT_CHARS
        ):
            return None
        return call

    def _element_rows(self) -> list[tuple[Any, ...]]:
        return [(e.id, e.role, e.label, e.text, ", ".join(e.actions), e.region) for e in self.element_list]

    def _shown_title(self) -> str:
        # A page's title can be any length: the header shows its start (``page.title`` has it all).
        title = self.title or "(untitled)"
        if len(title) <= TITLE_SHOWN_CHARS:
            return title
        return f"{title[:TITLE_SHOWN_CHARS]}… ({len(title):,} characters)"

    def _repr_html_(self) -> str:
        head = f"<div>{cell(self.origin)} <i>(path, query and fragment not shown)</i></div>"
        count = f"<div>{counted(len(self.element_list), 'element')}</div>"
        return box(
            f"Page: {self._shown_title()}", head + count + table(ELEMENT_COLUMNS, self._element_rows())
        )

    def __repr__(self) -> str:
        title = self._shown_title() if self.title else self.title
        lines = [f"Page(title={title!r}, origin={self.origin!r}, elements={len(self.element_list)})"]
        for e in self.element_list[:40]:
            name = e.label if e.label is not None else e.text
            actions = ", ".join(map(_plain, e.actions))
            lines.append(f"  {_plain(e.id):<20} {_plain(e.role):<11} {name!r:<30} [{actions}]")
        if len(self.element_list) > 40:
            lines.append(f"  ... {len(self.element_list) - 40} more (see .elements)")
        return "\n".join(lines)


def _describe_query(
    role: str | None, label: str | None, text: str | None, contains: bool, clip: int | None = None
) -> str:
    """``role='button', text='Sign in'``; with ``clip``, each value cut to that many characters."""
    parts = [
        f"{k}={(v if clip is None else _clip(v, clip))!r}"
        for k, v in (("role", role), ("label", label), ("text", text))
        if v is not None
    ]
    return ", ".join(parts) + (", contains=True" if contains else "")


def _describe_option(option: dict[str, Any]) -> str:
    text, value = option.get("text"), option.get("value")
    described = repr(text) if value in (None, text) else f"{text!r} (value {value!r})"
    return described + (" (disabled)" if option.get("disabled") else "")


_OTHER_FIELD = {"label": "text", "text": "label"}


def _preference(e: Element, role: str | None) -> float:
    return INTERACTIVE_PREFERENCE if role is None and e.actions else 0.0


class _Likeness:
    """How alike what ``find`` asked for is to an element's role, label or text (difflib's ratio,
    case and spacing folded; with ``contains``, the best ratio against any run of as many words).

    Ratios below ``NEAR_FLOOR`` are not worked out: an upper bound under it stands in (ranking
    the elements that are not near at all needs no precision), which keeps a miss on a page of
    thousands of elements fast. Each pair is worked out once per failed ``find``.
    """

    def __init__(self, contains: bool) -> None:
        self.contains = contains
        self._known: dict[tuple[str, str], float] = {}

    def of(self, wanted: str, actual: str | None) -> float:
        if actual is None:
            return 0.0
        key = (wanted, actual)
        if key not in self._known:
            folded, against = _fold(wanted), _fold(actual)
            best = _ratio(folded, against)
            if self.contains:
                words, count = against.split(), max(1, len(folded.split()))
                for start in range(len(words) - count + 1):
                    best = max(best, _ratio(folded, " ".join(words[start : start + count])))
            self._known[key] = best
        return self._known[key]

    def name(self, e: Element, field: str, wanted: str) -> float:
        """How alike ``wanted`` is to ``e``'s ``field`` (label or text), or less, to its other one."""
        return max(
            self.of(wanted, getattr(e, field)),
            OTHER_FIELD_WEIGHT * self.of(wanted, getattr(e, _OTHER_FIELD[field])),
        )

    def corrections(
        self, e: Element, mistaken: str, wanted: str, others: dict[str, str]
    ) -> Iterator[tuple[dict[str, str], float]]:
        """The criteria with ``mistaken`` corrected to ``e``'s value, and how likely that is the fix."""
        if mistaken == "role":
            ratio = self.of(wanted, e.role)
            if others or ratio >= SUGGESTION_CUTOFF:  # a wrong role beside a matching label or text
                yield {"role": e.role, **others}, ratio
            return
        for field, weight in ((mistaken, 1.0), (_OTHER_FIELD[mistaken], OTHER_FIELD_WEIGHT)):
            value = getattr(e, field)
            if value is None or (field != mistaken and field in others):
                continue
            ratio = self.of(wanted, value)
            if ratio >= SUGGESTION_CUTOFF:
                yield {**others, field: " ".join(value.split())}, weight * ratio


def _ratio(a: str, b: str) -> float:
    """difflib's ratio of ``a`` and ``b``, or an upper bound of it below ``NEAR_FLOOR``."""
    matcher = difflib.SequenceMatcher(None, a, b)
    for bound in (matcher.real_quick_ratio, matcher.quick_ratio):
        upper = bound()
        if upper < NEAR_FLOOR:
            return upper
    return matcher.ratio()


def _find_call(criteria: dict[str, str], contains: bool) -> str:
    role, label, text = (criteria.get(f) for f in ("role", "label", "text"))
    return f"page.find({_describe_query(role, label, text, contains)})"


def _first_words(value: str, limit: int) -> str:
    """The first words of ``value`` within ``limit`` characters (at least one word)."""
    words = value.split()
    kept = words[:1]
    for word in words[1:]:
        if len(" ".join([*kept, word])) > limit:
            break
        kept.append(word)
    return " ".join(kept)


def _clip(value: str, limit: int) -> str:
    value = " ".join(value.split())
    return value if len(value) <= limit else value[: limit - 1] + "…"


def _element_lines(elements: list[Element], given: tuple[str, ...] = ()) -> list[str]:
    """One short line per element: id, role, and its label (else its text), cut to a few words;
    the other of the two when the query ``given`` already named the label (or the text)."""
    id_width = max(len(_plain(e.id)) for e in elements)
    role_width = max(len(_plain(e.role)) for e in elements)
    lines = []
    for e in elements:
        named = [(name, value) for name, value in (("label", e.label), ("text", e.text)) if value]
        field, value = next((f for f in named if f[0] not in given), named[0] if named else ("text", ""))
        lines.append(
            f"  {_plain(e.id):<{id_width}}  {_plain(e.role):<{role_width}}  "
            f"{field}={_clip(value, NEAREST_NAME_CHARS)!r}"
        )
    return lines


class MissingCriteria(HintedError, TypeError):
    """``find`` was called without role=, label= or text=: nothing to match.

    >>> page.find(label="Email")   # what it needs
    """


class ElementNotFound(HintedError, LookupError):
    """No element matched ``find``; the message lists the (at most three) nearest elements.

    ``suggestion`` is the call that finds the closest one, with the misspelled criterion
    corrected (the hint says ``did you mean page.find(label='Email')?``), or None when nothing
    is close.

    >>> try:
    ...     page.find(label="Emial")
    ... except ElementNotFound as error:
    ...     error.suggestion      # "page.find(label='Email')"
    ...     error.near            # the closest elements, to pick from
    """

    def __init__(self, query: str, near: list[Element], suggestion: str | None = None) -> None:
        self.near = near
        self.suggestion = suggestion
        if near:
            message = "\n".join([f"no element matches {query}; the nearest:", *_element_lines(near)])
        else:
            message = f"no element matches {query}; the page has no labelled elements"
        super().__init__(message)
        self.with_hint(errors.find_suggestion_hint(suggestion) if suggestion else errors.FIND_HINT)


class AmbiguousElement(HintedError, LookupError):
    """More than one element matched ``find``; the message lists them.

    >>> try:
    ...     page.find(role="link")
    ... except AmbiguousElement as error:
    ...     error.matches         # narrow with label= or text=
    """

    def __init__(self, query: str, matches: list[Element], given: tuple[str, ...] = ()) -> None:
        self.matches = matches
        shown = matches[:AMBIGUOUS_SHOWN]
        unused = [f"{name}=" for name in ("role", "label", "text") if name not in given]
        # None left to add: the elements are alike, told apart by their ids.
        narrow = f"add {' or '.join(unused)} to narrow it" if unused else "pick one by its id"
        lines = [f"{len(matches)} elements match {query}; {narrow}:"]
        lines += _element_lines(shown, given)  # what the query did not say: what tells them apart
        if len(matches) > len(shown):
            lines.append(f"  … and {len(matches) - len(shown)} more (error.matches has them all)")
        super().__init__("\n".join(lines))
        self.with_hint(errors.AMBIGUOUS_FIND_HINT)
