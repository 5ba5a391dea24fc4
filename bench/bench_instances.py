"""Many instances on one machine: 1, 2, 4 and 8 instances driven at once from one `Session`.

Eight instances are launched, each its own Chromium on the demo shop; for each N, the first N
are driven by a worker each, which loops snapshot -> click ("Add Banana", then "Clear cart", so
the page stays the same size) for a fixed time; all workers await `Session.acall` from one
event loop: the Session's runtime loop (the recommended way, no thread hop per call), and in
turn another loop (each call crosses threads). Eight raw Playwright browsers (one driver, as a
hand-written script would have them) run the same loop alternately: the physical limit of the
machine at each N. N = 1, 2, 4, 8 are measured in turn, in several cycles. Prints throughput (calls/s),
latency (p50, p99), memory per instance (PSS and USS of each browser's process tree) and
where the CPU went; with --write, replaces the instances section of BENCHMARKS.md.

    python bench/bench_instances.py [--rounds 3] [--write BENCHMARKS.md]

(--rounds: cycles.)
"""

from __future__ import annotations

import asyncio
import functools
import os
import platform
import re
import statistics
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

import psutil
from benchmarks_md import bench_parser, publish
from playwright.async_api import Page, Playwright, async_playwright

from webmcp_nb import Envelope, Session
from webmcp_nb.core.backends.chromium import launch_args
from webmcp_nb.demo import DemoServer

CHROMIUM = "/usr/bin/chromium"
BEGIN, END = "<!-- bench_instances:begin -->", "<!-- bench_instances:end -->"
COUNTS = (1, 2, 4, 8)
WARMUP_S = 1.0
WINDOW_S = 4.0  # measured seconds per N and cycle
TARGET = 2.5  # 4 instances against 1, in throughput
BUTTONS = ("Add Banana", "Clear cart")
T = TypeVar("T")


@dataclass
class Result:
    """What the windows with `instances` driven instances measured, over every cycle."""

    instances: int
    throughputs: list[float] = field(default_factory=list)  # calls/s, one per cycle
    latencies_ms: list[float] = field(default_factory=list)
    cpu_s: dict[str, float] = field(default_factory=dict)  # Python (this process), driver, browsers
    calls_made: float = 0.0  # warm-up calls included, to share out `cpu_s`
    machine_busy: list[float] = field(default_factory=list)  # share of all cores busy, every process counted
    memory_mb: list[tuple[float, float]] = field(default_factory=list)  # per instance: (PSS, USS)

    @property
    def throughput(self) -> float:
        return statistics.median(self.throughputs)

    @property
    def cpu_ms_per_call(self) -> dict[str, float]:
        return {part: 1000 * spent / self.calls_made for part, spent in self.cpu_s.items()}

    @property
    def ceiling(self) -> float:
        """Calls/s if the whole machine's CPU were ours at this CPU cost per call."""
        return (os.cpu_count() or 1) * 1000 / sum(self.cpu_ms_per_call.values())

    def percentile(self, q: float) -> float:
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def ref_of(snapshot: str, name: str) -> str:
    found = re.search(rf'button "{re.escape(name)}"[^\n]*? \[ref=(\w+)\]', snapshot)  # [active] may come first
    assert found, f"no {name!r} button in the snapshot"
    return found.group(1)


def own_cpu_s(pid: int) -> float:
    """User + system CPU time of the process `pid` alone (the driver: its browsers are counted apart)."""
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


def cpu_s(pids: list[int]) -> float:
    """User + system CPU time of the processes `pids` and their descendants so far."""
    total = 0.0
    for pid in pids:
        root = psutil.Process(pid)
        for process in [root, *root.children(recursive=True)]:
            try:
                times = process.cpu_times()
            except psutil.NoSuchProcess:
                continue
            total += times.user + times.system
    return total


def tree_memory_mb(pid: int) -> tuple[float, float]:
    """(PSS, USS) of a browser and its children: its share of every page it maps (what it costs, pages
    shared with other instances split between them), and the pages only it maps (what closing it frees)."""
    root = psutil.Process(pid)
    pss = uss = 0
    for process in [root, *root.children(recursive=True)]:
        try:
            memory = process.memory_full_info()
        except psutil.NoSuchProcess:
            continue
        pss, uss = pss + memory.pss, uss + memory.uss
    return pss / 2**20, uss / 2**20


