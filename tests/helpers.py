"""Helpers shared by the tests: envelope assertions, the envelope contract, waiting, processes, kernels.

Fixtures live in conftest.py; everything a test module imports lives here.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import jsonschema
import psutil

from webmcp_nb import Envelope
from webmcp_nb.core.call.envelope import ERROR_TYPES, Operation
from webmcp_nb.core.call.registry import REGISTRY
from webmcp_nb.core.evidence.failure import CONTEXT_KEYS

if TYPE_CHECKING:
    from jupyter_client.manager import KernelManager

T = TypeVar("T")

BROWSER_NAMES = re.compile(r"chrom|headless_shell", re.I)


# waiting ---------------------------------------------------------------------------
def wait_until(
    predicate: Callable[[], T],
    timeout: float = 10.0,
    interval: float = 0.05,
    message: str | Callable[[], str] = "",
) -> T:
    """The first truthy value of `predicate()`, polled every `interval` seconds.

    Fails the test after `timeout` seconds with `message` (a string, or a function called
    then, to show the state that did not change). The last try starts after the deadline,
    so a predicate slower than the timeout still gets a fair chance.
    """
    deadline = time.monotonic() + timeout
    while True:
        last_try = time.monotonic() >= deadline
        value = predicate()
        if value:
            return value
        if last_try:
            detail = message() if callable(message) else message
            raise AssertionError(f"condition not met within {timeout:g} s{': ' + detail if detail else ''}")
        time.sleep(interval)


async def wait_until_async(
    predicate: Callable[[], Awaitable[T]],
    timeout: float = 10.0,
    interval: float = 0.05,
    message: str | Callable[[], str] = "",
) -> T:
    """`wait_until` for a coroutine predicate, inside an event loop."""
    deadline = time.monotonic() + timeout
    while True:
        last_try = time.monotonic() >= deadline
        value = await predicate()
        if value:
            return value
        if last_try:
            detail = message() if callable(message) else message
            raise AssertionError(f"condition not met within {timeout:g} s{': ' + detail if detail else ''}")
        await asyncio.sleep(interval)


# envelopes -------------------------------------------------------------------------
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


def check_contract(envelope: Envelope) -> None:
    """Assert the envelope obeys the documented contract exactly."""
    d = envelope.to_dict()
    op = d["operation"]
    if envelope.ok:
        assert list(d) == ["status", "instance", "data", "operation"], d.keys()
        previewed = isinstance(d["data"], dict) and d["data"].get("preview") is not None  # an API call's preview=True
        assert (op["outcome"], op["retry"]) == ("not_started" if previewed else "completed", "not_needed")
    else:
        keys = ["status", "instance", "error_type", "message", "context", "operation"]
        assert list(d) == [key for key in keys if key != "context" or "context" in d], d.keys()
        assert d["error_type"] in ERROR_TYPES
        assert d["message"] and len(d["message"]) <= 3000
        if "context" in d:  # additive: only what there is to say (webmcp_nb.core.evidence.failure)
            assert d["context"] and set(d["context"]) <= set(CONTEXT_KEYS)
        assert (op["outcome"], op["retry"]) in {
            ("not_started", "after_correction"),
            ("unknown", "read_only"),
            ("unknown", "inspect_state"),
            ("completed", "inspect_state"),
            ("completed", "read_only"),
            ("not_started", "read_only"),
        }, (op["outcome"], op["retry"])
    expected_keys = [
        "id",
        "tool",
        "instance_id",
        "page_id",
        "frame_id",
        "started_at",
        "finished_at",
        "duration_ms",
        "outcome",
        "retry",
        "artifacts",
    ]
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


# processes -------------------------------------------------------------------------
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


def alive(pid: int) -> bool:
    """Whether `pid` is a running process (a zombie waiting to be reaped is not)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_for_exit(pids: list[int], timeout: float = 15.0) -> None:
    """Fail the test unless every process in `pids` ends within `timeout` seconds."""
    wait_until(
        lambda: not any(alive(pid) for pid in pids),
        timeout=timeout,
        interval=0.1,
        message=lambda: f"still running: {[pid for pid in pids if alive(pid)]}",
    )


# kernels ---------------------------------------------------------------------------
# A cell to interrupt. Short sleeps, not one long one: Linux may hand the kernel's SIGINT to any of
# its threads, and Python runs the handler (raising KeyboardInterrupt) in the main thread only at
# its next bytecode, so one `time.sleep(30)` could ignore an interrupt for the rest of its 30 s.
# A kernel whose cells carry every view, the envelope JSON included: how a program that reads
# outputs asks for them (`BrowserMagics.cell_output`, on the kernel's command line).
FULL_CELLS = ["--BrowserMagics.cell_output=full"]
SLEEPING_CELL = "import time\nprint('sleeping', flush=True)\nfor _ in range(300):\n    time.sleep(0.1)"


