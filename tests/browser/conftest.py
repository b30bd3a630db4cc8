"""Shared pieces of the browser-engine tests: the demo site, and element lookup in a SOM."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from plasmate_nb.demo_site import DemoSite
from plasmate_nb.trace.som_walk import iter_elements


@pytest.fixture(scope="session")
def demo() -> Iterator[DemoSite]:
    with DemoSite() as site:
        yield site


def element(session: Any, **match: Any) -> dict[str, Any]:
    """The first SOM element of ``session`` whose fields equal ``match`` (e.g. ``html_id="email"``)."""
    for candidate in iter_elements(session.som.data):
        if all(candidate.get(key) == value for key, value in match.items()):
            return candidate
    raise AssertionError(f"no SOM element with {match}")


def eid(session: Any, html_id: str) -> str:
    return element(session, html_id=html_id)["id"]


def attrs(session: Any, html_id: str) -> dict[str, Any]:
    return element(session, html_id=html_id).get("attrs") or {}
