"""The envelope contract, limits and import hygiene (no browser needed)."""

from __future__ import annotations

import base64
import json
import subprocess
import sys

import pytest

from tests.helpers import make_operation
from webmcp_nb import Envelope, Session, ToolCallError
from webmcp_nb.core.call.envelope import ERROR_TYPES, enforce_size_limit
from webmcp_nb.core.config import Limits


def test_success_shape_and_bytes_become_base64_only_when_serialised() -> None:
    envelope = Envelope("success", "default", make_operation(), data={"image": b"\x89PNG", "n": 1})
    d = envelope.to_dict()
    assert list(d) == ["status", "instance", "data", "operation"]
    assert d["data"]["image"] == b"\x89PNG"
    wire = json.loads(envelope.to_json())
    assert base64.b64decode(wire["data"]["image"]) == b"\x89PNG"
    assert wire["operation"] == {
        "id": "00000000-0000-4000-8000-000000000001",
        "tool": "browser_screenshot",
        "instance_id": "00000000-0000-4000-8000-000000000002",
        "page_id": "00000000-0000-4000-8000-000000000003",
        "frame_id": "00000000-0000-4000-8000-000000000004",
        "started_at": "2026-11-30T00:00:00.000+00:00",
        "finished_at": "2026-11-30T00:00:00.010+00:00",
        "duration_ms": 10.0,
        "outcome": "completed",
        "retry": "not_needed",
        "artifacts": [],
    }
    assert envelope.ok and envelope.raise_for_status() is envelope


def test_error_shape_and_raise_for_status_carries_the_envelope() -> None:
    envelope = Envelope(
        "error",
        None,
        make_operation(outcome="not_started", retry="after_correction"),
        error_type="invalid_params",
        message="bad",
    )
    assert list(envelope.to_dict()) == ["status", "instance", "error_type", "message", "operation"]
    with pytest.raises(ToolCallError) as caught:
        envelope.raise_for_status()
    assert caught.value.envelope is envelope
    assert caught.value.error_type == "invalid_params"
    assert "invalid_params: bad" in str(caught.value)


def test_error_types_are_exactly_the_documented_set() -> None:
    assert set(ERROR_TYPES) == {
        "instance_not_found",
        "instance_already_exists",
        "instance_limit_exceeded",
        "instance_crashed",
        "profile_dir_in_use",
        "binary_not_found",
        "element_not_found",
        "stale_ref",
        "navigation_failed",
        "navigation_timeout",
        "wait_timeout",
        "dialog_not_present",
        "evaluation_failed",
        "verification_failed",
        "invalid_params",
        "modal_state_blocked",
        "internal_error",
        "operation_timeout",
        "result_too_large",
        "unsupported_capability",
        "page_not_found",
        "frame_not_found",
        "observation_timeout",
        "download_not_found",
        "download_failed",
        "approval_denied",
        "page_crashed",
        "cancelled",
    }


def test_oversized_success_becomes_result_too_large_keeping_outcome_and_artifacts() -> None:
    envelope = Envelope("success", "default", make_operation(artifacts=("/tmp/shot.png",)), data={"blob": "x" * 10_000})
    limited = enforce_size_limit(envelope, 4096, read_only=False, hint="Use a ref.")
    assert limited.error_type == "result_too_large"
    assert limited.operation.outcome == "completed"
    assert limited.operation.retry == "inspect_state"
    assert limited.operation.artifacts == ("/tmp/shot.png",)
    assert limited.instance == "default"
    assert "4096" in limited.message and "Use a ref." in limited.message and "inspect" in limited.message
    assert len(limited.to_json_bytes()) <= 4096
    read_only = enforce_size_limit(envelope, 4096, read_only=True, hint="")
    assert read_only.operation.retry == "read_only"


def test_artifact_references_that_do_not_fit_are_omitted_but_ids_kept() -> None:
    long_path = "/tmp/" + "d" * 5000 + "/shot.png"
    envelope = Envelope("success", "default", make_operation(artifacts=(long_path,)), data={"blob": "x"})
    limited = enforce_size_limit(envelope, 4096, read_only=False, hint="")
    assert limited.error_type == "result_too_large"
    d = json.loads(limited.to_json())
    assert d["instance"] is None
    assert d["operation"]["artifacts"] == []
    assert d["operation"]["references_omitted"] is True
    assert d["operation"]["instance_id"] == "00000000-0000-4000-8000-000000000002"
    assert d["operation"]["page_id"] == "00000000-0000-4000-8000-000000000003"
    assert len(limited.to_json_bytes()) <= 4096