async def drive(session: Session, name: str, until: float, measure_from: float, latencies: list[float]) -> int:
    """Snapshot and click on instance `name` until `until`; the calls after `measure_from` count."""
    calls, turn = 0, 0

    async def timed(tool: str, **args: object) -> Envelope:
        nonlocal calls
        started = time.perf_counter()
        envelope = await session.acall(tool, instance=name, **args)
        finished = time.perf_counter()
        assert envelope.ok, envelope
        if started >= measure_from:
            calls += 1
            latencies.append((finished - started) * 1000)
        return envelope

    while time.perf_counter() < until:
        snapshot = (await timed("browser_snapshot")).data["snapshot"]  # type: ignore[index]
        await timed("browser_click", ref=ref_of(snapshot, BUTTONS[turn % 2]))
        turn += 1
    return calls


async def drive_raw(page: Page, until: float, measure_from: float, latencies: list[float]) -> int:
    """`drive` with raw Playwright on `page`."""
    calls, turn = 0, 0

    async def timed(work: Awaitable[T]) -> T:
        nonlocal calls
        started = time.perf_counter()
        outcome = await work
        if started >= measure_from:
            calls += 1
            latencies.append((time.perf_counter() - started) * 1000)
        return outcome

    while time.perf_counter() < until:
        snapshot = await timed(page.aria_snapshot(mode="ai"))
        await timed(page.locator(f"aria-ref={ref_of(snapshot, BUTTONS[turn % 2])}").click())
        turn += 1
    return calls


Worker = Callable[[float, float, list[float]], Awaitable[int]]


Runner = Callable[[Coroutine[Any, Any, int]], int]  # runs a coroutine to its end on some event loop


def window(run: Runner, workers: list[Worker], result: Result) -> int:
    """Run `workers` at once for one window (on the loop `run` uses); add their throughput and latencies
    to `result`; the calls made (warm-up included)."""

    async def all_at_once() -> int:
        start = time.perf_counter()
        measure_from, until = start + WARMUP_S, start + WARMUP_S + WINDOW_S
        return sum(await asyncio.gather(*(worker(until, measure_from, result.latencies_ms) for worker in workers)))

    started = time.perf_counter()
    calls = run(all_at_once())
    result.throughputs.append(calls / WINDOW_S)
    return round(calls * (time.perf_counter() - started) / WINDOW_S)


def measure(run: Runner, session: Session, names: list[str], pids: list[int], result: Result) -> None:
    """Drive the instances `names` (browsers `pids`) for one window from the loop `run` uses, measuring
    where the CPU went."""
    driver = session.engine.manager.driver_status()["pid"]
    parts = {"Python": lambda: own_cpu_s(os.getpid()), "driver": lambda: own_cpu_s(driver),
             "browsers": lambda: cpu_s(pids)}  # fmt: skip
    before = {part: read() for part, read in parts.items()}
    psutil.cpu_percent()
    result.calls_made += window(run, [functools.partial(drive, session, name) for name in names], result)
    result.machine_busy.append(psutil.cpu_percent() / 100)
    for part, read in parts.items():
        result.cpu_s[part] = result.cpu_s.get(part, 0.0) + read() - before[part]
    result.memory_mb = [tree_memory_mb(pid) for pid in pids]


async def launch_raw(playwright: Playwright, url: str) -> list[Page]:
    """max(COUNTS) browsers as a hand-written script would launch them, with the Session's flags."""
    pages = []
    for _ in range(max(COUNTS)):
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=launch_args("native"))
        page = await (await browser.new_context(viewport={"width": 1280, "height": 720})).new_page()
        await page.goto(url)
        pages.append(page)
    return pages


SIDES = ("session", "session_hop", "raw")


def run(cycles: int) -> dict[str, list[Result]]:
    """Launch max(COUNTS) instances (and as many raw Playwright browsers), then drive the first N of
    each for each N, in `cycles` cycles, from three sides in turn: the Session's workers on its own
    runtime loop (`session.runtime.run`, no thread hop per call), the same workers on another loop
    (this script's: every call crosses to the runtime thread and back), and raw Playwright. The order
    of N and of the sides is reversed every other cycle, so the machine's drift hits all alike."""
    results = {side: {count: Result(count) for count in COUNTS} for side in SIDES}
    names = [f"bench{index}" for index in range(max(COUNTS))]
    loop = asyncio.new_event_loop()
    with DemoServer() as demo, Session(max_instances=max(COUNTS)) as session:
        pids = []
        for name in names:
            created = session.create_instance(name, executable_path=CHROMIUM)
            pids.append(created.raise_for_status().data["instance"]["browser_pid"])  # type: ignore[index]
            session.navigate(demo.url, instance=name).raise_for_status()
        playwright = loop.run_until_complete(async_playwright().start())
        pages = loop.run_until_complete(launch_raw(playwright, demo.url))
        for cycle in range(cycles):
            for count in COUNTS if cycle % 2 == 0 else COUNTS[::-1]:
                for side in SIDES if cycle % 2 == 0 else SIDES[::-1]:
                    result = results[side][count]
                    if side == "raw":
                        raw_workers = [functools.partial(drive_raw, page) for page in pages[:count]]
                        window(loop.run_until_complete, raw_workers, result)
                    else:
                        run_on = session.runtime.run if side == "session" else loop.run_until_complete
                        measure(run_on, session, names[:count], pids[:count], result)
        loop.run_until_complete(playwright.stop())
    loop.close()
    return {side: list(by_count.values()) for side, by_count in results.items()}


