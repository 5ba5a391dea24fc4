"""Remote benchmark: a Playwright browser server on loopback against a local Chromium, per operation.

One `Session` drives two instances on the demo shop: one launched here, one on
`python -m playwright launch-server` (a process of its own on 127.0.0.1, the same Chromium
with the same flags), operation by operation, alternating as bench_core does. Prints medians
and ratios; with --write, replaces the remote section of BENCHMARKS.md.

    python bench/bench_remote.py [--rounds 30] [--write BENCHMARKS.md]
"""

from __future__ import annotations

import json
import os
import platform
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from benchmarks_md import bench_parser, publish

from webmcp_nb import Envelope, Session
from webmcp_nb.core.chromium import launch_args
from webmcp_nb.demo import DemoServer

CHROMIUM = "/usr/bin/chromium"
BEGIN, END = "<!-- bench_remote:begin -->", "<!-- bench_remote:end -->"
TARGET = 1.2
WEBMCP = "page"  # a remote instance's default; the local one is made alike, so only the transport differs
FRAME_S = 1 / 60
REST_S = 0.1  # as in bench_core: each operation starts on a quiet page
SIDES = ("local", "remote")


@contextmanager
def browser_server() -> Iterator[str]:
    """A Playwright browser server on loopback (its own process group); yields its ws:// endpoint."""
    with tempfile.TemporaryDirectory() as directory:
        config = Path(directory) / "server.json"
        config.write_text(
            json.dumps(
                {
                    "executablePath": CHROMIUM,
                    "host": "127.0.0.1",
                    "port": 0,
                    "wsPath": "/bench",
                    "args": launch_args(WEBMCP),
                }
            )
        )
        command = [
            sys.executable,
            "-m",
            "playwright",
            "launch-server",
            "--browser",
            "chromium",
            "--config",
            str(config),
        ]
        server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, start_new_session=True)
        try:
            assert server.stdout is not None
            endpoint = server.stdout.readline().strip()
            assert endpoint.startswith("ws://127.0.0.1:"), endpoint
            yield endpoint
        finally:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(30)


def ms(seconds: float) -> float:
    return seconds * 1000


def run(rounds: int) -> list[tuple[str, float, float]]:
    results: list[tuple[str, float, float]] = []
    with DemoServer() as demo, browser_server() as endpoint, Session() as session:
        shop = demo.url
        session.create_instance("local", executable_path=CHROMIUM, webmcp=WEBMCP).raise_for_status()
        session.create_instance("remote", backend="remote", endpoint=endpoint).raise_for_status()
        for side in SIDES:
            session.navigate(shop, instance=side).raise_for_status()

        def sample(name: str, operation: Callable[[str], Envelope], n: int) -> None:
            times: dict[str, list[float]] = {side: [] for side in SIDES}
            for side in SIDES:  # warm-up
                operation(side).raise_for_status()
            for index in range(n):
                phase = random.uniform(0, FRAME_S)
                for side in SIDES if index % 2 == 0 else SIDES[::-1]:
                    time.sleep(REST_S + phase)
                    started = time.perf_counter()
                    envelope = operation(side)
                    times[side].append(ms(time.perf_counter() - started))
                    assert envelope.ok, envelope
            results.append((name, *(statistics.median(times[side]) for side in SIDES)))  # type: ignore[arg-type]

        refs = {}
        for side in SIDES:
            snapshot = session.snapshot(instance=side).data["snapshot"]  # type: ignore[index]
            refs[side] = re.search(r'button "Add Banana" \[ref=(\w+)\]', snapshot).group(1)  # type: ignore[union-attr]
        sample("navigate", lambda side: session.navigate(shop, instance=side), rounds)
        for side in SIDES:  # the navigations made new refs
            snapshot = session.snapshot(instance=side).data["snapshot"]  # type: ignore[index]
            refs[side] = re.search(r'button "Add Banana" \[ref=(\w+)\]', snapshot).group(1)  # type: ignore[union-attr]
        sample("snapshot", lambda side: session.snapshot(instance=side), rounds)
        sample("click by ref", lambda side: session.click(refs[side], instance=side), rounds)
        sample("screenshot (png)", lambda side: session.screenshot(instance=side), rounds)
    return results


def report(results: list[tuple[str, float, float]], rounds: int) -> str:
    lines = [
        BEGIN,
        (
            f"Remote: one `Session`, a local instance against one on `python -m playwright launch-server` over "
            f"loopback (the same Chromium and flags, WebMCP mode {WEBMCP!r} on both), median of {rounds} rounds "
            "per operation on the demo shop, sides alternating as in the core benchmark "
            "(`python bench/bench_remote.py`)."
        ),
        (
            f"Machine: {platform.machine()}, {platform.python_version()}, Chromium at {CHROMIUM}, "
            f"run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}."
        ),
        "",
        "| operation | local (ms) | remote (ms) | ratio | target |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, local_ms, remote_ms in results:
        lines.append(f"| {name} | {local_ms:.1f} | {remote_ms:.1f} | {remote_ms / local_ms:.2f} | <= {TARGET} |")
    lines.append(END)
    return "\n".join(lines)


def main() -> None:
    parser = bench_parser(__doc__, 30)
    options = parser.parse_args()
    publish(report(run(options.rounds), options.rounds), options.write, BEGIN, END)


if __name__ == "__main__":
    main()
