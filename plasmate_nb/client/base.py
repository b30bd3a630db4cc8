"""The tool contract every backend speaks: ``call(tool, arguments) -> payload | ToolError``.

The notebook layer sees nothing but this: the embedded engine and an MCP server over stdio or
HTTP are interchangeable behind ``Transport``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from plasmate_nb import errors
from plasmate_nb._tracebacks import HintedError

#: ``callback(session_id, tool)``: called after every tool call made through an engine.
CallListener = Callable[[str | None, str], None]


class ToolError(HintedError):
    """A tool answered with an error (``isError: true``); ``tool`` and ``message`` say which and why.

    ``message`` (and ``str(error)``) is the tool's error text exactly as the contract words it;
    the notebook layer adds a ``hint`` on what to do, shown under it.

    >>> try:
    ...     s.click("e_missing")
    ... except ToolError as error:
    ...     print(error.tool, error.message)     # click Element not found: e_missing
    ...     print(error.hint)                    # use an id of the current page (...)
    """

    def __init__(self, tool: str, message: str) -> None:
        super().__init__(message)
        self.tool = tool
        self.message = message

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}(tool={self.tool!r}, message={self.message!r})"


class ServerAnswerError(ToolError):
    """A server answered ``tool`` with something the tool contract does not allow; nothing of it was used.

    A wrong type, a missing field, counters that disagree: a server that is not
    Plasmate-compatible there, or a bug in it.

    ``path`` is where in the answer: a JSON path (``$.regions[0].elements[3].role``, ``$`` for
    the whole; ``$.changes, applied: $.regions[…]`` in a page rebuilt from a ``changes`` answer),
    or ``the image block's data``. The message says what the contract has there and what came
    instead, never the value (it may be page text). A ``ToolError``, so code catching those
    catches this too.

    >>> try:
    ...     s.click("e_1")
    ... except ServerAnswerError as error:
    ...     print(error.tool, error.path)      # click $.regions[0].elements[3].role
    """

    def __init__(self, tool: str, path: str, problem: str) -> None:
        super().__init__(tool, errors.unexpected_answer(tool, path, problem))
        self.path = path
        self.with_hint(errors.UNEXPECTED_ANSWER_HINT)


@runtime_checkable
class Transport(Protocol):
    """A backend of the tool contract: ``await call(tool, arguments)`` returns the payload.

    Implemented by the embedded engine's transport, ``StdioTransport`` and ``HttpTransport``;
    ``Session(transport)`` accepts any of them.

    >>> s = Session(HttpTransport("http://127.0.0.1:9272/mcp", token="..."))
    """

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """Run ``tool`` and return its payload: the parsed JSON of the result's text (or the text).

        Raises ``ToolError`` when the result has ``isError: true``.

        >>> await transport.call("session_status", {})
        """
        ...

    async def list_tools(self) -> list[dict[str, Any]]:
        """The server's tools as ``tools/list`` describes them (name, description, inputSchema, ...).

        >>> [tool["name"] for tool in await transport.list_tools()]
        """
        ...

    def subscribe(self, callback: CallListener) -> Callable[[], None]:
        """Call ``callback(session_id, tool)`` after each call this transport hears; returns the unsubscriber.

        The embedded engine's transport hears every client's calls; a remote server's hears
        only the calls made through it. ``callback`` runs on the calling thread.

        >>> unsubscribe = transport.subscribe(lambda session_id, tool: print(tool))
        """
        ...

    async def aclose(self) -> None:
        """Release the connection (a no-op for the shared embedded engine).

        >>> await transport.aclose()
        """
        ...


def parse_payload(text: str) -> Any:
    """The payload of a text content block: its JSON value, or the text itself."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # nested deeper than Python's reader goes: no JSON either
        return text


def session_id_of(arguments: Any) -> str | None:
    """The ``session_id`` a call names, if it names one as a string."""
    if isinstance(arguments, dict):
        value = arguments.get("session_id")
        if isinstance(value, str):
            return value
    return None


class CallListeners:
    """A thread-safe set of ``CallListener``s, for backends that implement ``subscribe``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._callbacks: list[CallListener] = []

    def add(self, callback: CallListener) -> Callable[[], None]:
        with self._lock:
            self._callbacks.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._callbacks:
                    self._callbacks.remove(callback)

        return unsubscribe

    def notify(self, session_id: str | None, tool: str) -> None:
        with self._lock:
            callbacks = list(self._callbacks)
        for callback in callbacks:
            try:
                callback(session_id, tool)
            except Exception:  # a broken observer must never break the tool call
                continue
