"""origin(url): scheme://host:port with the port always present; None when opaque/unparseable."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plasmate_nb.errors import reduce_url
from plasmate_nb.trace import origin


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://example.com/", "http://example.com:80"),
        ("https://example.com", "https://example.com:443"),
        ("ws://example.com/socket", "ws://example.com:80"),
        ("wss://example.com/socket", "wss://example.com:443"),
        ("ftp://example.com/file", "ftp://example.com:21"),
        ("http://example.com:80/", "http://example.com:80"),  # explicit default: same origin
        ("http://example.com:/", "http://example.com:80"),  # empty port means the default
    ],
)
def test_origin_fills_in_default_ports(url: str, expected: str) -> None:
    assert origin(url) == expected


def test_origin_keeps_explicit_ports() -> None:
    assert origin("http://127.0.0.1:8000/login") == "http://127.0.0.1:8000"
    assert origin("https://example.com:8443/") == "https://example.com:8443"
    assert origin("http://example.com:0/") == "http://example.com:0"
    assert origin("http://example.com:0080/") == "http://example.com:80"  # leading zeros are decimal


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://[::1]:8080/", "http://[::1]:8080"),
        ("https://[::1]/", "https://[::1]:443"),
        ("http://[2001:DB8:0:0:1:0:0:1]/", "http://[2001:db8::1:0:0:1]:80"),  # first longest zero run
        ("http://[1:0:2:3:4:5:6:7]/", "http://[1:0:2:3:4:5:6:7]:80"),  # a single zero is not compressed
        ("http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]:80"),  # URL-standard serialisation
    ],
)
def test_origin_brackets_ipv6_hosts(url: str, expected: str) -> None:
    assert origin(url) == expected


def test_origin_drops_userinfo() -> None:
    assert origin("https://user:hunter2@example.com/") == "https://example.com:443"
    assert origin("https://user@example.com:8443/") == "https://example.com:8443"
    assert origin("http://a@b@example.com/") == "http://example.com:80"  # the last @ ends user info
    assert origin("http://@example.com/") == "http://example.com:80"


def test_origin_drops_path_query_and_fragment() -> None:
    assert origin("https://example.com/account/42?token=abc#frag") == "https://example.com:443"
    assert origin("https://example.com?x=1") == "https://example.com:443"
    assert origin("https://example.com#top") == "https://example.com:443"


def test_origin_lowercases_scheme_and_host() -> None:
    assert origin("HTTPS://Example.COM/Path") == "https://example.com:443"


@pytest.mark.parametrize(
    "url",
    [
        "data:text/html,<p>hi</p>",
        "about:blank",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "mailto:someone@example.com",
        "chrome-error://chromewebdata/",
        "foo://example.com/",  # non-special schemes have opaque origins
        "blob:data:text/plain,x",
        "blob:file:///tmp/x",
        "blob:foo://example.com/x",
    ],
)
def test_origin_of_opaque_schemes_is_none(url: str) -> None:
    assert origin(url) is None


def test_origin_of_blob_is_its_inner_http_origin() -> None:
    # Decision: the URL standard's blob origin (also what the Rust url crate gives).
    assert (
        origin("blob:https://example.com/0b0e6b9b-6a1b-4b8e-9a1e-1f1d2c3b4a5e") == "https://example.com:443"
    )
    assert origin("blob:http://127.0.0.1:8000/uuid") == "http://127.0.0.1:8000"
    assert origin("blob:blob:https://example.com/x") is None


@pytest.mark.parametrize(
    "url",
    [
        "",
        "example.com",  # no scheme
        "//example.com/",  # scheme-relative needs a base
        "localhost:8000",  # parses as scheme "localhost": opaque
        "http://",
        "http:///",
        "http://user@/",
        "http://example.com:99999/",
        "http://example.com:65536/",
        "http://example.com:8a/",
        "http://example.com:-1/",
        "http://example.com: 80/",
        "http://[::1/",
        "http://[::1]x/",
        "http://[::g]/",
        "http://[fe80::1%25eth0]/",  # zone ids are not allowed
        "http://exa mple.com/",
        "http://exa<mple.com/",
        "http://999.1.1.1/",
        "http://1.2.3.4.5/",
        "http://foo.09/",  # ends in a number but is not an IPv4 address
        "http://%zz%ff/",
        "http://%\ud800/",  # a lone surrogate beside an escape
        "http://a%41\ud800/x",
    ],
)
def test_origin_of_unparseable_urls_is_none(url: str) -> None:
    assert origin(url) is None


@pytest.mark.parametrize("value", [None, 42, b"http://example.com/", ["http://example.com/"]])
def test_origin_of_non_strings_is_none(value: object) -> None:
    assert origin(value) is None


def test_origin_port_65535_is_valid() -> None:
    assert origin("http://example.com:65535/") == "http://example.com:65535"


def test_origin_normalises_ipv4_number_forms() -> None:
    assert origin("http://127.1:8000/") == "http://127.0.0.1:8000"
    assert origin("http://0x7f.0.0.1/") == "http://127.0.0.1:80"
    assert origin("http://0177.0.0.1/") == "http://127.0.0.1:80"
    assert origin("http://2130706433/") == "http://127.0.0.1:80"
    assert origin("http://127.0.0.1./") == "http://127.0.0.1:80"


def test_origin_converts_international_hosts_to_ascii() -> None:
    assert origin("https://bücher.example/") == "https://xn--bcher-kva.example:443"
    assert origin("http://%41%42.example/") == "http://ab.example:80"


def test_origin_treats_backslash_like_the_url_standard() -> None:
    # For special schemes "\" ends the authority, so the host is evil.example, not good.example.
    assert origin("http://evil.example\\@good.example/") == "http://evil.example:80"
    assert origin("http:\\\\example.com\\path") == "http://example.com:80"
    assert origin("http:example.com") == "http://example.com:80"


def test_origin_ignores_surrounding_whitespace_and_tabs() -> None:
    assert origin("  https://exa\tmple.com/\n") == "https://example.com:443"


URL_TEXT = st.lists(
    st.one_of(
        st.sampled_from(
            ["http:", "https:", "ws:", "blob:", "//", "\\", "@", ":", "[", "]", "%", "%41", "?", "#", "."]
        ),
        st.characters(),
        st.integers(0xD800, 0xDFFF).map(chr),
    ),
    max_size=24,
).map("".join)


@given(URL_TEXT)
def test_origin_of_any_text_is_none_or_scheme_host_port(url: str) -> None:
    found = origin(url)
    assert found is None or re.fullmatch(r"(https?|wss?|ftp)://[^/?#@\\]+:\d+", found), found


@given(URL_TEXT)
def test_an_error_names_any_url_by_its_origin_at_most(url: str) -> None:
    shown = reduce_url(url)  # what error messages say of a URL: never raises, never more than this
    assert re.fullmatch(r"…|[a-z][a-z0-9+.\-]*:…|(https?|wss?|ftp)://[^/?#@\\]+/…", shown), shown
