"""``page.changes()`` and ``page_a.diff(page_b)``, and pages rebuilt from ``som_answers="changes"``.

Fast tests run the real dispatcher over the scripted engine (the demo site's pages without a
browser); the last one runs the embedded engine with real Chromium.
"""

from __future__ import annotations

from typing import Any

import pytest

import plasmate_nb.notebook as nb
from plasmate_nb.client.base import Transport
from plasmate_nb.notebook._page_changes import CHANGE_COLUMNS
from plasmate_nb.tools.som_changes import canonical_text, som_digest

TYPED = "typed-value-never-shown"


@pytest.fixture
def backend() -> str:
    return "scripted"


def _whole_som(transport: Transport, session_id: str) -> dict[str, Any]:
    from plasmate_nb._loop import run_sync

    return run_sync(transport.call("page_som", {"session_id": session_id}))


def _whole_regions(transport: Transport, session_id: str) -> list[dict[str, Any]]:
    return _whole_som(transport, session_id)["regions"]


@pytest.mark.parametrize("som_answers", ["full", "changes"])
def test_a_typed_value_is_one_changed_row_naming_the_field_not_the_value(
    transport: Transport, login_url: str, som_answers: str
) -> None:
    with nb.Session(transport) as s:
        opened = s.open(login_url, som_answers=som_answers)
        assert (opened.som_digest is not None) == (som_answers == "changes")
        typed = s.type_text(opened.find(label="Email"), TYPED)
        table = typed.changes()
        assert tuple(table.columns) == CHANGE_COLUMNS
        assert table[["change", "role", "label"]].values.tolist() == [["changed", "text_input", "Email"]]
        assert "attrs.value" in table.loc[0, "fields"].split(", ")
        assert TYPED not in table.to_csv() and TYPED not in repr(table)
        assert opened.changes()["change"].unique().tolist() == ["added"]  # the first page: all new
        assert len(opened.changes()) == len(opened.element_list)


def test_pages_are_whole_whatever_the_answers_carry(transport: Transport, login_url: str) -> None:
    pages: dict[str, list[nb.Page]] = {}
    for mode in ("full", "changes"):
        with nb.Session(transport) as s:
            page = s.open(login_url, som_answers=mode)
            steps = [page]
            steps.append(s.type_text(page.find(label="Email"), "a@b.test"))
            steps.append(s.toggle(page.find(role="checkbox", label="Remember me")))
            steps.append(s.select_option(page.find(label="Plan"), "Team"))
            steps.append(s.clear(page.find(label="Email")))
            assert steps[-1].regions == _whole_regions(transport, s.session_id)
            pages[mode] = steps
    for full, changed in zip(pages["full"], pages["changes"], strict=True):
        assert changed.regions == full.regions
        assert changed.elements.equals(full.elements)
        assert changed.changes().equals(full.changes())


def test_diff_of_any_two_pages(transport: Transport, login_url: str) -> None:
    with nb.Session(transport) as s:
        first = s.open(login_url, som_answers="changes")
        home = s.click(first.find(role="link", text="Home"))
        assert first.diff(first).empty
        forward, back = first.diff(home), home.diff(first)
        assert set(forward["change"]) == {"added", "removed"}
        assert sorted(forward.query("change == 'added'")["id"]) == sorted(
            back.query("change == 'removed'")["id"]
        )
        assert home.changes().equals(forward)


@pytest.mark.filterwarnings("error")  # nothing acted in between: the model fetched is the answer's
def test_changes_made_through_another_client_are_fetched_whole(transport: Transport, login_url: str) -> None:
    with nb.Session(transport) as s:
        page = s.open(login_url, som_answers="changes")
        other = nb.Session.attach(s.session_id, transport)  # e.g. an agent on the same session
        other.type_text(page.find(label="Email"), "other@client.test")  # its page: fetched whole
        assert other.page.regions == _whole_regions(transport, s.session_id)
        after = s.toggle(page.find(role="checkbox", label="Remember me"))  # based on other's answer
        assert after.regions == _whole_regions(transport, s.session_id)
        assert after.som_digest is not None


