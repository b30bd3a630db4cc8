"""What the HTTP client libraries may write to a log: where a request went (its origin), never
its path, query or fragment, and no response headers.

httpx2 logs every request at INFO as ``HTTP Request: GET <the whole URL> "HTTP/1.1 302 Found"``,
and httpcore2 every response's headers at DEBUG (a ``Location`` holding a sign-in token, a
``Set-Cookie``). The engine fetches small documents with that client (``ard_discover`` fetches
the very URL it is given, ``crawl_policy`` follows redirects) and the notebook speaks to MCP
servers with it: a notebook that turns logging on would keep what no trace keeps. Filters on
those loggers word each request's URL as every message does (``reduce_url``: its origin and
``/…``) and leave the headers out; every other record passes unchanged. Installed once, when a
module that sends HTTP requests is imported.
"""

from __future__ import annotations

import logging

from plasmate_nb.errors import reduce_url

#: httpx2's (and httpx's) record of a request: ``'HTTP Request: %s %s "%s %d %s"'``, the URL second.
REQUEST_RECORD = "HTTP Request:"
#: httpcore2's (and httpcore's) records that quote a response's headers.
HEADER_RECORDS = ("receive_response_headers.complete",)
LOGGERS = (
    "httpx2",
    "httpx",
    *(f"{package}.{part}" for package in ("httpcore2", "httpcore") for part in ("http11", "http2", "proxy", "connection", "socks")),
)  # fmt: skip


class _OriginsOnly(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not isinstance(record.msg, str):
            return True
        if record.msg.startswith(REQUEST_RECORD) and isinstance(record.args, tuple) and len(record.args) > 1:
            record.args = (record.args[0], reduce_url(str(record.args[1])), *record.args[2:])
        elif record.msg.startswith(HEADER_RECORDS):
            record.msg, record.args = record.msg.partition(" ")[0] + " (headers not logged)", ()
        return True


def quiet_http_logs() -> None:
    """Put the filter on every logger of the HTTP client libraries (once)."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, _OriginsOnly) for f in logger.filters):
            logger.addFilter(_OriginsOnly())
