"""browser_http on real Chromium against the demo API: bounded bodies, SSE, NDJSON, binary,
secrets, outcomes; through `Session` and through a real MCP client (streamable HTTP)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from webmcp_nb.core.tools.http import RESERVED_BYTES
from webmcp_nb.demo import PNG, DemoServer

from .conftest import CheckedSession
from .helpers import error, ok, wait_until, wait_until_async

pytestmark = pytest.mark.playwright_sensitive  # see tests/test_compat_scope.py

SSE_LIMITS = {"max_events": 100, "max_bytes": 100_000, "max_duration_ms": 10_000}


@pytest.fixture(scope="module")
def s(session: CheckedSession, demo: DemoServer) -> CheckedSession:
    ok(session.navigate(demo.url))
    return session


def count(s: CheckedSession, key: str) -> int:
    return ok(s.http(f"/api/counter?key={key}"))["body"]["count"]


def open_streams(demo: DemoServer) -> int:
    """How many of the demo's endless streams are open, asked directly (not through the page)."""
    with urllib.request.urlopen(demo.url_for("api/counter?key=sse-open"), timeout=10) as answer:
        return json.load(answer)["count"]


def wait_streams_closed(demo: DemoServer) -> None:
    """The demo's endless streams all closed (the page cancelled its reader), within 10 s."""
    wait_until(lambda: open_streams(demo) == 0, 10, 0.1, "the endless stream was never closed by the page")


def page_still_works(s: CheckedSession) -> None:
    assert ok(s.evaluate("() => 6 * 7"))["result"] == 42
    assert ok(s.http("/api/items"))["status"] == 200


# --------------------------------------------------------------------------- #
# Plain requests
# --------------------------------------------------------------------------- #


def test_get_json_from_the_page_with_its_cookies_and_origin(s: CheckedSession, demo: DemoServer) -> None:
    ok(s.evaluate("() => { document.cookie = 'visit=42; path=/'; }"))
    data = ok(s.http("/api/echo"))
    assert data["url"] == demo.url_for("api/echo")  # relative to the page, absolute after
    assert (data["status"], data["status_text"], data["method"], data["response"]) == (200, "OK", "GET", "json")
    # The page's cookie went with it; the echo's cookie fields are secret ones, so they read [blocked]
    # (the server's headers hold a Cookie only when one was sent).
    assert data["body"]["cookie"] == "[blocked]" and {"cookie", "headers.Cookie"} <= set(data["blocked_fields"])
    assert data["content_type"] == "application/json"
    assert data["byte_length"] == int(data["headers"]["content-length"])
    items = ok(s.http(demo.url_for("api/items")))["body"]
    assert [item["name"] for item in items] == ["Apple", "Banana", "Cherry", "Date"]


def test_an_http_error_status_is_data_not_a_tool_error(s: CheckedSession) -> None:
    data = ok(s.http("/status?code=404"))
    assert (data["status"], data["status_text"], data["response"]) == (404, "Not Found", "text")
    assert "404" in data["body"]
    head = ok(s.http("/api/items", method="HEAD"))
    assert (head["status"], head["response"], head["body"], head["byte_length"], head["warnings"]) == (
        200,
        "empty",
        None,
        0,
        [],
    )
    assert int(head["headers"]["content-length"]) > 0
    options = ok(s.http("/api/items", method="OPTIONS"))
    assert (options["status"], options["response"]) == (204, "empty") and "POST" in options["headers"]["allow"]


def test_secret_fields_and_headers_are_blocked(s: CheckedSession) -> None:
    envelope = s.http("/api/secrets", secret_fields=["USER"])
    data = ok(envelope)
    body = data["body"]
    assert body["password"] == body["Access-Token"] == body["user"] == "[blocked]"
    assert body["profile"] == {"apiKey": "[blocked]", "theme": "dark"}
    assert body["sessions"] == [{"id": 1, "refresh_token": "[blocked]"}]
    assert body["password_hint"] == "a pet"  # only whole names count
    assert sorted(data["blocked_fields"]) == sorted(
        ["user", "password", "Access-Token", "profile.apiKey", "sessions[0].refresh_token"]
    )
    assert data["headers"]["x-auth-token"] == "[redacted]"
    assert "hunter2" not in envelope.to_json() and "header-secret" not in envelope.to_json()
    # the same blocking for JSON text and for evaluate results
    text = ok(s.http("/api/secrets", response="text"))
    assert "hunter2" not in text["body"] and "password" in text["blocked_fields"]
    evaluated = ok(s.evaluate("() => ({login: 'ada', Private_Key: 'pk', list: [{'client-secret': 'cs'}]})"))
    assert evaluated["result"] == {"login": "ada", "Private_Key": "[blocked]", "list": [{"client-secret": "[blocked]"}]}
    assert evaluated["blocked_fields"] == ["Private_Key", "list[0].client-secret"]


