"""Fixtures of the notebook-layer tests: a ``transport`` of the tool contract and the site it serves.

Every test here speaks only the tool contract, so the same tests run over any backend:
extend ``BACKENDS`` (and the two fixtures) with the in-process engine, stdio and HTTP.
``site_url`` serves the demo site's pages: ``/index.html``, ``/login.html`` (Email,
Password, Plan select, Remember me checkbox, Sign in button) and ``/welcome.html``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from plasmate_nb.client.base import Transport
from plasmate_nb.client.fake import FakeTransport

BACKENDS = ["fake"]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest_asyncio.fixture
async def transport(backend: str) -> AsyncIterator[Transport]:
    fake = FakeTransport()
    try:
        yield fake
    finally:
        await fake.aclose()


@pytest.fixture
def site_url(transport: Transport) -> str:
    """Base URL (no trailing slash) of the site ``transport``'s engine can open."""
    return transport.base_url  # type: ignore[attr-defined]


@pytest.fixture
def login_url(site_url: str) -> str:
    return f"{site_url}/login.html"
