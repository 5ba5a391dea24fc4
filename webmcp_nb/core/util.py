"""Small helpers shared across the core."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from datetime import UTC, datetime
from typing import Any

# The event loop keeps only weak references to tasks: one nobody holds may vanish mid-flight.
_background: set[asyncio.Task[Any]] = set()


def utc_now() -> str:
    """The current UTC time, ISO-8601 with offset and milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def first_lines(text: str, lines: int = 8) -> str:
    """The first `lines` lines of `text`, stripped (Playwright errors carry long call logs)."""
    return "\n".join(text.strip().splitlines()[:lines])


def spawn(work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
    """Run `work` in the background on the running loop, referenced until it is done."""
    task = asyncio.get_running_loop().create_task(work)
    _background.add(task)
    task.add_done_callback(_background.discard)
    return task
