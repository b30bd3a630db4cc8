"""SOM compile cost against a bare DOM walk (the floor) and Playwright's aria snapshot.

Pages of N elements (sections of h2, p, labelled input, button and link) for N = 1k, 5k,
20k and 50k, served over loopback http so the origin is a real one. Per size, in the same
run: median ``compile_page`` (cold: the whole page), a bare ``page.evaluate`` walk returning a
JSON tree, and ``page.locator("body").aria_snapshot(timeout=120_000)``; ratios, output sizes and
the growth exponent (log-log slope of SOM time over N). At 5k and 20k also the recompile after
one element changed (a heading's text, then the page settles as after an action; an incremental
compile, docs/contract.md#incremental-compile) and the full compile that records what incremental
ones replay (forced by a new stylesheet), and the first compile of a new document (after its first
frame, as ``navigate_to`` runs it: a new isolated world, so the compiler's code starts cold in V8),
against the cold compile (a full walk that records nothing, its code warm). Targets: SOM <= 2x walk and
<= 0.5x aria at every size, recompile after one change <= 0.2x cold at 5k and 20k, linear
growth, SOM JSON no larger than the aria YAML.

Run: ``python benchmarks/bench_som.py``.
"""

from __future__ import annotations

import asyncio
import functools
import http.server
import math
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _report import median_ms, report, time_async
from playwright.async_api import TimeoutError as PlaywrightTimeoutError
from playwright.async_api import async_playwright

from plasmate_nb.browser.discovery import find_chromium
from plasmate_nb.som import compile_page
from plasmate_nb.som.world import NEXT_FRAME_JS

SIZES = (1_000, 5_000, 20_000, 50_000)
ELEMENTS_PER_SECTION = 7  # div, h2, p, label, input, button, a
REPEATS = {1_000: 15, 5_000: 9, 20_000: 5, 50_000: 5}
RECOMPILE_SIZES = (5_000, 20_000)
NEW_DOCUMENTS = 5  # fresh loads whose first compile is timed
# After a change the page settles as it does after an action (a frame, then a task: the engine's
# settle), so the compile is timed, not the page's own relayout of the change.
SETTLED = NEXT_FRAME_JS
# Changes one heading's text per call (a different one each time), in the page's own world.
CHANGE_ONE = (
    "(n) => { document.querySelectorAll('h2')[n].textContent = 'Changed ' + n; return " + SETTLED + "; }"
)
# A new (empty) stylesheet: the next incremental-capable compile falls back to a full one.
NEW_SHEET = "() => { document.head.appendChild(document.createElement('style')); return " + SETTLED + "; }"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
BARE_WALK = """() => {
  const walk = (el) => {
    const node = {tag: el.localName, id: el.id, text: '', children: []};
    for (let c = el.firstChild; c; c = c.nextSibling) {
      if (c.nodeType === 3) node.text += c.data;
      else if (c.nodeType === 1) node.children.push(walk(c));
    }
    return node;
  };
  return JSON.stringify(walk(document.body));
}"""


def page_html(elements: int) -> str:
    sections = []
    for i in range(elements // ELEMENTS_PER_SECTION):
        sections.append(
            f'<div class="s"><h2>Heading {i}</h2><p>Paragraph {i} explains item {i}.</p>'
            f'<label for="f{i}">Field {i}</label><input id="f{i}" name="f{i}" value="v{i}">'
            f'<button type="button">Button {i}</button><a href="/item/{i}">Link {i}</a></div>'
        )
    return f'<!DOCTYPE html><html lang="en"><head><title>Bench {elements}</title></head><body><main>{"".join(sections)}</main></body></html>'


def serve(directory: str) -> http.server.ThreadingHTTPServer:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=directory))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


