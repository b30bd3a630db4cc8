"""Budgets are decided while elements are added (a dropped element costs only its text): for
random regions of links (some duplicated, some beyond the cap), paragraphs and controls, the
kept elements and the summary line are exactly those of the contract's pass over the whole
list (docs/contract.md#budgets)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plasmate_nb.som import compile_page
from tests.som._helpers import TIMEOUT_S

MAX_ELEMENTS, MAX_PARAGRAPHS, MAX_LINKS, MAX_NAV_LINKS = 400, 10, 200, 80

# (kind, number): a link to /l/<number>, a paragraph or a button with that number.
ITEMS = st.lists(
    st.tuples(st.sampled_from(["link", "link", "paragraph", "button", "heading"]), st.integers(0, 120)),
    min_size=1,
    max_size=520,
)


def expected(items: list[tuple[str, int]], navigation: bool) -> tuple[list[tuple[str, str]], str | None]:
    """The contract's budget pass, written out over the generated items."""
    kept: list[tuple[str, str]] = []
    seen: set[str] = set()
    links = paragraphs = dup = more_links = more_paragraphs = more_elements = chars = 0
    for kind, number in items:
        role, text = kind, f"{kind.title()} {number}"
        drop = False
        if role not in ("button", "heading") and len(kept) >= MAX_ELEMENTS:
            more_elements, drop = more_elements + 1, True
        elif role == "link":
            href = f"/l/{number}"
            if href in seen:
                dup, drop = dup + 1, True
            else:
                seen.add(href)
                links += 1
                if links > (MAX_NAV_LINKS if navigation else MAX_LINKS):
                    more_links, drop = more_links + 1, True
        elif role == "paragraph":
            paragraphs += 1
            if paragraphs > MAX_PARAGRAPHS:
                more_paragraphs, drop = more_paragraphs + 1, True
        if drop:
            chars += len(text.encode())
        else:
            kept.append((role, text))
    parts = [
        f"{count} {what}"
        for count, what in (
            (dup, "duplicate links"),
            (more_links, "more links"),
            (more_paragraphs, "more paragraphs"),
            (more_elements, "more elements"),
        )
        if count
    ]
    return kept, f"[{', '.join(parts)} dropped, ~{chars} chars]" if parts else None


def markup(kind: str, number: int) -> str:
    text = f"{kind.title()} {number}"
    return {
        "link": f'<a href="/l/{number}">{text}</a>',
        "paragraph": f"<p>{text}</p>",
        "button": f'<button type="button">{text}</button>',
        "heading": f"<h2>{text}</h2>",
    }[kind]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=ITEMS, navigation=st.booleans())
async def test_streamed_budgets_equal_the_contracts_pass(page, items, navigation):
    tag = "nav" if navigation else "main"
    await page.set_content(f"<body><{tag}>{''.join(markup(k, n) for k, n in items)}</{tag}></body>")
    som = (await compile_page(page, timeout=TIMEOUT_S)).data
    (region,) = som["regions"]
    elements = region["elements"]
    kept, summary = expected(items, navigation)
    if summary is not None:
        assert elements[-1]["text"] == summary and elements[-1]["id"].startswith("e_summary_")
        elements = elements[:-1]
    roles = {"paragraph": "paragraph", "link": "link", "button": "button", "heading": "heading"}
    got = [(e["role"], e["text"]) for e in elements]
    assert got == [(roles[r], t) for r, t in kept]
    ids = [e["id"] for e in elements]
    assert len(set(ids)) == len(ids)