def test_the_recorded_bodies_of_the_pages_requests_are_blocked_too(s: CheckedSession) -> None:
    """browser_http's request is in the page's network record: its body tool blocks the same fields."""

    def answered(url: str) -> set[str]:  # the answered requests to `url` the record holds
        entries = ok(s.call("browser_network", url=url, limit=500))["entries"]
        return {e["request_id"] for e in entries if e.get("status") == 200}

    def body_of(url: str, read: dict[str, Any], **request: Any) -> dict[str, Any]:
        """Send a request to `url`, then `read` its recorded body. On a loaded CI machine Chromium
        has dropped a body it had just delivered ("No data found for resource"); that answer must be
        a well-formed stale_ref, and the request is sent again (at most three times)."""
        for _ in range(3):
            before = answered(url)
            ok(s.http(f"/{url}", **request))
            request_id = wait_until(lambda before=before: next(iter(answered(url) - before), None))
            envelope = s.call("browser_network_body", request_id=request_id, **read)
            if envelope.ok:
                return ok(envelope)
            assert "No data found" in error(envelope, "stale_ref", "unknown", "read_only")
        raise AssertionError(f"three recorded bodies of {url} were dropped in a row")

    response = body_of("api/secrets", {})
    assert json.loads(response["body"])["password"] == "[blocked]" and "hunter2" not in response["body"]
    assert "password" in response["blocked_fields"]
    saved = body_of("api/secrets", {"save": True})
    assert (
        "hunter2" not in Path(saved["path"]).read_text() and saved["size_bytes"] == Path(saved["path"]).stat().st_size
    )
    login = {"login": "ada", "password": "p-sent"}
    sent = body_of("api/counter?key=login", {"part": "request"}, method="POST", json_body=login)
    assert json.loads(sent["body"]) == {"login": "ada", "password": "[blocked]"}


def test_page_tool_results_are_blocked_too(s: CheckedSession, demo: DemoServer) -> None:
    ok(s.navigate(demo.url_for("webmcp.html")))
    ok(
        s.evaluate("""() => document.modelContext.registerTool({
        name: 'leaky', description: 'Returns a login', inputSchema: {type: 'object', properties: {}},
        execute: () => ({user: 'ada', api_key: 'k-1'})})""")
    )
    data = ok(s.webmcp_call("leaky"))
    assert data["structured"] == {"user": "ada", "api_key": "[blocked]"}
    assert data["blocked_fields"] == ["structured.api_key"]
    ok(s.navigate(demo.url))


# --------------------------------------------------------------------------- #
# Budgets, saving
# --------------------------------------------------------------------------- #


def test_a_body_over_the_budget_fails_by_declared_or_received_size(s: CheckedSession) -> None:
    budget = 16_384 - RESERVED_BYTES
    declared = error(s.http("/api/large?kb=64", max_result_bytes=16_384), "result_too_large", "unknown", "read_only")
    assert "Content-Length declares" in declared and f"{budget:,}" in declared and "save=true" in declared
    assert "0 bytes of it were read" in declared
    # gzip: the declared length is the small compressed size; the bytes the page reads are counted
    received = error(s.http("/api/zipped?kb=64", max_result_bytes=16_384), "result_too_large", "unknown", "read_only")
    assert f"more than {budget:,} bytes arrived" in received and "Nothing was clipped" in received
    message = error(s.http("/api/items", max_result_bytes=10**9), "invalid_params", "not_started", "after_correction")
    assert "at most the session's limit" in message
    error(s.http("/api/items", max_result_bytes=RESERVED_BYTES), "invalid_params", "not_started")
    page_still_works(s)


def test_save_streams_the_body_to_an_artifact(s: CheckedSession) -> None:
    envelope = s.http("/api/large?kb=2000", save=True)
    data = ok(envelope)
    saved = data["saved"]
    assert data["body"] is None and data["response"] == "saved"
    assert saved["size_bytes"] == data["byte_length"] == Path(saved["path"]).stat().st_size > 2_000_000
    assert envelope.operation.artifacts == (saved["path"],) and saved["path"].endswith(".json")
    assert json.loads(Path(saved["path"]).read_text())["items"][0]["name"] == "Item 0"
    folder = Path(saved["path"]).parent
    before = set(os.listdir(folder))
    message = error(s.http("/api/zipped?kb=512", save=True, max_save_bytes=100_000), "result_too_large")
    assert "max_save_bytes" in message
    assert set(os.listdir(folder)) == before  # the partial file is gone


