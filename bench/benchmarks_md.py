"""Writing a benchmark's section into BENCHMARKS.md between its markers; what benchmarks share."""

from __future__ import annotations

import argparse
import re
import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

FLOOR_NOTE = (
    "Every call reads the instance's cookies once its tool has returned (a value the page repeats is "
    "then scrubbed from the result, docs/secrets.md), and what the tool ran may have set one, so no call "
    "can end sooner than raw Playwright's operation followed by that read: the floor."
)


def place_rows(places: dict[str, str], results: dict[str, tuple[float, float]], target: float) -> list[str]:
    """One table row per place a call is made from: raw ms, ours, the ratio, and the target on the
    runtime loop's row (an agent's call)."""
    return [
        f"| {places[place]} | {raw_ms:.2f} | {ours_ms:.2f} | {ours_ms / raw_ms:.2f} | "
        f"{f'<= {target}' if place == 'loop' else ''} |"
        for place, (raw_ms, ours_ms) in results.items()
    ]


async def floor_ratio(operation: Callable[[], Awaitable[Any]], context: Any, rounds: int) -> float:
    """The floor over the operation alone: raw `operation()` followed by `context.cookies()`,
    alternating with `operation()` alone (which goes first alternates too), medians."""
    alone: list[float] = []
    then_cookies: list[float] = []
    for index in range(rounds):
        for cookies in (False, True) if index % 2 == 0 else (True, False):
            started = time.perf_counter()
            await operation()
            if cookies:
                await context.cookies()
            (then_cookies if cookies else alone).append((time.perf_counter() - started) * 1000)
    return statistics.median(then_cookies) / statistics.median(alone)


def update_section(path: Path, begin: str, end: str, section: str) -> None:
    """Replace the text between `begin` and `end` in `path` with `section` (or append it)."""
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    if begin in text:
        text = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: section, text, flags=re.S)
    else:
        text = text.rstrip() + "\n\n" + section + "\n"
    path.write_text(text)


def bench_parser(doc: str, rounds: int) -> argparse.ArgumentParser:
    """The options every benchmark takes: --rounds and --write (a Markdown file to update)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--write", type=Path, help="update this Markdown file")
    return parser


def publish(section: str, write: Path | None, begin: str, end: str) -> None:
    """Print a benchmark's section, and put it into `write` between its markers."""
    print(section)
    if write:
        update_section(write, begin, end, section)
