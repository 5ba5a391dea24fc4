"""Failure context on real Chromium and over MCP: warnings, what the page did during the call,
its console, and messages capped with head and tail so the error type always arrives."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from webmcp_nb.core.failure import EMPTY_PAGE_WARNING, MAX_MESSAGE_CHARS
from webmcp_nb.demo import DemoServer

from .helpers import error, ok

BUSY_FAILURE = """async () => {
  console.error('first problem'); console.log('hello');
  window.open('/help.html'); history.pushState({}, '', '/moved');
  await new Promise((resolve) => setTimeout(resolve, 300));
  throw new Error('boom');
}"""
HUGE_FAILURE = "() => { throw new Error('x'.repeat(100000) + 'TAIL-END') }"


def test_a_locator_on_an_empty_page_warns_to_navigate_first(fresh_session: Any) -> None:
    s = fresh_session()
    ok(s.snapshot())
    envelope = s.click("e1")
    error(envelope, "element_not_found", "not_started")
    assert envelope.context == {"warnings": [EMPTY_PAGE_WARNING]}
    lines = str(envelope).splitlines()
    assert lines[2:4] == ["Warnings:", f"- {EMPTY_PAGE_WARNING}"]  # right after the message
    ok(s.evaluate("document.body.innerHTML = '<p>made in place</p>'"))  # still about:blank, not empty
    assert ok(s.evaluate("location.href"))["result"] == "about:blank"
    later = s.click("e1")
    error(later, "element_not_found", "not_started")
    assert later.context is None and "Warnings:" not in str(later)


def test_a_failure_says_what_the_page_did_during_the_call(session: Any, demo: DemoServer) -> None:
    ok(session.navigate(demo.url))
    envelope = session.evaluate(BUSY_FAILURE)
    error(envelope, "evaluation_failed", "unknown", "inspect_state")
    page = envelope.context["page"]
    assert (page["moved_from"], page["moved_to"]) == (demo.url, demo.url_for("moved"))
    assert page["console_errors"] == 1 and len(page["opened_tabs"]) == 1
    assert envelope.context["console"] == ["error: first problem", "log: hello"]
    text = str(envelope)
    assert (
        f"Page: moved from {demo.url} to {demo.url_for('moved')}; 1 console error; opened tab {page['opened_tabs'][0]}"
        in text
    )
    assert text.index("Page:") < text.index("Console (latest of the call):") < text.index("outcome:")
    ok(session.tabs("close", page_id=page["opened_tabs"][0]))
    plain = session.evaluate("() => { throw new Error('plain') }")  # nothing happened: no sections
    assert plain.context is None and "Page:" not in str(plain) and "Console" not in str(plain)


def test_a_huge_message_keeps_its_head_and_tail_and_its_type(fresh_session: Any) -> None:
    s = fresh_session(max_result_bytes=4096)
    envelope = s.evaluate(HUGE_FAILURE)
    message = error(envelope, "evaluation_failed", "unknown", "inspect_state")
    assert len(message) <= 4096 and message.startswith("The page raised: ")
    assert "characters, cut to" in message and "head and tail kept" in message
    assert len(envelope.to_json_bytes()) <= 4096
    roomy = fresh_session()
    full = roomy.evaluate(HUGE_FAILURE)
    capped = error(full, "evaluation_failed")
    assert len(capped) == MAX_MESSAGE_CHARS and "TAIL-END" in capped  # the last frame survives
    assert len(str(full)) < 8000


def test_agents_read_the_same_context_and_a_huge_error_keeps_its_type(demo: DemoServer) -> None:
    from .conftest import CheckedSession

    with CheckedSession() as s:
        server = s.serve_mcp(caps=["js"])

        async def agent() -> tuple[types.CallToolResult, types.CallToolResult]:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.token}"}, timeout=60)
            async with Client(streamable_http_client(server.url, http_client=http)) as client:
                await client.call_tool("browser_navigate", {"url": demo.url})
                busy = await client.call_tool("browser_evaluate", {"expression": BUSY_FAILURE})
                huge = await client.call_tool("browser_evaluate", {"expression": HUGE_FAILURE})
                return busy, huge

        busy, huge = asyncio.run(agent())
    assert busy.is_error is True and busy.structured_content["context"]["console"] == [
        "error: first problem",
        "log: hello",
    ]
    (text,) = [block.text for block in busy.content if isinstance(block, types.TextContent)]
    assert "Page: moved from" in text and "  error: first problem" in text
    assert huge.is_error is True and huge.structured_content["error_type"] == "evaluation_failed"
    (text,) = [block.text for block in huge.content if isinstance(block, types.TextContent)]
    assert len(text) < 8000 and "TAIL-END" in text


def test_a_pending_dialog_is_the_diagnostic(session: Any, demo: DemoServer) -> None:
    from .helpers import ref_for

    ok(session.navigate(demo.url_for("dialog.html")))
    ok(session.click(ref_for(ok(session.snapshot())["snapshot"], 'button "Show alert"')))
    blocked = session.snapshot()
    error(blocked, "modal_state_blocked", "not_started")
    assert blocked.context["diagnostic"].startswith("the page shows an alert dialog")
    assert "resolve it with browser_handle_dialog" in blocked.context["diagnostic"]
    assert "\nDiagnostic: the page shows an alert dialog" in str(blocked)
    ok(session.handle_dialog(accept=True))
