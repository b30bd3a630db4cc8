"""What the egress gate costs: a page load through the gate vs straight to the site, one run.

The 5k-element benchmark page plus 20 subresources (10 stylesheets, 10 images) served over
HTTP/1.1 keep-alive from loopback; two Chromiums from the same executable: one launched as the
engine launches it (gate as proxy, its switches), one launched plainly. Rounds are interleaved
and every load gets a fresh context (a cold cache, as a new session has). Target: the gate adds
<= 10 % to the page load.

Run: ``python benchmarks/bench_egress.py`` (or ``make bench``).
"""

from __future__ import annotations

import asyncio
import http.server
import sys
import threading
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, str(Path(__file__).parent))

from _report import median_ms, percentile_ms, report, time_async
from playwright.async_api import Browser, async_playwright

from plasmate_nb.browser import EgressGate, UrlPolicy
from plasmate_nb.browser.discovery import LAUNCH_ARGS, find_chromium
from plasmate_nb.browser.egress import chromium_args
from plasmate_nb.demo_site.server import large_page

ELEMENTS = 5000
SUBRESOURCES = 20
ROUNDS = 30
PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


class _Site(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real sites serve

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if parts.path == "/page":
            n = int(parse_qs(parts.query).get("sub", ["0"])[0])
            links = "".join(f'<link rel="stylesheet" href="/s{i}.css">' for i in range(n // 2))
            images = "".join(f'<img alt="" src="/i{i}.png">' for i in range(n - n // 2))
            body = (
                large_page(ELEMENTS)
                .replace("</head>", links + "</head>")
                .replace("<main>", "<main>" + images)
            )
            self._send(body.encode(), "text/html; charset=utf-8")
        elif parts.path.endswith(".css"):
            self._send(b"section { margin: 0 }" * 50, "text/css")
        elif parts.path.endswith(".png"):
            self._send(PIXEL, "image/png")
        else:
            self._send(b"", "text/plain", 404)

    def _send(self, body: bytes, kind: str, status: int = 200) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)


async def load(browser: Browser, url: str) -> None:
    context = await browser.new_context()
    try:
        page = await context.new_page()
        await page.goto(url, wait_until="load")
    finally:
        await context.close()


async def main() -> None:
    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{site.server_address[1]}/page?sub={SUBRESOURCES}"
    gate = EgressGate(UrlPolicy(allow_private_network=False, allowed_networks=("127.0.0.1/32",)))
    await gate.start()
    executable = find_chromium().executable
    async with async_playwright() as playwright:
        direct = await playwright.chromium.launch(executable_path=executable, args=list(LAUNCH_ARGS))
        gated = await playwright.chromium.launch(
            executable_path=executable, args=[*LAUNCH_ARGS, *chromium_args()], proxy={"server": gate.server}
        )
        browsers = {"direct": direct, "through the gate": gated}
        samples: dict[str, list[float]] = {name: [] for name in browsers}
        for browser in browsers.values():
            await load(browser, url)  # warm-up
        for _ in range(ROUNDS):
            for name, browser in browsers.items():  # interleaved: the same machine state for both
                samples[name] += await time_async(lambda b=browser: load(b, url), 1)
        for browser in browsers.values():
            await browser.close()
    await gate.aclose()
    site.shutdown()
    rows = [
        {"path": name, "p50_ms": median_ms(s), "p90_ms": percentile_ms(s, 0.9)} for name, s in samples.items()
    ]
    ratio = median_ms(samples["through the gate"]) / median_ms(samples["direct"])
    report(
        "egress",
        rows,
        {
            "page": f"{ELEMENTS} elements + {SUBRESOURCES} subresources, fresh context per load, {ROUNDS} rounds",
            "gate / direct (p50)": f"{ratio:.2f}x (target <= 1.10x)",
            "refusals": len(gate.refusals()),
        },
    )


if __name__ == "__main__":
    asyncio.run(main())
