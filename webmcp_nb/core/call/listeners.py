"""One fan-out of callbacks: `add` returns a remover; one failing listener does not stop the others."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Generic, ParamSpec

P = ParamSpec("P")
log = logging.getLogger(__name__)


class Listeners(Generic[P]):
    """Callbacks called in the order they were added, each with what `emit` is given.

    A listener that raises is logged and skipped: it cannot break the event's source
    (a tool call, a page) nor keep the other listeners from hearing of it.
    """

    def __init__(self) -> None:
        self._listeners: list[Callable[P, object]] = []

    def add(self, listener: Callable[P, object]) -> Callable[[], None]:
        """Add `listener`; returns a function that removes it (calling it twice is harmless)."""
        self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove

    def emit(self, *args: P.args, **kwargs: P.kwargs) -> None:
        for listener in list(self._listeners):
            try:
                listener(*args, **kwargs)
            except Exception:
                log.exception("listener %r failed", listener)

    def __len__(self) -> int:
        return len(self._listeners)