def test_secrets_are_blocked_in_json_text_of_any_shape_and_in_saved_bodies(s: CheckedSession) -> None:
    # NDJSON read as text: each line that is JSON has its secrets blocked, the other lines stay as sent
    text = ok(s.http("/api/items.ndjson", response="text"))
    assert "ndjson-secret" not in text["body"] and text["blocked_fields"] == ["line2.token"]
    lines = text["body"].splitlines()
    assert json.loads(lines[1]) == {"id": 0, "token": "[blocked]"} and lines[0] == '{"id": 1, "name": "Apple"}'
    # a saved body is readable by an agent (a resource link): its secrets are blocked in the file
    envelope = s.http("/api/secrets", save=True)
    data = ok(envelope)
    path = Path(data["saved"]["path"])
    saved = json.loads(path.read_text())
    assert saved["password"] == saved["profile"]["apiKey"] == "[blocked]" and saved["profile"]["theme"] == "dark"
    assert "password" in data["blocked_fields"] and "hunter2" not in path.read_text()
    assert data["saved"]["size_bytes"] == path.stat().st_size and data["byte_length"] > 0
    lines = Path(ok(s.http("/api/items.ndjson", save=True))["saved"]["path"]).read_text().splitlines()
    assert len(lines) == 5 and json.loads(lines[1])["token"] == "[blocked]"


# --------------------------------------------------------------------------- #
# Media types, NDJSON
# --------------------------------------------------------------------------- #


def test_streaming_and_binary_answers_need_their_modes(s: CheckedSession) -> None:
    found = error(s.http("/api/sse"), "unsupported_capability", "unknown", "read_only")
    assert "text/event-stream" in found and "body was not read" in found and "response='sse'" in found
    found = error(s.http("/api/image.png"), "unsupported_capability", "unknown", "read_only")
    assert "image/png" in found and "response='binary'" in found
    told = error(s.http("/api/sse", expect="text/event-stream"), "invalid_params", "not_started", "after_correction")
    assert "before the request was sent" in told
    probed = error(s.http("/api/image.png", preflight=True), "invalid_params", "not_started")
    assert "preflight HEAD" in probed
    # a mutation refused before sending never ran
    error(
        s.http("/api/counter?key=refused", method="POST", body="x", expect="application/pdf"),
        "invalid_params",
        "not_started",
        "after_correction",
    )
    assert count(s, "refused") == 0


def test_ndjson_lenient_and_strict(s: CheckedSession) -> None:
    data = ok(s.http("/api/items.ndjson?malformed=1"))
    assert data["response"] == "ndjson"
    assert [value["id"] for value in data["body"]] == [1, 0, 2, 3, 4]
    assert data["body"][1]["token"] == "[blocked]" and data["blocked_fields"] == ["[1].token"]
    assert len(data["warnings"]) == 1 and data["warnings"][0].startswith("line 4 skipped")
    message = error(
        s.http("/api/items.ndjson?malformed=1", response="ndjson", strict=True),
        "evaluation_failed",
        "unknown",
        "read_only",
    )
    assert "line 4" in message
    assert ok(s.http("/api/items.ndjson", response="ndjson", strict=True))["warnings"] == []


# --------------------------------------------------------------------------- #
# Server-sent events
# --------------------------------------------------------------------------- #


def test_sse_collects_a_finite_stream(s: CheckedSession) -> None:
    data = ok(s.http("/api/sse?n=3", response="sse", sse=SSE_LIMITS))
    body = data["body"]
    assert body["reconnects"] == 0 and data["response"] == "sse"
    assert [(e["data"], e["event"], e["id"]) for e in body["events"]] == [
        ({"n": 1, "token": "[blocked]"}, "tick", "1"),
        ({"n": 2}, "tick", "2"),
        ({"n": 3}, "tick", "3"),
    ]
    assert data["blocked_fields"] == ["events[0].data.token"]
    for event in body["events"]:
        assert event["bytes"] == len(json.dumps(event, separators=(",", ":")).encode())
        assert abs(event["received_at"] - time.time() * 1000) < 600_000


@pytest.mark.parametrize(
    "bad",
    [
        None,
        {"max_events": 1, "max_bytes": 1},
        {**SSE_LIMITS, "max_events": 0},
        {**SSE_LIMITS, "max_duration_ms": 2**31},
        {**SSE_LIMITS, "max_bytes": 2**53},
        {**SSE_LIMITS, "max_events": 1.5},
    ],
)
def test_sse_limits_are_required_and_checked_before_any_request(s: CheckedSession, demo: DemoServer, bad: Any) -> None:
    before = open_streams(demo)
    args = {"response": "sse"} if bad is None else {"response": "sse", "sse": bad}
    error(s.http("/api/sse/endless", **args), "invalid_params", "not_started", "after_correction")
    assert open_streams(demo) == before == 0


