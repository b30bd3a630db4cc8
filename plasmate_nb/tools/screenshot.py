"""``screenshot_page``: a viewport screenshot of a URL as an MCP image block
(docs/contract.md#screenshot_page).

The page is loaded like every stateless tool (temporary context, scripts on, the egress gate for
every byte) with a ``width`` × ``height`` viewport, then captured by Chromium through Playwright as
PNG, JPEG or WebP: the image's bytes are in the format its MIME type names.
"""

from __future__ import annotations

import base64
from typing import Any, Literal

from plasmate_nb.browser import ActionError, Engine
from plasmate_nb.browser.temporary import CaptureFailed, temporary_page
from plasmate_nb.errors import SCREENSHOT_TIMED_OUT, screenshot_failed
from plasmate_nb.tools.stateless_arguments import SCREENSHOT_PAGE

CAPTURE_TIMEOUT_S = 15.0
MIN_SIDE, MAX_SIDE = 1, 4096  # viewport sides are clamped to this range (pixels)
MIME_TYPES = {"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp"}


def image_format(name: str) -> Literal["png", "jpeg", "webp"]:
    """``png``, ``jpeg`` or ``webp`` for a requested format, case-insensitive (``jpg`` is jpeg;
    anything else is png)."""
    lowered = name.lower()
    if lowered in ("jpeg", "jpg"):
        return "jpeg"
    return "webp" if lowered == "webp" else "png"


def viewport_side(value: int) -> int:
    return max(MIN_SIDE, min(MAX_SIDE, value))


async def capture(
    engine: Engine,
    url: str,
    *,
    width: int,
    height: int,
    fmt: Literal["png", "jpeg", "webp"],
    javascript: bool = True,
    timeout: float = CAPTURE_TIMEOUT_S,
) -> bytes:
    """The viewport of ``url`` as image bytes. Raises ActionError (``Failed to fetch …``) or CaptureFailed."""
    async with temporary_page(
        engine, url, javascript=javascript, viewport=(viewport_side(width), viewport_side(height))
    ) as loaded:
        return await loaded.screenshot(fmt, timeout)


async def screenshot_page(engine: Engine, arguments: Any) -> tuple[str, str]:
    """``(base64 data, MIME type)`` of the screenshot."""
    parsed = SCREENSHOT_PAGE.parse(arguments)
    fmt = image_format(parsed["format"])
    try:
        data = await capture(engine, parsed["url"], width=parsed["width"], height=parsed["height"], fmt=fmt)
    except CaptureFailed as failure:
        inner = SCREENSHOT_TIMED_OUT if failure.timed_out else failure.args[0]
        raise ActionError(screenshot_failed(inner)) from None
    return base64.b64encode(data).decode("ascii"), MIME_TYPES[fmt]
