"""Privacy under hostile use, over the real MCP server (a ``serve --transport http`` subprocess):
random action sequences carry generated secrets in every input that can hold one (typed text,
selected values, URL userinfo/path/query/fragment, cookie names/values/domains, evaluate source
and results, page text that becomes labels and ids). Neither a secret nor its plain SHA-256 hex
appears in any trace payload (trace_status, trace_export, trace_clear, replay_validate,
final_trace), in the notebook's tables, widget states or reprs, or in the server's stderr.
Action responses and evaluate results carry page content on purpose and are not checked."""

from __future__ import annotations

import json
import random
import string
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import plasmate_nb.notebook as nb
from plasmate_nb._loop import run_sync
from plasmate_nb.client import ToolError
from plasmate_nb.trace.som_walk import iter_elements
from tests.reliability.support import SIZED, TOKEN, Remote, Sizes, leaks, record_figures, remote

ACTIONS = (
    "navigate",
    "click",
    "type",
    "select",
    "toggle",
    "clear",
    "scroll",
    "evaluate",
    "cookies",
    "trace",
    "replay",
    "close",
)
START_PAGES = ("echo", "login", "details")
URL_PARTS = ("path", "query", "fragment", "userinfo")
secrets = st.text(alphabet=string.ascii_lowercase + string.digits, min_size=10, max_size=20).map(
    lambda s: "zq" + s
)


class Sites:
    def __init__(self, demo: Any, hostile: str) -> None:
        self.demo, self.hostile = demo, hostile

    def start(self, page: str) -> str:
        return f"{self.hostile}/echo.html" if page == "echo" else self.demo.url(f"/{page}.html")

    def with_secret(self, url: str, secret: str, where: str) -> str:
        scheme, rest = url.split("://", 1)
        return {
            "path": f"{url}/{secret}",
            "query": f"{url}?q={secret}",
            "fragment": f"{url}#{secret}",
            "userinfo": f"{scheme}://user:{secret}@{rest}",
        }[where]


class Driver:
    """One example: a random action sequence with ``secret`` in every input; collects trace payloads."""

    def __init__(self, client: Remote, sites: Sites, secret: str, rng: random.Random) -> None:
        self.client, self.sites, self.secret, self.rng = client, sites, secret, rng
        self.sid: str | None = None
        self.page: dict[str, Any] = {}
        self.trace_texts: list[str] = []
        self.actions: Counter[str] = Counter()

    async def open(self, start: str, where: str) -> None:
        url = self.sites.with_secret(self.sites.start(start), self.secret, where)
        opened = await self.client.call("open_page", {"url": url, "trace": True})
        if not opened.ok:  # a 404 path or refused credentials: open the plain page instead
            opened = await self.client.call("open_page", {"url": self.sites.start(start), "trace": True})
        assert opened.ok, opened.payload
        self.sid, self.page = opened.payload["session_id"], opened.payload
        self.actions["open_page"] += 1

    def _element(self, action: str) -> str:
        ids = [
            e["id"]
            for e in iter_elements({"regions": self.page.get("regions", [])})
            if action in e.get("actions", [])
        ]
        return self.rng.choice(ids) if ids else "e_absent"

    async def _act(self, tool: str, **arguments: Any) -> None:
        outcome = await self.client.call(tool, {"session_id": self.sid, **arguments})
        self.actions[tool] += 1
        if outcome.ok and isinstance(outcome.payload, dict) and "regions" in outcome.payload:
            self.page = outcome.payload

    async def _trace(self, tool: str, **arguments: Any) -> Any:
        outcome = await self.client.call(tool, {"session_id": self.sid, **arguments})
        self.trace_texts.append(json.dumps(outcome.payload))
        self.actions[tool] += 1
        return outcome.payload

    async def step(self, action: str) -> None:
        s, rng = self.secret, self.rng
        if action == "navigate":
            base = self.sites.start(rng.choice(START_PAGES))
            await self._act("navigate_to", url=self.sites.with_secret(base, s, rng.choice(URL_PARTS)))
        elif action == "click":
            await self._act("click", element_id=self._element("click"))
        elif action == "type":
            await self._act("type_text", element_id=self._element("type"), text=s, append=rng.random() < 0.5)
        elif action == "select":
            await self._act(
                "select_option", element_id=self._element("select"), value=rng.choice([s, "two", "team"])
            )
        elif action in ("toggle", "clear"):
            await self._act(action, element_id=self._element(action))
        elif action == "scroll":
            await self._act(
                "scroll", direction=rng.choice(["up", "down", "top", "bottom"]), pixels=rng.randint(0, 900)
            )
        elif action == "evaluate":
            await self._act(
                "evaluate",
                expression=rng.choice(
                    [
                        f"'{s}'",
                        f"document.title + ' {s}'",
                        f"(() => {{ document.querySelector('h1').textContent = '{s}'; return {{secret: '{s}'}}; }})()",
                    ]
                ),
            )
        elif action == "cookies":
            await self._act(
                "set_cookies",
                cookies=[
                    {"name": f"n{s}", "value": s, "domain": "127.0.0.1", "path": "/"},
                    {"name": "d", "value": s, "domain": f"{s}.test", "path": "/"},
                ],
            )
            await self._act("get_cookies")
            await self._act("clear_cookies", **rng.choice([{"name": f"n{s}"}, {"domain": f"{s}.test"}, {}]))
        elif action == "trace":
            await self._trace("trace_status")
            await self._trace("trace_export")
            if rng.random() < 0.3:
                await self._trace("trace_clear")
        elif action == "replay":
            await self.replay_all()
        elif action == "close":
            await self.close()

    async def replay_all(self) -> None:
        export = await self._trace("trace_export")
        trace_id = (await self._trace("trace_status"))["trace_id"]
        for event in export["events"][-6:]:
            await self._trace(
                "replay_validate",
                trace_id=trace_id,
                sequence=event["sequence"],
                confirmed=self.rng.random() < 0.5,
            )

    async def close(self) -> None:
        await self.replay_all()
        await self._trace("close_page")
        self.sid = None


