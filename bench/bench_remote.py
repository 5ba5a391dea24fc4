"""Remote benchmark: a Playwright browser server on loopback against a local Chromium, per operation.

One `Session` drives two instances on the demo shop: one launched here, one on
`python -m playwright launch-server` (a process of its own on 127.0.0.1, the same Chromium
with the same flags), operation by operation, alternating as bench_core does. Prints medians
and ratios; with --write, replaces the remote section of BENCHMARKS.md.

    python bench/bench_remote.py [--rounds 30] [--write BENCHMARKS.md]
"""

from __future__ import annotations

import asyncio
import functools
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
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from benchmarks_md import bench_parser, publish
from playwright.async_api import Page, async_playwright

from webmcp_nb import Envelope, Session
from webmcp_nb.core.backends.chromium import launch_args
from webmcp_nb.demo import DemoServer

CHROMIUM = "/usr/bin/chromium"
BEGIN, END = "<!-- bench_remote:begin -->", "<!-- bench_remote:end -->"
# The target: per operation, our remote/local ratio at most raw Playwright's own (measured in the
# same run: the browser-server protocol's cost on this machine) plus this margin.
MARGIN = 0.05
WEBMCP = "page"  # a remote instance's default; the local one is made alike, so only the transport differs
FRAME_S = 1 / 60
REST_S = 0.1  # as in bench_core: each operation starts on a quiet page
SIDES = ("local", "remote")
T = TypeVar("T")


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


class Raw:
    """Raw Playwright on the main thread's loop: a browser launched here and one connected to the server,
    to tell the browser-server protocol's own cost from ours."""

    def __init__(self, endpoint: str, url: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.pages: dict[str, Page] = {}
        self.run(self._start(endpoint, url))

    def run(self, coro: Awaitable[T]) -> T:
        return self.loop.run_until_complete(coro)

    async def _start(self, endpoint: str, url: str) -> None:
        self.playwright = await async_playwright().start()
        chromium = self.playwright.chromium
        self.browsers = [
            await chromium.launch(executable_path=CHROMIUM, args=launch_args(WEBMCP)),
            await chromium.connect(endpoint),
        ]
        for side, browser in zip(SIDES, self.browsers, strict=True):
            self.pages[side] = await (await browser.new_context(viewport={"width": 1280, "height": 720})).new_page()
            await self.pages[side].goto(url)

    def close(self) -> None:
        for browser in self.browsers:
            self.run(browser.close())
        self.run(self.playwright.stop())
        self.loop.close()


def run(rounds: int) -> list[tuple[str, dict[str, float]]]:
    """Per operation, the median time of each side: raw Playwright and `Session`, local and remote."""
    results: list[tuple[str, dict[str, float]]] = []
    with DemoServer() as demo, browser_server() as endpoint, Session() as session:
        shop = demo.url
        session.create_instance("local", executable_path=CHROMIUM, webmcp=WEBMCP).raise_for_status()
        session.create_instance("remote", backend="remote", endpoint=endpoint).raise_for_status()
        for side in SIDES:
            session.navigate(shop, instance=side).raise_for_status()
        raw = Raw(endpoint, shop)

        def sample(name: str, operations: dict[str, Callable[[], object]], n: int) -> None:
            times: dict[str, list[float]] = {side: [] for side in operations}
            order = list(operations)
            for operation in operations.values():  # warm-up
                operation()
            for index in range(n):
                phase = random.uniform(0, FRAME_S)
                for side in order if index % 2 == 0 else order[::-1]:
                    time.sleep(REST_S + phase)
                    started = time.perf_counter()
                    outcome = operations[side]()
                    times[side].append(ms(time.perf_counter() - started))
                    assert not isinstance(outcome, Envelope) or outcome.ok, outcome
            results.append((name, {side: statistics.median(values) for side, values in times.items()}))

        def both(
            session_op: Callable[[str], Envelope], raw_op: Callable[[str, Page], Awaitable[object]]
        ) -> dict[str, Callable[[], object]]:
            """The operation on every side: `session_op(side)`, and `raw_op(side, page)` for raw Playwright."""
            operations: dict[str, Callable[[], object]] = {}
            for side in SIDES:
                operations[side] = functools.partial(session_op, side)
                operations[f"raw {side}"] = lambda side=side: raw.run(raw_op(side, raw.pages[side]))  # type: ignore[misc]
            return operations

        navigate = both(lambda side: session.navigate(shop, instance=side), lambda _side, page: page.goto(shop))
        sample("navigate", navigate, rounds)
        refs = {side: ref_of(session.snapshot(instance=side).data["snapshot"]) for side in SIDES}  # type: ignore[index]
        raw_refs = {side: ref_of(raw.run(page.aria_snapshot(mode="ai"))) for side, page in raw.pages.items()}
        snapshot = both(lambda side: session.snapshot(instance=side), lambda _side, page: page.aria_snapshot(mode="ai"))
        sample("snapshot", snapshot, rounds)
        click = both(
            lambda side: session.click(refs[side], instance=side),
            lambda side, page: page.locator(f"aria-ref={raw_refs[side]}").click(),
        )
        sample("click by ref", click, rounds)
        screenshot = both(lambda side: session.screenshot(instance=side), lambda _side, page: page.screenshot())
        sample("screenshot (png)", screenshot, rounds)
        raw.close()
    return results


def ref_of(snapshot: str) -> str:
    return re.search(r'button "Add Banana"[^\n]*? \[ref=(\w+)\]', snapshot).group(1)  # type: ignore[union-attr]


def report(results: list[tuple[str, dict[str, float]]], rounds: int) -> str:
    lines = [
        BEGIN,
        (
            f"Remote: one `Session`, a local instance against one on `python -m playwright launch-server` over "
            f"loopback (the same Chromium and flags, WebMCP mode {WEBMCP!r} on both), median of {rounds} rounds "
            "per operation on the demo shop, sides alternating and each operation starting after the same rest, "
            "as in the core benchmark (`python bench/bench_remote.py`). Raw Playwright, launched and connected "
            "the same ways, runs alongside: its ratio is the browser-server protocol's own cost (one more "
            "process, the server's, relays every message)."
        ),
        (
            f"Machine: {platform.machine()}, {platform.python_version()}, Chromium at {CHROMIUM}, "
            f"run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}."
        ),
        "",
        (
            "| operation | raw local (ms) | raw remote (ms) | raw ratio | Session local (ms) | Session remote (ms) "
            f"| ratio | target (raw ratio + {MARGIN}) | verdict |"
        ),
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, times in results:
        local, remote, raw_local, raw_remote = (times[side] for side in (*SIDES, "raw local", "raw remote"))
        target = raw_remote / raw_local + MARGIN
        verdict = "met" if remote / local <= target else "missed"
        lines.append(
            f"| {name} | {raw_local:.1f} | {raw_remote:.1f} | {raw_remote / raw_local:.2f} | {local:.1f} | "
            f"{remote:.1f} | {remote / local:.2f} | <= {target:.2f} | {verdict} |"
        )
    lines.append(END)
    return "\n".join(lines)


def main() -> None:
    parser = bench_parser(__doc__, 30)
    options = parser.parse_args()
    publish(report(run(options.rounds), options.rounds), options.write, BEGIN, END)


if __name__ == "__main__":
    main()
