"""Playwright's driver, started outside the caller's process group.

Jupyter's "Interrupt kernel" sends SIGINT to the kernel's whole process group, and
Playwright starts its Node driver as an ordinary child: an interrupt would kill the
driver and every browser with it. So the driver starts in a session of its own. It
still ends with us: it stops when its stdin (a pipe from this process) closes.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from typing import Any


class _NewSessionAsyncio:
    """`asyncio` as Playwright's transport module sees it: subprocesses start in a new session."""

    def __getattr__(self, name: str) -> Any:
        return getattr(asyncio, name)

    @staticmethod
    async def create_subprocess_exec(*args: Any, **kwargs: Any) -> asyncio.subprocess.Process:
        if sys.platform != "win32":
            kwargs.setdefault("start_new_session", True)
        return await asyncio.create_subprocess_exec(*args, **kwargs)


# The module that spawns the driver: `transport` on Playwright 1.65, `_transport` on 1.62.
_TRANSPORT_MODULES = ("playwright._impl.transport", "playwright._impl._transport")


def start_driver_in_own_session() -> None:
    """Make Playwright start its driver in a new session (idempotent)."""
    for name in _TRANSPORT_MODULES:
        try:
            transport: Any = importlib.import_module(name)  # private module: no types to rely on
        except ImportError:
            continue
        if not isinstance(transport.asyncio, _NewSessionAsyncio):
            transport.asyncio = _NewSessionAsyncio()
        return
