"""MCP round trips and the cost of tracing, side by side in one run.

1. ``trace_status`` round trip in-process, over stdio and over streamable HTTP (p50/p99, calls/s).
2. The same action script (click, type, scroll) on a 5k-element page through the dispatcher with
   trace on vs off, beside Playwright's own tracing (screenshots + snapshots) on the same script
   with plain Playwright calls. Target: our tracing adds <= 5% to action latency.
3. Traced ``open_page`` beside ``goto`` + a bare DOM walk (the floor). Target: <= 1.3x.
4. Head to head with Playwright MCP over stdio (``_head_to_head.py``): the same SDK client, the same
   Chromium, 1k and 5k-element pages, interleaved rounds; ours with full answers and with
   ``som_answers: "changes"``, theirs default and lean. Skipped with the reason (our rows still
   printed) when npm or the package is unavailable.

Run: ``python benchmarks/bench_mcp.py`` (or ``make bench``); ``--head-to-head`` runs part 4 only.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _head_to_head import head_to_head
from _report import median_ms, percentile_ms, report, time_async

from plasmate_nb.browser import Engine, EngineConfig
from plasmate_nb.browser.discovery import LAUNCH_ARGS, find_chromium
from plasmate_nb.client import HttpTransport, InProcessTransport, StdioTransport
from plasmate_nb.demo_site import DemoSite
from plasmate_nb.server import HttpServer
from plasmate_nb.tools import Dispatcher
from plasmate_nb.trace.som_walk import iter_elements

ELEMENTS = 5000
ROUND_TRIPS = 200
SCRIPT_REPEATS = 40
TOKEN = "bench-" + "b" * 40
BARE_WALK = """() => { const out = []; const walk = (n) => { for (const c of n.children) {
  out.push([c.tagName, c.id, (c.textContent || '').slice(0, 40)]); walk(c); } };
  walk(document.body); return JSON.stringify(out); }"""


async def round_trips(dispatcher: Dispatcher, site: DemoSite) -> list[dict]:
    http = await HttpServer(dispatcher, port=0, token=TOKEN).start()
    backends = {
        "in-process": InProcessTransport(dispatcher),
        "stdio": StdioTransport([sys.executable, "-m", "plasmate_nb", "serve", "--allow-private-network"]),
        "http": HttpTransport(http.url, token=TOKEN),
    }
    rows = []
    try:
        for name, transport in backends.items():
            opened = await transport.call("open_page", {"url": site.url("/login.html")})
            sid = opened["session_id"]
            await transport.call("trace_status", {"session_id": sid})  # warm-up
            samples = await time_async(lambda t=transport, s=sid: t.call("trace_status", {"session_id": s}),
                                       ROUND_TRIPS)  # fmt: skip
            await transport.call("close_page", {"session_id": sid})
            rows.append({
                "backend": name, "p50_ms": median_ms(samples), "p99_ms": percentile_ms(samples, 0.99),
                "calls_per_s": len(samples) / sum(samples),
            })  # fmt: skip
    finally:
        for transport in backends.values():
            await transport.aclose()
        await http.stop()
    return rows


def _first(payload: dict, role: str) -> str:
    return next(e["id"] for e in iter_elements({"regions": payload["regions"]}) if e["role"] == role)


async def traced_vs_untraced(dispatcher: Dispatcher, url: str) -> dict[str, dict[str, list[float]]]:
    results: dict[str, dict[str, list[float]]] = {"trace on": {}, "trace off": {}}
    sessions = {}
    for label, trace in (("trace on", True), ("trace off", False)):
        opened = json.loads((await dispatcher.call("open_page", {"url": url, "trace": trace})).text)
        sessions[label] = (opened["session_id"], _first(opened, "button"), _first(opened, "text_input"))
    for _ in range(SCRIPT_REPEATS):
        for label, (sid, button, field) in sessions.items():  # interleaved: same machine state for both
            for action, arguments in (
                ("click", {"element_id": button}),
                ("type_text", {"element_id": field, "text": "benchmark text"}),
                ("scroll", {"direction": "down", "pixels": 200}),
            ):
                start = time.perf_counter()
                result = await dispatcher.call(action, {"session_id": sid, **arguments})
                assert not result.is_error, result.text
                results[label].setdefault(action, []).append(time.perf_counter() - start)
    for sid, _, _ in sessions.values():
        await dispatcher.call("close_page", {"session_id": sid})
    return results


async def playwright_tracing(url: str) -> dict[str, dict[str, list[float]]]:
    from playwright.async_api import async_playwright

    results: dict[str, dict[str, list[float]]] = {"playwright": {}, "playwright tracing": {}}
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=find_chromium().executable,
                                                   args=list(LAUNCH_ARGS))  # fmt: skip
        pages = {}
        for label in results:
            context = await browser.new_context()
            if label == "playwright tracing":
                await context.tracing.start(screenshots=True, snapshots=True)
            page = await context.new_page()
            await page.goto(url)
            pages[label] = (context, page)
        for _ in range(SCRIPT_REPEATS):
            for label, (_, page) in pages.items():
                for action, run in (
                    ("click", lambda p=page: p.click("button >> nth=0")),
                    ("type_text", lambda p=page: p.fill("input >> nth=0", "benchmark text")),
                    ("scroll", lambda p=page: p.mouse.wheel(0, 200)),
                ):
                    start = time.perf_counter()
                    await run()
                    results[label].setdefault(action, []).append(time.perf_counter() - start)
        with tempfile.TemporaryDirectory() as folder:
            await pages["playwright tracing"][0].tracing.stop(path=str(Path(folder) / "trace.zip"))
        await browser.close()
    return results


async def open_vs_floor(dispatcher: Dispatcher, url: str) -> list[dict]:
    async def traced_open() -> None:
        opened = json.loads((await dispatcher.call("open_page", {"url": url, "trace": True})).text)
        await dispatcher.call("close_page", {"session_id": opened["session_id"]})

    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=find_chromium().executable,
                                                   args=list(LAUNCH_ARGS))  # fmt: skip
        page = await browser.new_page()

        async def floor() -> None:
            await page.goto(url)
            await page.evaluate(BARE_WALK)

        async def floor_with_lifecycle() -> None:  # the same context/page lifecycle a session has
            context = await browser.new_context()
            fresh = await context.new_page()
            await fresh.goto(url)
            await fresh.evaluate(BARE_WALK)
            await context.close()

        floor_samples = await time_async(floor, 10)
        lifecycle_samples = await time_async(floor_with_lifecycle, 10)
        await browser.close()
    ours = await time_async(traced_open, 10)
    return [
        {"step": "goto + bare DOM walk, reused page (floor)", "median_ms": median_ms(floor_samples)},
        {"step": "new context + goto + bare walk + close", "median_ms": median_ms(lifecycle_samples)},
        {"step": "traced open_page + close_page", "median_ms": median_ms(ours),
         "ratio": median_ms(ours) / median_ms(floor_samples),
         "ratio_same_lifecycle": median_ms(ours) / median_ms(lifecycle_samples)},
    ]  # fmt: skip


async def main() -> None:
    with DemoSite() as site:
        if "--head-to-head" in sys.argv[1:]:
            await head_to_head(site)
            return
        engine = Engine(EngineConfig(max_sessions=10))
        dispatcher = Dispatcher(engine)
        try:
            report("mcp_round_trips", await round_trips(dispatcher, site))
            url = site.url(f"/large?n={ELEMENTS}")
            ours = await traced_vs_untraced(dispatcher, url)
            theirs = await playwright_tracing(url)
            rows = []
            for action in ("click", "type_text", "scroll"):
                on, off = median_ms(ours["trace on"][action]), median_ms(ours["trace off"][action])
                pw, pw_traced = (median_ms(theirs[k][action]) for k in ("playwright", "playwright tracing"))
                rows.append({
                    "action": action, "ours_trace_off_ms": off, "ours_trace_on_ms": on,
                    "ours_overhead_pct": 100 * (on - off) / off,
                    "playwright_ms": pw, "playwright_tracing_ms": pw_traced,
                    "playwright_overhead_pct": 100 * (pw_traced - pw) / pw,
                })  # fmt: skip
            report("tracing_overhead", rows, {"elements": ELEMENTS, "repeats": SCRIPT_REPEATS,
                                              "target": "ours_overhead_pct <= 5"})  # fmt: skip
            report("open_page_vs_floor", await open_vs_floor(dispatcher, url), {"target": "ratio <= 1.3"})
        finally:
            await engine.aclose()
        await head_to_head(site)


if __name__ == "__main__":
    asyncio.run(main())
