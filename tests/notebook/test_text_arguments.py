"""Text a notebook passes to a tool, on every transport: what JSON over MCP cannot carry is refused
before it is sent (the session stays usable), and an argument of the wrong type is the server's
``Invalid arguments`` answer, never a crash of the notebook's own redaction."""

from __future__ import annotations

import pytest

import plasmate_nb.notebook as nb
from plasmate_nb import errors
from plasmate_nb.client.base import ToolError, Transport
from tests.notebook.conftest import BACKENDS

LONE = "abc\ud800def"


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


def test_a_lone_surrogate_is_typed_in_process_and_refused_before_sending_over_mcp(
    backend: str, transport: Transport, login_url: str
) -> None:
    with nb.Session(transport) as s:
        page = s.open(login_url, trace=True)
        email = page.find(label="Email")
        if backend in ("scripted", "embedded"):  # nothing is written: the text is typed as is
            s.type_text(email, LONE)
        else:
            with pytest.raises(ToolError) as caught:
                s.type_text(email, LONE)
            assert caught.value.message == errors.unsendable_text("text")
            with pytest.raises(ToolError, match=r"`value` holds a lone UTF-16 surrogate"):
                s.select_option(page.find(label="Plan"), "\udc00")
        # The connection is still open: the same session types, and its trace counts every call.
        after = s.type_text(s.page.find(label="Email"), "analyst@example.test")
        assert after.url == login_url
        events = s.trace.events()
        assert list(events["action"]) == ["open_page", "type_text"] + (
            ["type_text"] if backend in ("scripted", "embedded") else []
        )


@pytest.mark.parametrize("backend", ["scripted"])
def test_text_of_the_wrong_type_is_the_servers_invalid_arguments(
    transport: Transport, login_url: str
) -> None:
    with nb.Session(transport) as s:
        page = s.open(login_url)
        for text in (12345, None, page):
            with pytest.raises(ToolError) as caught:
                s.type_text(page.find(label="Email"), text)  # type: ignore[arg-type]
            assert caught.value.message == "Invalid arguments: invalid type for `text`: expected a string"
