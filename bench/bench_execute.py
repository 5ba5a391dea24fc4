"""Code execution benchmark: `browser_execute` of a one-line snippet against the same Playwright call done raw.

Raw Playwright and `Session` each drive their own Chromium on the demo shop; the raw side awaits
`page.title()`, the session runs the snippet `await page.title()`, alternating (which side goes
first alternates too). Two places to call from, each against raw Playwright on the same loop:

- the runtime loop, where an agent's call runs (the MCP server is on it) and where
  `session.runtime.run(coro)` runs a notebook's batch: `await session.acall(...)`, no thread hop;
- the main thread's own loop: `session.call(...)`, which crosses to the runtime thread and back.

A third side, the floor, is raw Playwright's `page.title()` followed by `context.cookies()`: every
call reads the instance's cookies once its tool has returned (a value the page repeats is then
scrubbed from the result, docs/secrets.md), and a snippet can set cookies, so no call can end
sooner than that.

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

from benchmarks_md import bench_parser, publish
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
) -> tuple[list[float], list[float], list[float]]:
    """ms of raw Playwright's `page.title()`, of `execute()` and of the floor, called in turn (which
    goes first rotates too) from the loop `raw` was started on."""

    async def raw_side() -> float:
        started = time.perf_counter()
        assert await raw.page.title() == TITLE
        return (time.perf_counter() - started) * 1000

    async def floor_side() -> float:
        started = time.perf_counter()
        assert await raw.page.title() == TITLE
        await raw.page.context.cookies()
        return (time.perf_counter() - started) * 1000

    async def session_side() -> float:
        started = time.perf_counter()
        envelope = await execute()
        elapsed = (time.perf_counter() - started) * 1000
        assert envelope.ok and envelope.data["value"] == TITLE, envelope  # type: ignore[index]
        return elapsed

    sides = (raw_side, session_side, floor_side)
    times: dict[Callable[[], Awaitable[float]], list[float]] = {side: [] for side in sides}
    for index in range(rounds):
        for side in sides[index % 3 :] + sides[: index % 3]:
            times[side].append(await side())
    return times[raw_side], times[session_side], times[floor_side]


def run(rounds: int) -> dict[str, tuple[float, float, float]]:
    """(raw ms, session ms, floor ms) per place: medians over blocks of rounds that take turns between the places
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
        times: dict[str, tuple[list[float], list[float], list[float]]] = {place: ([], [], []) for place in places}
        for block in range(BLOCKS + 1):
            for place in list(places) if block % 2 == 0 else list(places)[::-1]:
                run_on, execute = places[place]
                measured = run_on(alternate(raws[place], execute, max(1, rounds // BLOCKS)))
                if block > 0:  # block 0 warms both places up
                    for kept, new in zip(times[place], measured, strict=True):
                        kept.extend(new)
        for place, (run_on, _) in places.items():
            run_on(raws[place].stop())
        main_loop.close()
    return {
        place: (statistics.median(raw_ms), statistics.median(session_ms), statistics.median(floor_ms))
        for place, (raw_ms, session_ms, floor_ms) in times.items()
    }


def report(results: dict[str, tuple[float, float, float]], rounds: int) -> str:
    rows = [
        f"| {PLACES[place]} | {raw_ms:.2f} | {session_ms:.2f} | {session_ms / raw_ms:.2f} | "
        f"{f'<= {TARGET}' if place == 'loop' else ''} | {floor_ms:.2f} ({floor_ms / raw_ms:.2f}) | "
        f"{session_ms / floor_ms:.2f} |"
        for place, (raw_ms, session_ms, floor_ms) in results.items()
    ]
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
            "| called | raw Playwright (ms) | `browser_execute` (ms) | ratio | target | floor: raw + cookie read (ms, / raw) | / floor |",
            "|---|---:|---:|---:|---:|---:|---:|",
            *rows,
            END,
        ]
    )


def main() -> None:
    parser = bench_parser(__doc__, 500)
    options = parser.parse_args()
    publish(report(run(options.rounds), options.rounds), options.write, BEGIN, END)


if __name__ == "__main__":
    main()