def test_sse_limits_fail_with_the_partial_events(s: CheckedSession, demo: DemoServer) -> None:
    envelope = s.http("/api/sse?n=5", response="sse", sse={**SSE_LIMITS, "max_events": 2})
    message = error(envelope, "result_too_large", "unknown", "read_only")
    assert "max_events (2)" in message and "not an instruction to retry" in message
    assert [e["id"] for e in envelope.context["partial"]] == ["1", "2"] and envelope.context["reconnects"] == 0
    # exactly max_events, then the end: a success
    assert len(ok(s.http("/api/sse?n=2", response="sse", sse={**SSE_LIMITS, "max_events": 2}))["body"]["events"]) == 2
    envelope = s.http("/api/sse?n=5", response="sse", sse={**SSE_LIMITS, "max_bytes": 250})
    assert "max_bytes (250 bytes)" in error(envelope, "result_too_large")
    assert 0 < len(envelope.context["partial"]) < 5
    # a limit reached on an endless stream cancels the reader in the page (the server sees it close)
    envelope = s.http("/api/sse/endless", response="sse", sse={**SSE_LIMITS, "max_events": 3})
    assert [e["id"] for e in envelope.context["partial"]] == ["1", "2", "3"] and error(envelope, "result_too_large")
    wait_streams_closed(demo)


def test_sse_max_bytes_counts_each_events_json_and_the_separators(s: CheckedSession) -> None:
    events = ok(s.http("/api/sse?n=3", response="sse", sse=SSE_LIMITS))["body"]["events"]
    exact = len(json.dumps(events, ensure_ascii=False, separators=(",", ":")).encode())  # the events as one array
    assert exact == 2 + sum(event["bytes"] for event in events) + 2
    assert (
        len(ok(s.http("/api/sse?n=3", response="sse", sse={**SSE_LIMITS, "max_bytes": exact}))["body"]["events"]) == 3
    )
    envelope = s.http("/api/sse?n=3", response="sse", sse={**SSE_LIMITS, "max_bytes": exact - 1})
    assert f"max_bytes ({exact - 1:,} bytes)" in error(envelope, "result_too_large", "unknown", "read_only")
    assert [event["id"] for event in envelope.context["partial"]] == ["1", "2"]


def test_sse_a_servers_failure_keeps_the_partial_events(s: CheckedSession) -> None:
    envelope = s.http("/api/sse/drop?end=500", response="sse", sse=SSE_LIMITS)  # the reconnect is answered 500
    message = error(envelope, "navigation_failed", "unknown", "read_only")
    assert "answered 500" in message and "not an instruction to retry" in message
    assert [event["id"] for event in envelope.context["partial"]] == ["1", "2", "3"]
    assert envelope.context["reconnects"] == 1


def test_sse_follows_the_servers_retry_advice(s: CheckedSession) -> None:
    # the server asks for 10 minutes before a reconnect: past max_duration_ms, so no reconnect is tried
    envelope = s.http("/api/sse/drop?retry_ms=600000", response="sse", sse={**SSE_LIMITS, "max_duration_ms": 60_000})
    message = error(envelope, "operation_timeout", "unknown", "read_only")
    assert "before the server's retry delay" in message
    assert [event["id"] for event in envelope.context["partial"]] == ["1", "2", "3"]
    assert envelope.context["reconnects"] == 0


def test_sse_duration_cancels_the_reader_and_the_page_stays_usable(s: CheckedSession, demo: DemoServer) -> None:
    started = time.monotonic()
    envelope = s.http("/api/sse/endless", response="sse", sse={**SSE_LIMITS, "max_duration_ms": 2000})
    assert time.monotonic() - started < 10  # the limit holds (an endless stream), generously measured
    message = error(envelope, "operation_timeout", "unknown", "read_only")
    assert "max_duration_ms (2000 ms)" in message and "cancelled" in message
    assert envelope.context["partial"] and envelope.context["partial"][0]["data"] == {"n": 1}
    wait_streams_closed(demo)
    page_still_works(s)


def test_sse_reconnects_with_last_event_id(s: CheckedSession) -> None:
    data = ok(s.http("/api/sse/drop", response="sse", sse=SSE_LIMITS))
    events = data["body"]["events"]
    assert data["body"]["reconnects"] == 1
    assert [e["data"]["n"] for e in events] == [1, 2, 3, 4, 5]
    assert [e["data"].get("after") for e in events] == [None, None, None, "3", "3"]
    # a reconnect answered 204 No Content: the stream is over
    data = ok(s.http("/api/sse/drop?end=204", response="sse", sse=SSE_LIMITS))
    assert data["body"]["reconnects"] == 1 and [e["data"]["n"] for e in data["body"]["events"]] == [1, 2, 3]


def test_a_cancelled_call_cancels_the_reader_in_the_page(s: CheckedSession, demo: DemoServer) -> None:
    async def cancel_midway() -> None:
        task = asyncio.ensure_future(s.acall("browser_http", url="/api/sse/endless", response="sse", sse=SSE_LIMITS))
        await wait_until_async(lambda: asyncio.to_thread(open_streams, demo), message="the stream never opened")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_midway())
    wait_streams_closed(demo)
    page_still_works(s)


