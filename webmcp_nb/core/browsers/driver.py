"""Playwright's driver: started outside the caller's process group, and watched.

Jupyter's "Interrupt kernel" sends SIGINT to the kernel's whole process group, and
Playwright starts its Node driver as an ordinary child: an interrupt would kill the
driver and every browser with it. So the driver starts in a session of its own. It
still ends with us: it stops when its stdin (a pipe from this process) closes.

If the driver dies anyway (killed, out of memory), Playwright fails every later
call. `Driver` watches the process so its owner hears of the death at once and
can start a new one.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import importlib
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..call.util import utc_now

if TYPE_CHECKING:
    from playwright.async_api import Playwright

# Set while `start_playwright` runs: receives the driver process Playwright spawns.
_SPAWNED: contextvars.ContextVar[Callable[[asyncio.subprocess.Process], None] | None] = contextvars.ContextVar(
    "webmcp_nb_driver_spawned", default=None
)


class _NewSessionAsyncio:
    """`asyncio` as Playwright's transport module sees it: subprocesses start in a new session."""

    def __getattr__(self, name: str) -> Any:
        return getattr(asyncio, name)

    @staticmethod
    async def create_subprocess_exec(*args: Any, **kwargs: Any) -> asyncio.subprocess.Process:
        if sys.platform != "win32":
            kwargs.setdefault("start_new_session", True)
        process = await asyncio.create_subprocess_exec(*args, **kwargs)
        spawned = _SPAWNED.get()
        if spawned is not None:
            spawned(process)
        return process


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


class Driver:
    """A started Playwright and its driver process; `on_exit()` runs if the process dies
    before `stop()`."""

    def __init__(
        self, playwright: Playwright, process: asyncio.subprocess.Process | None, on_exit: Callable[[], None]
    ) -> None:
        self.playwright = playwright
        self.process = process
        self.started_at = utc_now()
        self._stopped = False
        self._watch = asyncio.ensure_future(self._watch_exit(on_exit)) if process is not None else None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def exited(self) -> bool:
        """True once the process exited, or closed its end of the pipe (what Playwright sees
        first: calls fail before the exit is reaped)."""
        process = self.process
        if process is None or self._stopped:
            return False
        return process.returncode is not None or (process.stdout is not None and process.stdout.at_eof())

    def describe_exit(self) -> str:
        code = self.process.returncode if self.process is not None else None
        how = (
            f"killed by signal {-code}"
            if code is not None and code < 0
            else f"exit code {code}"
            if code is not None
            else "its pipe closed"
        )
        return f"the Playwright driver process (pid {self.pid}) exited unexpectedly ({how})"

    async def _watch_exit(self, on_exit: Callable[[], None]) -> None:
        assert self.process is not None
        await self.process.wait()
        if not self._stopped:
            on_exit()

    async def stop(self) -> None:
        """Stop Playwright (and so the driver); quietly, even if the driver is already gone."""
        self._stopped = True
        if self._watch is not None:
            self._watch.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.playwright.stop(), 10)
        _retrieve_transport_error(self.playwright)


def _retrieve_transport_error(playwright: Playwright) -> None:
    """Playwright leaves the error of a dead driver's pipe unretrieved (asyncio would log
    "Future exception was never retrieved"); read it. Best effort: private attributes
    (`_client` on Playwright 1.65, `_connection` on 1.62)."""
    manager = getattr(playwright.stop, "__self__", None)
    owner = getattr(manager, "_client", None) or getattr(manager, "_connection", None)
    future = getattr(getattr(owner, "_transport", None), "on_error_future", None)
    if isinstance(future, asyncio.Future) and future.done() and not future.cancelled():
        future.exception()


async def start_playwright(on_exit: Callable[[], None]) -> Driver:
    """Start Playwright with its driver in a session of its own, watched (see `Driver`)."""
    from playwright.async_api import async_playwright

    start_driver_in_own_session()
    spawned: list[asyncio.subprocess.Process] = []
    token = _SPAWNED.set(spawned.append)
    try:
        playwright = await async_playwright().start()
    finally:
        _SPAWNED.reset(token)
    return Driver(playwright, spawned[0] if spawned else None, on_exit)
