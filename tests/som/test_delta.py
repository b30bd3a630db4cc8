"""The delta answer of an incremental compile, read back in Python (``compiler._apply_delta``):
a well-formed answer rebuilds the new text exactly; anything malformed is refused (the caller
then asks for the whole text), never half-applied."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from plasmate_nb.som.compiler import META_MARK, _apply_delta
from tests.som._helpers import common_ends

OLD = '{"regions":[{"id":"r","elements":[{"id":"a","text":"é😀"}]}]' + META_MARK + '1,"som_bytes":2}'
NEW = OLD.replace('"a"', '"bb"').replace('"som_bytes":2', '"som_bytes":3')


def units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def segment(a: str, b: str) -> list:
    """[common prefix, common suffix, middle] in UTF-16 units (the texts here split no pair)."""
    p, s = common_ends(a, b)
    return [units(a[:p]), units(a[len(a) - s :]) if s else 0, b[p : len(b) - s]]


def answer(old: str = OLD, new: str = NEW, **changes: object) -> dict:
    cut, new_cut = old.index(META_MARK), new.index(META_MARK)
    good = {
        "base": 7,
        "cut": units(old[:cut]),
        "length": units(new),
        "delta": [segment(old[:cut], new[:new_cut]), segment(old[cut:], new[new_cut:])],
    }
    return {**good, **changes}


def world(text: str = OLD) -> SimpleNamespace:
    return SimpleNamespace(last_text=text, last_key=7, last_parse=None)


@pytest.mark.parametrize("old", [OLD, OLD.replace("é😀", "plain")])
def test_a_well_formed_delta_rebuilds_the_new_text(old):
    new = old.replace('"a"', '"bb"').replace('"som_bytes":2', '"som_bytes":3')
    assert _apply_delta(world(old), answer(old, new)) == (new, None)


@pytest.mark.parametrize(
    "changes",
    [
        {"base": 6},
        {"cut": -3},
        {"cut": 5},
        {"cut": "12"},
        {"cut": True},
        {"length": -1},
        {"length": 10**6},
        {"delta": [[0, 0, ""]]},
        {"delta": [[-1, 0, ""], [0, 0, ""]]},
        {"delta": [[10**6, 0, ""], [0, 0, ""]]},
        {"delta": [[0, 0, 5], [0, 0, ""]]},
        {"delta": "[]"},
        {"delta": None},
    ],
)
def test_a_malformed_delta_is_refused(changes):
    assert _apply_delta(world(), answer(**changes)) is None


def test_a_delta_from_another_base_is_refused():
    assert _apply_delta(world(OLD.replace("é😀", "x")), answer()) is None