def test_progress_hook_hears_each_event(s: CheckedSession) -> None:
    heard: list[dict[str, Any]] = []
    envelope = s.call_as(
        "python",
        "browser_http",
        {"url": "/api/sse?n=3", "response": "sse", "sse": SSE_LIMITS},
        on_progress=heard.append,
    )
    assert ok(envelope)["body"]["events"] == [update["event"] for update in heard]
    assert [update["count"] for update in heard] == [1, 2, 3]


# --------------------------------------------------------------------------- #
# Mutations and failures
# --------------------------------------------------------------------------- #


def test_a_mutation_runs_once_and_a_cut_off_one_is_unknown(s: CheckedSession) -> None:
    data = ok(s.http("/api/counter?key=once", method="POST", json_body={"n": 1}))
    assert data["body"] == {"key": "once", "count": 1, "method": "POST", "body": '{"n": 1}'}
    assert count(s, "once") == 1
    envelope = s.http("/api/counter?key=slow&delay_ms=3000", method="PUT", body="x", timeout_s=0.5)
    message = error(envelope, "operation_timeout", "unknown", "inspect_state")
    assert "check the API's state before repeating it" in message
    assert count(s, "slow") == 1  # it ran, once: nothing was retried
    assert ok(s.http("/api/counter?key=deleted", method="DELETE"))["status"] == 200
    assert count(s, "deleted") == 1
    error(s.http("/api/counter", method="GET", body="x"), "invalid_params", "not_started")
    page_still_works(s)


def test_a_mutation_over_the_budget_ran_once_and_is_unknown(s: CheckedSession) -> None:
    envelope = s.http("/api/counter?key=over", method="POST", body="x", max_result_bytes=RESERVED_BYTES + 1)
    message = error(envelope, "result_too_large", "unknown", "inspect_state")
    assert "Content-Length declares" in message and "check the API's state before repeating it" in message
    assert count(s, "over") == 1


def test_the_operation_deadline_keeps_the_policys_outcomes(s: CheckedSession, demo: DemoServer) -> None:
    """Cut off by the call's (or the operation's) deadline rather than its own timeout_s: the same rules."""
    read = s.call("browser_http", url="/slow?ms=3000", call_timeout_s=1)
    error(read, "operation_timeout", "unknown", "read_only")
    cut = s.call(
        "browser_http", url="/api/counter?key=deadline&delay_ms=3000", method="PUT", body="x", call_timeout_s=1
    )
    assert "check the API's state before repeating it" in error(cut, "operation_timeout", "unknown", "inspect_state")
    assert count(s, "deadline") == 1
    endless = {"url": "/api/sse/endless", "response": "sse", "sse": {**SSE_LIMITS, "max_duration_ms": 60_000}}
    envelope = s.call("browser_http", call_timeout_s=2, **endless)
    assert "not an instruction to retry" in error(envelope, "operation_timeout", "unknown", "read_only")
    assert envelope.context["partial"] and envelope.context["reconnects"] == 0
    wait_streams_closed(demo)
    page_still_works(s)


def test_a_notebook_interrupt_cancels_the_request_and_logs_its_outcome(
    s: CheckedSession, demo: DemoServer, sigint: None
) -> None:
    def interrupt_when(ready: Any) -> threading.Thread:  # as Jupyter's "Interrupt kernel", once `ready()`
        def run() -> None:
            wait_until(ready, 20)
            time.sleep(1)  # ~20 events sent: on a loaded machine the reader had none yet when the stream opened
            os.kill(os.getpid(), signal.SIGINT)

        thread = threading.Thread(target=run)
        thread.start()
        return thread

    def logged() -> Any:
        return wait_until(lambda: (last := s.history[-1]).tool == "browser_http" and last.envelope.error_type and last)

    thread = interrupt_when(lambda: open_streams(demo) > 0)
    with pytest.raises(KeyboardInterrupt):
        s.http("/api/sse/endless", response="sse", sse={**SSE_LIMITS, "max_duration_ms": 60_000})
    thread.join()
    wait_streams_closed(demo)
    record = logged().envelope
    error(record, "cancelled", "unknown", "read_only")
    assert record.context["partial"] and "not an instruction to retry" in (record.message or "")
    page_still_works(s)

    def arrived() -> bool:  # asked directly: the page is busy with the request
        with urllib.request.urlopen(demo.url_for("api/counter?key=interrupted"), timeout=10) as answer:
            return json.load(answer)["count"] == 1

    thread = interrupt_when(arrived)
    with pytest.raises(KeyboardInterrupt):
        s.http("/api/counter?key=interrupted&delay_ms=5000", method="PATCH", body="x")
    thread.join()
    record = logged().envelope
    assert "check the API's state" in error(record, "cancelled", "unknown", "inspect_state")
    page_still_works(s)
    assert count(s, "interrupted") == 1


