"""The bundled demo site (plasmate_nb/demo_site/pages) as the SOM compiler sees it, for the scripted engine.

Each element is written as compiler.js reports it for the page, with its DOM path (child
indexes from ``<body>``, text nodes counted), which is what makes the scripted element ids the
real ones. ``tests/test_scripted_engine.py`` compiles the same pages in real Chromium and
compares the SOM text byte for byte, so an edit to a demo page shows up there first.

Served: ``/index.html``, ``/login.html``, ``/welcome.html``, ``GET /`` (redirects to the index)
and ``POST /login`` (redirects to the welcome page, as the demo server does). Any other path
answers 404 here, also those the real demo site has (details, drift, dynamic, faults).
"""

from __future__ import annotations

from tests.scripted_engine import Element, Page, Region, Site

CHARSET = {"meta": {"charset": "utf-8"}}


def _link(path: str, text: str, href: str) -> Element:
    return Element("link", path, text=text, attrs={"href": href})


def _paragraph(path: str, text: str, html_id: str | None = None) -> Element:
    return Element("paragraph", path, text=text, html_id=html_id)


def _heading(path: str, text: str, level: int) -> Element:
    return Element("heading", path, text=text, attrs={"level": level})


def _list(path: str, items: list[str]) -> Element:
    return Element("list", path, attrs={"items": [{"text": item} for item in items], "ordered": False})


LOGIN = Page(
    "Sign in",
    html_bytes=1242,
    structured_data=CHARSET,
    regions=(
        Region("r_navigation", "navigation", label="Site", elements=(
            _link("0/1/0/0", "Home", "/index.html"),
            _link("0/1/0/1", "Welcome", "/welcome.html"),
        )),
        Region("r_form", "form", label="Sign in", form=("/login", "POST"), elements=(
            _paragraph("0/3/5/1/0", "Email"),
            Element("text_input", "0/3/5/3", html_id="email", label="Email", attrs={
                "autocomplete": "username", "input_type": "email", "name": "email",
                "placeholder": "you@example.com", "required": True}),
            _paragraph("0/3/5/5/0", "Password"),
            Element("text_input", "0/3/5/7", html_id="password", label="Password", attrs={
                "autocomplete": "current-password", "input_type": "password", "name": "password",
                "required": True}),
            _paragraph("0/3/5/9/0", "Plan"),
            Element("select", "0/3/5/11", html_id="plan", text="Free Pro Team Enterprise", label="Plan",
                    attrs={"name": "plan"}, selected="pro",
                    options=(("Free", "free"), ("Pro", "pro"), ("Team", "team"), ("Enterprise", "enterprise"))),
            _paragraph("0/3/5/13", "Remember me"),
            Element("checkbox", "0/3/5/13/0", html_id="remember", label="Remember me",
                    attrs={"input_type": "checkbox", "name": "remember"}),
            Element("button", "0/3/5/15", html_id="submit", text="Sign in", attrs={"button_type": "submit"},
                    submits=True),
        )),
        Region("r_main", "main", elements=(_heading("0/3/1", "Sign in", 1),)),
        Region("r_footer", "footer", elements=(_paragraph("0/5/0", "Demo only: nothing is stored."),)),
    ),
)  # fmt: skip

WELCOME = Page(
    "Welcome",
    html_bytes=641,
    structured_data=CHARSET,
    regions=(
        Region("r_navigation", "navigation", label="Site", elements=(
            _link("0/1/0/0", "Home", "/index.html"),
            _link("0/1/0/1", "Sign in", "/login.html"),
        )),
        Region("r_main", "main", elements=(
            _heading("0/3/1", "Welcome back", 1),
            _paragraph("0/3/3", "You are signed in to the demo.", html_id="greeting"),
            _heading("0/3/5/1", "Next steps", 2),
            _paragraph("0/3/5/3", "Explore the details page or the drift page."),
            _link("0/3/5/3/1", "details page", "/details.html"),
            _link("0/3/5/3/3", "drift page", "/drift.html"),
            Element("button", "0/3/7", text="Sign out", attrs={"button_type": "button"}, hints=("secondary",),
                    navigates="/login.html"),
        )),
        Region("r_footer", "footer", elements=(_paragraph("0/5/0", "plasmate_nb demo site"),)),
    ),
)  # fmt: skip

_DEMO_PAGES = [
    ("Sign in form", "/login.html"), ("Welcome page", "/welcome.html"),
    ("Details and radio buttons", "/details.html"), ("Content rendered by JavaScript", "/dynamic.html"),
    ("A page that changes itself", "/drift.html"), ("Generated page of 200 elements", "/large?n=200"),
]  # fmt: skip
_FAULT_PAGES = [
    ("Never finishes loading", "/faults/slow"), ("Server error", "/faults/500"),
    ("Redirect loop", "/faults/redirect-loop"), ("Download", "/faults/download"), ("Dialogs", "/faults/dialog.html"),
    ("Popup window", "/faults/popup.html"), ("Hanging button", "/faults/hang.html"),
]  # fmt: skip

INDEX = Page(
    "plasmate_nb demo site",
    html_bytes=1297,
    structured_data=CHARSET,
    regions=(
        Region("r_header", "header", elements=(_paragraph("0/1/0/0", "plasmate_nb demo"),)),
        Region("r_navigation", "navigation", label="Demo pages", elements=(
            _list("0/3/5/1", [text for text, _ in _DEMO_PAGES[:5]] + ["[1 more items]"]),
            *(_link(f"0/3/5/1/{2 * i + 1}/0", text, href) for i, (text, href) in enumerate(_DEMO_PAGES)),
        )),
        Region("r_main", "main", elements=(
            _heading("0/3/1", "Demo pages", 1),
            _paragraph("0/3/3", "Small local pages for trying browser sessions, traces and replay checks."),
            _heading("0/3/7", "Fault pages", 2),
            _list("0/3/9", [text for text, _ in _FAULT_PAGES[:5]] + ["[2 more items]"]),
            *(_link(f"0/3/9/{2 * i + 1}/0", text, href) for i, (text, href) in enumerate(_FAULT_PAGES)),
        )),
        Region("r_footer", "footer", elements=(_paragraph("0/5/0", "Served from 127.0.0.1 by plasmate_nb.demo_site"),)),
    ),
)  # fmt: skip

DEMO_SITE = Site(
    pages={"/index.html": INDEX, "/login.html": LOGIN, "/welcome.html": WELCOME},
    redirects={"/": "/index.html"},
    posts={"/login": "/welcome.html"},
)
