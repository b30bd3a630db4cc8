"""What shows or hides an element with no mutation and no new rule text (docs/contract.md#incremental-compile):
CSS animations and transitions of display, visibility or a custom property (running now, or at
the last compile and ended since), Web Animations started by script, and media queries whose
answer changes (an emulated colour scheme or media type). After each, the recompile equals a
full compile; an animation of anything else (a spinner) keeps recompiles incremental."""

from __future__ import annotations

import pytest

from plasmate_nb.som import compile_page
from tests.som._helpers import TIMEOUT_S

WAIT_MS = 10_000


def _page(style: str, body: str) -> str:
    return f"<html><head><title>t</title><style>{style}</style></head><body><main><p>Always</p>{body}</main></body></html>"


async def _recompile_equals_full(page, before: str) -> str:
    incremental = await compile_page(page, timeout=TIMEOUT_S)
    full = await compile_page(page, timeout=TIMEOUT_S, incremental=False)
    assert full.text != before  # the change shows in the SOM: a stale replay would be wrong
    assert incremental.text == full.text
    return incremental.stats["mode"]


# (style, body, the condition the animation reaches): each starts on load.
ANIMATED = {
    "keyframes show an element": (
        "@keyframes show { from { visibility: hidden } to { visibility: visible } }"
        " .late { animation: show 300ms steps(1, end) forwards }",
        "<p class=late>Late</p>",
        "getComputedStyle(document.querySelector('.late')).visibility === 'visible'",
    ),
    "keyframes hide an element (display)": (
        "@keyframes hide { to { display: none } } .gone { animation: hide 300ms steps(1, end) forwards }",
        "<p class=gone>Going</p>",
        "getComputedStyle(document.querySelector('.gone')).display === 'none'",
    ),
    "a custom property a rule reads": (
        "@property --v { syntax: '*'; inherits: false; initial-value: visible }"
        " @keyframes v { to { --v: hidden } } .x { visibility: var(--v); animation: v 300ms steps(1, end) forwards }",
        "<p class=x>Custom</p>",
        "getComputedStyle(document.querySelector('.x')).visibility === 'hidden'",
    ),
}


@pytest.mark.parametrize("case", list(ANIMATED))
async def test_an_animation_that_shows_or_hides_is_seen(page, case):
    style, body, reached = ANIMATED[case]
    await page.set_content(_page(style, body))
    before = (await compile_page(page, timeout=TIMEOUT_S)).text
    await page.wait_for_function(f"() => {reached}", timeout=WAIT_MS)
    await _recompile_equals_full(page, before)


async def test_a_transition_that_ended_since_the_last_compile_is_seen(page):
    await page.set_content(
        _page(".t { transition: visibility 300ms } .t.off { visibility: hidden }", "<p class=t>Fading</p>")
    )
    await compile_page(page, timeout=TIMEOUT_S)
    await page.evaluate("() => document.querySelector('.t').classList.add('off')")
    before = (await compile_page(page, timeout=TIMEOUT_S)).text  # still visible while it runs
    assert "Fading" in before
    # Ended and gone from document.getAnimations(): only the last compile knew of it.
    await page.wait_for_function(
        "() => document.getAnimations().length === 0 && getComputedStyle(document.querySelector('.t')).visibility === 'hidden'",
        timeout=WAIT_MS,
    )
    await _recompile_equals_full(page, before)


async def test_a_web_animation_started_by_script_is_seen(page):
    await page.set_content(_page("", "<p id=w>Animated</p>"))
    await compile_page(page, timeout=TIMEOUT_S)
    await page.evaluate(
        "() => { window.__a = document.getElementById('w').animate("
        "[{visibility: 'visible'}, {visibility: 'hidden'}], {duration: 300, fill: 'forwards', easing: 'steps(1, end)'}); }"
    )
    before = (await compile_page(page, timeout=TIMEOUT_S)).text
    await page.wait_for_function("() => window.__a.playState === 'finished'", timeout=WAIT_MS)
    await _recompile_equals_full(page, before)


async def test_an_animation_of_anything_else_keeps_recompiles_incremental(page):
    spinner = "@keyframes spin { to { transform: rotate(360deg); opacity: .5 } } .s { animation: spin 1s linear infinite }"
    await page.set_content(_page(spinner, "<p class=s>Spinner</p><p id=n>Note</p>"))
    before = (await compile_page(page, timeout=TIMEOUT_S)).text
    await page.evaluate("() => { document.getElementById('n').textContent = 'Changed note'; }")
    assert await _recompile_equals_full(page, before) == "incremental"


# (style, body, emulate_media arguments)
MEDIA = {
    "colour scheme": ("@media (prefers-color-scheme: dark) { .l { display: none } }", "<p class=l>Light only</p>",
                      {"color_scheme": "dark"}),
    "media type": ("@media print { .screen { display: none } }", "<p class=screen>Screen only</p>", {"media": "print"}),
    "reduced motion": ("@media (prefers-reduced-motion: reduce) { .m { visibility: hidden } }", "<p class=m>Motion</p>",
                       {"reduced_motion": "reduce"}),
}  # fmt: skip


@pytest.mark.parametrize("case", list(MEDIA))
async def test_a_media_query_whose_answer_changes_is_seen(page, case):
    style, body, emulated = MEDIA[case]
    await page.emulate_media(color_scheme="light", media="screen", reduced_motion="no-preference")
    await page.set_content(_page(style, body))
    before = (await compile_page(page, timeout=TIMEOUT_S)).text
    await page.emulate_media(**emulated)
    assert await _recompile_equals_full(page, before) == "full"
