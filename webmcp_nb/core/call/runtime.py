"""One daemon thread that owns an asyncio loop; callers submit coroutines to it.

Every Playwright object lives on this loop. Callers on other threads (a
notebook cell, a widget callback on a subshell thread, a plain script) wait
for results through thread-safe futures, so no loop is ever nested.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class RuntimeThreadError(RuntimeError):
    """A blocking call was made from the runtime's own thread (it would deadlock)."""


class Runtime:
    def __init__(self, name: str = "webmcp_nb-runtime") -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        self.start()
        assert self._loop is not None
        return self._loop

    def in_runtime_thread(self) -> bool:
        return self._thread is not None and threading.current_thread() is self._thread

    def start(self) -> None:
        with self._start_lock:
            if self.running:
                return
            ready = threading.Event()
            loop = asyncio.new_event_loop()

            def run() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            self._loop = loop
            self._thread = threading.Thread(target=run, name=self._name, daemon=True)
            self._thread.start()
            ready.wait()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run `coro` on the runtime loop; its result (or exception) arrives in the returned future,
        and cancelling that future cancels it. The task settles the future itself as it ends, not
        in a callback one loop turn later (`asyncio.run_coroutine_threadsafe`): every call takes this path."""
        loop = self.loop
        future: concurrent.futures.Future[T] = concurrent.futures.Future()

        async def settling() -> None:
            try:
                result = await coro
            except asyncio.CancelledError:
                future.cancel()
                raise
            except BaseException as exc:
                with contextlib.suppress(concurrent.futures.InvalidStateError):  # cancelled meanwhile
                    future.set_exception(exc)
                if not isinstance(exc, Exception):
                    raise
            else:
                with contextlib.suppress(concurrent.futures.InvalidStateError):
                    future.set_result(result)

        def start() -> None:
            if future.cancelled():
                coro.close()
                return
            task = loop.create_task(settling())
            future.add_done_callback(lambda done: done.cancelled() and loop.call_soon_threadsafe(task.cancel))

        loop.call_soon_threadsafe(start)
        return future

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the runtime loop and block until it finishes."""
        if self.in_runtime_thread():
            coro.close()
            raise RuntimeThreadError(
                "This blocking call was made on the webmcp_nb runtime thread, where it would deadlock; "
                "use the awaitable form (for example `await session.acall(...)`) instead."
            )
        future = self.submit(coro)
        try:
            return future.result()
        except KeyboardInterrupt:
            future.cancel()
            raise

    async def arun(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await `coro` on the runtime loop from any event loop."""
        if self.in_runtime_thread():
            return await coro
        return await asyncio.wrap_future(self.submit(coro))

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the loop and join the thread (pending work should be finished first)."""
        with self._start_lock:
            if not self.running:
                return
            assert self._loop is not None and self._thread is not None
            if self.in_runtime_thread():
                raise RuntimeThreadError("The runtime cannot be stopped from its own thread.")
            asyncio.run_coroutine_threadsafe(_cancel_leftovers_and_stop(timeout / 2), self._loop)
            self._thread.join(timeout)
            if not self._thread.is_alive():
                self._loop.close()
            self._thread = None


async def _cancel_leftovers_and_stop(grace_s: float) -> None:
    """Cancel the tasks still pending (pollers of servers that have stopped, ...) and let
    them unwind, so none is destroyed pending; then stop the loop."""
    current = asyncio.current_task()
    leftovers = [task for task in asyncio.all_tasks() if task is not current]
    for task in leftovers:
        task.cancel()
    if leftovers:
        await asyncio.wait(leftovers, timeout=grace_s)
    asyncio.get_running_loop().stop()
