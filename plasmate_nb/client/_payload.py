"""Turning a tool result's content into the payload every backend returns."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from plasmate_nb.client.base import ServerAnswerError, ToolError, parse_payload
from plasmate_nb.tools.catalogue import TEXT_ANSWER_TOOLS


@dataclass(frozen=True, repr=False)
class ImagePayload:
    """The payload of a result that is only an image block (``screenshot_page``): decoded bytes and MIME type."""

    data: bytes
    mime_type: str

    def __repr__(self) -> str:
        return f"ImagePayload(mime_type={self.mime_type!r}, bytes={len(self.data)})"


def payload_or_raise(
    tool: str, text: str, is_error: bool, images: Sequence[tuple[str, str]] = (), has_text: bool = True
) -> Any:
    """The parsed payload of a result; a :class:`ToolError` when it has ``isError``. A tool that
    answers plain text (``TEXT_ANSWER_TOOLS``) has its text as it is.

    ``images`` are the result's image blocks as ``(base64 data, MIME type)``; a result with no
    text block and an image (``screenshot_page``) has the first image as an :class:`ImagePayload`.
    """
    if is_error:
        raise ToolError(tool, text)
    if images and not has_text:
        data, mime_type = images[0]
        try:
            decoded = base64.b64decode(data)
        except binascii.Error:
            decoded = None
        if decoded is None:  # raised outside the except block: no chained error quoting the data
            raise ServerAnswerError(tool, "the image block's data", "expected base64, got other text")
        return ImagePayload(decoded, mime_type)
    return text if tool in TEXT_ANSWER_TOOLS else parse_payload(text)
