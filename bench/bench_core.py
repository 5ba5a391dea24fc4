"""Core benchmark: raw Playwright (the physical limit) against `Session`, in one run.

Both drive their own Chromium on the same demo pages, operation by operation,
alternating so that drift on the machine hits both sides alike. Prints medians
and ratios; with --write, replaces the core section of BENCHMARKS.md.

    python bench/bench_core.py [--rounds 30] [--write BENCHMARKS.md]
"""

from __future__ import annotations

import asyncio
import platform
import random
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable

from benchmarks_md import bench_parser, publish
from playwright.async_api import Page, async_playwright

from webmcp_nb import Session
from webmcp_nb.core.backends.chromium import launch_args
from webmcp_nb.demo import DemoServer

CHROMIUM = "/usr/bin/chromium"
BEGIN, END = "<!-- bench_core:begin -->", "<!-- bench_core:end -->"
FRAME_S = 1 / 60
# Each measured operation starts from a quiet page, as an agent's next call does. Without a
# rest, the side that runs second starts while its browser still digests its previous action
# (a click leaves ~40 ms of work), and alternating sides would measure each other's durations.
REST_S = 0.1
REF = re.compile(r'button "Add Banana" \[ref=(\w+)\]')


def ms(seconds: float) -> float:
    return seconds * 1000


class Raw:
    """Raw Playwright, as a hand-written script would use it."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.page: Page | None = None
        self.ref = ""

    def run(self, coro: Awaitable[object]) -> object:
        return self.loop.run_until_complete(coro)

    def timed(self, make: Callable[[], Awaitable[object]]) -> float:
        started = time.perf_counter()
        self.run(make())
        return ms(time.perf_counter() - started)

    async def launch(self, url: str) -> None:
        self.playwright = await async_playwright().start()
        self.browser = await self.playwright.chromium.launch(executable_path=CHROMIUM, args=launch_args("native"))
        context = await self.browser.new_context(viewport={"width": 1280, "height": 720})
        self.page = await context.new_page()
        await self.page.goto(url)

    async def close(self) -> None:
        await self.browser.close()
        await self.playwright.stop()


def bench_import() -> float:
    code = "import time; t = time.perf_counter(); import webmcp_nb; print((time.perf_counter() - t) * 1000)"
    runs = [float(subprocess.check_output([sys.executable, "-c", code], text=True)) for _ in range(7)]
    return statistics.median(runs)


def run(rounds: int) -> list[tuple[str, float, float]]:
    loop = asyncio.new_event_loop()
    results: list[tuple[str, float, float]] = []
    with DemoServer() as demo:
        shop, table = demo.url, demo.url_for("table.html")

        def launch_pair() -> tuple[float, float]:
            raw = Raw(loop)
            raw_ms = raw.timed(lambda: raw.launch(shop))
            raw.run(raw.close())
            started = time.perf_counter()
            with Session() as session:
                session.navigate(shop).raise_for_status()
                session_ms = ms(time.perf_counter() - started)
            return raw_ms, session_ms

        launches = [launch_pair() for _ in range(max(3, rounds // 6))]
        results.append(("launch + first page", *(statistics.median(side) for side in zip(*launches, strict=False))))

        raw = Raw(loop)
        raw.run(raw.launch(shop))
        session = Session()
        session.navigate(shop).raise_for_status()

        def sample(
            name: str, raw_op: Callable[[], Awaitable[object]], session_op: Callable[[], object], n: int
        ) -> None:
            raw_times, session_times = [], []
            for _ in range(2):  # warm-up
                raw.run(raw_op())
                session_op()

            def timed_session() -> float:
                started = time.perf_counter()
                envelope = session_op()
                assert envelope.ok, envelope  # type: ignore[attr-defined]
                return ms(time.perf_counter() - started)

            for index in range(n):
                # Browser work is paced by a 60 Hz frame clock (a click waits for animation
                # frames), so each pair starts at the same random phase of it, after the same
                # rest; which side goes first alternates.
                phase = random.uniform(0, FRAME_S)
                for side in (0, 1) if index % 2 == 0 else (1, 0):
                    time.sleep(REST_S + phase)
                    if side == 0:
                        raw_times.append(raw.timed(raw_op))
                    else:
                        session_times.append(timed_session())
            results.append((name, statistics.median(raw_times), statistics.median(session_times)))

        page = raw.page
        assert page is not None
        sample("navigate", lambda: page.goto(shop), lambda: session.navigate(shop), rounds)
        sample("snapshot", lambda: page.aria_snapshot(mode="ai"), lambda: session.snapshot(), rounds)
        raw_ref = REF.search(raw.run(page.aria_snapshot(mode="ai"))).group(1)  # type: ignore[union-attr]
        session_ref = REF.search(session.snapshot().data["snapshot"]).group(1)  # type: ignore[index,union-attr]
        sample(
            "click by ref",
            lambda: page.locator(f"aria-ref={raw_ref}").click(),
            lambda: session.click(session_ref),
            rounds,
        )
        sample("screenshot (png)", lambda: page.screenshot(), lambda: session.screenshot(), rounds)
        raw.run(page.goto(table))
        session.navigate(table).raise_for_status()
        sample(
            "snapshot, 2,000-row table",
            lambda: page.aria_snapshot(mode="ai"),
            lambda: session.snapshot(),
            max(5, rounds // 5),
        )
        session.close()
        raw.run(raw.close())
    loop.close()
    return results


def report(results: list[tuple[str, float, float]], import_ms: float, rounds: int) -> str:
    lines = [
        BEGIN,
        (
            f"Core: raw Playwright vs `Session` (median of {rounds} rounds; `python bench/bench_core.py`). "
            "Raw and Session alternate (which goes first alternates too); each operation starts after the same "
            f"{REST_S * 1000:.0f} ms rest and at the same random phase of the browser's frame clock."
        ),
        (
            f"Machine: {platform.machine()}, {platform.python_version()}, Chromium at {CHROMIUM}, "
            f"run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}."
        ),
        "",
        "| operation | raw Playwright (ms) | Session (ms) | ratio | target |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, raw_ms, session_ms in results:
        lines.append(f"| {name} | {raw_ms:.1f} | {session_ms:.1f} | {session_ms / raw_ms:.2f} | <= 1.15 |")
    lines += ["", f"`import webmcp_nb`: {import_ms:.1f} ms (target <= 100 ms).", END]
    return "\n".join(lines)


def main() -> None:
    parser = bench_parser(__doc__, 150)
    options = parser.parse_args()
    import_ms = bench_import()
    section = report(run(options.rounds), import_ms, options.rounds)
    publish(section, options.write, BEGIN, END)


if __name__ == "__main__":
    main()