def test_real_engine_pages_rebuilt_from_changes(real_backends, login_url: str) -> None:
    transport = real_backends.get("embedded")
    with nb.Session(transport) as s:
        page = s.open(login_url, som_answers="changes")
        typed = s.type_text(page.find(label="Email"), TYPED)
        assert typed.regions == _whole_regions(transport, s.session_id)
        assert typed.changes()[["change", "label"]].values.tolist() == [["changed", "Email"]]
        assert TYPED not in typed.changes().to_csv()


def test_a_lone_surrogate_in_the_page_shows_as_a_replacement_character(
    real_backends, fixture_server: str
) -> None:
    # pandas' string type cannot hold one; the page keeps it as the SOM does.
    with nb.Session(real_backends.get("embedded")) as s:
        page = s.open(f"{fixture_server}/som/lone-surrogate.html", som_answers="changes")
        clicked = s.click(page.find(role="button", text="Change"))
        assert clicked.find(role="paragraph").text == "lone \ufffd 1"
        # Found by what the table shows, or by the text as the page holds it.
        assert clicked.find(text="lone \udc01 1") == clicked.find(text="lone \ufffd 1")
        # The SOM itself is as the compiler wrote it.
        assert clicked.regions[0]["elements"][0]["text"] == "lone \udc01 1"
        assert clicked.changes()[["change", "text"]].values.tolist() == [  # a paragraph's id is from its text
            ["added", "lone \ufffd 1"],
            ["removed", "lone \ufffd end"],
        ]
        assert page.diff(clicked).equals(clicked.changes())
        assert "lone \ufffd end" in page.elements["text"].tolist()
        page._repr_html_().encode()  # what a notebook sends is UTF-8


class _RacingTransport:
    """A transport on which another client acts just before each ``page_som`` is read."""

    def __init__(self, inner: Transport, act: dict[str, Any]) -> None:
        self._inner = inner
        self._act = act

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        if tool == "page_som":
            await self._inner.call("type_text", {"session_id": arguments["session_id"], **self._act})
        return await self._inner.call(tool, arguments)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def test_a_model_fetched_after_another_client_acted_is_flagged_and_carries_its_own_digest(
    transport: Transport, login_url: str
) -> None:
    with nb.Session(transport) as s:
        page = s.open(login_url, som_answers="changes")
        email = page.find(label="Email")
        racing = _RacingTransport(transport, {"element_id": email.id, "text": "late@client.test"})
        other = nb.Session.attach(s.session_id, racing)  # holds no page: its next page is fetched whole
        with pytest.warns(UserWarning, match="changed again before its model could be fetched") as said:
            moved = other.toggle(page.find(role="checkbox", label="Remember me"))
        assert [w.filename for w in said] == [__file__]  # at the user's call, not the loop's thread
        assert moved.regions == _whole_regions(transport, s.session_id)  # what was read, whole
        assert moved.som_digest == som_digest(canonical_text(_whole_som(transport, s.session_id)))


async def test_an_async_session_flags_it_at_the_awaiting_line(transport: Transport, login_url: str) -> None:
    async with nb.AsyncSession(transport) as s:
        page = await s.open(login_url, som_answers="changes")
        racing = _RacingTransport(transport, {"element_id": page.find(label="Email").id, "text": "x@y.test"})
        other = await nb.AsyncSession.attach(s.session_id, racing)
        with pytest.warns(UserWarning, match="changed again before its model could be fetched") as said:
            await other.toggle(page.find(role="checkbox", label="Remember me"))
        assert [w.filename for w in said] == [__file__]  # through four frames of the package


def test_page_text_a_notebook_prints_holds_no_lone_surrogate(real_backends, fixture_server: str) -> None:
    """A notebook's messages are UTF-8: printing a title, an element's text or the page text must work."""
    with nb.Session(real_backends.get("embedded")) as s:
        page = s.open(f"{fixture_server}/stateless/lone-surrogates.html")
        link = page.find(role="link")
        assert (page.title, link.text) == ("Title \ufffd", "go \ufffd")
        assert "lone \ufffd end" in s.text()
        assert s.links() == ["/next\ufffd"]
        for shown in (page.title, link.text, s.text(), *s.links(), repr(page), repr(link)):
            shown.encode()
