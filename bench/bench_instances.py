"""Many instances on one machine: 1, 2, 4 and 8 instances driven at once from one `Session`.

Each instance has its own Chromium on the demo shop and its own worker, which loops
snapshot -> click ("Add Banana", then "Clear cart", so the page stays the same size) for a
fixed time; all workers await `Session.acall` from one event loop. Prints throughput (calls/s),
latency (p50, p99), memory per instance (PSS and USS of each browser's process tree) and
where the CPU went; with --write, replaces the instances section of BENCHMARKS.md.

    python bench/bench_instances.py [--rounds 8] [--write BENCHMARKS.md]

(--rounds: seconds of measured calls per instance count.)
"""

from __future__ import annotations

import asyncio
import os
import platform
import re
import statistics
import time
from dataclasses import dataclass

import psutil
from benchmarks_md import bench_parser, publish

from webmcp_nb import Envelope, Session
from webmcp_nb.demo import DemoServer

CHROMIUM = "/usr/bin/chromium"
BEGIN, END = "<!-- bench_instances:begin -->", "<!-- bench_instances:end -->"
COUNTS = (1, 2, 4, 8)
WARMUP_S = 1.0
TARGET = 2.5  # 4 instances against 1, in throughput
BUTTONS = ("Add Banana", "Clear cart")


@dataclass
class Result:
    instances: int
    calls: int
    seconds: float
    latencies_ms: list[float]
    memory_mb: list[tuple[float, float]]  # per instance: (PSS, USS) of its browser's process tree
    cpu_ms_per_call: dict[str, float]  # CPU time per call: Python (this process), driver, browsers
    machine_busy: float  # share of all cores busy during the run, every process on the machine counted

    @property
    def ceiling(self) -> float:
        """Calls/s if the whole machine's CPU were ours at this CPU cost per call."""
        return (os.cpu_count() or 1) * 1000 / sum(self.cpu_ms_per_call.values())

    @property
    def throughput(self) -> float:
        return self.calls / self.seconds

    def percentile(self, q: float) -> float:
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def ref_of(snapshot: str, name: str) -> str:
    found = re.search(rf'button "{re.escape(name)}" \[ref=(\w+)\]', snapshot)
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


def run_count(session: Session, url: str, count: int, seconds: float) -> Result:
    names = [f"bench{index}" for index in range(count)]
    pids = []
    for name in names:
        created = session.create_instance(name, executable_path=CHROMIUM)
        assert created.ok, created
        pids.append(created.data["instance"]["browser_pid"])  # type: ignore[index]
        session.navigate(url, instance=name).raise_for_status()

    async def all_at_once() -> tuple[int, float]:
        latencies: list[float] = []
        start = time.perf_counter()
        measure_from, until = start + WARMUP_S, start + WARMUP_S + seconds
        counts = await asyncio.gather(*(drive(session, name, until, measure_from, latencies) for name in names))
        return sum(counts), latencies  # type: ignore[return-value]

    driver = session.engine.manager.driver_status()["pid"]
    parts = {"Python": lambda: own_cpu_s(os.getpid()), "driver": lambda: own_cpu_s(driver),
             "browsers": lambda: cpu_s(pids)}  # fmt: skip
    before = {part: measure() for part, measure in parts.items()}
    psutil.cpu_percent()
    started = time.perf_counter()
    calls, latencies = asyncio.run(all_at_once())
    wall_s = time.perf_counter() - started
    machine_busy = psutil.cpu_percent() / 100
    spent = {part: measure() - before[part] for part, measure in parts.items()}
    # Warm-up calls used CPU too: spread it over every call made, in proportion.
    total_calls = calls * wall_s / seconds
    cpu_ms_per_call = {part: 1000 * value / total_calls for part, value in spent.items()}
    memory = [tree_memory_mb(pid) for pid in pids]
    for name in names:
        session.destroy_instance(name).raise_for_status()
    return Result(count, calls, seconds, latencies, memory, cpu_ms_per_call, machine_busy)  # type: ignore[arg-type]


def run(seconds: float) -> list[Result]:
    with DemoServer() as demo, Session(max_instances=max(COUNTS)) as session:
        return [run_count(session, demo.url, count, seconds) for count in COUNTS]


def report(results: list[Result], seconds: float) -> str:
    base = results[0].throughput
    lines = [
        BEGIN,
        (
            f"Many instances: N instances driven at once from one `Session`, each its own Chromium on the demo "
            f"shop, each looping snapshot -> click by ref, {seconds:g} s measured per N after {WARMUP_S:g} s of "
            "warm-up (`python bench/bench_instances.py`). Memory per instance (mean): PSS and USS of its browser's "
            "process tree (PSS splits pages shared between processes; USS is what closing it frees); the one "
            "Playwright driver they share is not included. CPU per call: this process (the runtime thread and "
            "the benchmark's loop), the Node driver, the browsers. Ceiling: the calls/s at that CPU cost if the "
            "whole machine were ours. Machine busy: every process on the machine, other users' included."
        ),
        (
            f"Machine: {platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}, Chromium at "
            f"{CHROMIUM}, run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}."
        ),
        "",
        (
            "| instances | calls/s | vs 1 instance | p50 (ms) | p99 (ms) | memory per instance, PSS / USS (MB) "
            "| CPU per call (ms): Python / driver / browsers | CPU-bound ceiling (calls/s) | machine busy |"
        ),
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for result in results:
        lines.append(
            f"| {result.instances} | {result.throughput:.1f} | {result.throughput / base:.2f}x | "
            f"{result.percentile(0.5):.1f} | {result.percentile(0.99):.1f} | "
            f"{statistics.mean(pss for pss, _ in result.memory_mb):.0f} / "
            f"{statistics.mean(uss for _, uss in result.memory_mb):.0f} | "
            f"{' / '.join(f'{value:.1f}' for value in result.cpu_ms_per_call.values())} | {result.ceiling:.0f} | "
            f"{100 * result.machine_busy:.0f}% |"
        )
    four = next(result for result in results if result.instances == 4)
    lines += ["", f"4 instances / 1 instance: {four.throughput / base:.2f}x (target >= {TARGET}x).", END]
    return "\n".join(lines)


def main() -> None:
    parser = bench_parser(__doc__, 8)
    options = parser.parse_args()
    section = report(run(options.rounds), options.rounds)
    publish(section, options.write, BEGIN, END)


if __name__ == "__main__":
    main()