def test_network_failures_carry_the_browsers_reason(s: CheckedSession) -> None:
    message = error(s.http("http://127.0.0.1:9/nothing"), "navigation_failed", "unknown", "read_only")
    assert "Failed to fetch" in message
    message = error(s.http("/api/lying-length"), "navigation_failed", "unknown", "read_only")
    assert "network error" in message and "bytes of the body" in message
    message = error(
        s.http("http://127.0.0.1:9/nothing", method="POST", body="x"), "navigation_failed", "unknown", "inspect_state"
    )
    assert "check the API's state" in message


# --------------------------------------------------------------------------- #
# Binary
# --------------------------------------------------------------------------- #


def test_binary_base64_within_the_budget(s: CheckedSession) -> None:
    envelope = s.http("/api/image.png", response="binary")
    body = ok(envelope)["body"]
    assert body == {
        "kind": "binary",
        "encoding": "base64",
        "media_type": "image/png",
        "byte_length": len(PNG),
        "data": PNG,
    }
    assert json.loads(envelope.to_json())["data"]["body"]["data"] == base64.b64encode(PNG).decode()
    # 12 KiB is 16 KiB of base64: over a 16,384 byte budget less the 1,024 reserved
    message = error(s.http("/api/bytes?kb=12", response="binary", max_result_bytes=16_384), "result_too_large")
    assert "binary max_bytes / result budget" in message
    assert (
        "result_too_large"
        == s.http("/api/bytes?kb=4", response="binary", binary={"mode": "base64", "max_bytes": 1000}).error_type
    )


def test_binary_download_through_the_session_renderer(fresh_session: Any, demo: DemoServer) -> None:
    s = fresh_session()
    ok(s.navigate(demo.url))
    download = {"mode": "download"}
    message = error(
        s.http("/api/image.png", response="binary", binary=download), "unsupported_capability", "not_started"
    )
    assert "binary_renderer" in message
    calls: list[tuple[Any, ...]] = []
    answer: dict[str, Any] = {}

    def renderer(data: bytes, media_type: str, operation: dict[str, Any], cancelled: Any) -> Any:
        calls.append((data, media_type, operation["method"], cancelled.is_set()))
        return answer

    s.binary_renderer = renderer
    future = int(time.time() * 1000) + 60_000
    answer.update(url="https://files.example/x.png", expires_at=future)
    body = ok(s.http("/api/image.png", response="binary", binary=download))["body"]
    assert body == {
        "kind": "download",
        "media_type": "image/png",
        "byte_length": len(PNG),
        "url": "https://files.example/x.png",
        "expires_at": future,
    }
    assert calls == [(PNG, "image/png", "GET", False)]
    for bad, says in [
        ({"url": "http://files.example/x", "expires_at": future}, "https"),
        ({"url": "https://u:p@files.example/x", "expires_at": future}, "credentials"),
        ({"url": "blob:https://files.example/x", "expires_at": future}, "https"),
        ({"url": "https://files.example/x", "expires_at": 1000}, "future integer"),
        ({"url": "https://files.example/x", "expires_at": str(future)}, "future integer"),
        ({"url": "https://files.example/x", "expires_at": future + 0.5}, "future integer"),
        ({"url": "https://files.example/x", "expires_at": True}, "future integer"),
        ({"url": "https://files.example/x"}, "future integer"),
        ({"expires_at": future}, "no url"),
        (["https://files.example/x", future], "not a dict"),
    ]:
        s.binary_renderer = (lambda *_, bad=bad: bad) if isinstance(bad, list) else renderer
        answer.clear()
        answer.update(bad if isinstance(bad, dict) else {})
        message = error(s.http("/api/image.png", response="binary", binary=download), "download_failed", "unknown")
        assert says in message and "may already have had effects" in message
    # a cancelled call tells the renderer so (its `cancelled` event is set)
    entered, heard = threading.Event(), []

    def slow_renderer(data: bytes, media_type: str, operation: dict[str, Any], cancelled: Any) -> Any:
        entered.set()
        heard.append(cancelled.wait(20))
        return answer

    s.binary_renderer = slow_renderer

    async def cancel_while_rendering() -> None:
        task = asyncio.ensure_future(s.acall("browser_http", url="/api/image.png", response="binary", binary=download))
        assert await asyncio.to_thread(entered.wait, 20)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_while_rendering())
    wait_until(lambda: heard == [True])


# --------------------------------------------------------------------------- #
# Through a real MCP client
# --------------------------------------------------------------------------- #


