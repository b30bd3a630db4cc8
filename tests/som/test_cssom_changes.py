"""A CSSOM change reaches no mutation observer, so a recompile compares the stylesheets' text
(docs/contract.md#incremental-compile): every kind of CSSOM change that hides or shows an element
(rules inserted or edited in place, selectors, @media and sheet media lists, imported, disabled,
adopted and shadow-root sheets) gives the full compile's text."""

from __future__ import annotations

import pytest

from plasmate_nb.som import compile_page
from tests.som._helpers import TIMEOUT_S, recompile_equals_full

PAGE = """<html><head><title>t</title>
<style>@import url('data:text/css,.i{color:red}'); .a{color:red} @media print{.m{display:none}}
@media screen{.n{color:red}}</style>
<style>.gone{display:none}</style></head>
<body><main><p class=a>Alpha</p><p class=m>Print</p><p class=n>Screen</p><p class=i>Imported</p>
<p class=gone>Gone</p>
<div id=host></div></main></body></html>"""
SHADOW = """() => {
  const root = document.getElementById('host').attachShadow({mode: 'open'});
  root.innerHTML = '<style>.s{color:red}</style><p class=s>Shadow</p>';
}"""
RULE = "[...document.styleSheets[0].cssRules]"
# Each changes what is visible without a DOM mutation.
CHANGES = {
    "insertRule": "document.styleSheets[0].insertRule('.a{display:none}', 1)",
    "rule declaration edited": f"{RULE}.find(r => r.selectorText === '.a').style.display = 'none'",
    "rule selector edited": "document.styleSheets[1].cssRules[0].selectorText = '.zzz'",
    "@media rule's media": f"{RULE}.find(r => r.conditionText === 'print').media.mediaText = 'screen'",
    "@media inner rule edited": f"{RULE}.find(r => r.conditionText === 'screen').cssRules[0].style.visibility = 'hidden'",
    "imported sheet edited": f"{RULE}.find(r => r.styleSheet).styleSheet.cssRules[0].style.display = 'none'",
    "sheet disabled": "document.styleSheets[1].disabled = true",
    "sheet media list": "document.styleSheets[1].media.mediaText = 'print'",
    "adopted sheet added": "(() => { const s = new CSSStyleSheet(); s.replaceSync('.a{display:none}');"
    " document.adoptedStyleSheets = [s]; })()",
    "adopted sheet pushed": "(() => { const s = new CSSStyleSheet(); s.replaceSync('.m{display:none}');"
    " document.adoptedStyleSheets.push(s); })()",
    "shadow root's sheet edited": "document.getElementById('host').shadowRoot.styleSheets[0].insertRule('.s{display:none}')",
}


async def _recorded(page) -> None:
    """The page with its record kept and one recompile behind it."""
    await page.set_content(PAGE)
    await page.evaluate(SHADOW)
    await compile_page(page, timeout=TIMEOUT_S)
    await compile_page(page, timeout=TIMEOUT_S)


@pytest.mark.parametrize("change", list(CHANGES))
async def test_a_stylesheet_change_gives_the_full_compiles_text(page, change):
    await _recorded(page)
    unchanged = await compile_page(page, timeout=TIMEOUT_S)
    assert unchanged.stats["mode"] == "incremental"  # a record to replay: the comparison means something
    await page.evaluate(CHANGES[change])
    # The stylesheets changed: nothing replayed.
    assert await recompile_equals_full(page, unchanged.text) == "full"
