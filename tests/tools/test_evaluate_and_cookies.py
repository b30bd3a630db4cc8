"""evaluate's JavaScript exceptions and set_cookies' leniency, through the dispatcher on real Chromium.

docs/contract.md#javascript-exceptions-in-evaluate and docs/contract.md#answers (set_cookies).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from plasmate_nb import errors
from plasmate_nb.browser import Engine, EngineConfig
from plasmate_nb.tools import Dispatcher
from plasmate_nb.trace import classify_error, compact_json
from tests.support import Caller, element_id

PREFIX = "JavaScript worker rejected the request (javascript_error): "
SECRET = "hunter2-Sup3rSecret"
# What a JavaScript exception looks like: the reference's containment JSON, sorted keys, compact.
CONTAINMENT = re.compile(
    r'\{"containment_failure":\{"code":"js_worker_error","kind":"worker_error","message":"(?P<message>.*)"\},'
    r'"error":"Evaluate failed: (?P=message)","state_preserved":true\}'
)


async def _traced(call: Caller, demo: Any, path: str = "/login.html") -> str:
    return (await call.ok("open_page", url=demo.url(path), trace=True))["session_id"]


def _js_error(text: str) -> str:
    """The ``<JsError>`` of a containment text, after checking its whole shape."""
    assert CONTAINMENT.fullmatch(text), text
    payload = json.loads(text)
    assert list(payload) == sorted(payload) and list(payload["containment_failure"]) == [
        "code",
        "kind",
        "message",
    ]
    message = payload["containment_failure"]["message"]
    assert message.startswith(PREFIX) and payload["error"] == "Evaluate failed: " + message
    return message.removeprefix(PREFIX)


# ----- evaluate: a thrown exception ------------------------------------------------------------------


async def test_a_thrown_exception_is_the_containment_json_classed_execution(call: Caller, demo) -> None:
    sid = await _traced(call, demo)
    text = await call.error("evaluate", {"session_id": sid, "expression": "hunter2Token.length"})
    assert text == errors.evaluate_javascript_error("ReferenceError: … is not defined")
    assert _js_error(text) == "Runtime error: ReferenceError: … is not defined"
    assert classify_error(text) == "execution"

    events = (await call.export(sid))["events"]
    assert [event["action"] for event in events] == ["open_page", "evaluate"]
    event = events[1]
    assert event["outcome"] == "error" and event["error_class"] == "execution"
    assert event["parameters"] == {} and "target" not in event
    assert event["redaction"]["redacted_fields"] == ["expression", "result"]
    assert "hunter2Token" not in compact_json(events)
    await call.ok("close_page", session_id=sid)


async def test_compile_errors_and_thrown_values(call: Caller, demo) -> None:
    sid = await _traced(call, demo)
    cases = {
        "1 +": "Compile error: SyntaxError: Unexpected token ')'",
        # Words the expression spells are cut; others (here made by the page) are kept.
        "Promise.reject(new RangeError('too ' + String.fromCharCode(98, 105, 103)))": "Runtime error: RangeError: … big",
        "Promise.reject(40 + 2)": "Runtime error: thrown number (not an Error)",
        "(() => { throw null })()": "Runtime error: thrown null (not an Error)",
        "JSON.parse('{')": "Runtime error: SyntaxError: Expected property name or '}' in … at position 1 (line 1 column 2)",
        "(() => { const e = new Error('x'); e.name = 'not <an> identifier'; throw e })()": "Runtime error: Error: …",
    }
    for expression, js_error in cases.items():
        text = await call.error("evaluate", {"session_id": sid, "expression": expression})
        assert _js_error(text) == js_error, expression
    events = (await call.export(sid))["events"][1:]
    assert [(event["outcome"], event["error_class"]) for event in events] == [("error", "execution")] * len(
        cases
    )
    await call.ok("close_page", session_id=sid)


# Each expression makes the JavaScript engine quote the expression, or page data, in its message.
LEAKS = [
    pytest.param(f"'{SECRET}'.nope()", [SECRET, "nope"], id="string-receiver"),  # "…".… is not a function
    pytest.param("hunter2Secret + 1", ["hunter2Secret"], id="reference-error"),
    pytest.param("hunter2 hunter3", ["hunter2", "hunter3"], id="compile-error"),  # Unexpected identifier '…'
    pytest.param(f"(() => {{ throw new Error('api key {SECRET}') }})()", [SECRET, "api key"], id="own-message"),
    # Page data the expression never spells: JSON.parse quotes its input, a message carries a URL.
    pytest.param("JSON.parse(atob('cGFnZS1zZWNyZXQtZGF0YQ=='))", ["page-secret", "page-secre", "cGFnZ"],
                 id="json-input"),
    pytest.param("(() => { throw new TypeError('see ' + atob('aHR0cHM6Ly91OnBAc2VjcmV0LmV4YW1wbGUvcHJpdmF0ZT90b2tlbj0x')) })()",
                 ["u:p", "private", "token=1", "aHR0c"], id="url-in-message"),
    pytest.param("document.querySelector('#' + atob('c2VjcmV0LXNlbGVjdG9y') + '!!')", ["secret-selector"],
                 id="dom-exception"),
]  # fmt: skip


@pytest.mark.parametrize(("expression", "secrets"), LEAKS)
async def test_the_error_never_echoes_the_expression_or_page_secrets(
    call: Caller, demo, expression: str, secrets: list[str]
) -> None:
    sid = await _traced(call, demo)
    text = await call.error("evaluate", {"session_id": sid, "expression": expression})
    js_error = _js_error(text)
    assert re.fullmatch(r"(Runtime|Compile) error: [A-Za-z]*Error(: .*)?", js_error), js_error
    assert expression not in text
    for secret in secrets:
        assert secret not in text, (secret, text)
    assert classify_error(text) == "execution"
    export = compact_json(await call.export(sid))
    assert expression not in export and not any(secret in export for secret in secrets)
    await call.ok("close_page", session_id=sid)


async def test_urls_in_a_message_keep_only_scheme_and_host(call: Caller, demo) -> None:
    sid = await _traced(call, demo)
    expression = "(() => { throw new TypeError(atob('bG9hZCBodHRwczovL3NlY3JldC5leGFtcGxlL3BhdGg/cT0xIGZhaWxlZA==')) })()"
    text = await call.error(
        "evaluate", {"session_id": sid, "expression": expression}
    )  # load https://…/path?q=1 failed
    assert _js_error(text) == "Runtime error: TypeError: load https://secret.example/… failed"
    await call.ok("close_page", session_id=sid)


async def test_state_is_preserved_after_a_throwing_evaluate(call: Caller, demo) -> None:
    opened = await call.ok("open_page", url=demo.url("/login.html"), trace=True)
    sid = opened["session_id"]
    session = call.dispatcher.engine.get(sid)
    som, url = session.som, session.url
    text = await call.error(
        "evaluate", {"session_id": sid, "expression": "document.querySelector('#none').value"}
    )
    assert json.loads(text)["state_preserved"] is True
    assert session.som is som and session.som.text == som.text and session.url == url  # nothing was committed
    event = (await call.export(sid))["events"][-1]
    assert event["outcome"] == "error" and event["before"] == event["after"]
    # The element ids of the last good SOM still act on the page; the next evaluate works.
    typed = await call.ok("type_text", session_id=sid, element_id=element_id(opened, "text_input", "Email"),
                          text="me@example.com")  # fmt: skip
    assert typed["url"] == url
    assert await call.ok("evaluate", session_id=sid, expression="document.getElementById('email').value") == {
        "result": "me@example.com"
    }
    await call.ok("close_page", session_id=sid)


async def test_what_the_expression_did_before_throwing_is_not_committed(call: Caller, demo) -> None:
    # evaluate runs on the live page (docs/contract.md#deviations-from-the-reference): a change made before
    # the throw stays in the page, but the session's state is not replaced until an action succeeds.
    sid = await _traced(call, demo)
    session = call.dispatcher.engine.get(sid)
    som = session.som
    expression = "(() => { document.title = 'Changed'; throw new Error('after the change') })()"
    await call.error("evaluate", {"session_id": sid, "expression": expression})
    assert session.som is som and '"title":"Sign in"' in session.som.text
    assert await call.ok("evaluate", session_id=sid, expression="document.title") == {"result": "Changed"}
    assert '"title":"Changed"' in session.som.text
    await call.ok("close_page", session_id=sid)


async def test_a_navigation_then_a_throw_keeps_the_session_state(call: Caller, demo) -> None:
    # The page is taken back to the last good URL when it has already left (best effort: a navigation
    # that commits later is not waited for); the session's URL and SOM are kept either way.
    sid = await _traced(call, demo)
    session = call.dispatcher.engine.get(sid)
    url, text = session.url, session.som.text
    expression = "(() => { location.href = '/welcome.html'; throw new Error('left') })()"
    await call.error("evaluate", {"session_id": sid, "expression": expression})
    assert (session.url, session.som.text) == (url, text)
    event = (await call.export(sid))["events"][-1]
    assert (event["outcome"], event["error_class"]) == ("error", "execution") and event["before"] == event[
        "after"
    ]
    await call.ok("close_page", session_id=sid)


async def test_a_timeout_stays_a_timeout(demo) -> None:
    engine = Engine(
        EngineConfig(max_sessions=1, action_timeout=5.0, settle_timeout=1.0, evaluate_timeout=1.0)
    )
    try:
        call = Caller(Dispatcher(engine))
        sid = await _traced(call, demo)
        text = await call.error("evaluate", {"session_id": sid, "expression": "new Promise(() => {})"})
        assert text == "Evaluate failed: Timeout after 1000ms"
        event = (await call.export(sid))["events"][-1]
        assert (event["action"], event["outcome"], event["error_class"]) == ("evaluate", "error", "timeout")
        assert await call.ok("evaluate", session_id=sid, expression="1 + 1") == {"result": 2}
    finally:
        await engine.aclose()


# ----- set_cookies: invalid items are skipped --------------------------------------------------------


async def test_set_cookies_sets_the_valid_items_and_skips_the_rest(call: Caller, demo) -> None:
    sid = await _traced(call, demo)
    items: list[Any] = [
        {"name": "with-domain", "value": SECRET, "domain": "example.com"},
        {"name": "with-url", "value": "url-" + SECRET, "url": demo.url("/login.html")},  # no domain
        # The reference's rule: an unknown or non-string sameSite becomes Lax, the item is kept.
        {"name": "odd-same-site", "value": "v", "domain": "example.com", "sameSite": "Sideways"},
        {"name": "numeric-same-site", "value": "v", "domain": "example.com", "sameSite": 5},
        # Invalid: skipped.
        {"value": "missing-name-" + SECRET, "domain": "example.com"},
        {"name": "non-string-value", "value": 12345, "domain": "example.com"},
        {"name": "no-domain-no-url", "value": "v"},
        {"name": "url-without-host", "value": "v", "url": "not a url"},
        "not-an-object",
        # Refused or dropped by the browser: not counted.
        {"name": "bad-path", "value": "v", "domain": "example.com", "path": "no-slash"},
        {"name": "none-not-secure", "value": "v", "domain": "example.com", "sameSite": "None"},
    ]
    answer = await call.ok("set_cookies", session_id=sid, cookies=items)
    assert answer == {"session_id": sid, "set": 4}

    jar = {cookie["name"]: cookie for cookie in (await call.ok("get_cookies", session_id=sid))["cookies"]}
    assert set(jar) == {"with-domain", "with-url", "odd-same-site", "numeric-same-site"}
    assert (jar["with-domain"]["domain"], jar["with-domain"]["value"]) == (".example.com", SECRET)
    assert (jar["with-url"]["domain"], jar["with-url"]["path"]) == ("127.0.0.1", "/")
    assert jar["odd-same-site"]["sameSite"] == jar["numeric-same-site"]["sameSite"] == "Lax"
    sent = await call.ok("get_cookies", session_id=sid, url=demo.url("/"))
    assert [cookie["name"] for cookie in sent["cookies"]] == ["with-url"]
    # ... and the page really has it.
    assert await call.ok("evaluate", session_id=sid, expression="document.cookie") == {
        "result": "with-url=url-" + SECRET
    }

    event = next(event for event in (await call.export(sid))["events"] if event["action"] == "set_cookies")
    assert event["outcome"] == "success" and "error_class" not in event and "target" not in event
    assert event["parameters"] == {"cookie_count": len(items)}
    assert event["redaction"]["redacted_fields"] == ["cookies"]
    assert event["before"] == event["after"]
    flat = compact_json(event)
    for leaked in (SECRET, "with-domain", "with-url", "example.com", "sameSite", "Sideways", "no-slash"):
        assert leaked not in flat, leaked
    await call.ok("close_page", session_id=sid)


async def test_set_cookies_still_checks_the_list_itself(call: Caller, demo) -> None:
    sid = await _traced(call, demo)
    assert await call.ok("set_cookies", session_id=sid, cookies=[]) == {"session_id": sid, "set": 0}
    assert await call.ok("set_cookies", session_id=sid, cookies=[None, 7, []]) == {
        "session_id": sid,
        "set": 0,
    }
    assert await call.error("set_cookies", {"session_id": sid, "cookies": {"name": "n"}}) == (
        "Invalid arguments: invalid type for `cookies`: expected an array"
    )
    assert (
        await call.error("set_cookies", {"session_id": sid}) == "Invalid arguments: missing field `cookies`"
    )
    events = (await call.export(sid))["events"][1:]
    assert [(event["outcome"], event.get("error_class")) for event in events] == [
        ("success", None), ("success", None), ("error", "invalid_input"), ("error", "invalid_input")
    ]  # fmt: skip
    assert [event["parameters"] for event in events] == [{"cookie_count": 0}, {"cookie_count": 3},
                                                         {"cookie_count": 0}, {"cookie_count": 0}]  # fmt: skip
    await call.ok("close_page", session_id=sid)


async def test_re_setting_a_cookie_counts_it(call: Caller, demo) -> None:
    sid = await _traced(call, demo)
    cookie = {"name": "twice", "value": "first", "url": demo.base_url}
    answer = await call.ok("set_cookies", session_id=sid, cookies=[cookie, {**cookie, "value": "second"}])
    assert answer["set"] == 2
    jar = (await call.ok("get_cookies", session_id=sid))["cookies"]
    assert [(c["name"], c["value"]) for c in jar] == [("twice", "second")]
    await call.ok("close_page", session_id=sid)
