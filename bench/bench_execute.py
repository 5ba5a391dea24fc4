"""Code execution benchmark: `browser_execute` of a one-line snippet against the same Playwright call done raw.

Raw Playwright and `Session` each drive their own Chromium on the demo shop; the raw side awaits
`page.title()`, the session runs the snippet `await page.title()`, alternating (which side goes
first alternates too). Two places to call from, each against raw Playwright on the same loop:

- the runtime loop, where an agent's call runs (the MCP server is on it) and where
  `session.runtime.run(coro)` runs a notebook's batch: `await session.acall(...)`, no thread hop;
- the main thread's own loop: `session.call(...)`, which crosses to the runtime thread and back.

Then the floor (`benchmarks_md.FLOOR_NOTE`), in a pass of its own on the runtime loop's raw page.

Prints medians and ratios; with --write, replaces the execute section of BENCHMARKS.md.

    python bench/bench_execute.py [--rounds 500] [--write BENCHMARKS.md]
"""

from __future__ import annotations

import asyncio
import platform
import statistics
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from benchmarks_md import FLOOR_NOTE, bench_parser, floor_ratio, place_rows, publish
from playwright.async_api import async_playwright

from webmcp_nb import Envelope, Session
from webmcp_nb.core.backends.chromium import launch_args
from webmcp_nb.demo import DemoServer

CHROMIUM = "/usr/bin/chromium"
BEGIN, END = "<!-- bench_execute:begin -->", "<!-- bench_execute:end -->"
TARGET = 1.3
SNIPPET = "await page.title()"
TITLE = "Demo Shop"
BLOCKS = 10
PLACES = {
    "loop": "on the runtime loop: `await session.acall(...)` (an agent's call; `session.runtime.run(coro)`)",
    "thread": "from the main thread: `session.call(...)` (one thread hop each way)",
}


class RawPage:
    """Raw Playwright on the loop that starts it: a browser of its own, on the demo shop."""

    async def start(self, url: str) -> RawPage:
        self.playwright = await async_playwright().start()
        self.browser = await self.playwright.chromium.launch(executable_path=CHROMIUM, args=launch_args("native"))
        self.page = await (await self.browser.new_context(viewport={"width": 1280, "height": 720})).new_page()
        await self.page.goto(url)
        return self

    async def stop(self) -> None:
        await self.browser.close()
        await self.playwright.stop()


async def alternate(
    raw: RawPage, execute: Callable[[], Awaitable[Envelope]], rounds: int
) -> tuple[list[float], list[float]]:
    """ms of raw Playwright's `page.title()` and of `execute()`, called alternately (which goes first
    alternates too) from the loop `raw` was started on."""

    async def raw_side() -> float:
        started = time.perf_counter()
        assert await raw.page.title() == TITLE
        return (time.perf_counter() - started) * 1000

    async def session_side() -> float:
        started = time.perf_counter()
        envelope = await execute()
        elapsed = (time.perf_counter() - started) * 1000
        assert envelope.ok and envelope.data["value"] == TITLE, envelope  # type: ignore[index]
        return elapsed

    times: dict[Callable[[], Awaitable[float]], list[float]] = {raw_side: [], session_side: []}
    for index in range(rounds):
        for side in (raw_side, session_side) if index % 2 == 0 else (session_side, raw_side):
            times[side].append(await side())
    return times[raw_side], times[session_side]


def run(rounds: int) -> tuple[dict[str, tuple[float, float]], float]:
    """(raw ms, session ms) per place: medians over blocks of rounds that take turns between the places
    (after a warm-up block each), so that neither place runs on fresher browsers than the other."""
    with DemoServer() as demo, Session() as session:
        session.navigate(demo.url).raise_for_status()
        main_loop = asyncio.new_event_loop()

        async def in_place() -> Envelope:
            return await session.acall("browser_execute", code=SNIPPET)

        async def across_threads() -> Envelope:
            return session.call("browser_execute", code=SNIPPET)  # blocks this loop, as a notebook cell does

        places: dict[str, tuple[Callable[[Coroutine[Any, Any, Any]], Any], Callable[[], Awaitable[Envelope]]]] = {
            "loop": (session.runtime.run, in_place),
            "thread": (main_loop.run_until_complete, across_threads),
        }
        raws = {place: run_on(RawPage().start(demo.url)) for place, (run_on, _) in places.items()}
        times: dict[str, tuple[list[float], list[float]]] = {place: ([], []) for place in places}
        for block in range(BLOCKS + 1):
            for place in list(places) if block % 2 == 0 else list(places)[::-1]:
                run_on, execute = places[place]
                raw_ms, session_ms = run_on(alternate(raws[place], execute, max(1, rounds // BLOCKS)))
                if block > 0:  # block 0 warms both places up
                    times[place][0].extend(raw_ms)
                    times[place][1].extend(session_ms)
        loop_page = raws["loop"].page
        lowest = session.runtime.run(floor_ratio(loop_page.title, loop_page.context, rounds))
        for place, (run_on, _) in places.items():
            run_on(raws[place].stop())
        main_loop.close()
    medians = {
        place: (statistics.median(raw_ms), statistics.median(session_ms))
        for place, (raw_ms, session_ms) in times.items()
    }
    return medians, lowest


def report(results: dict[str, tuple[float, float]], lowest: float, rounds: int) -> str:
    return "\n".join(
        [
            BEGIN,
            (
                f"Code execution: `browser_execute` of `{SNIPPET}` vs the same call in raw Playwright on the same "
                f"loop (median of {rounds} alternating rounds per place, in blocks taking turns between the places; `python bench/bench_execute.py`)."
            ),
            (
                f"Machine: {platform.machine()}, {platform.python_version()}, Chromium at {CHROMIUM}, "
                f"run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}."
            ),
            "",
            "| called | raw Playwright (ms) | `browser_execute` (ms) | ratio | target |",
            "|---|---:|---:|---:|---:|",
            *place_rows(PLACES, results, TARGET),
            "",
            (
                f"{FLOOR_NOTE} Here `page.title()` then the cookie read took {lowest:.2f}x the title alone "
                "(a pass of its own on the runtime loop)."
            ),
            END,
        ]
    )


def main() -> None:
    parser = bench_parser(__doc__, 500)
    options = parser.parse_args()
    publish(report(*run(options.rounds), options.rounds), options.write, BEGIN, END)


if __name__ == "__main__":
    main()
