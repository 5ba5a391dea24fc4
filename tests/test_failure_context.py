"""Failure context on real Chromium and over MCP: warnings, what the page did during the call,
its console, and messages capped with head and tail so the error type always arrives."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from webmcp_nb.core.call.envelope import RETRY_ADVICE
from webmcp_nb.core.evidence.failure import (
    EMPTY_PAGE_WARNING,
    MAX_CONSOLE_CHARS,
    MAX_CONSOLE_ENTRIES,
    MAX_DIAGNOSTIC_CHARS,
    MAX_MESSAGE_CHARS,
    MAX_TEXT_CHARS,
    MESSAGE_TAIL_CHARS,
    context_lines,
)
from webmcp_nb.demo import DemoServer

from .helpers import error, ok, ref_for, ts_report

BUSY_FAILURE = """async () => {
  console.error('first problem'); console.log('hello');
  const tab = window.open('/help.html'); history.pushState({}, '', '/moved');
  // The tab loaded (so the browser has told Playwright of it, however slow the machine), then a pause.
  while (!(tab.location.pathname === '/help.html' && tab.document.readyState === 'complete')) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
  throw new Error('boom');
}"""
HUGE_FAILURE = "() => { throw new Error('x'.repeat(100000) + 'TAIL-END') }"
LATER_ALERT = "() => { setTimeout(() => alert('hi'), 0); return 1 }"
# Everything at once, each part as big as it gets: a 6,000-character URL, six tabs, thirty long
# console errors and a 100,000-character error.
WORST_FAILURE = """async () => {
  for (let i = 0; i < 30; i++) console.error(`line ${i} ` + 'c'.repeat(300));
  const tabs = Array.from({length: 6}, () => window.open('/help.html'));
  history.pushState({}, '', '/' + 'p'.repeat(6000));
  // Every tab loaded, then a moment for the core to have seen each open (slow on a loaded machine).
  await Promise.all(tabs.map((tab) => new Promise((resolve) => tab.addEventListener('load', resolve))));
  await new Promise((resolve) => setTimeout(resolve, 300));
  throw new Error('x'.repeat(100000) + 'TAIL-END');
}"""


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


def test_a_page_made_with_set_content_is_not_empty(fresh_session: Any) -> None:
    # The URL stays about:blank: the DOM decides, text without elements included.
    s = fresh_session()
    for content, warned in (("just some text", False), ("<p>an element</p>", False), ("", True)):
        ok(s.call("browser_execute", code=f"await page.set_content({content!r})\npage.url"))
        ok(s.snapshot())
        envelope = s.click("e99")
        error(envelope, "element_not_found", "not_started")
        assert envelope.context == ({"warnings": [EMPTY_PAGE_WARNING]} if warned else None), content
        assert ("\nWarnings:\n" in str(envelope)) is warned


def test_an_action_that_times_out_says_why_the_element_was_not_actionable(fresh_session: Any, demo: DemoServer) -> None:
    s = fresh_session(action_timeout_s=1)
    ok(s.navigate(demo.url))
    covered = "<div style='position:relative'><button>Under</button><div style='position:absolute;inset:0'>cover</div>"
    ok(s.evaluate(f"document.body.innerHTML = `<button disabled>Go</button>{covered}</div>`"))
    snapshot = ok(s.snapshot())["snapshot"]
    for button, diagnostic in (
        ('button "Go"', "the element is not enabled (Playwright's last actionability check)"),
        ('button "Under"', "<div>cover</div> intercepts pointer events (Playwright's last actionability check)"),
    ):
        envelope = s.click(ref_for(snapshot, button))
        error(envelope, "wait_timeout", "unknown", "inspect_state")
        assert envelope.context == {"diagnostic": diagnostic}
        assert f"\nDiagnostic: {diagnostic}\n" in str(envelope)


def test_a_navigation_during_a_failing_call_is_on_the_page_line(fresh_session: Any, demo: DemoServer) -> None:
    s = fresh_session()
    ok(s.navigate(demo.url))
    code = f"await page.goto({demo.url_for('help.html')!r})\nraise ValueError('after the navigation')"
    envelope = s.call("browser_execute", code=code)
    error(envelope, "evaluation_failed", "unknown", "inspect_state")
    assert envelope.context == {
        "page": {"moved_from": demo.url, "moved_to": demo.url_for("help.html"), "navigations": 1}
    }
    assert f"\nPage: moved from {demo.url} to {demo.url_for('help.html')}; 1 navigation\n" in str(envelope)


def test_a_navigation_in_flight_is_the_diagnostic(fresh_session: Any, demo: DemoServer) -> None:
    s = fresh_session()
    ok(s.navigate(demo.url))
    code = (
        "async with page.expect_request(lambda request: '/slow' in request.url):\n"
        "    await page.evaluate(\"location.href = '/slow?ms=3000'\")\n"
        "raise ValueError('while it loads')"
    )
    envelope = s.call("browser_execute", code=code)
    error(envelope, "evaluation_failed", "unknown", "inspect_state")
    assert envelope.context == {"diagnostic": "a navigation is in flight"}
    assert "\nDiagnostic: a navigation is in flight\n" in str(envelope)


def test_every_part_is_bounded_so_the_whole_text_stays_under_8000(fresh_session: Any, demo: DemoServer) -> None:
    s = fresh_session()
    ok(s.navigate(demo.url))
    envelope = s.evaluate(WORST_FAILURE)
    error(envelope, "evaluation_failed", "unknown", "inspect_state")
    context, text = envelope.context, str(envelope)
    assert len(text) < MAX_TEXT_CHARS and "TAIL-END" in text
    # The structured context keeps the facts whole; the text names them within its budget.
    assert len(context["page"]["moved_to"]) > 6000 and len(context["page"]["opened_tabs"]) == 6
    assert "characters]; 30 console errors; opened tab " in text and "; 3 more tabs opened (browser_tabs" in text
    console = context["console"]
    assert len(console) <= MAX_CONSOLE_ENTRIES and sum(map(len, console)) <= MAX_CONSOLE_CHARS
    assert console[-1].startswith("error: line 29 ") and len(console) < 20  # the latest, within 2,500 characters
    many = s.evaluate("() => { for (let i = 0; i < 30; i++) console.log(`n${i}`); throw new Error('many') }")
    assert many.context == {"console": [f"log: n{i}" for i in range(10, 30)]}  # the latest 20
    # A pending dialog with a huge message: the diagnostic is bounded too.
    ok(s.navigate(demo.url))
    ok(s.evaluate("() => { setTimeout(() => alert('d'.repeat(20000)), 0); return 1 }"))
    s.call("browser_wait_for", time_s=1)  # blocked already, or the alert opens meanwhile
    blocked = s.snapshot()
    error(blocked, "modal_state_blocked", "not_started")
    assert len(blocked.context["diagnostic"]) <= MAX_DIAGNOSTIC_CHARS and len(str(blocked)) < MAX_TEXT_CHARS
    assert blocked.context["diagnostic"].startswith("the page shows an alert dialog ('ddd")
    ok(s.handle_dialog(accept=True))


def test_console_errors_are_counted_for_the_page_of_the_call(fresh_session: Any, demo: DemoServer) -> None:
    """Another tab's errors are not the page's: the Page: count matches the console lines."""
    s = fresh_session()
    ok(s.navigate(demo.url))
    envelope = s.evaluate(
        """async () => {
      const other = window.open('/help.html');
      await new Promise((resolve) => other.addEventListener('load', resolve));
      // Every 100 ms: however late the browser tells Playwright of the new tab, it logs once it is watched.
      other.eval("setInterval(() => console.error('in the other tab'), 100)");
      await new Promise((resolve) => setTimeout(resolve, 600));
      console.error('in this tab');
      await new Promise((resolve) => setTimeout(resolve, 300));
      throw new Error('boom');
    }"""
    )
    error(envelope, "evaluation_failed", "unknown", "inspect_state")
    assert envelope.context["page"]["console_errors"] == 1
    assert envelope.context["console"] == ["error: in this tab"]
    others = [entry for entry in ok(s.console())["entries"] if entry["text"] == "in the other tab"]
    assert others and {entry["page_id"] for entry in others} != {
        envelope.operation.page_id
    }  # recorded, as the other tab's
    assert all(entry["page_id"] != envelope.operation.page_id for entry in others)


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


@pytest.mark.browser
def test_agents_read_the_same_context_and_a_huge_error_keeps_its_type(demo: DemoServer) -> None:
    from .conftest import CheckedSession

    with CheckedSession() as s:
        server = s.serve_mcp(caps=["js"])

        async def agent() -> tuple[types.CallToolResult, ...]:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.token}"}, timeout=60)
            async with Client(streamable_http_client(server.url, http_client=http)) as client:
                await client.call_tool("browser_snapshot", {})
                empty = await client.call_tool("browser_click", {"ref": "e1"})  # about:blank, nothing in it
                await client.call_tool("browser_navigate", {"url": demo.url})
                busy = await client.call_tool("browser_evaluate", {"expression": BUSY_FAILURE})
                huge = await client.call_tool("browser_evaluate", {"expression": HUGE_FAILURE})
                return empty, busy, huge

        empty, busy, huge = asyncio.run(agent())
    assert empty.is_error is True and empty.structured_content["context"] == {"warnings": [EMPTY_PAGE_WARNING]}
    (text,) = [block.text for block in empty.content if isinstance(block, types.TextContent)]
    assert text.splitlines()[2:4] == ["Warnings:", f"- {EMPTY_PAGE_WARNING}"]
    assert busy.is_error is True and busy.structured_content["context"]["console"] == [
        "error: first problem",
        "log: hello",
    ]
    (text,) = [block.text for block in busy.content if isinstance(block, types.TextContent)]
    assert "Page: moved from" in text and "  error: first problem" in text
    assert huge.is_error is True and huge.structured_content["error_type"] == "evaluation_failed"
    (text,) = [block.text for block in huge.content if isinstance(block, types.TextContent)]
    assert len(text) < 8000 and "TAIL-END" in text and text.startswith("browser_evaluate: error evaluation_failed")


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


# --------------------------------------------------------------------------- #
# The TypeScript SDK v2 client: three kinds of client, the same facts
# --------------------------------------------------------------------------- #


def ts_calls(server: Any, calls: list[tuple[str, dict[str, Any]]], era: str) -> list[dict[str, Any]]:
    """Each call's result as the TypeScript client read it (tests/ts_client/call.mjs)."""
    report = ts_report("call.mjs", server.url, server.token, json.dumps(calls), era, era=era)
    results: list[dict[str, Any]] = report["calls"]
    assert [call["name"] for call in results] == [name for name, _ in calls]
    return results


