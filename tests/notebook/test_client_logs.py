"""What the notebook's MCP clients let reach a log: at DEBUG, no typed text and no URL path or
query, on either transport (the SDK's HTTP client would quote every message it sends and receives)."""

from __future__ import annotations

import logging

import pytest

import plasmate_nb.notebook as nb
from plasmate_nb.client.base import Transport

MARK = "SECRET-in-logs-7f3a"


@pytest.fixture(params=["stdio", "http"])
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


def test_debug_logs_of_a_session_hold_no_typed_text_and_no_url_query(
    backend: str, transport: Transport, login_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG), nb.Session(transport) as s:
        page = s.open(f"{login_url}?invite={MARK}-url", trace=True)
        s.type_text(page.find(label="Password"), f"{MARK}-typed")
    if backend == "http":  # the capture works: the HTTP client logs each request's steps at DEBUG
        assert any(record.levelno == logging.DEBUG for record in caplog.records)
    leaked = [record.getMessage()[:120] for record in caplog.records if MARK in record.getMessage()]
    assert leaked == []