async def _drive(
    url: str, sites: Sites, secret: str, start: str, where: str, plan: list[str], seed: int
) -> Driver:
    async with remote(url) as client:
        driver = Driver(client, sites, secret, random.Random(seed))
        for action in plan:
            if driver.sid is None:
                await driver.open(start, where)
            await driver.step(action)
        if driver.sid is not None:
            await driver.close()
        return driver


def _texts(obj: Any) -> list[str]:
    out = [repr(obj), str(obj)]
    for method in ("_repr_html_", "snapshot_html"):
        if hasattr(obj, method):  # read without the break opportunities a long run gets
            out.append(getattr(obj, method)().replace("<wbr>", ""))
    if hasattr(obj, "_repr_mimebundle_"):
        out.append(json.dumps(obj._repr_mimebundle_(), default=str).replace("<wbr>", ""))
    if hasattr(obj, "get_state"):
        out.append(json.dumps(obj.get_state(), default=str).replace("<wbr>", ""))
    return out


def _frame(frame: Any) -> list[str]:
    return [frame.to_string(), frame.to_html(), json.dumps(frame.astype(str).to_numpy().tolist())]


def _notebook_surfaces(url: str, sites: Sites, secret: str) -> list[str]:
    """The notebook layer over the same server: tables, widget states and reprs of a secret-laden trace."""
    texts: list[str] = []
    with nb.Session.connect(url, token=TOKEN) as s:
        page = s.open(sites.with_secret(sites.start("echo"), secret, "query") + f"#{secret}")
        s.type_text(page.find(role="text_input"), secret)
        with pytest.raises(ToolError):
            s.select_option(s.page.find(role="select"), secret)
        s.evaluate(f"'{secret}'")
        s.set_cookies([{"name": f"n{secret}", "value": secret, "domain": "127.0.0.1"}])
        s.scroll("down")
        dashboard, panel = s.trace.dashboard(), s.replay_panel()
        texts += [
            *_texts(s),
            *_texts(s.trace.status()),
            *_texts(s.trace.export()),
            *_texts(dashboard),
            *_texts(panel),
        ]
        texts += _frame(s.trace.events(columns="all")) + _frame(s.replay_validate_all(progress=False))
        for sequence in s.trace.export().events()["sequence"].tolist():
            texts += _texts(s.replay_validate(sequence, confirmed=True))
        texts += _texts(s.trace.clear())
        dashboard.stop()
        panel.stop()
        final = s.close()
    return texts + _texts(final) + _frame(final.events(columns="all"))


@SIZED
def test_no_secret_reaches_traces_notebook_views_or_logs(server_process, demo, hostile, sizes: Sizes) -> None:
    sites = Sites(demo, hostile)
    tried: list[str] = []
    actions: Counter[str] = Counter()

    @settings(
        max_examples=sizes.privacy_examples,
        deadline=None,
        database=None,
        phases=[
            Phase.explicit,
            Phase.generate,
        ],  # a leak is reported as found: shrinking a browser run is slow
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(
        secret=secrets,
        start=st.sampled_from(START_PAGES),
        where=st.sampled_from(URL_PARTS),
        plan=st.lists(st.sampled_from(ACTIONS), min_size=4, max_size=14),
        seed=st.integers(0, 2**32 - 1),
    )
    def example(secret: str, start: str, where: str, plan: list[str], seed: int) -> None:
        tried.append(secret)
        driver = run_sync(_drive(server_process.url, sites, secret, start, where, plan, seed))
        actions.update(driver.actions)
        assert not leaks(secret, driver.trace_texts), "a secret reached a trace payload"
        assert not leaks(secret, _notebook_surfaces(server_process.url, sites, secret)), (
            "a secret reached a notebook view"
        )
        assert not leaks(secret, [server_process.stderr()]), "a secret reached the server log"

    example()
    assert not any(leaks(secret, [server_process.stderr()]) for secret in tried)
    record_figures(
        sizes,
        "privacy",
        secrets_tried=len(tried),
        tool_calls=sum(actions.values()),
        calls_by_tool=dict(sorted(actions.items())),
        server_stderr_bytes=len(server_process.stderr()),
    )
