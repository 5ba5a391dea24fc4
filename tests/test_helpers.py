"""The test helpers themselves: wait_until, and the envelope contract checked per test (no browser)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.helpers import wait_until

TESTS = Path(__file__).resolve().parent


def test_wait_until_returns_the_first_truthy_value() -> None:
    answers = iter([None, 0, "", "ready", "later"])
    assert wait_until(lambda: next(answers), timeout=5, interval=0.001) == "ready"


def test_wait_until_fails_with_the_message_after_the_timeout() -> None:
    calls = []
    with pytest.raises(AssertionError, match=r"^condition not met within 0\.2 s: still \d+ calls in$"):
        wait_until(lambda: calls.append(1), timeout=0.2, interval=0.01, message=lambda: f"still {len(calls)} calls in")
    assert len(calls) >= 2  # polled, not tried once


def test_wait_until_tries_once_more_after_a_slow_first_try() -> None:
    started = time.monotonic()
    tries = []

    def slow_then_true() -> bool:
        tries.append(1)
        if len(tries) == 1:
            time.sleep(0.3)  # the deadline passes during the first try
            return False
        return True

    assert wait_until(slow_then_true, timeout=0.1) is True
    assert len(tries) == 2 and time.monotonic() - started >= 0.3


def test_a_contract_violation_fails_the_test_that_caused_it(tmp_path: Path) -> None:
    """Run a small suite with this directory's conftest: the second test receives a malformed
    envelope; its teardown errors, and the tests before and after it pass."""
    suite = tmp_path / "tests"
    suite.mkdir()
    for name in ("__init__.py", "conftest.py", "helpers.py"):
        shutil.copy(TESTS / name, suite / name)
    (suite / "test_blame.py").write_text(
        textwrap.dedent(
            """
            from webmcp_nb import Envelope
            from tests.conftest import CheckedSession
            from tests.helpers import make_operation

            def test_before():
                CheckedSession().unchecked.append(Envelope("success", "default", make_operation(), data={}))

            def test_culprit():
                s = CheckedSession()
                s.unchecked.append(Envelope("success", "default", make_operation(outcome="unknown"), data={}))

            def test_after():
                pass
            """
        )
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(TESTS.parent)]),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",  # a quicker start: the suite needs no plugin
    }
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rA", "--rootdir", str(tmp_path), str(suite)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    out = result.stdout
    assert result.returncode == 1, out
    assert "3 passed, 1 error" in out, out
    assert "ERROR tests/test_blame.py::test_culprit" in out, out
    assert "'unknown'" in out, out  # the assertion names the outcome that broke the contract
    assert "ERROR tests/test_blame.py::test_before" not in out and "ERROR tests/test_blame.py::test_after" not in out