def test_over_mcp_grants_approval_images_and_partial(s: CheckedSession, demo: DemoServer) -> None:
    asked: list[Any] = []

    async def approver(request: Any) -> str | None:
        asked.append(request)
        return "no mutations today"

    plain = s.serve_mcp(caps=[])
    granted = s.serve_mcp(caps=["http"], approve="consequential", approver=approver)

    async def agent(
        server: Any, calls: list[tuple[str, dict[str, Any]]]
    ) -> tuple[list[str], list[types.CallToolResult]]:
        client_http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.token}"}, timeout=60)
        async with Client(streamable_http_client(server.url, http_client=client_http)) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            return names, [await client.call_tool(name, args) for name, args in calls]

    names, (refused,) = asyncio.run(agent(plain, [("browser_http", {"url": "/api/items"})]))
    assert "browser_http" not in names
    assert refused.is_error and "'http' was not granted" in refused.structured_content["message"]

    names, results = asyncio.run(
        agent(
            granted,
            [
                ("browser_http", {"url": "/api/secrets"}),
                ("browser_http", {"url": "/api/image.png", "response": "binary"}),
                ("browser_http", {"url": "/api/counter?key=agent", "method": "POST", "body": "x"}),
                ("browser_http", {"url": "/api/sse?n=5", "response": "sse", "sse": {**SSE_LIMITS, "max_events": 2}}),
            ],
        )
    )
    secrets, image, mutation, partial = results
    assert "browser_http" in names
    assert not secrets.is_error and secrets.structured_content["data"]["body"]["password"] == "[blocked]"
    assert "hunter2" not in json.dumps(secrets.structured_content) + secrets.content[-1].text
    blocks = [block for block in image.content if block.type == "image"]
    assert len(blocks) == 1 and base64.b64decode(blocks[0].data) == PNG and blocks[0].mime_type == "image/png"
    assert image.structured_content["data"]["body"]["data"] == f"<{len(PNG)} bytes: sent as an image block>"
    assert mutation.is_error and mutation.structured_content["error_type"] == "approval_denied"
    assert mutation.structured_content["operation"]["outcome"] == "not_started"
    assert count(s, "agent") == 0
    assert [request.args.get("method") for request in asked] == ["POST"]  # the GETs were not asked about
    assert partial.is_error and partial.structured_content["error_type"] == "result_too_large"
    assert [e["id"] for e in partial.structured_content["context"]["partial"]] == ["1", "2"]
    assert "Partial: 2 items, 0 reconnects" in partial.content[-1].text  # the text names it


def test_over_mcp_mutations_run_once_streams_reconnect_and_downloads_need_a_renderer(
    s: CheckedSession, demo: DemoServer
) -> None:
    server = s.serve_mcp(caps=["http"])
    future = int(time.time() * 1000) + 600_000
    calls = [
        ("browser_http", {"url": "/api/counter?key=mcp-once", "method": "POST", "json_body": {"n": 1}}),
        ("browser_http", {"url": "/api/counter?key=mcp-cut&delay_ms=3000", "method": "PUT", "timeout_s": 0.5}),
        ("browser_http", {"url": "/status?code=404"}),
        ("browser_http", {"url": "/api/sse/drop", "response": "sse", "sse": SSE_LIMITS}),
        ("browser_http", {"url": "/api/items.ndjson?malformed=1", "response": "ndjson", "strict": True}),
        ("browser_http", {"url": "/api/large?kb=64", "max_result_bytes": 16_384}),
        ("browser_http", {"url": "/api/sse/endless", "response": "sse", "sse": {**SSE_LIMITS, "max_events": 0}}),
        ("browser_http", {"url": "/api/image.png", "response": "binary", "binary": {"mode": "download"}}),
    ]

    async def agent() -> list[types.CallToolResult]:
        client_http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.token}"}, timeout=60)
        async with Client(streamable_http_client(server.url, http_client=client_http)) as client:
            results = [await client.call_tool(name, args) for name, args in calls]
            s.binary_renderer = lambda *_: {"url": "https://files.example/png", "expires_at": future}
            results.append(await client.call_tool(*calls[-1]))
            return results

    try:
        once, cut, missing, reconnected, strict, too_large, bad_limits, no_renderer, download = asyncio.run(agent())
    finally:
        s.binary_renderer = None
        server.stop()
    assert not once.is_error and once.structured_content["data"]["body"]["count"] == 1
    assert count(s, "mcp-once") == 1
    assert cut.is_error and cut.structured_content["error_type"] == "operation_timeout"
    assert cut.structured_content["operation"]["outcome"] == "unknown"
    assert cut.structured_content["operation"]["retry"] == "inspect_state"
    assert "check the API's state" in cut.structured_content["message"]
    wait_until(lambda: count(s, "mcp-cut") == 1)  # it arrived, once
    assert not missing.is_error and missing.structured_content["data"]["status"] == 404
    body = reconnected.structured_content["data"]["body"]
    assert body["reconnects"] == 1 and [e["data"].get("after") for e in body["events"]] == [None, None, None, "3", "3"]
    assert strict.is_error and strict.structured_content["error_type"] == "evaluation_failed"
    assert "line 4" in strict.structured_content["message"]
    assert too_large.is_error and too_large.structured_content["error_type"] == "result_too_large"
    assert too_large.structured_content["operation"]["retry"] == "read_only"
    assert "save=true" in too_large.structured_content["message"]
    assert bad_limits.is_error and bad_limits.structured_content["error_type"] == "invalid_params"
    assert bad_limits.structured_content["operation"]["outcome"] == "not_started"
    assert open_streams(demo) == 0
    assert no_renderer.is_error and no_renderer.structured_content["error_type"] == "unsupported_capability"
    assert no_renderer.structured_content["operation"]["outcome"] == "not_started"
    assert download.structured_content["data"]["body"] == {
        "kind": "download",
        "media_type": "image/png",
        "byte_length": len(PNG),
        "url": "https://files.example/png",
        "expires_at": future,
    }
    page_still_works(s)


