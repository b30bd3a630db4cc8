"""``Cookies``: what get_cookies returned, readable by indexing, never shown in a repr.

Traces never contain cookies, so displays of them show only how many there are.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

from ._html import box, counted


class Cookies(Sequence[dict[str, Any]]):
    """The session's cookies as a sequence of dicts; reprs show only the count.

    >>> jar = s.cookies()
    >>> len(jar), [c["name"] for c in jar]
    """

    def __init__(self, cookies: list[dict[str, Any]]) -> None:
        self._cookies = cookies

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        return self._cookies[index]

    def __len__(self) -> int:
        return len(self._cookies)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self._cookies)

    def _message(self) -> str:
        count = counted(len(self), "cookie")
        return f"{count} (names, values and domains are not displayed; index or iterate to read them)"

    def __repr__(self) -> str:
        return f"Cookies({self._message()})"

    def _repr_html_(self) -> str:
        return box("Cookies", f"<div>{self._message()}</div>")
