"""Live output for a streaming call: a display handle updated in place as the call reports progress."""

from __future__ import annotations

import contextvars
import threading
import time
from typing import Any

from ..core.render.renderer import progress_bundle, stage_bundle

MIN_INTERVAL_S = 0.1  # between two updates of the display


class LiveProgress:
    """The `on_progress` hook the notebook gives a call: the first update opens a display, later
    ones update it in place (at most every `MIN_INTERVAL_S`; `finish` shows the last state).
    A stage (`CallContext.report_progress`: the browser launching) is a line of its own, shown and
    updated at once.

    Made in the cell: the hook runs on the runtime thread, where ipykernel would send a display to
    whichever message it handled last (a widget's, a completion's); each display runs in the
    cell's context instead, which names the cell as its parent."""

    def __init__(self, tool: str) -> None:
        self.tool = tool
        self._cell = contextvars.copy_context()
        self.updates: list[dict[str, Any]] = []
        self._handle: Any = None
        self._stage: Any = None  # the stage line's display
        self._shown_at = 0.0
        self._lock = threading.Lock()

    def __call__(self, update: dict[str, Any]) -> None:
        if update.get("kind") == "stage":
            self._show_stage(update)
            return
        with self._lock:
            self.updates.append(update)
            if time.monotonic() - self._shown_at >= MIN_INTERVAL_S:
                self._show()

    def finish(self) -> None:
        with self._lock:
            if self.updates:
                self._show()

    def _show(self) -> None:
        self._handle = self._cell.run(_shown, self._handle, progress_bundle(self.tool, self.updates))
        self._shown_at = time.monotonic()

    def _show_stage(self, update: dict[str, Any]) -> None:
        with self._lock:
            self._stage = self._cell.run(_shown, self._stage, stage_bundle(self.tool, update))


def _shown(handle: Any, bundle: dict[str, str]) -> Any:
    """`bundle` displayed (no handle yet) or updated in place; the display's handle."""
    from IPython.display import display

    if handle is None:
        return display(bundle, raw=True, display_id=True)
    handle.update(bundle, raw=True)
    return handle
