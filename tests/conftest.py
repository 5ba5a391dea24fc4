"""Shared fixtures: the demo site, sessions on real Chromium, and the envelope contract.

Every envelope any test receives through the `session` fixtures is checked
against the contract (keys, ids, timestamps, outcome/retry pairs, the tool's
declared data schema) when the session closes.
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

import jsonschema
import psutil
import pytest

from webmcp_nb import Envelope, Session
from webmcp_nb.core.envelope import ERROR_TYPES, Operation
from webmcp_nb.core.registry import REGISTRY
from webmcp_nb.demo import DemoServer

if TYPE_CHECKING:
    from jupyter_client.manager import KernelManager

BROWSER_NAMES = re.compile(r"chrom|headless_shell", re.I)


@pytest.fixture(scope="session")
def demo() -> Iterator[DemoServer]:
    with DemoServer() as server:
        yield server


class CheckedSession(Session):
    """A Session that records every envelope for the contract check."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seen: list[Envelope] = []
        self._remove = None

    def _record(self, record: Any) -> None:
        self.seen.append(record.envelope)

    def call(self, tool: str, /, **args: Any) -> Envelope:
        if self._remove is None:
            self._remove = self.add_listener(self._record)
        return super().call(tool, **args)


def check_contract(envelope: Envelope) -> None:
    """Assert the envelope obeys the documented contract exactly."""
    d = envelope.to_dict()
    op = d["operation"]
    if envelope.ok:
        assert list(d) == ["status", "instance", "data", "operation"], d.keys()
        assert (op["outcome"], op["retry"]) == ("completed", "not_needed")
    else:
        assert [key for key in d if key != "details"] == ["status", "instance", "error_type", "message", "operation"], d.keys()
        assert "details" not in d or (list(d).index("details") == 4 and isinstance(d["details"], dict))
        assert d["error_type"] in ERROR_TYPES
        assert d["message"]
        assert (op["outcome"], op["retry"]) in {
            ("not_started", "after_correction"),
            ("unknown", "read_only"),
            ("unknown", "inspect_state"),
            ("completed", "inspect_state"),
            ("completed", "read_only"),
            ("not_started", "read_only"),
        }, (op["outcome"], op["retry"])
    expected_keys = ["id", "tool", "instance_id", "page_id", "frame_id", "started_at", "finished_at",
                     "duration_ms", "outcome", "retry", "artifacts"]
    assert list(op)[: len(expected_keys)] == expected_keys
    uuid.UUID(op["id"])
    for key in ("instance_id", "page_id", "frame_id"):
        if op[key] is not None:
            uuid.UUID(op[key])
    started = datetime.fromisoformat(op["started_at"])
    finished = datetime.fromisoformat(op["finished_at"])
    assert started.utcoffset() is not None and started <= finished
    assert op["duration_ms"] >= 0
    if envelope.ok and op["tool"] in REGISTRY:
        spec = REGISTRY.get(op["tool"])
        jsonschema.validate(json.loads(envelope.to_json())["data"], spec.data_schema)


@pytest.fixture(scope="module")
def session(demo: DemoServer) -> Iterator[CheckedSession]:
    """One session per test module, on real Chromium."""
    with CheckedSession() as s:
        yield s
        for envelope in s.seen:
            check_contract(envelope)


@pytest.fixture
def fresh_session() -> Iterator[CheckedSession]:
    """A session of its own, for tests that change limits or break instances."""
    sessions: list[CheckedSession] = []

    def make(**kwargs: Any) -> CheckedSession:
        s = CheckedSession(**kwargs)
        sessions.append(s)
        return s

    yield make  # type: ignore[misc]
    for s in sessions:
        s.close()
        for envelope in s.seen:
            check_contract(envelope)


def ok(envelope: Envelope) -> dict[str, Any]:
    """The data of a successful envelope (fails the test with the message otherwise)."""
    assert envelope.ok, f"{envelope.error_type}: {envelope.message}"
    return envelope.data  # type: ignore[return-value]


def error(envelope: Envelope, error_type: str, outcome: str | None = None, retry: str | None = None) -> str:
    """Assert an error envelope of `error_type` (and outcome/retry); return its message."""
    assert not envelope.ok, f"expected {error_type}, got success: {envelope.data}"
    assert envelope.error_type == error_type, f"expected {error_type}, got {envelope.error_type}: {envelope.message}"
    if outcome is not None:
        assert envelope.operation.outcome == outcome, envelope.operation
    if retry is not None:
        assert envelope.operation.retry == retry, envelope.operation
    return envelope.message or ""


def ref_for(snapshot: str, line_fragment: str) -> str:
    """The ref on the first snapshot line containing `line_fragment`."""
    for line in snapshot.splitlines():
        if line_fragment in line:
            match = re.search(r"\[ref=((?:f\d+)?e\d+)\]", line)
            if match:
                return match.group(1)
    raise AssertionError(f"no line with {line_fragment!r} and a ref in:\n{snapshot}")


def browser_processes(root_pid: int | None = None) -> list[psutil.Process]:
    """Chromium processes descended from `root_pid` (default: this process)."""
    root = psutil.Process(root_pid or os.getpid())
    found = []
    for child in root.children(recursive=True):
        try:
            if BROWSER_NAMES.search(child.name()) or BROWSER_NAMES.search(" ".join(child.cmdline()[:1])):
                found.append(child)
        except psutil.NoSuchProcess:
            continue
    return found


def make_operation(**changes: object) -> Operation:
    """A fixed, valid Operation for envelopes built by hand; `changes` override fields."""
    base = Operation(
        id="00000000-0000-4000-8000-000000000001",
        tool="browser_screenshot",
        instance_id="00000000-0000-4000-8000-000000000002",
        page_id="00000000-0000-4000-8000-000000000003",
        frame_id="00000000-0000-4000-8000-000000000004",
        started_at="2026-11-30T00:00:00.000+00:00",
        finished_at="2026-11-30T00:00:00.010+00:00",
        duration_ms=10.0,
        outcome="completed",
        retry="not_needed",
    )
    return replace(base, **changes)  # type: ignore[arg-type]


class Kernel:  # used by test_kernel and test_mcp
    """A real ipykernel with a helper that collects what a front end would see."""

    def __init__(self, manager: KernelManager, client: Any) -> None:
        self.manager, self.client = manager, client

    def run(self, code: str, timeout: float = 60) -> list[dict[str, Any]]:
        """Execute `code`; return its iopub output messages (execute_result, display_data, stream, error)."""
        msg_id = self.client.execute(code)
        outputs: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = self.client.get_iopub_msg(timeout=timeout)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] in ("execute_result", "display_data", "stream", "error"):
                outputs.append({"type": msg["msg_type"], **msg["content"]})
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                return outputs
        raise TimeoutError(code)

    def value(self, code: str) -> Any:
        """The JSON value printed by `code` (which must print json.dumps(...))."""
        streams = [o["text"] for o in self.run(code) if o["type"] == "stream"]
        return json.loads("".join(streams).strip().splitlines()[-1])

    def browser_pids(self) -> list[int]:
        return [p.pid for p in browser_processes(self.manager.provisioner.process.pid)]
