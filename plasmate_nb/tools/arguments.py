"""Argument checking against a tool's input schema (the SDK's low-level server does not).

Only presence and JSON types are enforced, as in the reference: ``enum``, ``minimum`` and
``maxLength`` are descriptive (``scroll.direction`` accepts any string and acts as down), and
so is everything *inside* an array's items (``set_cookies`` takes the items that fit and skips
the rest, docs/contract.md#answers). The four closed trace tools are parsed by
``plasmate_nb.trace``'s request parsers, with the reference's own unknown-field and
handle-length messages.
Messages name fields, never echo values: a mistyped secret must not come back in an error.
Their texts are :mod:`plasmate_nb.errors`'s, shared with the trace tools' parsers.
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator

from plasmate_nb.errors import invalid_field_type, invalid_type, missing_field
from plasmate_nb.tools.catalogue import TOOLS, ToolSpec
from plasmate_nb.trace import InvalidArguments
from plasmate_nb.trace.arguments import json_kind

_ENFORCED = frozenset({"type", "required", "items"})
_JSON_TYPE_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "array": "an array",
    "object": "an object",
}
_VALIDATORS = {tool.name: Draft202012Validator(tool.input_schema) for tool in TOOLS}


def check_arguments(spec: ToolSpec, arguments: Any) -> dict[str, Any]:
    """Return ``arguments`` if they fit ``spec``'s schema, else raise :class:`InvalidArguments`."""
    if not isinstance(arguments, dict):
        raise InvalidArguments(invalid_type(json_kind(arguments), "an object"))
    errors = [
        e for e in _VALIDATORS[spec.name].iter_errors(arguments)
        if e.validator in _ENFORCED and not any(isinstance(part, int) for part in e.absolute_path)
    ]  # fmt: skip
    if not errors:
        return arguments
    raise InvalidArguments(_describe(min(errors, key=_error_rank)))


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
