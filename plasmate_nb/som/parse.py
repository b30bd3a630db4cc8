"""Parse SOM text, reusing what an earlier parse made of the text that did not change.

Why: after an action the compiler answers with the change to the last SOM text (a few bytes on
a megabyte page), but ``json.loads`` of the whole text took longer than the compile itself on
large pages, and every unchanged element then compared equal to its old copy field by field.
Here the top-level elements of each region are the unit: one whose text lies wholly in the
unchanged head or tail of the text is the very object the last parse made (the same characters
parse to the same value, whatever surrounds them); everything else is parsed by the json
module's own scanner. The result equals ``json.loads(text)``, key order included; text of any
other shape (whitespace, a non-object) is simply handed to ``json.loads``.

Unchanged elements are shared between the two results: treat a SOM as read-only.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# The json module's C scanner: (value, end) of the JSON value starting at an index.
_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


@dataclass(frozen=True)
class ParsedSom:
    """A parse of one SOM text: the data, and where each region's top-level elements lie."""

    data: dict[str, Any]
    starts: list[int] = field(repr=False)  # in text order
    ends: list[int] = field(repr=False)
    values: list[Any] = field(repr=False)
    list_ends: list[int] = field(repr=False, default_factory=list)  # where each region's run stops


@dataclass(frozen=True)
class Unchanged:
    """What of ``previous``'s text the new text keeps: its first ``head`` characters, and all
    from ``tail_start`` on (shifted by ``shift`` characters in the new text)."""

    previous: ParsedSom
    head: int
    tail_start: int
    shift: int


class _Shape(Exception):
    """Not the compact shape the compiler writes."""


def parse_som(text: str, unchanged: Unchanged | None = None) -> ParsedSom:
    """``json.loads(text)`` with its element index, reusing ``unchanged`` elements."""
    try:
        return _Parser(text, unchanged).run()
    except (_Shape, IndexError, ValueError, StopIteration):
        data = json.loads(text)  # raises for text that is not JSON, as before
        return ParsedSom(data if isinstance(data, dict) else {}, [], [], [])


class _Parser:
    def __init__(self, text: str, unchanged: Unchanged | None) -> None:
        self.text = text
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.values: list[Any] = []
        self.list_ends: list[int] = []
        old = unchanged.previous if unchanged is not None else ParsedSom({}, [], [], [])
        self.old = old
        # Old elements ending within the head, then those starting in the tail, in text order.
        self.head_next, self.head_stop = 0, bisect.bisect_right(old.ends, unchanged.head) if unchanged else 0
        self.tail_next = (
            bisect.bisect_left(old.starts, unchanged.tail_start) if unchanged else len(old.starts)
        )
        self.shift = unchanged.shift if unchanged else 0

    def run(self) -> ParsedSom:
        data, end = self.object_at(0, "regions")
        if end != len(self.text):
            raise _Shape
        return ParsedSom(data, self.starts, self.ends, self.values, self.list_ends)

    def object_at(self, i: int, listed: str) -> tuple[dict[str, Any], int]:
        """The object at ``i`` whose key ``listed`` holds regions (top level) or elements."""
        text = self.text
        if text[i] != "{":
            raise _Shape
        i += 1
        out: dict[str, Any] = {}
        if text[i] == "}":
            return out, i + 1
        while True:
            if text[i] != '"':  # keys are strings (the scanner would take any value)
                raise _Shape
            key, i = _scan(text, i)
            if text[i] != ":":
                raise _Shape
            if key == listed:
                out[key], i = self.regions_at(i + 1) if listed == "regions" else self.elements_at(i + 1)
            else:
                out[key], i = _scan(text, i + 1)
            mark = text[i]
            if mark == "}":
                return out, i + 1
            if mark != ",":
                raise _Shape
            i += 1

    def regions_at(self, i: int) -> tuple[list[Any], int]:
        return self.list_at(i, self.region_item)

    def region_item(self, i: int) -> tuple[list[Any], int]:
        value, end = self.object_at(i, "elements")
        return [value], end

    def elements_at(self, i: int) -> tuple[list[Any], int]:
        """A region's elements; whole runs of kept ones are taken over from the last parse."""
        out, end = self.list_at(i, self.element_items)
        self.list_ends.append(len(self.values))
        return out, end

    def element_items(self, i: int) -> tuple[list[Any], int]:
        taken = self.take_run(i)
        if taken:
            return self.values[-taken:], self.ends[-1]
        value, end = _scan(self.text, i)
        self.starts.append(i)
        self.ends.append(end)
        self.values.append(value)
        return [value], end

    def take_run(self, i: int) -> int:
        """How many kept elements, starting with one at ``i``, follow each other in the same
        list of the last parse (their text is unchanged, so they do here too); 0 if none."""
        old = self.old
        while self.head_next < self.head_stop and old.starts[self.head_next] < i:
            self.head_next += 1
        while self.tail_next < len(old.starts) and old.starts[self.tail_next] + self.shift < i:
            self.tail_next += 1
        if self.head_next < self.head_stop and old.starts[self.head_next] == i:
            first = self.head_next
            stop = min(self.head_stop, old.list_ends[bisect.bisect_right(old.list_ends, first)])
            shift = 0
            self.head_next = stop
        elif self.tail_next < len(old.starts) and old.starts[self.tail_next] + self.shift == i:
            first = self.tail_next
            stop = old.list_ends[bisect.bisect_right(old.list_ends, first)]
            shift = self.shift
            self.tail_next = stop
        else:
            return 0
        if shift:
            self.starts += [at + shift for at in old.starts[first:stop]]
            self.ends += [at + shift for at in old.ends[first:stop]]
        else:
            self.starts += old.starts[first:stop]
            self.ends += old.ends[first:stop]
        self.values += old.values[first:stop]
        return stop - first

    def list_at(self, i: int, items: Callable[[int], tuple[list[Any], int]]) -> tuple[list[Any], int]:
        """The list at ``i``; ``items`` reads one or more of its values from an index."""
        text = self.text
        if text[i] != "[":
            raise _Shape
        i += 1
        out: list[Any] = []
        if text[i] == "]":
            return out, i + 1
        while True:
            values, i = items(i)
            out += values
            mark = text[i]
            if mark == "]":
                return out, i + 1
            if mark != ",":
                raise _Shape
            i += 1
