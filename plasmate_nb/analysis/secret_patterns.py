"""Strings that look like secrets: what the audit's privacy check searches every trace string for.

A trace keeps no secret by construction, so any match is worth a look. Detectors report the
kind, where the match starts and its length — never the matched text, so a report about a leak
does not leak it again. The contract's own fingerprints (keyed HMACs in hex) and UUID handles are
removed before scanning: they are exactly the random-looking runs the contract allows.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from plasmate_nb.trace.constants import STATE_PREFIX, TARGET_ID_PREFIX, TARGET_KEY_PREFIX, URL_PREFIX

#: The contract's fingerprints: a known prefix and 64 lowercase hex characters.
FINGERPRINT = re.compile(
    "(?:"
    + "|".join(re.escape(p) for p in (URL_PREFIX, STATE_PREFIX, TARGET_ID_PREFIX, TARGET_KEY_PREFIX))
    + ")"
    r"[0-9a-f]{64}"
)
#: A UUID (trace_id and session_id are UUID v4): hex groups and hyphens, random but not a secret.
UUID = re.compile(
    r"(?<![0-9A-Za-z])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?![0-9A-Za-z])"
)

# Shorter runs are ordinary words and ids (a UUID's longest hex group is 12).
_MIN_HEX = 32
_MIN_BASE64 = 32
# Random text of this length has ~3.6 (hex) and ~5 (base64) bits per character; words, repeated
# characters and padding have far less.
_MIN_HEX_ENTROPY = 3.0
_MIN_BASE64_ENTROPY = 4.0

#: A JWT as a pattern. Searched as such it is quadratic: from every "eyJ" of a long run with no
#: dot (``"eyJ-" * n``) it scans to the run's end, so :func:`_jwts` finds the same matches in
#: linear time; this is their definition (and the tests' oracle).
JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}")
_DOTTED_RUN = re.compile(r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*")
_JWT_HEAD = re.compile(r"\beyJ")
_JWT_SEGMENT = 4  # the fewest characters of each part (after "eyJ" in the first)

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("bearer token", re.compile(r"\b[Bb]earer\s+[A-Za-z0-9._~+/=-]{8,}")),
    (
        "api key",
        re.compile(
            r"\b(?:sk|pk|rk)[-_](?:live|test|proj)?[-_]?[A-Za-z0-9]{16,}"  # sk-…, sk_live_…
            r"|\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{30,}"
            r"|\bxox[abposr]-[A-Za-z0-9-]{10,}|\bAKIA[0-9A-Z]{16}\b|\bAIza[0-9A-Za-z_-]{35}"
            r"|\bglpat-[A-Za-z0-9_-]{20,}"
        ),
    ),
    # The look-behind starts a match only where a run of local-part characters starts: linear time.
    (
        "email address",
        re.compile(
            r"(?<![A-Za-z0-9.!#$%&'*+/=?^_`{|}~-])[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+"
        ),
    ),
)
_HEX_RUN = re.compile(rf"(?<![0-9A-Fa-f])[0-9A-Fa-f]{{{_MIN_HEX},}}(?![0-9A-Fa-f])")
_BASE64_RUN = re.compile(rf"[A-Za-z0-9+/_-]{{{_MIN_BASE64},}}={{0,2}}")
_CARD = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")


@dataclass(frozen=True)
class SecretMatch:
    """A secret-looking run in a string: its ``kind``, ``start`` offset and ``length`` (characters)."""

    kind: str
    start: int
    length: int


def find_secret_like(text: str) -> list[SecretMatch]:
    """Every secret-looking run in ``text``, first kind wins where runs overlap; never the text itself.

    >>> [m.kind for m in find_secret_like("call me at ada@example.test")]
    ['email address']
    """
    masked = UUID.sub(lambda m: " " * len(m.group()), FINGERPRINT.sub(lambda m: " " * len(m.group()), text))
    found: list[SecretMatch] = []
    taken: list[tuple[int, int]] = []
    for kind, start, end in _candidates(masked):
        if any(start < other_end and other_start < end for other_start, other_end in taken):
            continue
        taken.append((start, end))
        found.append(SecretMatch(kind, start, end - start))
    return sorted(found, key=lambda m: m.start)


def _jwts(text: str) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each match of :data:`JWT` in ``text``, as ``finditer`` gives them.

    A match lies in one maximal run of dot-separated segments: it starts at the first "eyJ" (at a
    word boundary) of a segment that has at least four characters after it and is followed by two
    segments of at least four, and ends where the second of those ends; the search goes on after it.
    """
    for run in _DOTTED_RUN.finditer(text):
        parts = run.group().split(".")
        at, i = run.start(), 0
        while i + 2 < len(parts):
            end_of_part = at + len(parts[i])
            head = _JWT_HEAD.search(text, at, end_of_part)  # the earliest start has the most after it
            if (
                head is not None
                and end_of_part - head.end() >= _JWT_SEGMENT
                and len(parts[i + 1]) >= _JWT_SEGMENT
                and len(parts[i + 2]) >= _JWT_SEGMENT
            ):
                end = end_of_part + 1 + len(parts[i + 1]) + 1 + len(parts[i + 2])
                yield head.start(), end
                at, i = end + 1, i + 3
            else:
                at, i = end_of_part + 1, i + 1


def _candidates(text: str) -> Iterator[tuple[str, int, int]]:
    for start, end in _jwts(text):
        yield "jwt", start, end
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(text):
            yield kind, match.start(), match.end()
    for match in _CARD.finditer(text):
        if _luhn_ok(re.sub(r"\D", "", match.group())):
            yield "card number", match.start(), match.end()
    for match in _HEX_RUN.finditer(text):
        if _entropy(match.group()) >= _MIN_HEX_ENTROPY:
            yield "long hex run", match.start(), match.end()
    for match in _BASE64_RUN.finditer(text):
        if _entropy(match.group()) >= _MIN_BASE64_ENTROPY:
            yield "long base64 run", match.start(), match.end()


def _luhn_ok(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _entropy(text: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())
