"""Closed-schema parsing of the trace tools' arguments: serde wording, no values echoed."""

from __future__ import annotations

import pytest

from plasmate_nb.trace import InvalidArguments, ReplayRequest, parse_replay_request, parse_trace_handle

SID = "0b0e6b9b-6a1b-4b8e-9a1e-1f1d2c3b4a5e"
TID = "5d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6"
SECRET = "S3cr3t-value-never-echoed"


def error_of(call, arguments) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidArguments) as caught:
        call(arguments)
    return str(caught.value)


# -- trace_status / trace_export / trace_clear -------------------------------------------


def test_trace_handle_accepts_exactly_session_id() -> None:
    assert parse_trace_handle({"session_id": SID}) == SID


def test_trace_handle_rejects_unknown_fields() -> None:
    assert error_of(parse_trace_handle, {"session_id": SID, "unexpected": 1}) == (
        "Invalid arguments: unknown field `unexpected`, expected `session_id`"
    )


def test_trace_handle_reports_the_first_offending_entry_in_order() -> None:
    assert "unknown field `x`" in error_of(parse_trace_handle, {"x": 1, "session_id": 5})
    assert "invalid type" in error_of(parse_trace_handle, {"session_id": 5, "x": 1})


@pytest.mark.parametrize("arguments", [{}, None])
def test_trace_handle_missing_session_id(arguments: object) -> None:
    assert error_of(parse_trace_handle, arguments) == "Invalid arguments: missing field `session_id`"


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (5, "integer"),
        (1.5, "floating point"),
        (True, "boolean"),
        (None, "null"),
        ([SID], "sequence"),
        ({}, "map"),
    ],
)
def test_trace_handle_wrong_type(value: object, kind: str) -> None:
    assert error_of(parse_trace_handle, {"session_id": value}) == (
        f"Invalid arguments: invalid type: {kind}, expected a string"
    )


@pytest.mark.parametrize("arguments", [[], "session", 7])
def test_trace_handle_non_object_arguments(arguments: object) -> None:
    assert error_of(parse_trace_handle, arguments).startswith("Invalid arguments: invalid type: ")


def test_trace_handle_longer_than_64_bytes_is_rejected() -> None:
    assert parse_trace_handle({"session_id": "s" * 64}) == "s" * 64
    assert (
        error_of(parse_trace_handle, {"session_id": "s" * 65})
        == "Invalid arguments: session_id exceeds 64 bytes"
    )


def test_trace_handle_length_counts_utf8_bytes() -> None:
    assert parse_trace_handle({"session_id": "é" * 32}) == "é" * 32  # 64 bytes
    assert error_of(parse_trace_handle, {"session_id": "é" * 32 + "x"}) == (
        "Invalid arguments: session_id exceeds 64 bytes"
    )
    assert (
        error_of(parse_trace_handle, {"session_id": "€" * 22})
        == "Invalid arguments: session_id exceeds 64 bytes"
    )


def test_trace_handle_errors_never_echo_values() -> None:
    for arguments in ({"session_id": SECRET * 10}, {"session_id": [SECRET]}, {"session_id": {"k": SECRET}}):
        assert SECRET not in error_of(parse_trace_handle, arguments)


def test_trace_handle_cuts_a_huge_unknown_field_name() -> None:
    message = error_of(parse_trace_handle, {"k" * 10_000: 1})
    assert message == "Invalid arguments: unknown field `" + "k" * 64 + "…`, expected `session_id`"


# -- replay_validate -----------------------------------------------------------------------


def test_replay_request_parses_all_fields() -> None:
    request = parse_replay_request({"session_id": SID, "trace_id": TID, "sequence": 3, "confirmed": True})
    assert request == ReplayRequest(SID, TID, 3, True)


def test_replay_request_confirmed_defaults_to_false() -> None:
    assert parse_replay_request({"session_id": SID, "trace_id": TID, "sequence": 3}).confirmed is False