def test_an_mcp_clients_cancel_cancels_the_reader_in_the_page(s: CheckedSession, demo: DemoServer) -> None:
    server = s.serve_mcp(caps=["http"])
    endless = {"url": "/api/sse/endless", "response": "sse", "sse": {**SSE_LIMITS, "max_duration_ms": 50_000}}

    async def agent() -> None:
        client_http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.token}"}, timeout=60)
        async with Client(streamable_http_client(server.url, http_client=client_http)) as client:
            task = asyncio.ensure_future(client.call_tool("browser_http", endless))
            await wait_until_async(lambda: asyncio.to_thread(open_streams, demo), message="the stream never opened")
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await wait_until_async(
                lambda: asyncio.to_thread(lambda: open_streams(demo) == 0),
                10,
                0.1,
                "the client's cancel did not reach the page",
            )
            after = await client.call_tool("browser_evaluate", {"expression": "() => 6 * 7"})
            assert after.structured_content["error_type"] == "invalid_params"  # js not granted: but answered
            items = await client.call_tool("browser_http", {"url": "/api/items"})
            assert items.structured_content["data"]["status"] == 200

    asyncio.run(agent())
    server.stop()


def test_a_page_that_navigates_away_mid_request_is_a_clear_failure(s: CheckedSession, demo: DemoServer) -> None:
    ok(s.navigate(demo.url))
    ok(
        s.evaluate("""() => {  // the page leaves as soon as the request is under way
        const fetchOriginal = window.fetch;
        window.fetch = (...args) => { setTimeout(() => { location.href = '/form.html'; }, 100); return fetchOriginal(...args); };
    }""")
    )
    # the browser either aborts the fetch or drops the page's context first: both say what was lost
    message = error(s.http("/slow?ms=3000"), "navigation_failed", "unknown", "read_only")
    assert "/slow?ms=3000" in message

    def arrived() -> bool:  # the page's own trip ends (an evaluate may meet the navigation: then ask again)
        where = s.evaluate("() => location.pathname")
        return where.ok and where.data["result"] == "/form.html"

    wait_until(arrived)
    ok(s.navigate(demo.url))
    page_still_works(s)


# --------------------------------------------------------------------------- #
# The pieces, without a browser
# --------------------------------------------------------------------------- #


def test_the_event_stream_parser_follows_the_standard() -> None:
    from webmcp_nb.core.browsers.sse import EventStreamParser

    parser = EventStreamParser()
    stream = '\ufeff: comment\r\nretry: 250\r\nid: 7\nevent: update\ndata: {"a":\r\ndata: 1}\r\rdata: plain\n\n'
    raw = stream.encode()
    events = [event for index in range(len(raw)) for event in parser.feed(raw[index : index + 1])]  # byte by byte
    assert [(e.event, e.id, e.data, e.retry) for e in events] == [
        ("update", "7", '{"a":\n1}', 250),
        ("message", "7", "plain", None),
    ]
    assert (parser.last_event_id, parser.retry_ms) == ("7", 250)
    assert events[0].to_dict()["data"] == {"a": 1} and events[1].to_dict()["data"] == "plain"
    assert parser.feed(b"data: unfinished\n") == []
    parser.reset_connection()  # an event cut off by a drop is not dispatched
    assert [e.data for e in parser.feed(b"\ndata: next\n\n")] == ["next"]


def test_secret_field_names_ignore_case_and_separators() -> None:
    from webmcp_nb.core.guard.secret_fields import block_in_json_text, block_secrets, secret_names

    value = {"API-KEY": 1, "refreshToken": 2, "private key": 3, "tokens": 4, "x": [{"Client_Secret": 5}], "pin": 6}
    cleaned, blocked = block_secrets(value, secret_names(["PIN"]))
    assert cleaned == {
        "API-KEY": "[blocked]",
        "refreshToken": "[blocked]",
        "private key": "[blocked]",
        "tokens": 4,
        "x": [{"Client_Secret": "[blocked]"}],
        "pin": "[blocked]",
    }
    assert blocked == ["API-KEY", "refreshToken", "private key", "x[0].Client_Secret", "pin"]
    assert block_in_json_text('{"password": "p"}') == ('{"password": "[blocked]"}', ["password"])
    assert block_in_json_text("password: p") == ("password: p", [])
