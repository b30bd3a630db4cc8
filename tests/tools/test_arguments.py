"""Argument checking: fastjsonschema decides on the enforced part of each tool's schema, and
jsonschema (loaded only for a rejection) names the field; together they give exactly the verdict
jsonschema alone gives on the enforced keywords."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from plasmate_nb.tools.arguments import INTEGER_WIDTHS, check_arguments
from plasmate_nb.tools.catalogue import TOOLS, TOOLS_BY_NAME
from plasmate_nb.trace import InvalidArguments
from plasmate_nb.trace.arguments import SERDE_INTEGERS

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from([2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**64 - 1, 2**64, 5.0])
    | st.floats(allow_nan=False)
    | st.sampled_from([1.0, 0.0])
    | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(inner, max_size=2).map(tuple)  # a Python caller's tuple is not a JSON array
        | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


def values_for(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Any JSON, or for a schema with properties an object over its own field names (so nested
    types and required fields are reached)."""
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        return JSON
    names = sorted(properties)
    objects = st.fixed_dictionaries(
        {}, optional={name: st.deferred(lambda sub=properties[name]: values_for(sub)) for name in names}
    )
    return st.one_of(objects, objects, JSON)


def verdict(tool: str, schema: dict[str, Any], arguments: dict[str, Any]) -> bool:
    """What the check decides: jsonschema alone on types and required fields, never inside items
    (a top-level ``null`` of an optional property without a default counts as absent), then the
    reference's integer widths."""
    if not jsonschema_verdict(schema, arguments):
        return False
    for name, width in INTEGER_WIDTHS.get(tool, {}).items():
        low, high = SERDE_INTEGERS[width]
        if arguments.get(name) is not None and not low <= arguments[name] <= high:
            return False
    return True


def jsonschema_verdict(schema: dict[str, Any], arguments: dict[str, Any]) -> bool:
    required = set(schema.get("required", ()))
    optional = {
        name
        for name, sub in schema.get("properties", {}).items()
        if name not in required and "default" not in sub
    }
    arguments = {name: value for name, value in arguments.items() if not (value is None and name in optional)}
    return not [
        e for e in Draft202012Validator(schema).iter_errors(arguments)
        if e.validator in {"type", "required", "items"} and not any(isinstance(p, int) for p in e.absolute_path)
    ]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_the_fast_check_gives_jsonschemas_verdict_for_every_tool(data):
    tool = data.draw(st.sampled_from(TOOLS))
    arguments = data.draw(values_for(tool.input_schema).filter(lambda v: isinstance(v, dict)))
    try:
        check_arguments(tool, arguments)
        accepted = True
    except InvalidArguments:
        accepted = False
    assert accepted == verdict(tool.name, tool.input_schema, arguments)


def test_a_tuple_is_not_an_array():
    cookies = TOOLS_BY_NAME["set_cookies"]
    with pytest.raises(InvalidArguments) as refused:
        check_arguments(cookies, {"session_id": "s", "cookies": ({},)})
    assert str(refused.value) == "Invalid arguments: invalid type for `cookies`: expected an array"


def test_descriptive_keywords_stay_descriptive():
    # scroll.direction has an enum; anything inside set_cookies' items is the tool's business.
    scroll, cookies = TOOLS_BY_NAME["scroll"], TOOLS_BY_NAME["set_cookies"]
    assert check_arguments(scroll, {"session_id": "s", "direction": "sideways"})
    assert check_arguments(cookies, {"session_id": "s", "cookies": [{"name": 1}, "not an object"]})


@pytest.mark.parametrize(
    ("tool", "name", "width", "fits", "refused"),
    [
        ("scroll", "pixels", "i32", [-(2**31), 0, 2**31 - 1], [-(2**31) - 1, 2**31, 2**63]),
        ("fetch_page", "budget", "usize", [0, 2**64 - 1], [-1, 2**64]),
    ],
)
def test_integers_keep_the_references_widths(tool, name, width, fits, refused):
    """serde refuses an integer its field's type cannot hold; the message names the field and
    the type, never the value. A whole float (an integer to JSON Schema) arrives as an int."""
    spec = TOOLS_BY_NAME[tool]
    base = {"session_id": "s", "url": "http://example.test/"}
    for value in fits:
        assert check_arguments(spec, {**base, name: value})[name] == value
    checked = check_arguments(spec, {**base, name: 5.0})[name]
    assert checked == 5 and type(checked) is int
    for value in refused:
        with pytest.raises(InvalidArguments) as error:
            check_arguments(spec, {**base, name: value})
        assert str(error.value) == f"Invalid arguments: invalid value: integer, expected {width} for `{name}`"


def test_arguments_that_fit_never_load_jsonschema():
    """Loading jsonschema can cost over a second (its format checkers): only a rejection pays it."""
    script = (
        "import sys\n"
        "from plasmate_nb.tools.arguments import check_arguments\n"
        "from plasmate_nb.tools.catalogue import TOOLS_BY_NAME\n"
        "check_arguments(TOOLS_BY_NAME['click'], {'session_id': 's', 'element_id': 'e'})\n"
        "assert 'jsonschema' not in sys.modules, 'loaded for arguments that fit'\n"
        "try:\n"
        "    check_arguments(TOOLS_BY_NAME['click'], {'session_id': 's'})\n"
        "except Exception as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "Invalid arguments: missing field `element_id`"