def test_replay_request_accepts_sequence_zero_and_u64_max() -> None:
    assert parse_replay_request({"session_id": SID, "trace_id": TID, "sequence": 0}).sequence == 0
    assert (
        parse_replay_request({"session_id": SID, "trace_id": TID, "sequence": 2**64 - 1}).sequence
        == 2**64 - 1
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (True, "Invalid arguments: invalid type: boolean, expected u64"),
        (False, "Invalid arguments: invalid type: boolean, expected u64"),
        (3.0, "Invalid arguments: invalid type: floating point, expected u64"),
        ("3", "Invalid arguments: invalid type: string, expected u64"),
        (None, "Invalid arguments: invalid type: null, expected u64"),
        (-1, "Invalid arguments: invalid value: integer, expected u64"),
        (2**64, "Invalid arguments: invalid value: integer, expected u64"),
    ],
)
def test_replay_request_sequence_must_be_a_u64(value: object, message: str) -> None:
    assert error_of(parse_replay_request, {"session_id": SID, "trace_id": TID, "sequence": value}) == message


@pytest.mark.parametrize("value", [1, "true", None])
def test_replay_request_confirmed_must_be_a_boolean(value: object) -> None:
    arguments = {"session_id": SID, "trace_id": TID, "sequence": 1, "confirmed": value}
    assert error_of(parse_replay_request, arguments).endswith("expected a boolean")


def test_replay_request_rejects_unknown_fields() -> None:
    arguments = {"session_id": SID, "trace_id": TID, "sequence": 1, "x": 1}
    assert error_of(parse_replay_request, arguments) == (
        "Invalid arguments: unknown field `x`, expected one of `session_id`, `trace_id`, `sequence`, `confirmed`"
    )


@pytest.mark.parametrize(
    ("arguments", "missing"),
    [
        ({}, "session_id"),
        ({"sequence": 1, "trace_id": TID}, "session_id"),
        ({"session_id": SID, "sequence": 1}, "trace_id"),
        ({"session_id": SID, "trace_id": TID}, "sequence"),
    ],
)
def test_replay_request_missing_fields_in_declaration_order(arguments: dict, missing: str) -> None:
    assert error_of(parse_replay_request, arguments) == f"Invalid arguments: missing field `{missing}`"


@pytest.mark.parametrize("field", ["session_id", "trace_id"])
def test_replay_request_over_long_handles_are_rejected(field: str) -> None:
    arguments = {"session_id": SID, "trace_id": TID, "sequence": 1, field: "h" * 65}
    assert (
        error_of(parse_replay_request, arguments)
        == "Invalid arguments: session_id or trace_id exceeds 64 bytes"
    )
    arguments[field] = "h" * 64
    assert parse_replay_request(arguments).sequence == 1


@pytest.mark.parametrize("field", ["session_id", "trace_id"])
def test_replay_request_handles_must_be_strings(field: str) -> None:
    arguments = {"session_id": SID, "trace_id": TID, "sequence": 1, field: 7}
    assert (
        error_of(parse_replay_request, arguments)
        == "Invalid arguments: invalid type: integer, expected a string"
    )


def test_replay_request_errors_never_echo_values() -> None:
    for arguments in (
        {"session_id": SECRET * 5, "trace_id": TID, "sequence": 1},
        {"session_id": SID, "trace_id": SECRET * 5, "sequence": 1},
        {"session_id": SID, "trace_id": TID, "sequence": SECRET},
        {"session_id": SID, "trace_id": TID, "sequence": -12345678},
        {"session_id": SID, "trace_id": TID, "sequence": 1, "confirmed": SECRET},
    ):
        message = error_of(parse_replay_request, arguments)
        assert SECRET not in message and "12345678" not in message


def test_invalid_arguments_is_an_exception_whose_str_is_the_message() -> None:
    error = InvalidArguments("Invalid arguments: missing field `session_id`")
    assert isinstance(error, Exception)
    assert str(error) == "Invalid arguments: missing field `session_id`"
    assert error.args == ("Invalid arguments: missing field `session_id`",)


def test_replay_request_is_frozen() -> None:
    request = ReplayRequest(SID, TID, 1)
    with pytest.raises(AttributeError):
        request.sequence = 2  # type: ignore[misc]
