"""Argument checking against a tool's input schema (the SDK's low-level server does not).

Only presence and JSON types are enforced, as in the reference (an optional property without a
default takes ``null`` as absent, like the reference's ``Option`` fields): ``enum``, ``minimum`` and
``maxLength`` are descriptive (``scroll.direction`` accepts any string and acts as down), and
so is everything *inside* an array's items (``set_cookies`` takes the items that fit and skips
the rest, docs/contract.md#answers). The four closed trace tools are parsed by
``plasmate_nb.trace``'s request parsers, with the reference's own unknown-field and
handle-length messages.
Integers also keep the reference's widths where JSON Schema's ``integer`` says none
(``INTEGER_WIDTHS``: ``scroll.pixels`` is an ``i32``, ``fetch_page.budget`` a ``usize``).
Messages name fields, never echo values: a mistyped secret must not come back in an error.
Their texts are :mod:`plasmate_nb.errors`'s, shared with the trace tools' parsers.

Every call is checked by fastjsonschema against the enforced part of the schema, compiled once per
tool; only a rejection loads jsonschema, whose errors name the field. Importing jsonschema loads
its format checkers, some of which build parsers at import (over a second where they are
installed, as beside JupyterLab), and arguments that fit never need it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from plasmate_nb.errors import invalid_field_type, invalid_type, invalid_value, missing_field
from plasmate_nb.tools.catalogue import TOOLS_BY_NAME, ToolSpec
from plasmate_nb.trace import InvalidArguments
from plasmate_nb.trace.arguments import SERDE_INTEGERS, json_kind

_ENFORCED = frozenset({"type", "required", "items"})
INTEGER_WIDTHS: dict[str, dict[str, str]] = {"scroll": {"pixels": "i32"}, "fetch_page": {"budget": "usize"}}
_JSON_TYPE_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "array": "an array",
    "object": "an object",
}


def check_arguments(spec: ToolSpec, arguments: Any) -> dict[str, Any]:
    """Return ``arguments`` if they fit ``spec``'s schema, else raise :class:`InvalidArguments`."""
    from fastjsonschema import JsonSchemaValueException

    if not isinstance(arguments, dict):
        raise InvalidArguments(invalid_type(json_kind(arguments), "an object"))
    checked = _without_null_options(spec, arguments)
    try:
        _fast_check(spec.name)(checked)
        if _no_tuples(checked):  # fastjsonschema takes a tuple for an array, jsonschema does not
            return _in_range(spec.name, checked)
    except JsonSchemaValueException:
        pass
    errors = [
        e for e in _explaining(spec.name).iter_errors(checked)
        if e.validator in _ENFORCED and not any(isinstance(part, int) for part in e.absolute_path)
    ]  # fmt: skip
    if not errors:  # where the two differ at the edges (a Fraction as a number), jsonschema's verdict stands
        return _in_range(spec.name, checked)
    raise InvalidArguments(_describe(min(errors, key=_error_rank)))


def _in_range(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments``, once each integer with a width fits it, as an ``int`` (the type check has
    passed, and JSON Schema counts ``5.0`` as an integer)."""
    widths = INTEGER_WIDTHS.get(tool, {})
    if not any(arguments.get(name) is not None for name in widths):
        return arguments
    arguments = dict(arguments)
    for name, width in widths.items():
        value = arguments.get(name)
        if value is None:
            continue
        low, high = SERDE_INTEGERS[width]
        if not low <= value <= high:
            raise InvalidArguments(invalid_value("integer", f"{width} for `{name}`"))
        arguments[name] = int(value)
    return arguments


def _without_null_options(spec: ToolSpec, arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` without the ``null`` entries of optional properties that have no default:
    the reference's ``Option`` fields, which read ``null`` as absent. A required or defaulted
    property keeps its ``null``, and the type check refuses it, as serde does."""
    nullable = _null_options(spec.name)
    if not any(value is None and name in nullable for name, value in arguments.items()):
        return arguments
    return {name: value for name, value in arguments.items() if not (value is None and name in nullable)}


@functools.cache
def _null_options(tool: str) -> frozenset[str]:
    schema = TOOLS_BY_NAME[tool].input_schema
    required = set(schema.get("required", ()))
    return frozenset(
        name
        for name, sub in schema.get("properties", {}).items()
        if name not in required and isinstance(sub, dict) and "default" not in sub
    )


def _no_tuples(value: Any) -> bool:
    if isinstance(value, dict):
        return all(_no_tuples(item) for item in value.values())
    if isinstance(value, list):
        return all(_no_tuples(item) for item in value)
    return not isinstance(value, tuple)


def _enforced(schema: dict[str, Any]) -> dict[str, Any]:
    """What of an input schema is enforced: types and required fields, down through object
    properties; nothing inside an array's items."""
    kept: dict[str, Any] = {key: schema[key] for key in ("type", "required") if key in schema}
    if isinstance(schema.get("properties"), dict):
        kept["properties"] = {name: _enforced(sub) for name, sub in schema["properties"].items()}
    return kept


@functools.cache
def _fast_check(tool: str) -> Callable[[Any], Any]:
    import fastjsonschema

    draft07 = {
        **_enforced(TOOLS_BY_NAME[tool].input_schema),
        "$schema": "http://json-schema.org/draft-07/schema#",
    }
    return fastjsonschema.compile(draft07, use_default=False, use_formats=False)


@functools.cache
def _explaining(tool: str) -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(TOOLS_BY_NAME[tool].input_schema)


def _error_rank(error: Any) -> tuple[int, str]:
    # Report missing fields first, like a struct parser that stops at the first hole.
    return (0 if error.validator == "required" else 1), "/".join(map(str, error.absolute_path))


def _describe(error: Any) -> str:
    if error.validator == "required":
        missing = next(name for name in error.validator_value if name not in error.instance)
        return missing_field(missing)
    path = ".".join(str(part) for part in error.absolute_path) or "arguments"
    expected = error.validator_value
    if isinstance(expected, list):
        expected = " or ".join(expected)
    return invalid_field_type(path, _JSON_TYPE_NAMES.get(expected, expected))
