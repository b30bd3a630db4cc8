"""The demo site's sign-in flow as an agent runs it, traced through a real ``Dispatcher``.

Shared by the audit tests (over real Chromium) and the compare tests (over the scripted engine):
parameters inject the failures a second run is compared against.
"""

from __future__ import annotations

from typing import Any

from plasmate_nb.tools import Dispatcher
from tests.support import Caller, element_id


async def sign_in_flow(
    dispatcher: Dispatcher,
    base_url: str,
    *,
    plan: str = "Team",
    password: bool = True,
    detours: bool = False,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Open the login page, type, pick ``plan``, tick, sign in, go home; return (trace_export, close_page answer).

    ``password=False`` skips typing it (the form then does not submit); ``detours`` adds a failed
    click, ``evaluate``, ``set_cookies`` and a scroll before signing in.
    """
    call = Caller(dispatcher)
    page = await call.ok("open_page", url=f"{base_url}/login.html?next=/account#top", trace=True)
    sid = page["session_id"]

    def on(role: str, name: str) -> dict[str, str]:
        return {"session_id": sid, "element_id": element_id(page, role, name)}

    await call.ok("type_text", **on("text_input", "Email"), text="ada@example.test")
    if password:
        await call.ok("type_text", **on("text_input", "Password"), text="hunter2")
    await dispatcher.call("select_option", {**on("select", "Plan"), "value": plan})  # may fail: injected
    await call.ok("toggle", **on("checkbox", "Remember me"))
    if detours:
        await call.error("click", {"session_id": sid, "element_id": "e_gone"})
        await call.ok("evaluate", session_id=sid, expression="document.title")
        await call.ok(
            "set_cookies", session_id=sid, cookies=[{"name": "sid", "value": "s3cr3t", "url": base_url}]
        )
        await call.ok("scroll", session_id=sid, direction="down", pixels=120)
    await call.ok("click", **on("button", "Sign in"))
    await call.ok("navigate_to", session_id=sid, url=f"{base_url}/index.html")
    return await call.export(sid), await call.ok("close_page", session_id=sid)
