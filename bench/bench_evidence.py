"""Evidence benchmark: what recording costs, and what reading it costs.

1. Capture on the page's hot path: a page that makes 1,000 requests (`fetch` of a tiny
   response, bodies read) is timed as raw Playwright without listeners (the physical limit) and
   through `Session`, which records every request and console message; sides alternate.
2. Reading 1,000 network records: `browser_network(limit=500)` twice (a cursor in between) and a
   HAR export of all of them, in-process.

    python bench/bench_evidence.py [--rounds 5] [--write BENCHMARKS.md]
"""

from __future__ import annotations

import asyncio
import platform
import statistics
import time

from benchmarks_md import bench_parser, publish

from webmcp_nb import Session
from webmcp_nb.demo import DemoServer

BEGIN, END = "<!-- bench_evidence:begin -->", "<!-- bench_evidence:end -->"
REQUESTS = 1000
FETCH_ALL = f"""async () => {{
  for (let i = 0; i < {REQUESTS}; i += 50) {{
    await Promise.all(Array.from({{length: 50}}, (_, j) => fetch('/status?code=204&n=' + (i + j))));
  }}
  return {REQUESTS};
}}"""
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]


async def raw_run(url: str, rounds: int) -> list[float]:
    from playwright.async_api import async_playwright

    times = []
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = await browser.new_page()
        await page.goto(url)
        for _ in range(rounds):
            started = time.perf_counter()
            await page.evaluate(FETCH_ALL)
            times.append(time.perf_counter() - started)
        await browser.close()
    return times


def session_run(session: Session, rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        session.evaluate(FETCH_ALL).raise_for_status()
        times.append(time.perf_counter() - started)
    return times


def reading(session: Session) -> tuple[float, float]:
    started = time.perf_counter()
    first = session.network(limit=500).raise_for_status()
    session.network(limit=500, after=first.data["next_cursor"]).raise_for_status()
    read_ms = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    session.events_export(stream="network", format="har").raise_for_status()
    return read_ms, (time.perf_counter() - started) * 1000


def main() -> None:
    parser = bench_parser(__doc__, 5)
    options = parser.parse_args()
    with DemoServer() as demo, Session(event_buffer_size=REQUESTS + 10) as session:
        url = demo.url_for("index.html")
        session.navigate(url).raise_for_status()
        raw: list[float] = []
        ours: list[float] = []
        for _ in range(options.rounds):  # alternate, one round each
            raw += asyncio.run(raw_run(url, 1))
            ours += session_run(session, 1)
        session.navigate(url).raise_for_status()
        session_run(session, 1)  # exactly 1,000 requests retained, newest
        read_ms, har_ms = reading(session)
    raw_ms, our_ms = statistics.median(raw) * 1000, statistics.median(ours) * 1000
    section = "\n".join(
        [
            BEGIN,
            "## Evidence",
            "",
            (
                f"{REQUESTS} `fetch` requests made by the page (bodies read), median of {options.rounds} rounds per "
                "side, sides alternating: raw Playwright with no listeners against `Session`, which records every "
                f"request and console message. Then reading the {REQUESTS} records back in-process. "
                f"Python {platform.python_version()}."
            ),
            "",
            "| measure | raw (ms) | webmcp_nb (ms) | ratio |",
            "|---|---|---|---|",
            f"| {REQUESTS} requests with capture on | {raw_ms:.0f} | {our_ms:.0f} | {our_ms / raw_ms:.2f} |",
            f"| `browser_network` x2 (500 each) | | {read_ms:.1f} | |",
            f"| HAR export of {REQUESTS} records | | {har_ms:.1f} | |",
            END,
        ]
    )
    publish(section, options.write, BEGIN, END)


if __name__ == "__main__":
    main()
