"""Many instances on one machine: 1, 2, 4 and 8 instances driven at once from one `Session`.

Eight instances are launched, each its own Chromium on the demo shop; for each N, the first N
are driven by a worker each, which loops snapshot -> click ("Add Banana", then "Clear cart", so
the page stays the same size) for a fixed time; all workers await `Session.acall` from one
event loop. Eight raw Playwright browsers (one driver, as a hand-written script would have them)
run the same loop alternately: the physical limit of the machine at each N. N = 1, 2, 4, 8 are
measured in turn, in several cycles. Prints throughput (calls/s),
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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

import psutil
from benchmarks_md import bench_parser, publish
from playwright.async_api import Page, Playwright, async_playwright

from webmcp_nb import Envelope, Session
from webmcp_nb.core.chromium import launch_args
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


def window(loop: asyncio.AbstractEventLoop, workers: list[Worker], result: Result) -> int:
    """Run `workers` at once for one window; add their throughput and latencies to `result`; the calls
    made (warm-up included)."""

    async def all_at_once() -> int:
        start = time.perf_counter()
        measure_from, until = start + WARMUP_S, start + WARMUP_S + WINDOW_S
        return sum(await asyncio.gather(*(worker(until, measure_from, result.latencies_ms) for worker in workers)))

    started = time.perf_counter()
    calls = loop.run_until_complete(all_at_once())
    result.throughputs.append(calls / WINDOW_S)
    return round(calls * (time.perf_counter() - started) / WINDOW_S)


def measure(
    loop: asyncio.AbstractEventLoop, session: Session, names: list[str], pids: list[int], result: Result
) -> None:
    """Drive the instances `names` (browsers `pids`) for one window, measuring where the CPU went."""
    driver = session.engine.manager.driver_status()["pid"]
    parts = {"Python": lambda: own_cpu_s(os.getpid()), "driver": lambda: own_cpu_s(driver),
             "browsers": lambda: cpu_s(pids)}  # fmt: skip
    before = {part: read() for part, read in parts.items()}
    psutil.cpu_percent()
    result.calls_made += window(loop, [functools.partial(drive, session, name) for name in names], result)
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


def run(cycles: int) -> tuple[list[Result], list[Result]]:
    """Launch max(COUNTS) instances (and as many raw Playwright browsers), then drive the first N of
    each for each N, `Session` and raw alternating, in `cycles` cycles (the order of N and of the
    sides reversed every other cycle, so the machine's drift hits all alike)."""
    results = {count: Result(count) for count in COUNTS}
    raw_results = {count: Result(count) for count in COUNTS}
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
                for side in ("session", "raw") if cycle % 2 == 0 else ("raw", "session"):
                    if side == "session":
                        measure(loop, session, names[:count], pids[:count], results[count])
                    else:
                        window(loop, [functools.partial(drive_raw, page) for page in pages[:count]], raw_results[count])
        loop.run_until_complete(playwright.stop())
    loop.close()
    return list(results.values()), list(raw_results.values())


def report(results: list[Result], raw_results: list[Result], cycles: int) -> str:
    one, four = results[COUNTS.index(1)], results[COUNTS.index(4)]
    raw_one = raw_results[COUNTS.index(1)]
    ratios = [four_s / one_s for one_s, four_s in zip(one.throughputs, four.throughputs, strict=True)]
    lines = [
        BEGIN,
        (
            f"Many instances: N of {max(COUNTS)} launched instances driven at once from one `Session` (each its own "
            f"Chromium on the demo shop, looping snapshot -> click by ref), {WINDOW_S:g} s measured after "
            f"{WARMUP_S:g} s of warm-up per N, in {cycles} cycles (`python bench/bench_instances.py`). calls/s: "
            "median over the cycles, beside raw Playwright's (as many browsers of its own, one driver, the same "
            "loop, windows alternating with the Session's); p50 and p99 over every call. Memory per instance (mean): PSS and USS of its "
            "browser's process tree (PSS splits pages shared between processes; USS is what closing it frees); "
            "the one Playwright driver they share is not included. CPU per call: this process (the runtime "
            "thread and the benchmark's loop), the Node driver, the browsers. Cores used: calls/s times that. "
            "Ceiling: the calls/s at that CPU cost if the whole machine were ours. Machine busy: every process on the machine, other users' "
            "included."
        ),
        (
            f"Machine: {platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}, Chromium at "
            f"{CHROMIUM}, run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}."
        ),
        "",
        (
            "| instances | calls/s | vs 1 instance | raw Playwright calls/s | raw vs 1 | p50 (ms) | p99 (ms) "
            "| memory per instance, PSS / USS (MB) "
            "| CPU per call (ms): Python / driver / browsers | cores used | CPU-bound ceiling (calls/s) | machine busy |"
        ),
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for result, raw in zip(results, raw_results, strict=True):
        lines.append(
            f"| {result.instances} | {result.throughput:.1f} | {result.throughput / one.throughput:.2f}x | "
            f"{raw.throughput:.1f} | {raw.throughput / raw_one.throughput:.2f}x | "
            f"{result.percentile(0.5):.1f} | {result.percentile(0.99):.1f} | "
            f"{statistics.mean(pss for pss, _ in result.memory_mb):.0f} / "
            f"{statistics.mean(uss for _, uss in result.memory_mb):.0f} | "
            f"{' / '.join(f'{value:.1f}' for value in result.cpu_ms_per_call.values())} | "
            f"{result.throughput * sum(result.cpu_ms_per_call.values()) / 1000:.2f} | {result.ceiling:.0f} | "
            f"{100 * statistics.mean(result.machine_busy):.0f}% |"
        )
    lines += [
        "",
        (
            f"4 instances / 1 instance: {four.throughput / one.throughput:.2f}x (target >= {TARGET}x); per cycle "
            f"{min(ratios):.2f}-{max(ratios):.2f}x."
        ),
        END,
    ]
    return "\n".join(lines)


def main() -> None:
    parser = bench_parser(__doc__, 3)
    options = parser.parse_args()
    publish(report(*run(options.rounds), options.rounds), options.write, BEGIN, END)


if __name__ == "__main__":
    main()