@pytest.mark.parametrize("character", ["x", "\u20ac", "\U0001f600"])  # one, three and four bytes of UTF-8
def test_an_error_over_the_limit_keeps_the_longest_head_and_tail_that_fit(character: str) -> None:
    message = "HEAD" + character * 5000 + "TAIL"
    operation = make_operation(outcome="unknown", retry="inspect_state")
    envelope = Envelope("error", "default", operation, error_type="evaluation_failed", message=message)
    limited = enforce_size_limit(envelope, 4096, read_only=False, hint="")
    assert (limited.error_type, limited.operation.outcome) == ("evaluation_failed", "unknown")
    head, marker, tail = (limited.message or "").partition(" characters cut to fit the limit ...]\n")
    assert marker and head.startswith("HEAD" + character * 100) and tail.endswith(character * 100 + "TAIL")
    assert 4096 - len(character.encode()) * 3 < len(limited.to_json_bytes()) <= 4096  # nothing more could fit


def test_operation_ids_are_random_version_4_uuids() -> None:
    import uuid

    from webmcp_nb.core.call.util import random_uuid

    ids = [random_uuid() for _ in range(2000)]
    parsed = [uuid.UUID(one) for one in ids]
    assert all(str(value) == one for value, one in zip(parsed, ids, strict=True))
    assert {value.version for value in parsed} == {4} and {value.variant for value in parsed} == {uuid.RFC_4122}
    assert {one[19] for one in ids} == set("89ab") and len(set(ids)) == len(ids)


def test_an_envelope_within_the_limit_is_untouched() -> None:
    envelope = Envelope("success", "default", make_operation(), data={"x": 1})
    assert enforce_size_limit(envelope, 4096, read_only=False, hint="") is envelope


@pytest.mark.parametrize(
    ("env", "value", "match"),
    [
        ("BROWSER_MCP_MAX_RESULT_BYTES", "4095", "at least 4096"),
        ("BROWSER_MCP_MAX_RESULT_BYTES", "lots", "not a valid int"),
        ("BROWSER_MCP_MAX_INSTANCES", "0", "at least 1"),
        ("BROWSER_MCP_OPERATION_TIMEOUT_SECONDS", "-1", "must be positive"),
    ],
)
def test_bad_limits_from_the_environment_fail_loudly(monkeypatch, env: str, value: str, match: str) -> None:
    monkeypatch.setenv(env, value)
    with pytest.raises(ValueError, match=match):
        Session()


def test_limits_from_environment_and_session_options(monkeypatch) -> None:
    monkeypatch.setenv("BROWSER_MCP_MAX_RESULT_BYTES", "5000")
    monkeypatch.setenv("BROWSER_MCP_MAX_INSTANCES", "3")
    monkeypatch.setenv("BROWSER_MCP_OPERATION_TIMEOUT_SECONDS", "7.5")
    assert Limits.from_env() == Limits(max_result_bytes=5000, max_instances=3, operation_timeout_s=7.5)
    assert Session(max_result_bytes=8000).limits.max_result_bytes == 8000
    with pytest.raises(ValueError, match="at least 4096"):
        Session(max_result_bytes=100)


def run_python(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_import_is_cheap_and_starts_nothing() -> None:
    out = run_python(
        "import sys, threading, webmcp_nb\n"
        "s = webmcp_nb.Session()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('playwright', 'IPython', 'mcp')))\n"
        "print(threading.active_count())\n"
    )
    assert out.split("\n")[:2] == ["[]", "1"]


def test_core_imports_neither_ipython_nor_mcp() -> None:
    out = run_python(
        "import sys\n"
        "import webmcp_nb.core.call.engine, webmcp_nb.core.tools, webmcp_nb.client\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'IPython', 'ipykernel', 'ipywidgets', 'mcp'}))\n"
    )
    assert out.strip() == "[]"


def test_a_replaced_envelope_is_encoded_anew() -> None:
    """The JSON is encoded once per envelope; `dataclasses.replace` makes one that encodes its own."""
    import dataclasses

    envelope = Envelope(status="error", instance="default", operation=make_operation(), error_type="internal_error")
    encoded = envelope.to_json_bytes()
    assert envelope.to_json_bytes() is encoded
    changed = dataclasses.replace(envelope, message="changed", context={"url": "about:blank"})
    assert json.loads(changed.to_json_bytes())["message"] == "changed"
    assert json.loads(changed.to_json_bytes())["context"] == {"url": "about:blank"}
    assert json.loads(envelope.to_json_bytes()).get("message") is None
    assert changed != envelope and dataclasses.replace(changed, message=None, context=None) == envelope


def test_a_tool_without_a_page_fails_loudly_when_it_asks_for_one() -> None:
    from webmcp_nb.client import tool_registry
    from webmcp_nb.core.call.context import CallContext

    ctx = CallContext(engine=None, spec=tool_registry().get("browser_list_instances"), deadline=0.0)  # type: ignore[arg-type]
    for require, what in [(ctx.require_instance, "instance"), (ctx.require_page, "page"), (ctx.require_frame, "frame")]:
        with pytest.raises(RuntimeError, match=f"^browser_list_instances has no {what}: its target is 'server'$"):
            require()
