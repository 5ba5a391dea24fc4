"""Memory over a long session: the session keeps a bounded call history and nothing else per
call. Its subject is the engine's bookkeeping, not Playwright, so the compatibility run leaves
it out (see tests/test_compat_scope.py)."""

from __future__ import annotations

import gc

import psutil

from webmcp_nb import Session
from webmcp_nb.core.call.engine import HISTORY_SIZE

from .helpers import ok


def test_memory_stays_flat_over_4000_calls(demo) -> None:
    """The session keeps a bounded call history and nothing else per call (a plain Session:
    the test suite's checked one keeps every envelope for the contract check)."""
    process = psutil.Process()

    def calls(count: int) -> int:
        for index in range(count):
            ok(s.snapshot() if index % 4 == 0 else s.tabs())
        gc.collect()
        return process.memory_info().rss

    with Session() as s:
        ok(s.navigate(demo.url))
        warm = calls(1_000)
        after = calls(3_000)
        assert len(s.history) == HISTORY_SIZE
    assert after - warm < 16 * 2**20, f"grew by {(after - warm) / 2**20:.1f} MiB"
