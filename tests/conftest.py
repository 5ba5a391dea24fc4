"""Shared fixtures: the demo site, sessions on real Chromium, and the envelope contract.

Every envelope a test's sessions receive (through the `session` and `fresh_session`
fixtures) is checked against the contract (keys, ids, timestamps, outcome/retry pairs,
the tool's declared data schema) when that test ends, so a violation fails the test
that caused it. Tests using those fixtures get the `browser` marker automatically.
Helpers for test modules are in tests/helpers.py.
"""

from __future__ import annotations

import importlib.util
import os
import signal
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import pytest

from webmcp_nb import Envelope, Session
from webmcp_nb.demo import DemoServer

# Re-exported for test modules that import them from here; new code imports tests.helpers.
from .helpers import (  # noqa: F401
    Kernel,
    browser_processes,
    check_contract,
    error,
    make_operation,
    ok,
    ref_for,
)

# Fixtures that start a Chromium: a test using one (directly or through another fixture) needs a
# browser. A test module names its own such fixtures in a module-level BROWSER_FIXTURES set.
BROWSER_FIXTURES = {"session", "fresh_session"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        starting = BROWSER_FIXTURES | getattr(getattr(item, "module", None), "BROWSER_FIXTURES", set())
        if starting & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.browser)
    deselect_camoufox(config, items)


def deselect_camoufox(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked `camoufox` need the camoufox package (the extra, which pins Playwright 1.62),
    tests marked `no_camoufox` its absence: the others are deselected (reported as such, not
    skipped). Where $WEBMCP_NB_REQUIRE_CAMOUFOX is set (make test-compat) a missing package is an
    error instead, so the run that should cover the extra cannot pass without it."""
    installed = importlib.util.find_spec("camoufox") is not None
    if not installed and os.environ.get("WEBMCP_NB_REQUIRE_CAMOUFOX"):
        raise pytest.UsageError("$WEBMCP_NB_REQUIRE_CAMOUFOX is set but the camoufox package is not installed")
    unfit = "no_camoufox" if installed else "camoufox"
    marked = [item for item in items if item.get_closest_marker(unfit)]
    if marked:
        config.hook.pytest_deselected(items=marked)
        items[:] = [item for item in items if not item.get_closest_marker(unfit)]


@pytest.fixture(scope="session")
def demo() -> Iterator[DemoServer]:
    with DemoServer() as server:
        yield server


class CheckedSession(Session):
    """A Session that keeps every envelope it receives until the contract check takes it."""

    with_unchecked: ClassVar[list[CheckedSession]] = []  # open sessions, and closed ones not yet checked

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.unchecked: deque[Envelope] = deque()  # appended on the runtime thread
        self._remove: Callable[[], None] | None = None
        self.is_closed = False
        CheckedSession.with_unchecked.append(self)

    def _record(self, record: Any) -> None:
        self.unchecked.append(record.envelope)

    def call(self, tool: str, /, **args: Any) -> Envelope:
        if self._remove is None:
            self._remove = self.add_listener(self._record)
        return super().call(tool, **args)

    def close(self) -> None:
        super().close()
        self.is_closed = True


def take_unchecked() -> list[Envelope]:
    """Every envelope received since the last check, forgetting sessions that are closed."""
    taken: list[Envelope] = []
    for s in list(CheckedSession.with_unchecked):
        while s.unchecked:
            taken.append(s.unchecked.popleft())
        if s.is_closed:
            CheckedSession.with_unchecked.remove(s)
    return taken


@pytest.fixture(autouse=True)
def envelope_contract() -> Iterator[None]:
    """After each test, check the envelopes it caused (fixture set-up included)."""
    yield
    for envelope in take_unchecked():
        check_contract(envelope)


@pytest.fixture(scope="module")
def session(demo: DemoServer) -> Iterator[CheckedSession]:
    """One session per test module, on real Chromium."""
    with CheckedSession() as s:
        yield s


@pytest.fixture
def sigint() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt during the test, as in a Jupyter kernel, even in a process that
    started with SIGINT ignored (a background job of a non-interactive shell, as a CI script's may be)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture
def fresh_session() -> Iterator[Callable[..., CheckedSession]]:
    """A session of its own, for tests that change limits or break instances."""
    sessions: list[CheckedSession] = []

    def make(**kwargs: Any) -> CheckedSession:
        s = CheckedSession(**kwargs)
        sessions.append(s)
        return s

    yield make
    for s in sessions:
        s.close()
