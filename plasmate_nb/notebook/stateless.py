"""The stateless page tools in the notebook: ``Screenshot`` and the calls behind it and ``fetch``.

``screenshot_page``, ``fetch_page``, ``extract_text`` and ``extract_links`` take a URL, load
it in a fresh temporary browser context and keep nothing: they show the page as a first
visit sees it (no cookies, no typed values, no clicks of a live session). They are untraced:
calling them never changes a session's trace.

Privacy: a ``Screenshot`` holds only pixels (shown inline, never put into a trace) and no URL;
a fetched ``Page`` shows its origin, never the path, query or fragment.
"""

from __future__ import annotations

import base64
import html
import struct
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .. import errors
from ..client.base import ServerAnswerError, ToolError, Transport
from ..trace.origin import DEFAULT_PORTS, scheme, userinfo_and_rest

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
REDACTED = "[redacted]"
THUMBNAIL = (640, 400)  # viewport of Page.screenshot(): small enough to show inline


class Screenshot:
    """A screenshot: image ``data`` (bytes) and its ``mime_type``; shows inline in Jupyter.

    It holds the pixels only, not the URL they came from.

    >>> shot = s.screenshot()          # the last expression of a cell: shows the image
    >>> shot.width, shot.height        # from the PNG header
    >>> shot.save("page.png")
    """

    def __init__(self, data: bytes, mime_type: str = "image/png") -> None:
        self.data = data
        self.mime_type = mime_type

    @property
    def size(self) -> tuple[int, int] | None:
        """``(width, height)`` in pixels read from the PNG header; None for other formats.

        >>> s.screenshot().size        # e.g. (1280, 720)
        """
        if self.data[:8] != PNG_MAGIC or self.data[12:16] != b"IHDR" or len(self.data) < 24:
            return None  # not a PNG, or its header cut short
        width, height = struct.unpack(">II", self.data[16:24])
        return width, height

    @property
    def width(self) -> int | None:
        """Width in pixels (PNG only).

        >>> s.screenshot(800, 600).width
        800
        """
        return self.size[0] if self.size else None

    @property
    def height(self) -> int | None:
        """Height in pixels (PNG only).

        >>> s.screenshot(800, 600).height
        600
        """
        return self.size[1] if self.size else None

    def save(self, path: str | Path) -> Path:
        """Write the image bytes to ``path``; returns the path.

        >>> s.screenshot().save("login.png")
        """
        target = Path(path)
        target.write_bytes(self.data)
        return target

    def _repr_png_(self) -> bytes | None:
        return self.data if self.mime_type == "image/png" else None

    def _repr_jpeg_(self) -> bytes | None:
        return self.data if self.mime_type == "image/jpeg" else None

    def _repr_html_(self) -> str:
        encoded = base64.b64encode(self.data).decode("ascii")
        mime = html.escape(self.mime_type, quote=True)
        return f'<img src="data:{mime};base64,{encoded}" style="max-width:100%" alt="screenshot">'

    def __repr__(self) -> str:
        size = f"{self.size[0]}x{self.size[1]}, " if self.size else ""
        return f"Screenshot({self.mime_type}, {size}{len(self.data)} bytes)"


def url_secrets(url: Any) -> list[str]:
    """The parts of ``url`` beyond its origin, which traces replace by a keyed fingerprint."""
    if not isinstance(url, str):
        return []
    parts: list[str] = [url]
    try:
        split = urlsplit(url)
    except ValueError:
        return parts
    userinfo = split.netloc.rpartition("@")[0]
    beyond = [userinfo, split.path, split.query, split.fragment]
    if scheme(url) in DEFAULT_PORTS:  # where urlsplit would take a path for the host
        read_userinfo, read_rest = userinfo_and_rest(url)
        beyond += [read_userinfo, read_rest.lstrip("/\\").strip("?#")]
    if not any(p and p != "/" for p in beyond):
        return []  # an origin alone is no secret: messages name it (``http://host/…``)
    parts += [*beyond, url.partition("#")[0]]
    return [p for p in parts if p and p != "/"]


def scrubbed(error: ToolError, secrets: Iterable[str]) -> ToolError:
    """``error`` with every secret replaced by ``[redacted]`` (an answer of the wrong shape quotes none)."""
    if isinstance(error, ServerAnswerError):
        return error
    message = error.message
    for secret in sorted({s for s in secrets if isinstance(s, str) and s}, key=len, reverse=True):
        message = message.replace(secret, REDACTED)
    return ToolError(error.tool, message)


async def _default_transport(transport: Transport | None) -> Transport:
    if transport is not None:
        return transport
    from ..client.embedded import embedded_transport  # lazy: starts nothing until first use

    return await embedded_transport()


async def call_stateless(transport: Transport | None, tool: str, arguments: dict[str, Any]) -> Any:
    """Call a stateless page tool; a tool error comes back with the URL's path and query scrubbed."""
    resolved = await _default_transport(transport)
    failure: ToolError | None = None
    try:
        return await resolved.call(tool, arguments)
    except ToolError as error:
        failure = scrubbed(error, url_secrets(arguments.get("url")))
    raise failure  # outside the except block: no chained original holding the URL


async def take_screenshot(
    transport: Transport | None, url: str, width: int | None = None, height: int | None = None
) -> Screenshot:
    """A PNG ``Screenshot`` of ``url`` through ``screenshot_page`` (a fresh visit of the page)."""
    from ..client._payload import ImagePayload
    from ._answers import kind

    arguments: dict[str, Any] = {"url": url, "format": "png"}
    if width is not None:
        arguments["width"] = width
    if height is not None:
        arguments["height"] = height
    payload = await call_stateless(transport, "screenshot_page", arguments)
    if isinstance(payload, dict) and payload.get("error") == errors.NO_SCREENSHOTS_CODE:
        # The reference engine without Chrome answers this (a success, with the SOM instead).
        raise ToolError("screenshot_page", errors.NO_SCREENSHOTS).with_hint(errors.NO_SCREENSHOTS_HINT)
    if not isinstance(payload, ImagePayload):
        raise ServerAnswerError("screenshot_page", "$", f"expected an image, got {kind(payload)}")
    return Screenshot(payload.data, payload.mime_type)
