"""Short tracebacks for the mistakes a notebook user makes: their call, the cause, a hint.

An ordinary mistake (a stale element id, an option the page lacks, a refused token) used to
print some forty lines of plasmate_nb's and asyncio's frames around the one useful line.
:class:`HintedError` is the base of the errors a user causes: it carries a one-line ``hint``
(a PEP 678 note, so plain Python, pytest and IPython all print it under the message), and
IPython renders it through ``_render_traceback_`` with the user's frames only, cut at the first
plasmate_nb frame. Errors that are not a user's (bugs) keep their whole traceback.
"""

from __future__ import annotations

import traceback
import types
from typing import Self

_PACKAGE = __name__.partition(".")[0]
HINT_PREFIX = "hint: "


def is_package_frame(frame: types.FrameType) -> bool:
    """Whether ``frame`` runs code of this package."""
    module = frame.f_globals.get("__name__", "")
    return isinstance(module, str) and (module == _PACKAGE or module.startswith(_PACKAGE + "."))


def user_frames(tb: types.TracebackType | None) -> types.TracebackType | None:
    """The traceback ``tb`` up to (not including) its first frame in this package."""
    kept: list[types.TracebackType] = []
    while tb is not None and not is_package_frame(tb.tb_frame):
        kept.append(tb)
        tb = tb.tb_next
    rebuilt: types.TracebackType | None = None
    for entry in reversed(kept):
        rebuilt = types.TracebackType(rebuilt, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return rebuilt


class HintedError(Exception):
    """An error a user caused, with a ``hint`` saying what to do; shown without plasmate_nb's frames.

    >>> try:
    ...     s.click("e_doesnotexist")
    ... except HintedError as error:
    ...     print(error.hint)
    """

    hint: str | None = None

    def with_hint(self, hint: str | None) -> Self:
        """Set the hint (once; later calls do nothing) and return the error.

        >>> raise ToolError("click", "Element not found: e_1").with_hint("pick an id from page.elements")
        """
        if hint and self.hint is None:
            self.hint = hint
            self.add_note(HINT_PREFIX + hint)
        return self

    def _render_traceback_(self) -> list[str]:
        """IPython's hook: the user's frames and the message with its hint, no internal frames."""
        tb = user_frames(self.__traceback__)
        try:
            from IPython import get_ipython
        except ImportError:
            shell = None
        else:
            shell = get_ipython()
        if shell is None:
            return traceback.format_exception(type(self), self, tb)
        rendered: list[str] = shell.InteractiveTB.structured_traceback(type(self), self, tb)
        return rendered
