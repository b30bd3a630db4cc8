"""URL parsing for the report tools (``crawl_policy``, ``ard_discover``): a URL standard-like parse
with the parser's error words, and the serialisation reports show.

Python's ``urlsplit`` accepts almost anything; the reference's URL parser rejects relative
references, bad ports, broken IPv6 literals and empty hosts of http(s) URLs. This module turns
those cases into the same reasons (:mod:`plasmate_nb.errors`), and serialises a parsed URL the way
that parser does: scheme and host lower-cased, the default port dropped, an empty path written
``/``, unsafe characters percent-encoded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from plasmate_nb.errors import URL_EMPTY_HOST, URL_INVALID_IPV6, URL_INVALID_PORT, URL_RELATIVE_WITHOUT_BASE

DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}
SPECIAL = frozenset(DEFAULT_PORTS) | {"file"}
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"
_QUERY_SAFE = _PATH_SAFE + "?"


class UrlError(ValueError):
    """``str()`` is the parser's reason (an ErrorText)."""


@dataclass(frozen=True)
class WebUrl:
    scheme: str
    username: str | None
    password: str | None
    host: str  # lower-cased; IPv6 without brackets; "" when there is none
    port: int | None  # None when absent or the scheme's default
    path: str
    query: str | None
    fragment: str | None

    @property
    def has_credentials(self) -> bool:
        return bool(self.username) or bool(self.password)

    @property
    def effective_port(self) -> int:
        return self.port if self.port is not None else DEFAULT_PORTS.get(self.scheme, 0)

    @property
    def authority(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host + (f":{self.port}" if self.port is not None else "")

    @property
    def origin(self) -> str:
        """``scheme://host[:port]``."""
        return f"{self.scheme}://{self.authority}"

    def same_origin(self, other: WebUrl) -> bool:
        return (self.scheme, self.host, self.effective_port) == (
            other.scheme,
            other.host,
            other.effective_port,
        )

    def serialize(self, *, fragment: bool = True) -> str:
        userinfo = ""
        if self.has_credentials:
            userinfo = (self.username or "") + (f":{self.password}" if self.password else "") + "@"
        text = f"{self.scheme}://{userinfo}{self.authority}{self.path}"
        if self.query is not None:
            text += "?" + self.query
        if fragment and self.fragment is not None:
            text += "#" + self.fragment
        return text

    def with_path(self, path: str) -> WebUrl:
        """This URL's origin with ``path``, no query, no fragment."""
        return WebUrl(self.scheme, None, None, self.host, self.port, path, None, None)


def parse_web_url(text: str) -> WebUrl:
    """Parse an absolute hierarchical URL; raise :class:`UrlError` with the parser's reason."""
    if not _SCHEME.match(text.strip()):
        raise UrlError(URL_RELATIVE_WITHOUT_BASE)
    try:
        parts = urlsplit(text.strip())
    except ValueError:
        raise UrlError(URL_INVALID_IPV6) from None
    scheme = parts.scheme.lower()
    netloc = parts.netloc
    if "[" in netloc or "]" in netloc:
        bracketed = re.search(r"\[([^\]]*)\]", netloc)
        if bracketed is None or not re.fullmatch(r"[0-9A-Fa-f:.]+", bracketed.group(1)):
            raise UrlError(URL_INVALID_IPV6)
    try:
        port = parts.port
    except ValueError:
        raise UrlError(URL_INVALID_PORT) from None
    host = (parts.hostname or "").lower()
    if not host and scheme in SPECIAL and scheme != "file":
        raise UrlError(URL_EMPTY_HOST)
    if port is not None and port == DEFAULT_PORTS.get(scheme):
        port = None
    path = quote(parts.path, safe=_PATH_SAFE) or ("/" if scheme in SPECIAL else "")
    query = quote(parts.query, safe=_QUERY_SAFE) if ("?" in text) else None
    fragment = parts.fragment if "#" in text else None
    return WebUrl(scheme, parts.username, parts.password, host, port, path, query, fragment)
