"""WebMCP benchmark: `browser_webmcp_call` against a direct `executeTool` through `page.evaluate`.

Raw Playwright and `Session` each drive their own Chromium (WebMCP switched on) on the demo's
webmcp.html and call its `echo_text` tool, alternating, in one run. Prints medians and the
ratio; with --write, replaces the WebMCP section of BENCHMARKS.md.

    python bench/bench_webmcp.py [--rounds 150] [--write BENCHMARKS.md]
"""

from __future__ import annotations

import asyncio
import platform
import statistics
import time

from benchmarks_md import bench_parser, publish
from playwright.async_api import async_playwright

from webmcp_nb import Session
from webmcp_nb.core.backends.chromium import launch_args
from webmcp_nb.demo import DemoServer

CHROMIUM = "/usr/bin/chromium"
BEGIN, END = "<!-- bench_webmcp:begin -->", "<!-- bench_webmcp:end -->"
TARGET = 1.3
DIRECT = """async (text) => {
  const tool = (await document.modelContext.getTools()).find((t) => t.name === "echo_text");
  return await document.modelContext.executeTool(tool, {text});
}"""


def run(rounds: int) -> tuple[float, float]:
    loop = asyncio.new_event_loop()
    with DemoServer() as demo:
        url = demo.url_for("webmcp.html")

        async def launch():
            playwright = await async_playwright().start()
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=launch_args("native"))
            page = await (await browser.new_context()).new_page()
            await page.goto(url)
            await page.wait_for_function("document.getElementById('webmcp-status').textContent === 'WebMCP ready'")
            return playwright, browser, page

        playwright, browser, page = loop.run_until_complete(launch())
        session = Session()
        session.navigate(url).raise_for_status()
        session.webmcp_list().raise_for_status()
        raw_times, session_times = [], []
        for index in range(rounds + 5):
            text = f"round {index}"
            started = time.perf_counter()
            assert loop.run_until_complete(page.evaluate(DIRECT, text)) == text
            raw_ms = (time.perf_counter() - started) * 1000
            started = time.perf_counter()
            envelope = session.webmcp_call("echo_text", {"text": text})
            session_ms = (time.perf_counter() - started) * 1000
            assert envelope.ok and envelope.data["text"] == text, envelope  # type: ignore[index]
            if index >= 5:  # warm-up
                raw_times.append(raw_ms)
                session_times.append(session_ms)
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
                f"WebMCP: a page tool call, raw `executeTool` through `page.evaluate` vs `browser_webmcp_call` "
                f"(median of {rounds} alternating rounds; `python bench/bench_webmcp.py`)."
            ),
            (
                f"Machine: {platform.machine()}, {platform.python_version()}, Chromium at {CHROMIUM}, "
                f"run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}."
            ),
            "",
            "| operation | raw Playwright (ms) | Session (ms) | ratio | target |",
            "|---|---:|---:|---:|---:|",
            f"| call `echo_text` | {raw_ms:.2f} | {session_ms:.2f} | {session_ms / raw_ms:.2f} | <= {TARGET} |",
            END,
        ]
    )


def main() -> None:
    parser = bench_parser(__doc__, 150)
    options = parser.parse_args()
    section = report(*run(options.rounds), options.rounds)
    publish(section, options.write, BEGIN, END)


if __name__ == "__main__":
    main()
