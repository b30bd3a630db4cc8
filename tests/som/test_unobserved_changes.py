"""What shows or hides an element with no mutation and no new rule text
(docs/contract.md#incremental-compile): CSS animations and transitions of display, visibility or
a custom property (running now, or at the last compile and ended since, in the document or an
open shadow root), Web Animations and keyframes set by script, media queries whose answer
changes, control state no attribute shows, selectors over what no observer reports, focus and the
fragment, slots, and documents too deep to record. After each, the recompile equals a full compile (every case here
failed on the compiler before it); harmless styles (a spinner, Tailwind's `:root, :host` theme,
hover rules that only colour, as Bootstrap's and Tailwind's do) keep recompiles incremental."""

from __future__ import annotations

import pytest

from plasmate_nb.som import compile_page
from plasmate_nb.som.world import next_frame
from tests.som._helpers import TIMEOUT_S, recompile_equals_full

WAIT_MS = 10_000


def _page(style: str, body: str) -> str:
    return f"<html><head><title>t</title><style>{style}</style></head><body><main><p>Always</p>{body}</main></body></html>"


# (style, body, the condition the animation reaches): each starts on load and runs for a minute;
# the test finishes it after the first compile (so that compile surely saw it running).
ANIMATED = {
    "keyframes show an element": (
        "@keyframes show { from { visibility: hidden } to { visibility: visible } }"
        " .late { animation: show 60s steps(1, end) forwards }",
        "<p class=late>Late</p>",
        "getComputedStyle(document.querySelector('.late')).visibility === 'visible'",
    ),
    "keyframes hide an element (display)": (
        "@keyframes hide { to { display: none } } .gone { animation: hide 60s steps(1, end) forwards }",
        "<p class=gone>Going</p>",
        "getComputedStyle(document.querySelector('.gone')).display === 'none'",
    ),
    "a custom property a rule reads": (
        "@property --v { syntax: '*'; inherits: false; initial-value: visible }"
        " @keyframes v { to { --v: hidden } } .x { visibility: var(--v); animation: v 60s steps(1, end) forwards }",
        "<p class=x>Custom</p>",
        "getComputedStyle(document.querySelector('.x')).visibility === 'hidden'",
    ),
}


@pytest.mark.parametrize("case", list(ANIMATED))
async def test_an_animation_that_shows_or_hides_is_seen(page, case):
    style, body, reached = ANIMATED[case]
    await page.set_content(_page(style, body))
    before = (await compile_page(page, timeout=TIMEOUT_S)).text
    await page.evaluate("() => document.getAnimations().forEach((a) => a.finish())")
    await page.wait_for_function(f"() => {reached}", timeout=WAIT_MS)
    await recompile_equals_full(page, before)


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
    await recompile_equals_full(page, before)


async def test_a_web_animation_started_by_script_is_seen(page):
    await page.set_content(_page("", "<p id=w>Animated</p>"))
    await compile_page(page, timeout=TIMEOUT_S)
    await page.evaluate(
        "() => { window.__a = document.getElementById('w').animate("
        "[{visibility: 'visible'}, {visibility: 'hidden'}], {duration: 300, fill: 'forwards', easing: 'steps(1, end)'}); }"
    )
    before = (await compile_page(page, timeout=TIMEOUT_S)).text
    await page.wait_for_function("() => window.__a.playState === 'finished'", timeout=WAIT_MS)
    await recompile_equals_full(page, before)


# Styles that must not cost incremental recompiles: a spinner's animation; custom properties on
# `:root, :host` as Tailwind v4 declares its theme.
HARMLESS = {
    "an animation of anything else": "@keyframes spin { to { transform: rotate(360deg); opacity: .5 } }"
    " .s { animation: spin 1s linear infinite }",
    "custom properties on :root and :host": ":root, :host { --c: red; --s: 4px }"
    " html, :host { color: var(--c); margin: var(--s) } .hidden { display: none }",
    # Bootstrap 5: hover and focus colours read custom properties; checked controls declare them.
    "Bootstrap's hover colours": ".btn { --bs-btn-color: #000; --bs-btn-hover-bg: #eee; color: var(--bs-btn-color) }"
    " .btn:hover { color: var(--bs-btn-hover-color); background-color: var(--bs-btn-hover-bg) }"
    " .btn:focus-visible { box-shadow: var(--bs-btn-focus-box-shadow) } .form-check-input:checked { --bs-form-check-bg-image: none }"
    " .dropdown-menu { display: none } .dropdown-menu.show { display: block }",
    # Tailwind v4: hover utilities inside a media query read the theme's custom properties.
    "Tailwind's hover utilities": ":root { --color-blue-600: blue } @layer utilities { .hidden { display: none }"
    " @media (hover: hover) { .hover\\:bg-blue-600:hover { background-color: var(--color-blue-600) } } }",
    # Nesting: the parent's selector counts only when a nested rule can hide something.
    "a nested hover rule that only colours": ".card { color: black; &:hover { color: var(--accent) } }",
}


