"""``serde_floats``: JSON as ``json.dumps`` writes it, with floats laid out as serde_json writes
them (the shortest digits, fixed notation from 1e-5 up to below 1e16, otherwise ``<digits>e<exp>``
with no plus sign and no padding), and nothing inside a string touched."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plasmate_nb.trace.compact import serde_floats

FINITE = st.floats(allow_nan=False, allow_infinity=False)


def serde_layout(number: float) -> str:
    """serde_json's layout of ``number``, from its shortest digits and decimal exponent: the rule
    as its float writer states it, written independently of the code under test."""
    sign, digits, exponent = Decimal(repr(number)).normalize().as_tuple()
    text = "".join(map(str, digits))
    magnitude = len(text) + exponent  # 10**(magnitude - 1) <= |number| < 10**magnitude
    minus = "-" if sign else ""
    if number == 0:
        return minus + "0.0"
    if exponent >= 0 and magnitude <= 16:
        return minus + text + "0" * exponent + ".0"
    if 0 < magnitude <= 16:
        return minus + text[:magnitude] + "." + text[magnitude:]
    if -5 < magnitude <= 0:
        return minus + "0." + "0" * -magnitude + text
    mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
    return f"{minus}{mantissa}e{magnitude - 1}"


@given(FINITE)
def test_every_float_is_written_as_serde_json_writes_it(number: float) -> None:
    written = serde_floats(json.dumps(number))
    assert written == serde_layout(number)
    assert float(written) == number


@given(st.lists(FINITE | st.text(alphabet='0123456789e+-."\\x ', max_size=12), max_size=6))
def test_strings_are_never_touched_and_the_json_reads_back_the_same(values: list[float | str]) -> None:
    written = serde_floats(json.dumps(values))
    assert json.loads(written) == values
    assert [item for item in json.loads(written) if isinstance(item, str)] == [
        item for item in values if isinstance(item, str)
    ]


@pytest.mark.parametrize(
    ("number", "written"),
    [(1e21, "1e21"), (1.5e-7, "1.5e-7"), (1e-5, "0.00001"), (1.25e-5, "0.0000125"), (1e16, "1e16"),
     (1e15, "1000000000000000.0"), (-2.5e-300, "-2.5e-300"), (0.0001, "0.0001"), (-0.0, "-0.0")],
)  # fmt: skip
def test_the_layouts_at_each_edge(number: float, written: str) -> None:
    assert serde_floats(json.dumps(number)) == written
