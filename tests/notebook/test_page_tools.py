"""The stateless page tools in the notebook: ``screenshot``, ``text``, ``links``, ``fetch``.

They run over every real backend of the notebook conftest (embedded, stdio, HTTP): the
screenshot arrives as an image on each (an ``ImageBlock`` in-process, MCP ``ImageContent``
over stdio and HTTP). They are untraced: a traced session's export is unchanged by them.
"""

from __future__ import annotations

import struct

import pytest

import plasmate_nb as pnb
import plasmate_nb.notebook as nb
from plasmate_nb.client.base import Transport

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def page_tools(transport: Transport, backend: str) -> Transport:
    if backend == "scripted":
        pytest.skip(
            "the scripted engine has no browser: fetch_page, extract_text, extract_links and "
            "screenshot_page answer 'Internal error' there (tests/scripted_engine.py)"
        )
    return transport


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_MAGIC, data[:16]
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _trace_state(s: nb.Session) -> tuple[list, int, int]:
    status = s.trace.status()
    return s.trace.export().payload["events"], status.retained_events, status.next_sequence


def test_screenshot_text_and_links_leave_the_trace_unchanged(
    page_tools: Transport, login_url: str, site_url: str
) -> None:
    with nb.Session(page_tools) as s:
        s.open(login_url, trace=True)
        before = _trace_state(s)

        shot = s.screenshot()
        assert isinstance(shot, nb.Screenshot) and shot.mime_type == "image/png"
        assert _png_size(shot.data) == (1280, 720) == shot.size  # the tool's default viewport
        png = shot._repr_png_()
        assert isinstance(png, bytes) and png == shot.data
        assert shot._repr_html_().startswith('<img src="data:image/png;base64,')
        assert site_url not in repr(shot) and "login" not in repr(shot)  # pixels only, no URL
        assert _png_size(s.screenshot(width=400, height=300).data) == (400, 300)

        text = s.text()
        assert isinstance(text, str) and "Sign in" in text
        short = s.text(max_chars=5)  # cut near max_chars, marked with an ellipsis
        assert short.endswith("...") and len(short) < len(text), short

        links = s.links()
        assert isinstance(links, list) and all(isinstance(link, str) for link in links)
        assert any(link.endswith("/index.html") for link in links), links
        assert any(link.endswith("/welcome.html") for link in links), links

        assert _trace_state(s) == before  # untraced tools: the export is unchanged


def test_screenshot_saves_a_png(page_tools: Transport, login_url: str, tmp_path) -> None:
    with nb.Session(page_tools) as s:
        s.open(login_url, trace=False)
        saved = s.screenshot(width=320, height=200).save(tmp_path / "page.png")
    assert _png_size(saved.read_bytes()) == (320, 200)


def test_fetch_returns_a_read_only_page_and_screenshots_it_when_asked(
    page_tools: Transport, site_url: str
) -> None:
    page = pnb.fetch(f"{site_url}/index.html", transport=page_tools)
    assert isinstance(page, nb.Page) and page.title == "plasmate_nb demo site"
    assert page.find_all(role="link"), page
    assert "index.html" not in repr(page) and "index.html" not in page._repr_html_()  # origin only
    thumbnail = page.screenshot()
    assert _png_size(thumbnail.data) == (640, 400)


def test_fetch_without_javascript_and_with_a_selector(page_tools: Transport, site_url: str) -> None:
    page = pnb.fetch(f"{site_url}/index.html", javascript=False, selector="link", transport=page_tools)
    roles = {element.role for element in page.element_list}
    assert roles == {"link"}, roles


def test_page_tools_need_an_open_session(page_tools: Transport) -> None:
    s = nb.Session(page_tools)
    with pytest.raises(RuntimeError, match="open"):
        s.screenshot()
    with pytest.raises(RuntimeError, match="open"):
        s.links()