async def measure(page, base: str, size: int) -> dict:
    await page.goto(f"{base}/page_{size}.html")
    repeat = REPEATS[size]

    async def som_once() -> None:
        compiled = await compile_page(page, timeout=60, incremental=False)
        await compiled.dispose()

    walk_json = await page.evaluate(BARE_WALK)
    aria_yaml = await aria_or_none(page)
    som = await compile_page(page, timeout=60)
    await som.dispose()
    await som_once()  # warm both paths before timing
    som_ms = median_ms(await time_async(som_once, repeat))
    walk_ms = median_ms(await time_async(lambda: page.evaluate(BARE_WALK), repeat))
    changed = iter(range(10_000))

    modes: list[str] = []

    async def incremental_once() -> None:
        compiled = await compile_page(page, timeout=60)
        modes.append(compiled.stats["mode"])
        await compiled.dispose()

    async def recompile_after_one_change() -> float:
        await page.evaluate(CHANGE_ONE, next(changed))
        return median_ms(await time_async(incremental_once, 1))

    async def full_with_recording() -> float:
        await page.evaluate(NEW_SHEET)
        return median_ms(await time_async(incremental_once, 1))

    recompile_ms = recording_ms = new_document_ms = None
    if size in RECOMPILE_SIZES:
        # As navigate_to does it: a new document, its first frame, then its first (recording) compile.
        # Each document has a new isolated world, so the compiler's code starts cold in V8.
        samples = []
        for n in range(NEW_DOCUMENTS):
            await page.goto(f"{base}/page_{size}.html?document={n}")
            await page.evaluate(SETTLED)
            samples.append(median_ms(await time_async(incremental_once, 1)))
        new_document_ms = sorted(samples)[NEW_DOCUMENTS // 2]
        # On a fresh load of the page, as a session's actions run: the cold walks above leave the
        # compiler's code tuned for a walk that records nothing, which the engine never does first.
        await page.goto(f"{base}/page_{size}.html?recompile")
        await incremental_once()  # the record the recompiles start from
        for _ in range(3):  # warm the replay path (as som_once warms the cold one)
            await recompile_after_one_change()
        modes.clear()
        recompile_ms = sorted([await recompile_after_one_change() for _ in range(repeat)])[repeat // 2]
        recording_ms = sorted([await full_with_recording() for _ in range(max(3, repeat // 2))])[
            max(3, repeat // 2) // 2
        ]
    aria_ms = (
        median_ms(await time_async(lambda: aria_or_none(page), max(3, repeat // 2)))
        if aria_yaml is not None
        else None
    )
    row = {
        "elements": size,
        "som_ms": som_ms,
        "walk_ms": walk_ms,
        "aria_ms": aria_ms,
        "som/walk": som_ms / walk_ms,
        "som/aria": som_ms / aria_ms if aria_ms is not None else None,
        "recompile_ms": recompile_ms,
        "recompile/cold": recompile_ms / som_ms if recompile_ms is not None else None,
        "recompile_modes": ",".join(sorted(set(modes[:repeat]))) or None,
        "full_recording_ms": recording_ms,
        "full_recording/cold": recording_ms / som_ms if recording_ms is not None else None,
        "new_document_ms": new_document_ms,
        "new_document/cold": new_document_ms / som_ms if new_document_ms is not None else None,
        "som_bytes": len(som.text.encode()),
        "walk_bytes": len(walk_json.encode()),
        "aria_bytes": len(aria_yaml.encode()) if aria_yaml is not None else None,
    }
    print(row, file=sys.stderr, flush=True)  # progress: the large sizes take minutes
    return row


async def aria_or_none(page) -> str | None:
    """Playwright's aria snapshot, or None when it does not finish in two minutes (large pages on a busy machine)."""
    try:
        return await page.locator("body").aria_snapshot(timeout=120_000)
    except PlaywrightTimeoutError:
        return None


def growth_exponent(rows: list[dict]) -> float:
    xs = [math.log(r["elements"]) for r in rows]
    ys = [math.log(r["som_ms"]) for r in rows]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)


async def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        for size in SIZES:
            Path(directory, f"page_{size}.html").write_text(page_html(size))
        server = serve(directory)
        base = f"http://127.0.0.1:{server.server_address[1]}"
        try:
            async with async_playwright() as playwright:
                browser = await playwright.chromium.launch(
                    executable_path=find_chromium().executable, headless=True, args=LAUNCH_ARGS
                )
                page = await browser.new_page()
                rows = [await measure(page, base, size) for size in SIZES]
                await browser.close()
        finally:
            server.shutdown()
            server.server_close()
    exponent = growth_exponent(rows)
    notes = {
        "growth_exponent": exponent,
        "target_som_le_2x_walk": all(r["som/walk"] <= 2.0 for r in rows),
        "target_som_le_half_aria": all(r["som/aria"] <= 0.5 for r in rows if r["som/aria"] is not None),
        "target_recompile_le_0_2x_cold": all(
            r["recompile/cold"] <= 0.2 for r in rows if r["recompile/cold"] is not None
        ),
        "target_som_json_le_aria_yaml": all(
            r["som_bytes"] <= r["aria_bytes"] for r in rows if r["aria_bytes"] is not None
        ),
        "target_linear_growth": exponent <= 1.15,
    }
    report("bench_som", rows, notes)


if __name__ == "__main__":
    asyncio.run(main())
