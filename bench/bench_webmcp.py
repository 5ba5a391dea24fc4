"""WebMCP benchmark: `browser_webmcp_call` against a direct `executeTool` through `page.evaluate`.

Raw Playwright and `Session` each drive their own Chromium (WebMCP switched on) on the demo's
webmcp.html and call its `echo_text` tool, alternating, in one run. As in the code execution
benchmark, from two places, each against raw Playwright on the same loop: the runtime loop, where
an agent's call runs (`await session.acall(...)`), and the main thread's own loop
(`session.webmcp_call(...)`, one thread hop each way, as a notebook cell calls). Then the floor
(`benchmarks_md.FLOOR_NOTE`), in a pass of its own on the runtime loop. Prints medians and ratios;
with --write, replaces the WebMCP section of BENCHMARKS.md.

    python bench/bench_webmcp.py [--rounds 150] [--write BENCHMARKS.md]
"""

from __future__ import annotations

import asyncio
import functools
import math
import platform
import statistics
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from benchmarks_md import FLOOR_NOTE, bench_parser, floor_ratio, place_rows, publish
from playwright.async_api import Page, async_playwright

from webmcp_nb import Envelope, Session
from webmcp_nb.core.backends.chromium import launch_args
from webmcp_nb.demo import DemoServer

CHROMIUM = "/usr/bin/chromium"
BEGIN, END = "<!-- bench_webmcp:begin -->", "<!-- bench_webmcp:end -->"
TARGET = 1.3
WARM_UP = 5
DIRECT = """async (text) => {
  const tool = (await document.modelContext.getTools()).find((t) => t.name === "echo_text");
  return await document.modelContext.executeTool(tool, {text});
}"""
PLACES = {
    "loop": "on the runtime loop: `await session.acall(...)` (an agent's call)",
    "thread": "from the main thread: `session.webmcp_call(...)` (one thread hop each way)",
}


async def raw_page(url: str) -> tuple[Any, Page]:
    """Raw Playwright on the loop that awaits it: its own Chromium, on `url` with WebMCP ready."""
    playwright = await async_playwright().start()
    browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=launch_args("native"))
    page = await (await browser.new_context()).new_page()
    await page.goto(url)
    await page.wait_for_function("document.getElementById('webmcp-status').textContent === 'WebMCP ready'")
    return playwright, page


async def alternate(
    page: Page, call: Callable[[str], Awaitable[Envelope]], rounds: int
) -> tuple[list[float], list[float]]:
    """ms of the raw `executeTool` and of `call(text)`, one after the other, after a warm-up."""
    raw_times, session_times = [], []
    for index in range(rounds + WARM_UP):
        text = f"round {index}"
        started = time.perf_counter()
        assert await page.evaluate(DIRECT, text) == text
        raw_ms = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        envelope = await call(text)
        session_ms = (time.perf_counter() - started) * 1000
        assert envelope.ok and envelope.data["text"] == text, envelope  # type: ignore[index]
        if index >= WARM_UP:
            raw_times.append(raw_ms)
            session_times.append(session_ms)
    return raw_times, session_times


def run(rounds: int) -> tuple[dict[str, tuple[float, float]], float]:
    """(raw ms, session ms) per place, medians; and the floor's ratio."""
    main_loop = asyncio.new_event_loop()
    results, lowest = {}, math.nan
    with DemoServer() as demo, Session() as session:
        url = demo.url_for("webmcp.html")
        session.navigate(url).raise_for_status()
        session.webmcp_list().raise_for_status()

        async def in_place(text: str) -> Envelope:
            return await session.acall("browser_webmcp_call", name="echo_text", input={"text": text})

        async def across_threads(text: str) -> Envelope:
            return session.webmcp_call("echo_text", {"text": text})  # blocks this loop, as a notebook cell does

        places: dict[str, tuple[Callable[[Coroutine[Any, Any, Any]], Any], Callable[[str], Awaitable[Envelope]]]] = {
            "loop": (session.runtime.run, in_place),
            "thread": (main_loop.run_until_complete, across_threads),
        }
        for place, (run_on, call) in places.items():
            playwright, page = run_on(raw_page(url))
            raw_times, session_times = run_on(alternate(page, call, rounds))
            if place == "loop":
                lowest = run_on(floor_ratio(functools.partial(page.evaluate, DIRECT, "floor"), page.context, rounds))
            run_on(page.context.browser.close())
            run_on(playwright.stop())
            results[place] = (statistics.median(raw_times), statistics.median(session_times))
    main_loop.close()
    return results, lowest


def report(results: dict[str, tuple[float, float]], lowest: float, rounds: int) -> str:
    return "\n".join(
        [
            BEGIN,
            (
                "WebMCP: a page tool call (`echo_text`), raw `executeTool` through `page.evaluate` vs "
                f"`browser_webmcp_call` on the same loop (median of {rounds} alternating rounds per place; "
                "`python bench/bench_webmcp.py`)."
            ),
            (
                f"Machine: {platform.machine()}, {platform.python_version()}, Chromium at {CHROMIUM}, "
                f"run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}."
            ),
            "",
            "| called | raw Playwright (ms) | `browser_webmcp_call` (ms) | ratio | target |",
            "|---|---:|---:|---:|---:|",
            *place_rows(PLACES, results, TARGET),
            "",
            (
                f"{FLOOR_NOTE} Here `executeTool` then the cookie read took {lowest:.2f}x `executeTool` alone "
                "(a pass of its own on the runtime loop)."
            ),
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