class Kernel:  # used by test_kernel and test_mcp
    """A real ipykernel with a helper that collects what a front end would see."""

    def __init__(self, manager: KernelManager, client: Any) -> None:
        self.manager, self.client = manager, client

    def run(self, code: str, timeout: float = 60) -> list[dict[str, Any]]:
        """Execute `code`; return its iopub output messages (execute_result, display_data and its updates, stream).
        A cell that raises fails the test here, so a broken set-up step is not read as a later
        test's failure."""
        outputs = self.finish(self.client.execute(code), timeout)
        errors = [f"{o['ename']}: {o['evalue']}" for o in outputs if o["type"] == "error"]
        assert not errors, f"the cell {code!r} raised {errors}"
        return outputs

    def finish(self, msg_id: str, timeout: float = 60) -> list[dict[str, Any]]:
        """Wait until the kernel is idle after the cell `msg_id`; return the cell's iopub output messages."""
        outputs: list[dict[str, Any]] = []

        def idle() -> bool:  # reads one message
            msg = self.client.get_iopub_msg(timeout=timeout)
            if msg["parent_header"].get("msg_id") != msg_id:
                return False
            if msg["msg_type"] in ("execute_result", "display_data", "update_display_data", "stream", "error"):
                outputs.append({"type": msg["msg_type"], **msg["content"]})
            return bool(msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle")

        wait_until(idle, timeout, 0, f"the cell {msg_id} to finish")
        return outputs

    def start(self, code: str, timeout: float = 60) -> str:
        """Execute `code` without waiting for it to finish; return its msg_id once it prints
        (begin `code` with a print, so the return means it is running)."""
        msg_id = self.client.execute(code)

        def printed() -> bool:  # reads one message
            msg = self.client.get_iopub_msg(timeout=timeout)
            return bool(msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "stream")

        wait_until(printed, timeout, 0, f"the cell {msg_id} to print")
        return msg_id

    def value(self, code: str) -> Any:
        """The JSON value printed by `code` (which must print json.dumps(...))."""
        streams = [o["text"] for o in self.run(code) if o["type"] == "stream"]
        return json.loads("".join(streams).strip().splitlines()[-1])

    def browser_pids(self) -> list[int]:
        return [p.pid for p in browser_processes(self.manager.provisioner.process.pid)]


def free_port() -> int:
    """A loopback port nothing listens on (free when asked; nothing else is started on it here)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# --------------------------------------------------------------------------- #
# The TypeScript SDK client (tests/ts_client: a script per scenario, each printing a JSON report)
# --------------------------------------------------------------------------- #
TS_CLIENT = Path(__file__).parent / "ts_client"


def uv() -> str:
    """The test extra's uv, next to this interpreter: tests that build a fresh environment install
    with it, so they reuse the packages `make install` already fetched instead of downloading them."""
    path = Path(sys.executable).with_name("uv")
    assert path.exists(), f"uv is part of the test extra; {path} is missing"
    return str(path)


def npm_install(folder: Path, packages: tuple[str, ...]) -> Path:
    """`folder` with its npm dependencies installed from its lock file: once, under a lock, since
    test files run on several pytest-xdist workers at once and two `npm ci` in one folder break
    each other. `packages` (npm names) tell whether it was done already."""
    node, npm = shutil.which("node"), shutil.which("npm")
    assert node and npm, "Node.js and npm are needed for the TypeScript tests"
    with open(folder / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not all((folder / "node_modules" / name).exists() for name in packages):
            subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=folder, check=True, timeout=300)
    return folder


def install_ts_client() -> Path:
    """tests/ts_client with its npm dependencies installed."""
    return npm_install(TS_CLIENT, ("@modelcontextprotocol/client", "@modelcontextprotocol/inspector"))


def ts_report(script: str, *args: str, era: str | None = None, timeout: float = 300) -> dict[str, Any]:
    """Run `script` of tests/ts_client with `args` (the test fails if it exits non-zero) and return
    its JSON report; with `era`, the report's negotiated protocol is checked against it."""
    completed = subprocess.run(
        ["node", str(install_ts_client() / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=TS_CLIENT,
    )
    assert completed.returncode == 0, completed.stderr
    report: dict[str, Any] = json.loads(completed.stdout)
    if era is not None:
        assert report["protocol"] == ("2025-11-25" if era == "legacy" else era)
    return report
