"""Small helpers shared across the core."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Coroutine
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}

_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
# The event loop keeps only weak references to tasks: one nobody holds may vanish mid-flight.
_background: set[asyncio.Task[Any]] = set()


def utc_now() -> str:
    """The current UTC time, ISO-8601 with offset and milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def random_uuid() -> str:
    """A random (version 4) UUID as text, as `str(uuid.uuid4())` writes it, without building the
    `uuid.UUID` object on the way (every call's operation id)."""
    digits = os.urandom(16).hex()
    variant = "89ab"[int(digits[16], 16) & 3]
    return f"{digits[:8]}-{digits[8:12]}-4{digits[13:16]}-{variant}{digits[17:20]}-{digits[20:]}"


def first_lines(text: str, lines: int = 8) -> str:
    """The first `lines` lines of `text`, stripped (Playwright errors carry long call logs)."""
    return "\n".join(text.strip().splitlines()[:lines])


def origin_of(url: str) -> str | None:
    """The serialised origin (``scheme://host[:port]``, default port dropped, as browsers write
    ``location.origin``) of an http(s) URL; None for anything else (opaque origins such as
    ``about:``, ``data:``, ``file:``), so that callers fail closed."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    suffix = f":{port}" if port is not None and port != DEFAULT_PORTS[parts.scheme] else ""
    return f"{parts.scheme}://{host}{suffix}"


def origin_label(url: str) -> str:
    """`origin_of(url)`, or for an opaque origin its scheme (``file:``, ``data:``): for display."""
    return origin_of(url) or urlsplit(url).scheme + ":"


def escape_surrogates(text: str, backslash: str = "\\") -> str:
    """`text` with each lone surrogate (a code point UTF-8 cannot encode) written as its
    escape ``\\udXXX``; `backslash` is how a backslash is written (``\\\\`` inside JSON)."""
    return _LONE_SURROGATE.sub(lambda match: f"{backslash}u{ord(match[0]):04x}", text)


def spawn(work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
    """Run `work` in the background on the running loop, referenced until it is done."""
    task = asyncio.get_running_loop().create_task(work)
    _background.add(task)
    task.add_done_callback(_background.discard)
    return task
