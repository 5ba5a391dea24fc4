"""Small helpers shared across the core."""

from __future__ import annotations

import re
from datetime import datetime, timezone

_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def utc_now() -> str:
    """The current UTC time, ISO-8601 with offset and milliseconds."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def first_lines(text: str, lines: int = 8) -> str:
    """The first `lines` lines of `text`, stripped (Playwright errors carry long call logs)."""
    return "\n".join(text.strip().splitlines()[:lines])


def escape_surrogates(text: str, backslash: str = "\\") -> str:
    """`text` with each lone surrogate (a code point UTF-8 cannot encode) written as its
    escape ``\\udXXX``; `backslash` is how a backslash is written (``\\\\`` inside JSON)."""
    return _LONE_SURROGATE.sub(lambda match: f"{backslash}u{ord(match[0]):04x}", text)
