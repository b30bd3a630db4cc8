"""Head to head with Playwright MCP over stdio: the same SDK client, Chromium and pages, interleaved.

Four servers, each its own stdio subprocess with its own Chromium (/usr/bin/chromium or what
``find_chromium`` finds): ours with full answers, ours with ``som_answers: "changes"`` (both traced),
Playwright MCP as it ships, and Playwright MCP lean (``--snapshot-mode none --timeout-settle 0``: no
page model in any answer, no settle wait). Per round, on each server in turn (the order rotates):

- ``navigate + model``: ours ``navigate_to`` (its answer carries the whole model); theirs
  ``browser_navigate`` then ``browser_snapshot`` (their action answers carry no model inline: the
  shipped mode writes the snapshot to a file and links it, the lean mode takes none);
- ``click`` a button and ``type_text`` into a labelled input, by the id / ref the model gave.

A fifth contender in the same rotation is no server: Playwright's own ``page.goto`` (to the load
event) of the same page, in a Chromium of the same build launched from this process (no egress
gate). It is the floor of any
``navigate + model``, and the targets table says what fraction of Playwright MCP's time it takes
(a target below that fraction cannot be met by loading the page in a browser at all).

Every row reports the median time at the client and the answer bytes (the text content; ``wire``
adds what else the result carries: our ``structuredContent`` copy and ``_meta`` labels).
``@playwright/mcp`` is installed with npm into a cache directory on first use; without npm or the
package the comparison says why and prints our rows only.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from statistics import median
from typing import Any

from _report import report
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from playwright.async_api import Page, async_playwright

from plasmate_nb.browser.discovery import find_chromium
from plasmate_nb.demo_site import DemoSite
from plasmate_nb.trace.som_walk import iter_elements

SIZES = (1000, 5000)
ROUNDS = 8
TYPED = "benchmark text"
PACKAGE = "@playwright/mcp"
INSTALL_DIR = Path(
    os.environ.get("PLASMATE_NB_PLAYWRIGHT_MCP_DIR", Path.home() / ".cache/plasmate_nb/playwright-mcp")
)
OURS = [sys.executable, "-m", "plasmate_nb", "serve", "--allow-private-network"]
LEAN = ["--snapshot-mode", "none", "--timeout-settle", "0"]
STEPS = ("navigate + model", "click", "type_text")
PAGE_LOAD = "page load alone"  # the floor contender's name and its one step


def playwright_mcp() -> tuple[Path | None, str]:
    """The installed ``playwright-mcp`` binary and its version, or None and why not."""
    binary = INSTALL_DIR / "node_modules" / ".bin" / "playwright-mcp"
    if not binary.exists():
        if shutil.which("npm") is None:
            return None, "npm is not installed"
        INSTALL_DIR.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(INSTALL_DIR), PACKAGE],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        if done.returncode != 0 or not binary.exists():
            return None, f"npm install {PACKAGE} failed: {done.stderr.strip()[-300:]}"
    manifest = INSTALL_DIR / "node_modules" / "@playwright" / "mcp" / "package.json"
    return binary, json.loads(manifest.read_text())["version"]


def _sizes(result: Any) -> tuple[int, int]:
    text = sum(
        len(block.text.encode()) for block in result.content if getattr(block, "text", None) is not None
    )
    wire = len(json.dumps(result.model_dump(mode="json", by_alias=True, exclude_none=True)).encode())
    return text, wire


class Contender:
    """One server: how it navigates, clicks and types, and what each step cost."""

    steps: tuple[str, ...] = STEPS

    def __init__(self, name: str, server: StdioServerParameters | None) -> None:
        self.name = name
        self.server = server
        self.client: Client | None = None
        self.samples: dict[str, list[tuple[float, int, int]]] = {step: [] for step in self.steps}

    async def connect(self, stack: AsyncExitStack) -> None:
        assert self.server is not None
        self.client = await stack.enter_async_context(Client(stdio_client(self.server)))

    async def start(self, url: str) -> None:
        raise NotImplementedError

    async def round(self, url: str) -> None:
        raise NotImplementedError

    async def timed(self, step: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
        assert self.client is not None
        results, elapsed, text, wire = [], 0.0, 0, 0
        for tool, arguments in calls:
            start = time.perf_counter()
            result = await self.client.call_tool(tool, arguments)
            elapsed += time.perf_counter() - start
            assert not result.is_error, (self.name, tool, result.content)
            sizes = _sizes(result)
            text, wire = text + sizes[0], wire + sizes[1]
            results.append(result)
        self.samples[step].append((elapsed, text, wire))
        return results


class Ours(Contender):
    def __init__(self, name: str, som_answers: str) -> None:
        super().__init__(name, StdioServerParameters(command=OURS[0], args=OURS[1:]))
        self.som_answers = som_answers
        self.session: str = ""
        self.button = self.field = ""

    async def start(self, url: str) -> None:
        assert self.client is not None
        result = await self.client.call_tool(
            "open_page", {"url": url, "trace": True, "som_answers": self.som_answers}
        )
        self.session = json.loads(result.content[0].text)["session_id"]

    async def round(self, url: str) -> None:
        (navigated,) = await self.timed(
            "navigate + model", [("navigate_to", {"session_id": self.session, "url": url})]
        )
        regions = json.loads(navigated.content[0].text)["regions"]
        elements = list(iter_elements({"regions": regions}))
        self.button = next(e["id"] for e in elements if e["role"] == "button")
        self.field = next(e["id"] for e in elements if e["role"] == "text_input")
        (clicked,) = await self.timed(
            "click", [("click", {"session_id": self.session, "element_id": self.button})]
        )
        await self.timed(
            "type_text",
            [("type_text", {"session_id": self.session, "element_id": self.field, "text": TYPED})],
        )
        assert ("changes" in json.loads(clicked.content[0].text)) == (self.som_answers == "changes")


class Theirs(Contender):
    def __init__(self, name: str, binary: Path, extra: list[str], workspace: str) -> None:
        chromium = str(find_chromium().executable)
        args = [
            "--browser",
            "chromium",
            "--executable-path",
            chromium,
            "--headless",
            "--isolated",
            "--no-sandbox",
        ]
        super().__init__(name, StdioServerParameters(command=str(binary), args=args + extra, cwd=workspace))
        self.button = self.field = ""

    async def start(self, url: str) -> None:
        assert self.client is not None
        await self.client.call_tool("browser_navigate", {"url": url})

    async def round(self, url: str) -> None:
        _, snapshot = await self.timed(
            "navigate + model", [("browser_navigate", {"url": url}), ("browser_snapshot", {})]
        )
        yaml = snapshot.content[0].text
        self.button = re.search(r'button "Button 0" \[ref=(\w+)\]', yaml).group(1)  # type: ignore[union-attr]
        self.field = re.search(r'textbox "Field 0" \[ref=(\w+)\]', yaml).group(1)  # type: ignore[union-attr]
        await self.timed("click", [("browser_click", {"target": self.button, "element": "Button 0"})])
        await self.timed(
            "type_text",
            [("browser_type", {"target": self.field, "element": "Field 0", "text": TYPED})],
        )


class PageLoad(Contender):
    """No server: Playwright's ``goto`` to the load event, the floor of any navigate + model."""

    steps = (PAGE_LOAD,)

    def __init__(self) -> None:
        super().__init__(PAGE_LOAD, None)
        self.page: Page | None = None

    async def connect(self, stack: AsyncExitStack) -> None:
        playwright = await stack.enter_async_context(async_playwright())
        browser = await playwright.chromium.launch(
            executable_path=str(find_chromium().executable), headless=True, args=["--no-sandbox"]
        )
        stack.push_async_callback(browser.close)
        self.page = await browser.new_page()

    async def start(self, url: str) -> None:
        assert self.page is not None
        await self.page.goto(url, wait_until="load")

    async def round(self, url: str) -> None:
        assert self.page is not None
        start = time.perf_counter()
        await self.page.goto(url, wait_until="load")
        self.samples[PAGE_LOAD].append((time.perf_counter() - start, 0, 0))


