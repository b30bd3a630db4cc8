"""``strict_loads``: JSON text read as the reference's reader (serde_json) reads it, with messages
that say why and where, never what is there."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plasmate_nb.trace.json_text import JsonTextError, strict_loads

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=20,
)


@given(JSON)
def test_what_json_writes_reads_back_as_json_reads_it(value: object) -> None:
    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False, indent=1)):
        assert strict_loads(text) == json.loads(text)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"s3cret":1,"s3cret":2}', "a key appears twice in one object at line 1 column"),
        ('{"a":{"k\\u0065y":1,"key":2}}', "a key appears twice in one object"),  # equal once unescaped
        ('{"a":"\\ud800"}', "a lone surrogate escape"),
        ('"\\udc00\\ud800"', "a lone surrogate escape"),
        ("x\ud800", "a lone surrogate (half of a UTF-16 pair)"),  # a str holding one raw
        ('{"a":NaN}', "expected value at line 1 column 6"),  # Python's json reads NaN; serde_json does not
        ("[Infinity]", "expected value"),
        ("[" * 300 + "]" * 300, "nested too deeply to read"),
        ("1" * 5000, "a number too long to read"),
        ("", "EOF while parsing a value at line 1 column 0"),
    ],
)
def test_refusals_say_why_and_where(text: str, why: str) -> None:
    with pytest.raises(JsonTextError) as caught:
        strict_loads(text)
    assert str(caught.value).startswith(why)
    assert "s3cret" not in str(caught.value)  # jiter's own duplicate-key message quotes the key


def test_a_float_too_large_reads_as_infinity_as_json_does() -> None:
    assert strict_loads("[1e400]") == [math.inf] == json.loads("[1e400]")


def test_the_position_is_lines_from_one_and_columns_in_bytes() -> None:
    with pytest.raises(JsonTextError) as caught:
        strict_loads('{\n "é": 1,\n "é": 2}')
    assert (caught.value.line, caught.value.column) == (3, 7)  # 6 if "é" counted as one
