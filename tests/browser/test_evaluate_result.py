"""``map_evaluate_result``: the page's value read as serde_json reads the reference worker's text."""

from __future__ import annotations

import json

import pytest

from plasmate_nb.browser.evaluate_result import map_evaluate_result


@pytest.mark.parametrize("opening", ["[", '{"a":'])
def test_nesting_stops_at_serde_jsons_depth(opening: str) -> None:
    closing = "]" if opening == "[" else "}"
    fits = opening * 127 + "1" * (opening != "[") + closing * 127
    too_deep = opening * 128 + "1" * (opening != "[") + closing * 128
    assert map_evaluate_result(fits) == json.loads(fits)
    assert map_evaluate_result(too_deep) == too_deep  # refused: the text stays a string
    wide = "[" + "[1]," * 200 + "1]"  # many arrays, none deep: no walk needed to say so
    assert map_evaluate_result(wide) == json.loads(wide)


def test_a_lone_surrogate_escape_leaves_the_text_and_a_pair_is_one_character() -> None:
    assert map_evaluate_result('["\\ud800"]') == '["\\ud800"]'
    assert map_evaluate_result('{"\\udc00": 1}') == '{"\\udc00": 1}'  # in a key too
    assert map_evaluate_result('"\\ud83d\\ude00"') == "\U0001f600"


def test_a_bigint_no_float_holds_comes_back_as_its_digits() -> None:
    """Past 4,300 digits Python's str() of an int raises; the digits are written all the same."""
    assert map_evaluate_result(10**5000) == "1" + "0" * 5000
    assert map_evaluate_result(2**64) == 2.0**64
