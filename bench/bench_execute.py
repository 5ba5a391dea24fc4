"""Code execution benchmark: `browser_execute` of a one-line snippet against the same Playwright call done raw.

Raw Playwright and `Session` each drive their own Chromium on the demo shop; the raw side awaits
`page.title()`, the session runs the snippet `await page.title()`, alternating (which side goes
first alternates too), in one run. Prints medians and the ratio; with --write, replaces the
execute section of BENCHMARKS.md.

    python bench/bench_execute.py [--rounds 500] [--write BENCHMARKS.md]
"""

from __future__ import annotations

import asyncio
import platform
import statistics
import time

from benchmarks_md import bench_parser, publish
from playwright.async_api import async_playwright

from webmcp_nb import Session
from webmcp_nb.core.chromium import launch_args
from webmcp_nb.demo import DemoServer

CHROMIUM = "/usr/bin/chromium"
BEGIN, END = "<!-- bench_execute:begin -->", "<!-- bench_execute:end -->"
TARGET = 1.3
SNIPPET = "await page.title()"
WARM_UP = 5


def run(rounds: int) -> tuple[float, float]:
    loop = asyncio.new_event_loop()
    with DemoServer() as demo:

        async def launch():
            playwright = await async_playwright().start()
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=launch_args("native"))
            page = await (await browser.new_context(viewport={"width": 1280, "height": 720})).new_page()
            await page.goto(demo.url)
            return playwright, browser, page

        playwright, browser, page = loop.run_until_complete(launch())
        session = Session()
        session.navigate(demo.url).raise_for_status()

        def raw() -> float:
            started = time.perf_counter()
            assert loop.run_until_complete(page.title()) == "Demo Shop"
            return (time.perf_counter() - started) * 1000

        def execute() -> float:
            started = time.perf_counter()
            envelope = session.call("browser_execute", code=SNIPPET)
            elapsed = (time.perf_counter() - started) * 1000
            assert envelope.ok and envelope.data["value"] == "Demo Shop", envelope  # type: ignore[index]
            return elapsed

        raw_times, session_times = [], []
        for index in range(rounds + WARM_UP):
            sides = (raw, execute) if index % 2 == 0 else (execute, raw)
            measured = {side: side() for side in sides}
            if index >= WARM_UP:
                raw_times.append(measured[raw])
                session_times.append(measured[execute])
        session.close()
        loop.run_until_complete(browser.close())
        loop.run_until_complete(playwright.stop())
    loop.close()
    return statistics.median(raw_times), statistics.median(session_times)


def report(raw_ms: float, session_ms: float, rounds: int) -> str:
    return "\n".join(
        [
            BEGIN,
            (
                f"Code execution: `browser_execute` of `{SNIPPET}` vs the same call in raw Playwright "
                f"(median of {rounds} alternating rounds; `python bench/bench_execute.py`)."
            ),
            (
                f"Machine: {platform.machine()}, {platform.python_version()}, Chromium at {CHROMIUM}, "
                f"run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}."
            ),
            "",
            "| operation | raw Playwright (ms) | Session (ms) | ratio | target |",
            "|---|---:|---:|---:|---:|",
            f"| `{SNIPPET}` | {raw_ms:.2f} | {session_ms:.2f} | {session_ms / raw_ms:.2f} | <= {TARGET} |",
            END,
        ]
    )


def main() -> None:
    parser = bench_parser(__doc__, 500)
    options = parser.parse_args()
    section = report(*run(options.rounds), options.rounds)
    publish(section, options.write, BEGIN, END)


if __name__ == "__main__":
    main()
