"""A Dask cluster: 40 demo pages over one worker and over two, and the scheduler's overhead per task.

A `LocalCluster` of worker processes (one thread each) is started per worker count; a first map
launches every worker's browser (not measured), then each round maps `snapshot` (navigate, then
browser_snapshot) over 40 demo pages with `webmcp_nb.distributed.map`. The overhead per task is
a map of a function that does nothing with the session (its wall time per task on one worker:
submitting, scheduling, running, gathering, the results' pickling). With --write, replaces the
dask section of BENCHMARKS.md.

    python bench/bench_dask.py [--rounds 3] [--write BENCHMARKS.md]
"""

from __future__ import annotations

import os
import platform
import statistics
import time
from typing import Any

from benchmarks_md import bench_parser, publish
from distributed import Client, LocalCluster

import webmcp_nb.distributed as wd
from webmcp_nb import Session
from webmcp_nb.demo import DemoServer

BEGIN, END = "<!-- bench_dask:begin -->", "<!-- bench_dask:end -->"
PAGES = 40
WORKERS = (1, 2)
IDLE_TASKS = 200


def snapshot(session: Session, url: str) -> Any:
    session.navigate(url).raise_for_status()
    return session.snapshot()


def nothing(session: Session, item: int) -> int:
    return item


def timed_map(client: Client, fn: Any, items: list[Any]) -> float:
    started = time.perf_counter()
    results = wd.map(fn, items, client=client, progress=False)
    elapsed = time.perf_counter() - started
    assert results.ok, results.errors[:1]
    return elapsed


def run(rounds: int) -> dict[str, Any]:
    measured: dict[str, Any] = {}
    with DemoServer() as demo:
        pages = [demo.url_for(f"table.html?page={n}") for n in range(PAGES)]
        for workers in WORKERS:
            with (
                LocalCluster(
                    n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
                ) as cluster,
                Client(cluster) as client,
            ):
                timed_map(client, snapshot, pages[: workers * 2])  # every worker's browser launched
                measured[f"pages/{workers}"] = [timed_map(client, snapshot, pages) for _ in range(rounds)]
                if workers == 1:
                    measured["idle"] = [timed_map(client, nothing, list(range(IDLE_TASKS))) for _ in range(rounds)]
    return measured


def report(measured: dict[str, Any], rounds: int) -> str:
    one, two = (statistics.median(measured[f"pages/{n}"]) for n in WORKERS)
    overhead_ms = 1000 * statistics.median(measured["idle"]) / IDLE_TASKS
    lines = [
        BEGIN,
        (
            f"A Dask cluster: `webmcp_nb.distributed.map` of navigate + snapshot over {PAGES} demo pages on a "
            f"`LocalCluster` of one and of two worker processes (one thread and one browser session each, "
            f"launched before measuring), median of {rounds} rounds (`python bench/bench_dask.py`). Overhead per "
            f"task: a map of {IDLE_TASKS} tasks that do nothing with the session, on one worker, its wall time per "
            "task (submit, schedule, run, gather)."
        ),
        (
            f"Machine: {platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}, load average "
            f"{os.getloadavg()[1]:.1f} at the end (other users' processes included), run "
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}."
        ),
        "",
        "| workers | 40 pages (s) | pages/s | vs 1 worker |",
        "|---:|---:|---:|---:|",
        f"| 1 | {one:.2f} | {PAGES / one:.1f} | 1.00x |",
        f"| 2 | {two:.2f} | {PAGES / two:.1f} | {one / two:.2f}x |",
        "",
        f"Scheduler overhead per task: {overhead_ms:.1f} ms.",
        END,
    ]
    return "\n".join(lines)


def main() -> None:
    options = bench_parser(__doc__, 3).parse_args()
    publish(report(run(options.rounds), options.rounds), options.write, BEGIN, END)


if __name__ == "__main__":
    main()
