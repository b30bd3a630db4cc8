"""Argument parsing for the stateless page tools, in the reference's (serde's) wording
(docs/contract.md#stateless-tool-arguments).

Each tool has a parameter struct: fields in declaration order, each a string, a boolean or an
unsigned integer (``usize``/``u32``/``u64``), required, optional (``null`` accepted, meaning
absent) or defaulted (``null`` rejected). Entries are checked in the order they arrive; an
unknown key of a closed tool fails at once (``unknown field `x`, expected `url` or
`timeout_ms```), an open tool ignores it; missing required fields are reported after all
entries. As everywhere in this project, messages name JSON kinds and fields, never values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from plasmate_nb.errors import invalid_type, invalid_value, missing_field, unknown_field
from plasmate_nb.trace import InvalidArguments
from plasmate_nb.trace.arguments import SERDE_INTEGERS, json_kind

Kind = Literal["string", "boolean", "usize", "u32", "u64"]
_REQUIRED = object()
_OPTIONAL = object()
_EXPECTED = {"string": "a string", "boolean": "a boolean"}


@dataclass(frozen=True)
class Field:
    name: str
    kind: Kind
    default: Any = _REQUIRED  # _REQUIRED, _OPTIONAL (an Option: null or absent is None) or a value


def required(name: str, kind: Kind) -> Field:
    return Field(name, kind)


def optional(name: str, kind: Kind) -> Field:
    return Field(name, kind, _OPTIONAL)


def defaulted(name: str, kind: Kind, value: Any) -> Field:
    return Field(name, kind, value)


@dataclass(frozen=True)
class Params:
    """A tool's parameter struct: ``struct`` is its name in ``expected struct <name>``."""

    struct: str
    fields: tuple[Field, ...]
    closed: bool = False

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    def parse(self, arguments: Any) -> dict[str, Any]:
        """The arguments with defaults filled in; raises :class:`InvalidArguments`."""
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, Mapping):
            raise InvalidArguments(invalid_type(json_kind(arguments), f"struct {self.struct}"))
        by_name = {f.name: f for f in self.fields}
        parsed: dict[str, Any] = {}
        for name, value in arguments.items():
            spec = by_name.get(name)
            if spec is None:
                if self.closed:
                    raise InvalidArguments(unknown_field(name, self.names))
                continue
            parsed[name] = _convert(spec, value)
        for spec in self.fields:
            if spec.name in parsed:
                continue
            if spec.default is _REQUIRED:
                raise InvalidArguments(missing_field(spec.name))
            parsed[spec.name] = None if spec.default is _OPTIONAL else spec.default
        return {f.name: parsed[f.name] for f in self.fields}


def _convert(spec: Field, value: Any) -> Any:
    if value is None and spec.default is _OPTIONAL:
        return None
    if spec.kind in _EXPECTED:
        wanted = str if spec.kind == "string" else bool
        if not isinstance(value, wanted):
            raise InvalidArguments(invalid_type(json_kind(value), _EXPECTED[spec.kind]))
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArguments(invalid_type(json_kind(value), spec.kind))
    low, high = SERDE_INTEGERS[spec.kind]
    if not low <= value <= high:
        raise InvalidArguments(invalid_value("integer", spec.kind))
    return value


EXTRACT_TEXT = Params(
    "ExtractTextParams",
    (required("url", "string"), optional("max_chars", "usize"), optional("selector", "string")),
)
EXTRACT_LINKS = Params("ExtractLinksParams", (required("url", "string"), optional("selector", "string")))
ARD_DISCOVER = Params(
    "ArdDiscoverParams", (required("url", "string"), defaulted("timeout_ms", "u64", 10_000)), closed=True
)
CRAWL_POLICY = Params(
    "CrawlPolicyParams",
    (
        required("url", "string"),
        defaulted("product_token", "string", "Plasmate"),
        defaulted("timeout_ms", "u64", 10_000),
    ),
    closed=True,
)
INSPECT_PAGE = Params(
    "InspectPageParams",
    (
        required("url", "string"),
        defaulted("javascript", "boolean", False),
        optional("selector", "string"),
        defaulted("visual_mode", "string", "auto"),
        defaulted("width", "u32", 1280),
        defaulted("height", "u32", 720),
        defaulted("screenshot_timeout_ms", "u64", 5000),
    ),
    closed=True,
)
SCREENSHOT_PAGE = Params(
    "ScreenshotPageParams",
    (
        required("url", "string"),
        defaulted("width", "u32", 1280),
        defaulted("height", "u32", 720),
        defaulted("format", "string", "png"),
    ),
)
