"""Small helpers shared across the core."""

from __future__ import annotations

from datetime import datetime, timezone


def utc_now() -> str:
    """The current UTC time, ISO-8601 with offset and milliseconds."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def first_lines(text: str, lines: int = 8) -> str:
    """The first `lines` lines of `text`, stripped (Playwright errors carry long call logs)."""
    return "\n".join(text.strip().splitlines()[:lines])