def report(results: dict[str, list[Result]], cycles: int) -> str:
    def at(side: str, count: int) -> Result:
        return results[side][COUNTS.index(count)]

    def ratios(side: str) -> list[float]:
        return [four / one for one, four in zip(at(side, 1).throughputs, at(side, 4).throughputs, strict=True)]

    lines = [
        BEGIN,
        (
            f"Many instances: N of {max(COUNTS)} launched instances driven at once from one `Session` (each its own "
            f"Chromium on the demo shop, looping snapshot -> click by ref), {WINDOW_S:g} s measured after "
            f"{WARMUP_S:g} s of warm-up per N, in {cycles} cycles (`python bench/bench_instances.py`). Three sides "
            "take turns: the Session's workers on its runtime loop (`session.runtime.run(main())`: no thread hop "
            "per call, the way the Python API page's *Many instances at once* recommends), the same workers on another event "
            "loop (every call crosses to the runtime thread and back), and raw Playwright (as many browsers of its "
            "own, one driver, the same loop). calls/s: median over the cycles; p50 and p99 over every call. "
            "Memory per instance (mean): PSS and USS of its browser's process tree (PSS splits pages shared "
            "between processes; USS is what closing it frees); the one Playwright driver they share is not "
            "included. CPU per call: this process (the runtime thread and the benchmark's loop), the Node "
            "driver, the browsers. Cores used: calls/s times that. Ceiling: the calls/s at that CPU cost if the "
            "whole machine were ours. Machine busy: every process on the machine, other users' included. "
            "Latency, memory and CPU are the runtime-loop side's."
        ),
        (
            f"Machine: {platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}, Chromium at "
            f"{CHROMIUM}, run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}."
        ),
        "",
        (
            "| instances | calls/s | vs 1 instance | from another loop: calls/s | vs 1 | raw Playwright calls/s | raw vs 1 "
            "| p50 (ms) | p99 (ms) | memory per instance, PSS / USS (MB) "
            "| CPU per call (ms): Python / driver / browsers | cores used | CPU-bound ceiling (calls/s) | machine busy |"
        ),
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for count in COUNTS:
        result, hop, raw = at("session", count), at("session_hop", count), at("raw", count)
        lines.append(
            f"| {count} | {result.throughput:.1f} | {result.throughput / at('session', 1).throughput:.2f}x | "
            f"{hop.throughput:.1f} | {hop.throughput / at('session_hop', 1).throughput:.2f}x | "
            f"{raw.throughput:.1f} | {raw.throughput / at('raw', 1).throughput:.2f}x | "
            f"{result.percentile(0.5):.1f} | {result.percentile(0.99):.1f} | "
            f"{statistics.mean(pss for pss, _ in result.memory_mb):.0f} / "
            f"{statistics.mean(uss for _, uss in result.memory_mb):.0f} | "
            f"{' / '.join(f'{value:.1f}' for value in result.cpu_ms_per_call.values())} | "
            f"{result.throughput * sum(result.cpu_ms_per_call.values()) / 1000:.2f} | {result.ceiling:.0f} | "
            f"{100 * statistics.mean(result.machine_busy):.0f}% |"
        )
    four_to_one = at("session", 4).throughput / at("session", 1).throughput
    hop_four_to_one = at("session_hop", 4).throughput / at("session_hop", 1).throughput
    lines += [
        "",
        (
            f"4 instances / 1 instance: {four_to_one:.2f}x on the runtime loop (target >= {TARGET}x; per cycle "
            f"{min(ratios('session')):.2f}-{max(ratios('session')):.2f}x), {hop_four_to_one:.2f}x from another "
            f"loop (per cycle {min(ratios('session_hop')):.2f}-{max(ratios('session_hop')):.2f}x)."
        ),
        END,
    ]
    return "\n".join(lines)


def main() -> None:
    parser = bench_parser(__doc__, 3)
    options = parser.parse_args()
    publish(report(run(options.rounds), options.rounds), options.write, BEGIN, END)


if __name__ == "__main__":
    main()