async def _compare(contenders: list[Contender], url: str) -> None:
    async with AsyncExitStack() as stack:
        for contender in contenders:
            await contender.connect(stack)
            await contender.start(url)
            await contender.round(url)  # warm-up, then forget it
            contender.samples = {step: [] for step in contender.steps}
        for number in range(ROUNDS):
            turn = number % len(contenders)
            for contender in contenders[turn:] + contenders[:turn]:
                await contender.round(url)


def _rows(size: int, contenders: list[Contender]) -> list[dict[str, Any]]:
    rows = []
    for contender in contenders:
        for step in contender.steps:
            samples = contender.samples[step]
            rows.append({
                "elements": size, "server": contender.name, "step": step,
                "median_ms": 1000 * median(s[0] for s in samples),
                "answer_bytes": int(median(s[1] for s in samples)), "wire_bytes": int(median(s[2] for s in samples)),
            })  # fmt: skip
    return rows


def _ratios(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each target's ratio; for navigate + model also the floor's: the page load alone over theirs."""
    at = {(r["elements"], r["server"], r["step"]): r["median_ms"] for r in rows}
    targets = (
        ("ours changes", "click", "Playwright MCP lean", 1.0),
        ("ours changes", "type_text", "Playwright MCP lean", 1.0),
        ("ours full", "navigate + model", "Playwright MCP", 0.25),
        ("ours full", "click", "Playwright MCP", 0.25),
    )
    out = []
    for size in SIZES:
        for ours, step, theirs, target in targets:
            if (size, theirs, step) in at:
                ratio = at[(size, ours, step)] / at[(size, theirs, step)]
                floor = at.get((size, PAGE_LOAD, PAGE_LOAD)) if step == "navigate + model" else None
                out.append({"elements": size, "step": step, "ours": ours, "theirs": theirs, "ratio": ratio,
                            "target": f"<= {target}", "met": "yes" if ratio <= target else "NO",
                            "floor": None if floor is None else floor / at[(size, theirs, step)]})  # fmt: skip
    return out


async def head_to_head(site: DemoSite) -> None:
    binary, version = playwright_mcp()
    notes: dict[str, Any] = {
        "rounds": ROUNDS,
        "client": "mcp SDK Client over stdio",
        "chromium": str(find_chromium().executable),
    }
    if binary is None:
        print(f"\nhead to head: Playwright MCP unavailable ({version}); our rows only")
        notes["playwright_mcp"] = f"unavailable: {version}"
    else:
        notes["playwright_mcp"] = f"{PACKAGE} {version}"
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as workspace:  # where Playwright MCP writes its snapshot files
        for size in SIZES:
            contenders: list[Contender] = [
                Ours("ours full", "full"),
                Ours("ours changes", "changes"),
                PageLoad(),
            ]
            if binary is not None:
                contenders += [
                    Theirs("Playwright MCP", binary, [], workspace),
                    Theirs("Playwright MCP lean", binary, LEAN, workspace),
                ]
            await _compare(contenders, site.url(f"/large?n={size}"))
            rows += _rows(size, contenders)
    report("head_to_head", rows, notes)
    if binary is not None:
        report("head_to_head_targets", _ratios(rows))
