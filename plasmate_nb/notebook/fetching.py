"""``fetch``: the SOM of a URL as a read-only ``Page`` (``fetch_page``), no session needed.

Stateless and untraced like every page tool of ``stateless.py``: a fresh visit of the URL.
"""

from __future__ import annotations

from typing import Any

from .._loop import run_sync
from ..client.base import Transport
from ._answers import page_answer
from .page import Page
from .stateless import call_stateless


async def afetch(
    url: str, javascript: bool = True, selector: str | None = None, transport: Transport | None = None
) -> Page:
    """``fetch`` for async code: ``await afetch(url)`` returns the read-only ``Page``.

    >>> page = await pnb.afetch(site.url("/index.html"))       # site = pnb.DemoSite().start()
    """
    arguments: dict[str, Any] = {"url": url, "javascript": javascript}
    if selector is not None:
        arguments["selector"] = selector
    payload = page_answer("fetch_page", await call_stateless(transport, "fetch_page", arguments))
    return Page(payload, transport=transport)


def fetch(
    url: str, javascript: bool = True, selector: str | None = None, transport: Transport | None = None
) -> Page:
    """The SOM of ``url`` as a read-only ``Page`` (``fetch_page``: a fresh visit, no session, untraced).

    ``javascript=False`` reads the HTML without running scripts; ``selector`` narrows the SOM
    (``"#id"``, a role such as ``"link"``, ``"interactive"``). The default transport is the
    embedded engine. Its elements are for reading: no session holds the page, so it cannot
    be clicked. ``page.screenshot()`` shows it when asked.

    >>> page = pnb.fetch(site.url("/index.html"))       # site = pnb.DemoSite().start()
    >>> page.title, page.elements
    """
    return run_sync(afetch(url, javascript, selector, transport))