@pytest.mark.parametrize("case", list(HARMLESS))
async def test_harmless_styles_keep_recompiles_incremental(page, case):
    await page.set_content(_page(HARMLESS[case], "<p class=s>Spinner</p><p id=n>Note</p>"))
    before = (await compile_page(page, timeout=TIMEOUT_S)).text
    await page.evaluate("() => { document.getElementById('n').textContent = 'Changed note'; }")
    assert await recompile_equals_full(page, before) == "incremental"


# (style, what the menu holds): hovering the menu shows a submenu, leaving it hides it again.
HOVERED = {
    "a hover rule that shows it": (".menu .sub { display: none } .menu:hover .sub { display: block }",
                                   "<p class=sub>Submenu</p>"),
    "declarations nested in an @media of a hover rule": (".sub { display: none }"
                                                         " .menu:hover .sub { @media (min-width: 1px) { display: block } }",
                                                         "<p class=sub>Submenu</p>"),
    "a hover rule's custom property an inline style reads": (".menu:hover { --d: block }",
                                                             '<p style="display: var(--d, none)">Submenu</p>'),
    "the same inside a shadow root": (".menu:hover { --d: block }",
                                      "<div id=h></div><script>document.getElementById('h').attachShadow({mode: 'open'})"
                                      ".innerHTML = '<p style=\"display: var(--d, none)\">Submenu</p>'</script>"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(HOVERED))
async def test_what_hovering_shows_and_hides_is_seen(page, case):
    style, inner = HOVERED[case]
    await page.set_content(_page(style, f"<div class=menu><p>Menu</p>{inner}</div><p id=away>Away</p>"))
    await page.hover("#away")
    before = (await compile_page(page, timeout=TIMEOUT_S)).text
    assert "Submenu" not in before
    await page.hover(".menu > p")
    await recompile_equals_full(page, before)
    shown = (await compile_page(page, timeout=TIMEOUT_S)).text
    await page.hover("#away")
    await recompile_equals_full(page, shown)


async def test_an_inline_style_that_starts_reading_a_custom_property_is_seen(page):
    # Hovering sets a custom property no rule that hides reads; then an inline style reads it, and
    # the submenu inherits what it computes.
    await page.set_content(
        _page(
            ".menu:hover { --v: visible }",
            "<div class=menu><p>Menu</p><div id=s><p>Submenu</p></div></div><p id=away>Away</p>",
        )
    )
    await compile_page(page, timeout=TIMEOUT_S)
    await page.hover(".menu > p")
    await page.evaluate("() => { document.getElementById('s').style.visibility = 'var(--v, hidden)'; }")
    shown = (await compile_page(page, timeout=TIMEOUT_S)).text
    assert "Submenu" in shown
    await page.hover("#away")  # no mutation: only the custom property changes
    await recompile_equals_full(page, shown)


# A sibling rule sets a custom property when `.t` gets a class; something reads it to hide the
# paragraph, in a way a pattern over the text would miss: each must still be seen.
SIBLING_SETS = ".t.on ~ .b { --d: none }"
# Each `.host` gets a shadow root whose slot's visibility reads a custom property.
SLOT_READS = (
    "() => document.querySelectorAll('.host').forEach((h) => { h.attachShadow({mode: 'open'}).innerHTML ="
    " '<slot style=\"visibility: var(--v, visible)\"></slot>'; })"
)
READERS = {
    "an inline style with a comment holding a semicolon": (SIBLING_SETS, "<p style='display: /*;*/ var(--d, block)'>Secret</p>"),
    "an inline style with an escaped property name": (SIBLING_SETS, "<p style='di\\splay: var(--d, block)'>Secret</p>"),
    "an inline style with an escaped function name": (SIBLING_SETS, "<p style='display: v\\61r(--d, block)'>Secret</p>"),
    "a custom property whose name holds an escaped semicolon": (".t.on ~ .b { --a\\;b: none }",
                                                                 "<p style='display: var(--a\\;b, block)'>Secret</p>"),
    "an SVG display attribute": (SIBLING_SETS, "<svg role=img aria-label=Secret display='var(--d)'><title>Secret</title></svg>"),
    "a stylesheet value with an escaped function name": (SIBLING_SETS + " .b p { display: v\\61r(--d, block) }", "<p>Secret</p>"),
    "a slot in a shadow root inside a link (never walked, only its text read)": (
        ".t.on ~ .b { --v: hidden }",
        "<a href=/x>Secret <span class=host><b>slotted</b></span></a>",
    ),
    "a custom function": ("@function --d() { result: var(--d, block); } " + SIBLING_SETS + " .b p { display: --d() }",
                          "<p>Secret</p>"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(READERS))
async def test_a_custom_property_read_to_hide_is_seen_however_written(page, case):
    style, inner = READERS[case]
    await page.set_content(_page(style, f"<div><span class=t>T</span><div class=b>{inner}</div></div>"))
    await page.evaluate(SLOT_READS)
    before = (await compile_page(page, timeout=TIMEOUT_S)).text
    assert "Secret" in before
    await page.evaluate("() => document.querySelector('.t').classList.add('on')")
    await recompile_equals_full(page, before)


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
    assert await recompile_equals_full(page, before) == "full"


async def _blurred_after_typing(page) -> None:
    await page.fill("#i", "not an email")
    await compile_page(page, timeout=TIMEOUT_S)  # the typing seen; the blur then changes no value
    await page.evaluate("() => document.getElementById('i').blur()")


async def _dark(page) -> None:
    await page.emulate_media(color_scheme="dark")


async def _typed_into_number(page) -> None:
    await page.focus("#n")
    await page.keyboard.type("e")


async def _interest_shown(page) -> None:
    await page.focus("#src")
    await page.wait_for_function(
        "document.getElementById('src').matches(':interest-source')", timeout=WAIT_MS
    )


async def _scrolled_to_second(page) -> None:
    await page.evaluate("document.getElementById('s2').scrollIntoView()")
    await page.wait_for_function(
        "document.querySelectorAll('a')[1].matches(':target-current')", timeout=WAIT_MS
    )


SHADOW_HOST = "<main><div id=h><p slot=a>Light child</p></div></main><script>"
# (page, what changes it): state no attribute shows, selectors over what no observer reports,
# slotting, values computed from what cannot be watched. Each hides or shows an element.
UNSEEN = {
    ":indeterminate": (
        "<style>input:indeterminate + span{display:none}</style><main><input type=checkbox id=c><span>Hello</span></main>",
        "document.getElementById('c').indeterminate = true",
    ),
    ":invalid by setCustomValidity": (
        "<style>input:invalid + span{display:none}</style><main><input id=i><span>Hello</span></main>",
        "document.getElementById('i').setCustomValidity('bad')",
    ),
    ":user-invalid after a blur": (
        "<style>input:user-invalid + span{display:none}</style><main><input id=i type=email required><span>Hello</span></main>",
        _blurred_after_typing,
    ),
    "an ancestor form turns :invalid": (
        "<style>form:invalid .x{display:none}</style><main><form><input id=i><p class=x>Hello</p></form></main>",
        "document.getElementById('i').required = true",
    ),
    ":default moves to another button": (
        "<style>button:default{visibility:hidden}</style><main><div id=d></div><form id=f><button>Inner</button></form></main>",
        "(() => { const b = document.createElement('button'); b.setAttribute('form', 'f'); b.textContent = 'Outer';"
        " document.getElementById('d').appendChild(b); })()",
    ),
    ":read-write in designMode": (
        "<style>p:read-write{display:none}</style><main><p>Hello</p></main>",
        "document.designMode = 'on'",
    ),
    ":dir() from text": (
        "<style>div:dir(rtl) .x{display:none}</style><main><div dir=auto><span id=t>hello</span><p class=x>Ltr only</p></div></main>",
        "document.getElementById('t').firstChild.data = '\u05e9\u05dc\u05d5\u05dd'",
    ),
    ":lang() from a content-language meta": (
        "<style>p:lang(fr){display:none}</style><main><p>Bonjour</p></main>",
        "(() => { const m = document.createElement('meta'); m.httpEquiv = 'content-language'; m.content = 'fr';"
        " document.head.appendChild(m); })()",
    ),
    "a custom state": (
        "<script>customElements.define('x-a', class extends HTMLElement { constructor() { super();"
        " this.i = this.attachInternals(); } })</script><style>x-a:state(off){display:none}</style>"
        "<main><p>a</p><x-a><p>Inside</p></x-a></main>",
        "document.querySelector('x-a').i.states.add('off')",
    ),
    ":defined with the undefined count unchanged": (
        "<style>:not(:defined){display:none}</style><main><p>a</p><x-a>Shown when defined</x-a><div id=d></div></main>",
        "document.getElementById('d').appendChild(document.createElement('x-b')); customElements.define('x-a', class extends HTMLElement {})",
    ),
    "nth-child(of) over a sibling's class": (
        "<style>p:nth-child(2 of .x){display:none}</style><main><div><p id=a1>Alpha</p><p class=x>Beta</p><p class=x>Gamma</p></div></main>",
        "document.getElementById('a1').className = 'x'",
    ),
    "@scope whose prelude matches": (
        "<style>@scope (.card:has(.on)) { p {display:none} }</style><main><div class=card><span id=s>x</span><p>In card</p></div></main>",
        "document.getElementById('s').className = 'on'",
    ),
    ":checked of an option outside a select": (
        "<style>option:checked + span{display:none}</style><main><div><option id=o>Opt</option><span>Hello</span></div></main>",
        "document.getElementById('o').selected = true",
    ),
    ":user-valid after a blocked submit": (
        "<style>input:user-valid + span{display:none}</style><main><form id=f onsubmit='event.preventDefault()'>"
        "<input id=i value=ok><span>Hello</span></form></main>",
        "document.getElementById('f').requestSubmit()",
    ),
    ":placeholder-shown after unparsable input": (
        # A number field's value stays "" while its text is no number, yet the placeholder goes.
        "<style>input:placeholder-shown + span{display:none}</style><main><input id=n type=number placeholder=Count><span>Hello</span></main>"
        "<script>document.getElementById('n').setCustomValidity('already invalid')</script>",
        _typed_into_number,
    ),
    ":interest-source": (
        "<style>#src:interest-source + p{display:none}</style><main><button interestfor=t id=src>Src</button>"
        "<p>After</p><div id=t popover=hint>Tip</div></main>",
        _interest_shown,
    ),
    ":target-current of a scroll marker": (
        "<style>a:target-current + span{display:none}</style><main><nav style='scroll-target-group:auto;position:fixed;top:0'>"
        "<a href='#s1'>One</a><span>After one</span><a href='#s2'>Two</a><span>After two</span></nav>"
        "<section id=s1 style='height:3000px'><p>First</p></section><section id=s2 style='height:3000px'><p>Second</p></section></main>",
        _scrolled_to_second,
    ),
    "a CSS animation's keyframes set by script": (
        "<style>@keyframes k{from{color:red}to{color:blue}} .a{animation:k 1000s}</style><main><p>x</p><p class=a>Animated</p></main>",
        "document.getAnimations()[0].effect.setKeyframes([{visibility: 'hidden'}, {visibility: 'hidden'}])",
    ),
    "a registered property's initial value": (
        "<style>.x{display:var(--d)}</style><main><p>a</p><p class=x>Hide me</p></main>",
        "CSS.registerProperty({name: '--d', syntax: '<custom-ident>', initialValue: 'none', inherits: false})",
    ),
    "if() on a media query": (
        "<style>.x{display:if(media(prefers-color-scheme: dark): none; else: block)}</style><main><p>a</p><p class=x>Light</p></main>",
        _dark,
    ),
    "if() on a media query in an inline style": (
        "<main><p>a</p><p style='visibility: if(media(prefers-color-scheme: dark): hidden; else: visible)'>Light</p></main>",
        _dark,
    ),
    "a custom property set by if(), read by an inline style": (
        "<style>.w { --v: if(media(prefers-color-scheme: dark): hidden; else: visible) }</style>"
        "<main><p>a</p><div class=w><p style='visibility: var(--v)'>Light</p></div></main>",
        _dark,
    ),
    "a slot hidden in a shadow root inside a button": (
        "<main><button>Hello <span id=h><b>slotted</b></span> world</button></main><script>"
        "document.getElementById('h').attachShadow({mode: 'open'}).innerHTML = '<slot></slot>'</script>",
        "document.getElementById('h').shadowRoot.querySelector('slot').style.visibility = 'hidden'",
    ),
    "a slot hidden": (
        SHADOW_HOST
        + "document.getElementById('h').attachShadow({mode: 'open'}).innerHTML = '<slot name=a></slot>';</script>",
        "document.getElementById('h').shadowRoot.querySelector('slot').style.visibility = 'hidden'",
    ),
    "slots renamed": (
        SHADOW_HOST + "document.getElementById('h').attachShadow({mode: 'open'}).innerHTML ="
        " '<div style=visibility:hidden><slot name=b></slot></div><slot name=a></slot>';</script>",
        "(() => { const s = document.getElementById('h').shadowRoot.querySelectorAll('slot'); s[0].name = 'a'; s[1].name = 'c'; })()",
    ),
    "a slot hidden behind a host with a role, inside a fieldset": (
        # The walk reads the host's light children, never the host as an element of its own.
        "<main><fieldset><legend>L</legend><section><template shadowrootmode=open><slot></slot></template>"
        "<button>B</button></section></fieldset></main>",
        "document.querySelector('section').shadowRoot.querySelector('slot').style.visibility = 'hidden'",
    ),
    "a slot forwarded through a nested shadow root": (
        "<main><div id=x><template shadowrootmode=open><span id=n><template shadowrootmode=open><slot></slot></template>"
        "<slot></slot></span></template><button>B</button></div></main>",
        "document.getElementById('x').shadowRoot.getElementById('n').shadowRoot.querySelector('slot').style.visibility = 'hidden'",
    ),
    "a manually assigned slot": (
        "<main><div id=h><p>Light child</p></div></main><script>const r = document.getElementById('h')"
        ".attachShadow({mode: 'open', slotAssignment: 'manual'}); r.innerHTML = '<div style=visibility:hidden>"
        "<slot id=s1></slot></div><slot id=s2></slot>'; r.getElementById('s2').assign(document.querySelector('#h p'));</script>",
        "document.getElementById('h').shadowRoot.getElementById('s1').assign(document.querySelector('#h p'))",
    ),
}


@pytest.mark.parametrize("case", list(UNSEEN))
async def test_a_change_no_observer_reports_is_seen(page, case):
    html, change = UNSEEN[case]
    await _recompiled_after(page, html, change)


async def _recompiled_after(page, html, change, *, setup=None, compiles=2) -> None:
    """Load ``html``, run ``setup``, compile ``compiles`` times, make ``change`` (a script or a
    function of the page), wait a frame: the recompile differs from before and equals a full one."""
    await page.set_content(html)
    if setup is not None:
        await setup(page)
    for _ in range(compiles):
        before = (await compile_page(page, timeout=TIMEOUT_S)).text
    if isinstance(change, str):
        await page.evaluate(f"() => {{ {change}; }}")
    else:
        await change(page)
    await next_frame(page)
    await recompile_equals_full(page, before)


# Shadow roots attached before the first compile, and what changes with no mutation the walk saw.
SHADOW_AND_UPGRADES = {
    "a host that hides itself by :host, shown again": (
        "<main><p>Lead</p><div id=h>Text child</div></main><script>document.getElementById('h')"
        ".attachShadow({mode: 'open'}).innerHTML = '<style>:host { display: none }</style><slot></slot>'</script>",
        "document.getElementById('h').shadowRoot.querySelector('style').remove()",
    ),
    "a host in a link's text hides itself by :host": (
        "<main><p>Lead</p><a href='/x'>Go <x-i>icon text</x-i></a></main><script>"
        "document.querySelector('x-i').attachShadow({mode: 'open'}).innerHTML = '<slot></slot>'</script>",
        "document.querySelector('x-i').shadowRoot.append(Object.assign(document.createElement('style'),"
        " {textContent: ':host { display: none }'}))",
    ),
    "an upgrade inside an open shadow root": (
        "<main><p>Lead</p><div id=h></div></main><script>document.getElementById('h')"
        ".attachShadow({mode: 'open'}).innerHTML = '<p>In shadow</p><x-c>light of x-c</x-c>'</script>",
        "customElements.define('x-c', class extends HTMLElement { constructor() { super();"
        " this.attachShadow({mode: 'open'}).innerHTML = '<button>Upgraded</button>'; } })",
    ),
    "an upgrade while another undefined element arrives": (
        "<main><p>Lead</p><x-a>light</x-a><div id=d><p>Other</p></div></main>",
        "document.getElementById('d').append(document.createElement('x-b'));"
        " customElements.define('x-a', class extends HTMLElement { constructor() { super();"
        " this.attachShadow({mode: 'open'}).innerHTML = '<button>Shadow button</button>'; } })",
    ),
    "::slotted in a host a label reads": (
        # The label's text is read through the host, never walked as an element.
        "<main><fieldset><h2 id=lbl><template shadowrootmode=open><slot></slot></template>Name<span>Extra</span></h2>"
        "<input aria-labelledby=lbl></fieldset></main>",
        "document.getElementById('lbl').shadowRoot.innerHTML = '<style>::slotted(span){display:none}</style><slot></slot>'",
    ),
    "a property registered under an inline var()": (
        "<main><p>Lead</p><p style='display: var(--d)'>Shown until registered</p></main>",
        "CSS.registerProperty({name: '--d', syntax: '*', inherits: false, initialValue: 'none'})",
    ),
    "a property registered that stops inheriting": (
        "<style>:root { --v: hidden }</style><main><p>Lead</p><p style='visibility: var(--v, visible)'>Hidden until registered</p></main>",
        "CSS.registerProperty({name: '--v', syntax: '*', inherits: false})",
    ),
}


@pytest.mark.parametrize("compiles", [1, 2])
@pytest.mark.parametrize("case", list(SHADOW_AND_UPGRADES))
async def test_what_shadow_roots_upgrades_and_registrations_change_is_seen(page, case, compiles):
    html, change = SHADOW_AND_UPGRADES[case]
    await _recompiled_after(page, html, change, compiles=compiles)  # a fresh page: fresh registries


@pytest.mark.parametrize("reader", ["in the host's root", "in a root nested in it"])
async def test_a_reader_in_a_shadow_root_whose_host_left_and_came_back_is_still_compared(page, reader):
    # An inline var() in display inside a shadow root: the host is removed, compiled without, put back.
    await page.goto("about:blank")  # a fresh property registry
    await page.set_content("<main><p>Lead</p><div id=box><div id=h></div></div></main>")
    await page.evaluate(
        "([inner, nested]) => { const root = document.getElementById('h').attachShadow({mode: 'open'});"
        " root.innerHTML = nested ? '<div id=n></div>' : inner;"
        " if (nested) root.getElementById('n').attachShadow({mode: 'open'}).innerHTML = inner; }",
        ["<p style='display: var(--d)'>Shadow reader</p>", reader != "in the host's root"],
    )
    await compile_page(page, timeout=TIMEOUT_S)
    await page.evaluate("window.host = document.getElementById('h'); host.remove()")
    await compile_page(page, timeout=TIMEOUT_S)
    await page.evaluate("document.getElementById('box').append(window.host)")
    before = (await compile_page(page, timeout=TIMEOUT_S)).text
    await page.evaluate(
        "CSS.registerProperty({name: '--d', syntax: '*', inherits: false, initialValue: 'none'})"
    )
    await next_frame(page)
    await recompile_equals_full(page, before)


NESTED_IN_TEXT = (
    "const outer = document.getElementById('o').attachShadow({mode: 'open'});"
    " outer.innerHTML = '<span id=h><slot></slot></span>';"
    " outer.getElementById('h').attachShadow({mode: 'open'}).innerHTML = '<div id=w><slot></slot></div>';"
)


@pytest.mark.parametrize("holder", ["a href=/x", "button"])
@pytest.mark.parametrize("built", ["before the first compile", "after it"])
async def test_a_root_nested_in_a_root_of_a_host_read_for_its_text_is_watched(page, holder, built):
    # The text of a link or button is read from the light DOM: the walk never enters the roots
    # that decide what of it shows, nor the roots nested in them.
    tag = holder.split()[0]
    await page.set_content(f"<main><p>Lead</p><{holder}>Go <span id=o><b>secret</b></span></{tag}></main>")
    if built == "before the first compile":
        await page.evaluate(NESTED_IN_TEXT)
        before = (await compile_page(page, timeout=TIMEOUT_S)).text
    else:
        await page.evaluate(
            "document.getElementById('o').attachShadow({mode: 'open'}).innerHTML = '<slot></slot>'"
        )
        await compile_page(page, timeout=TIMEOUT_S)
        await page.evaluate(
            "const outer = document.getElementById('o').shadowRoot; const h = document.createElement('span');"
            " h.appendChild(document.createElement('slot'));"
            " h.attachShadow({mode: 'open'}).innerHTML = '<div id=w><slot></slot></div>'; outer.replaceChildren(h);"
        )
        before = (await compile_page(page, timeout=TIMEOUT_S)).text
    await page.evaluate(
        "document.getElementById('o').shadowRoot.querySelector('span').shadowRoot.getElementById('w')"
        ".style.visibility = 'hidden'"
    )
    await next_frame(page)
    await recompile_equals_full(page, before)


async def _keyboard_pressed(page) -> None:
    await page.keyboard.press("a")
    await page.wait_for_function("document.getElementById('b').matches(':focus-visible')", timeout=WAIT_MS)


# (page, what happens before the first compile, what changes): which element focus and the URL's
# fragment select, though the focused element and the URL stay the same.
FOCUS = {
    ":focus-visible after a key on an element clicked into focus": (
        "<style>button:focus-visible + p{display:none}</style><main><button id=b>B</button><p>P</p></main>",
        lambda page: page.click("#b"),
        _keyboard_pressed,
    ),
    ":target moved, the URL put back": (
        "<style>:target{display:none}</style><main><p id=a>Alpha</p><p id=b>Beta</p></main>",
        lambda page: page.evaluate("location.hash = 'a'"),
        lambda page: page.evaluate("location.hash = 'b'; history.replaceState(null, '', '#a')"),
    ),
    ":focus-within after moveBefore keeps focus": (
        "<style>.box:focus-within .hint{display:none}</style><main><div class=box><p class=hint>Hint one</p>"
        "<div><input id=i aria-label=I></div></div><div class=box><p class=hint>Hint two</p><div id=d2></div></div></main>",
        lambda page: page.focus("#i"),
        lambda page: page.evaluate(
            "document.getElementById('d2').moveBefore(document.getElementById('i'), null)"
        ),
    ),
}


@pytest.mark.parametrize("case", list(FOCUS))
async def test_what_focus_and_the_fragment_select_is_seen(page, case):
    html, setup, change = FOCUS[case]
    await _recompiled_after(page, html, change, setup=setup)


@pytest.mark.parametrize("rule", ["button:focus + p", "main:focus-within > p.after"])
async def test_the_window_losing_and_regaining_focus_is_seen(page, rule):
    # A real window the user leaves: the focused element stays, :focus and :focus-within stop matching.
    cdp = await page.context.new_cdp_session(page)
    await cdp.send("Emulation.setFocusEmulationEnabled", {"enabled": False})
    await page.set_content(
        f"<style>{rule}{{display:none}}</style><main><p>Lead</p><button id=b>Press</button><p class=after>After</p></main>"
    )
    await page.bring_to_front()
    await page.click("#b")  # by the mouse: :focus-visible stays off throughout
    await compile_page(page, timeout=TIMEOUT_S)
    before = (await compile_page(page, timeout=TIMEOUT_S)).text
    other = await page.context.new_page()
    await other.bring_to_front()
    await page.wait_for_function("!document.hasFocus()", timeout=WAIT_MS)
    await recompile_equals_full(page, before)
    before = (await compile_page(page, timeout=TIMEOUT_S)).text
    await page.bring_to_front()
    await page.wait_for_function("document.hasFocus()", timeout=WAIT_MS)
    await recompile_equals_full(page, before)


FULLSCREEN = (
    "<style>.f:modal + p{display:none}</style><main><button id=a onclick=\"document.getElementById('fa').requestFullscreen()\">A</button>"
    "<div class=f id=fa><button id=b onclick=\"document.getElementById('fb').requestFullscreen()\">B</button></div><p>After A</p>"
    "<div class=f id=fb><p>In B</p></div><p>After B</p></main>"
)


async def test_entering_switching_and_leaving_fullscreen_is_seen(page):
    # A fullscreen element matches :modal: whether one is, and which, no mutation reports.
    await page.set_content(FULLSCREEN)
    await compile_page(page, timeout=TIMEOUT_S)
    before = (await compile_page(page, timeout=TIMEOUT_S)).text
    steps = [
        ("#a", "fa"),
        ("#b", "fb"),
        (None, "fa"),
        (None, None),
    ]  # a click is the gesture fullscreen needs
    for button, now in steps:
        if button is None:
            await page.evaluate("document.exitFullscreen()")
        else:
            await page.click(button)
        expected = "null" if now is None else f"document.getElementById('{now}')"
        await page.wait_for_function(f"document.fullscreenElement === {expected}", timeout=WAIT_MS)
        await recompile_equals_full(page, before)
        before = (await compile_page(page, timeout=TIMEOUT_S)).text


IF_DARK = "visibility: if(media(prefers-color-scheme: dark): hidden; else: visible)"


@pytest.mark.parametrize(
    "arrives",
    [
        f"document.getElementById('x').setAttribute('style', '{IF_DARK}')",
        f"document.querySelector('main').insertAdjacentHTML('beforeend', '<div><p style=\"{IF_DARK}\">Light</p></div>')",
    ],
    ids=["set on an element", "inserted"],
)
async def test_an_inline_if_that_arrives_by_a_mutation_is_seen_later(page, arrives):
    # An incremental compile looks for if() only in what the mutations brought.
    await page.emulate_media(color_scheme="light")
    await page.set_content(_page("", "<p id=x>Light</p>"))
    await compile_page(page, timeout=TIMEOUT_S)
    await page.evaluate(f"() => {{ {arrives}; }}")
    before = (await compile_page(page, timeout=TIMEOUT_S)).text
    await _dark(page)
    await recompile_equals_full(page, before)


async def test_an_animation_inside_a_shadow_root_is_seen(page):
    await page.set_content(
        "<main><div id=h></div></main><script>document.getElementById('h').attachShadow({mode: 'open'}).innerHTML ="
        " '<style>@keyframes hide { to { visibility: hidden } } p { animation: hide 0s 300ms forwards }</style><p>Shadow</p>';</script>"
    )
    before = (await compile_page(page, timeout=TIMEOUT_S)).text
    await page.wait_for_function(
        "() => getComputedStyle(document.getElementById('h').shadowRoot.querySelector('p')).visibility === 'hidden'",
        timeout=WAIT_MS,
    )
    await recompile_equals_full(page, before)


async def test_a_document_deeper_than_a_recording_walk_goes_is_compiled_unrecorded(page):
    await page.set_content(
        "<main id=m></main><script>let d = document.getElementById('m'); for (let i = 0; i < 1200; i++)"
        " { const c = document.createElement('div'); d.appendChild(c); d = c; }"
        " d.appendChild(Object.assign(document.createElement('p'), {textContent: 'Deep leaf'}));</script>"
    )
    recorded = await compile_page(page, timeout=TIMEOUT_S)
    assert recorded.stats == {"mode": "uncached", "too_deep": True}
    assert "Deep leaf" in recorded.text  # nothing lost to the stack
    assert recorded.text == (await compile_page(page, timeout=TIMEOUT_S, incremental=False)).text


# The live controls and the undefined custom elements are the last compile's lists until a mutation
# can change which elements they are: then they are looked up again. Each case first makes such a
# mutation, then a change that no mutation shows.
BROUGHT = {
    "an element made a popover, then shown": (
        "<main><p>Always</p><div id=t>Tip <a href=/more>More</a></div></main>",
        "document.getElementById('t').setAttribute('popover', 'manual')",
        "document.getElementById('t').showPopover()",
    ),
    "a control inserted inside a new element, then given a value": (
        "<main><p>Always</p><div id=box></div></main>",
        "document.getElementById('box').innerHTML = '<div><input id=n aria-label=Count value=one></div>'",
        "document.getElementById('n').value = 'two'",
    ),
    "a custom element inserted, then defined": (
        "<main><p>Always</p><div id=box></div></main>",
        "document.getElementById('box').innerHTML = '<div><x-late>light</x-late></div>'",
        "customElements.define('x-late', class extends HTMLElement { constructor() { super();"
        " this.attachShadow({mode: 'open'}).innerHTML = '<button>Upgraded</button>'; } })",
    ),
}


@pytest.mark.parametrize("case", list(BROUGHT))
async def test_what_a_mutation_brought_is_looked_at_later(page, case):
    html, mutate, unobserved = BROUGHT[case]
    await page.set_content(html)
    await compile_page(page, timeout=TIMEOUT_S)
    await page.evaluate(f"() => {{ {mutate}; }}")
    before = (await compile_page(page, timeout=TIMEOUT_S)).text
    await page.evaluate(f"() => {{ {unobserved}; }}")
    await recompile_equals_full(page, before)