def same_failure(call: dict[str, Any], error_type: str, outcome: str, retry: str) -> dict[str, Any]:
    """The error's structured envelope, after checking that the three kinds of client read the
    same facts: the SDK's schema validator accepts it, and the text says exactly what it holds."""
    assert "thrown" not in call, call
    assert call["isError"] is True and call["contentTypes"] == ["text"]
    assert call["schemaCheck"] == {"valid": True, "errorMessage": None}
    structured: dict[str, Any] = call["structured"]
    operation = structured["operation"]
    assert (structured["status"], structured["error_type"]) == ("error", error_type)
    assert (operation["outcome"], operation["retry"]) == (outcome, retry)
    retry_line = f"outcome: {outcome}; retry: {retry} - {RETRY_ADVICE[retry]}"
    body = [structured["message"], *context_lines(structured.get("context") or {})]
    header, text = call["text"].split("\n", 1)
    assert header.startswith(f"{call['name']}: error {error_type} (")
    assert text == "\n".join([*body, retry_line, f"operation: {operation['id']}"])
    return structured


@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
def test_the_typescript_client_reads_the_failure_context(fresh_session: Any, demo: DemoServer, era: str) -> None:
    s = fresh_session()
    server = s.serve_mcp(caps=["js"])
    calls = [
        ("browser_snapshot", {}),
        ("browser_click", {"ref": "e1"}),  # about:blank with nothing in it
        ("browser_navigate", {"url": demo.url}),
        ("browser_evaluate", {"expression": BUSY_FAILURE}),
        ("browser_evaluate", {"expression": HUGE_FAILURE}),
        ("browser_evaluate", {"expression": LATER_ALERT}),
        ("browser_wait_for", {"time_s": 1}),  # the alert opens by then
        ("browser_snapshot", {}),
        ("browser_handle_dialog", {"accept": True}),
    ]
    _, empty, _, busy, huge, _, _, blocked, handled = ts_calls(server, calls, era)

    warned = same_failure(empty, "element_not_found", "not_started", "after_correction")
    assert warned["context"] == {"warnings": [EMPTY_PAGE_WARNING]}
    assert empty["text"].splitlines()[2:4] == ["Warnings:", f"- {EMPTY_PAGE_WARNING}"]

    moved = same_failure(busy, "evaluation_failed", "unknown", "inspect_state")
    page = moved["context"]["page"]
    assert (page["moved_from"], page["moved_to"]) == (demo.url, demo.url_for("moved"))
    assert page["console_errors"] == 1 and len(page["opened_tabs"]) == 1
    assert moved["context"]["console"] == ["error: first problem", "log: hello"]
    assert (
        f"\nPage: moved from {demo.url} to {demo.url_for('moved')}; 1 console error; "
        f"opened tab {page['opened_tabs'][0]}\nConsole (latest of the call):\n  error: first problem\n  log: hello\n"
    ) in busy["text"]

    capped = same_failure(huge, "evaluation_failed", "unknown", "inspect_state")
    message = capped["message"]
    assert len(message) == MAX_MESSAGE_CHARS and message.startswith("The page raised: ")
    assert "characters, cut to 3,000: head and tail kept ...]" in message
    assert "TAIL-END" in message[-MESSAGE_TAIL_CHARS:]  # the last frame survives
    assert "context" not in capped and len(huge["text"]) < 8000

    diagnosed = same_failure(blocked, "modal_state_blocked", "not_started", "after_correction")
    diagnostic = "the page shows an alert dialog ('hi') (resolve it with browser_handle_dialog)"
    assert diagnosed["context"] == {"diagnostic": diagnostic}
    assert f"\nDiagnostic: {diagnostic}\n" in blocked["text"]
    assert handled["isError"] is False and handled["schemaCheck"] == {"valid": True, "errorMessage": None}


def test_the_typescript_client_gets_a_huge_error_within_a_small_limit_with_its_type(fresh_session: Any) -> None:
    s = fresh_session(max_result_bytes=4096)
    server = s.serve_mcp(caps=["js"])
    # 3,000 characters of three bytes each are over the limit: the capped message shrinks further.
    wide = HUGE_FAILURE.replace("'x'", "'\u20ac'")
    (huge,) = ts_calls(server, [("browser_evaluate", {"expression": wide})], "2026-07-28")
    capped = same_failure(huge, "evaluation_failed", "unknown", "inspect_state")  # not result_too_large
    head, marker, tail = capped["message"].partition(" characters cut to fit the limit ...]\n")
    assert head.startswith("The page raised: ") and len(head) > 500 and marker and len(tail) > 200
    assert (
        capped["message"] in huge["text"]
        and len(json.dumps(capped, ensure_ascii=False, separators=(",", ":")).encode()) <= 4096
    )
