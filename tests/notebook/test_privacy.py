"""Privacy: secrets typed, selected, put in URLs or cookies never reach a table, widget
state, repr or exception text of the notebook layer (docs/contract.md#sanitisation)."""

from __future__ import annotations

import json
import string
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import plasmate_nb.notebook as nb
from plasmate_nb import errors as nb_errors
from plasmate_nb.client.base import ToolError, Transport
from plasmate_nb.notebook.stateless import url_secrets

# A marker prefix keeps a generated secret from matching ordinary page or trace text.
secrets = st.text(alphabet=string.ascii_letters + string.digits, min_size=8, max_size=24).map(
    lambda s: "zqx" + s
)


def _texts(obj: Any) -> list[str]:
    """Every displayable rendering of ``obj`` the notebook layer produces."""
    out = [repr(obj), str(obj)]
    if hasattr(obj, "_repr_html_"):  # read without the break opportunities a long run gets
        out.append(obj._repr_html_().replace("<wbr>", ""))
    if hasattr(obj, "_repr_mimebundle_"):
        out.append(json.dumps(obj._repr_mimebundle_(), default=str).replace("<wbr>", ""))
    if hasattr(obj, "get_state"):
        out.append(json.dumps(obj.get_state(), default=str).replace("<wbr>", ""))
    return out


def _frame_texts(frame: Any) -> list[str]:
    shown = [frame.to_string(), frame.to_html(), getattr(frame, "_repr_html_", frame.to_html)()]
    return [*shown, *(str(v) for v in frame.to_numpy().ravel())]


def _surfaces(s: nb.Session, extra: list[Any]) -> list[str]:
    texts: list[str] = []
    for obj in [s, s.page, s.trace.status(), s.trace.export(), *extra]:
        texts += _texts(obj)
    if s.page is not None:
        texts += _frame_texts(s.page.elements)
    texts += _frame_texts(s.trace.events(columns="all"))
    texts += _frame_texts(s.replay_validate_all(progress=False))
    dashboard, panel = s.trace.dashboard(), s.replay_panel()
    texts += [*_texts(dashboard), dashboard.snapshot_html().replace("<wbr>", ""), *_texts(panel)]
    for sequence in s.trace.export().events()["sequence"].tolist():
        texts += _texts(s.replay_validate(sequence, confirmed=True))
    dashboard.stop()
    panel.stop()
    return texts


def _assert_absent(secret: str, texts: list[str]) -> None:
    leaks = [t for t in texts if secret in t]
    assert not leaks, f"secret leaked into: {leaks[0][:300]}"


SETTINGS = settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@SETTINGS
@given(secret=secrets)
def test_typed_and_selected_secrets_never_show(transport: Transport, login_url: str, secret: str) -> None:
    with nb.Session(transport) as s:
        page = s.open(login_url)
        s.type_text(page.find(label="Email"), secret)  # a text input's live value is in the SOM
        s.type_text(page.find(label="Password"), secret, append=True)
        errors: list[Any] = []
        for call in (
            lambda: s.select_option(page.find(label="Plan"), secret),  # "Option not found: <value>"
            lambda: s.type_text(page.find(role="button"), secret),
        ):
            with pytest.raises(ToolError) as caught:
                call()
            errors.append(caught.value)
        s.select_option(page.find(label="Plan"), "team")
        surfaces = _surfaces(s, errors) + [str(e) for e in errors]
        assert s.trace.events()["redacted_bytes"].tolist()[1] == len(secret)
        final = s.close()
    _assert_absent(secret, surfaces + _texts(final) + _frame_texts(final.events(columns="all")))


@SETTINGS
@given(secret=secrets, where=st.sampled_from(["path", "query", "fragment", "userinfo"]))
def test_url_secrets_never_show(transport: Transport, site_url: str, secret: str, where: str) -> None:
    scheme, host = site_url.split("://")
    url = {
        "path": f"{site_url}/login.html/{secret}",
        "query": f"{site_url}/login.html?token={secret}",
        "fragment": f"{site_url}/login.html#{secret}",
        "userinfo": f"{scheme}://user:{secret}@{host}/login.html",
    }[where]
    errors: list[Any] = []
    with nb.Session(transport) as s:
        try:
            s.open(url)
        except ToolError as error:  # an engine may refuse credentials in URLs
            errors.append(error)
            s.open(f"{site_url}/login.html")
        if not errors:
            s.navigate(url.replace("login.html", "welcome.html"))
        try:
            s.navigate(f"http://unreachable.invalid/{secret}?q={secret}")
        except ToolError as error:  # "Failed to fetch <url>: ..." echoes the URL
            errors.append(error)
        surfaces = _surfaces(s, errors) + [str(e) for e in errors] + [repr(e) for e in errors]
        final = s.close()
    _assert_absent(secret, surfaces + _texts(final) + _frame_texts(final.events(columns="all")))


@pytest.mark.parametrize("url", ["http://unreachable.invalid", "http://unreachable.invalid/"])
def test_an_origin_alone_is_named_in_errors_not_redacted(transport: Transport, url: str) -> None:
    """An origin is what the messages keep of every URL: it is no secret, so it is not hidden
    (it once read ``Failed to fetch [redacted]/…`` for the plainest URL a user types)."""
    with nb.Session(transport) as s, pytest.raises(ToolError) as caught:
        s.open(url)
    assert str(caught.value).startswith("Failed to fetch http://unreachable.invalid/…: ")
    assert "[redacted]" not in str(caught.value)


@pytest.mark.parametrize(
    ("url", "secret"),
    [
        ("http://h.test/a", "/a"),
        ("http://h.test/?q=1", "q=1"),
        ("http://h.test/#f", "f"),
        ("http://u:p@h.test/", "u:p"),
        ("http://h.test\\a", "a"),  # a browser reads "\\" as "/": the rest is a path
        ("http://h.test\\u:p@x.test/", "u:p@x.test/"),  # not user info: the path
    ],
)
def test_anything_beyond_an_origin_stays_a_secret(url: str, secret: str) -> None:
    assert secret in url_secrets(url) and url in url_secrets(url)
    assert url_secrets("http://h.test") == url_secrets("http://h.test/") == []


@SETTINGS
@given(secret=secrets)
def test_cookie_secrets_never_show(transport: Transport, login_url: str, secret: str) -> None:
    with nb.Session(transport) as s:
        s.open(login_url)
        s.set_cookies([{"name": f"n{secret}", "value": secret, "domain": "127.0.0.1"}])
        cookies = s.cookies()
        assert cookies[0]["value"] == secret  # readable on purpose, never displayed
        s.clear_cookies(name=f"n{secret}")
        surfaces = _surfaces(s, [cookies])
        final = s.close()
    _assert_absent(secret, surfaces + _texts(final))


def test_session_keeps_no_copy_of_secrets(transport: Transport, login_url: str) -> None:
    secret = "zqxNeverKeptAnywhere42"
    s = nb.Session(transport)
    page = s.open(login_url)
    s.type_text(page.find(label="Password"), secret)
    with pytest.raises(ToolError) as caught:
        s.select_option(page.find(label="Plan"), secret)
    assert caught.value.__context__ is None and caught.value.__cause__ is None
    # No engine echoes the value: the message names its size only.
    assert secret not in str(caught.value) and str(caught.value).startswith("Option not found")
    held = [vars(s), vars(s._core), vars(s._core.page)]
    assert secret not in repr(held)
    s.close()


@pytest.mark.parametrize("backend", ["embedded"])  # the hint is the notebook's; one real engine is enough
@pytest.mark.parametrize(
    ("url", "suggestion"),
    [
        ("localhost\\zqxAfterABackslash", "http://localhost/…"),  # a browser reads "\" as "/"
        ("localhost:8888\\zqxAfterABackslash?q=1", "http://localhost:8888/…"),
        ("example.com zqxAfterASpace", None),  # no host a browser would read
        ("example.com%2FzqxAfterAnEncodedSlash", None),
    ],
)
def test_a_missing_scheme_hint_shows_no_more_than_the_origin_a_trace_keeps(
    transport: Transport, login_url: str, url: str, suggestion: str | None
) -> None:
    """``did you mean http://…?`` is built from the URL typed without a scheme: it once read the
    host the way ``urlsplit`` does, so a path after a ``\\`` (or a space, an encoded ``/``) was
    shown as if it were the host, though the trace keeps no more than the origin."""
    secret = url.partition("zqx")[1] + url.partition("zqx")[2].partition("?")[0]
    with nb.Session(transport) as s:
        s.open(login_url)
        with pytest.raises(ToolError) as caught:
            s.navigate(url)
        events = s.trace.events(columns="all")
    error = caught.value
    expected = None if suggestion is None else nb_errors.missing_scheme_hint(suggestion)
    assert error.hint == expected or (suggestion is None and "did you mean" not in (error.hint or ""))
    _assert_absent(secret, [str(error), repr(error), *(getattr(error, "__notes__", None) or []),
                            *_frame_texts(events)])  # fmt: skip


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://127.0.0.1:8765\\zqxAfterABackslash", "http://127.0.0.1:8765"),
        ("http://h.test\\zqxNotUserInfo@x.test/", "http://h.test:80"),
        ("http://h.test/zqxPath", "http://h.test:80"),
        ("data:text/html,zqxData", "(opaque origin)"),
    ],
)
def test_a_page_shows_the_origin_a_trace_keeps_and_no_more(url: str, shown: str) -> None:
    """A page's displays name its origin, read as the trace reads it (``origin()``): read by
    ``urlsplit``, a path after a ``\\`` was shown as part of the host. (Our engines answer with
    the browser's normalised URL; a server of the contract need not.)"""
    page = nb.Page({"url": url, "title": "Sign in", "regions": []})
    assert page.origin == shown
    _assert_absent("zqx", _texts(page))


class _EchoingTransport:
    """A real transport behind a server that quotes its arguments in its errors (ours never does;
    another server may): every cookie call fails with its arguments in the message."""

    def __init__(self, inner: Transport) -> None:
        self._inner = inner

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        if tool.endswith("_cookies"):
            raise ToolError(tool, f"Cookie error for {json.dumps(arguments)}")
        return await self._inner.call(tool, arguments)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def test_cookie_calls_scrub_the_urls_they_send_from_a_servers_error(
    transport: Transport, login_url: str
) -> None:
    secret = "zqxCookiePathToken7"
    url = f"http://127.0.0.1:1/account/{secret}?t={secret}"
    with nb.Session(transport) as s:
        s.open(login_url)
        echoing = nb.Session.attach(s.session_id, _EchoingTransport(transport))
        calls = [
            lambda: echoing.cookies(url),
            lambda: echoing.clear_cookies(url=url),
            lambda: echoing.set_cookies([{"name": "n", "value": "v", "url": url}]),
            lambda: echoing.set_cookies(
                [{"name": "n", "value": "v", "domain": "127.0.0.1", "path": f"/{secret}"}]
            ),
        ]
        for call in calls:
            with pytest.raises(ToolError) as failed:
                call()
            assert "Cookie error for" in str(failed.value)
            _assert_absent(secret, [str(failed.value), repr(failed.value)])
