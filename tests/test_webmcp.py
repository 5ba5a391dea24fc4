"""WebMCP: the page's own tools, listed and called, on real Chromium against the demo site.

Native mode (the browser's WebMCP, tracked over the DevTools protocol) covers imperative and
declarative tools, a tool inside an iframe, tool-list changes on navigation, registration and
abort, calls made by agents inside the page, throwing tools, invalid input (the page is left
untouched), cut-off calls and the size limit. The JavaScript path is covered with
``webmcp="page"`` on a page that ships its own string-input polyfill, and ``webmcp="polyfill"``.
The reverse direction (a Python function as a page tool) ends the module.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.helpers import error, ok, wait_until
from webmcp_nb import Envelope, Session
from webmcp_nb.core.webmcp.discovery import WebMCPEvent

pytestmark = pytest.mark.playwright_sensitive  # see tests/test_compat_scope.py

CART_TOOLS = {"add_to_cart", "get_cart", "fail_always", "leave_page", "echo_text"}


class Events:
    """Every WebMCP event of a session, collected from the runtime thread."""

    def __init__(self, session: Session) -> None:
        self.items: list[WebMCPEvent] = []
        self._lock = threading.Lock()
        self.remove = session.add_webmcp_listener(self._add)

    def _add(self, event: WebMCPEvent) -> None:
        with self._lock:
            self.items.append(event)

    def since(self, mark: int) -> list[WebMCPEvent]:
        with self._lock:
            return self.items[mark:]

    def mark(self) -> int:
        with self._lock:
            return len(self.items)

    def wait(self, mark: int, kinds: tuple[str, ...], count: int) -> list[WebMCPEvent]:
        """The first `count` events of `kinds` since `mark`, once they have arrived."""

        def found() -> list[WebMCPEvent] | None:
            matching = [event for event in self.since(mark) if event.kind in kinds]
            return matching[:count] if len(matching) >= count else None

        return wait_until(found)


@pytest.fixture(scope="module")
def events(session: Session) -> Iterator[Events]:
    collected = Events(session)
    yield collected
    collected.remove()


def tools_of(envelope: Envelope) -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool for tool in ok(envelope)["tools"]}


def frame_ids(session: Session, **args: Any) -> tuple[str, list[str]]:
    frames = ok(session.frames(**args))["frames"]
    return frames[0]["frame_id"], [frame["frame_id"] for frame in frames[1:]]


def page_text(session: Session, element_id: str, **args: Any) -> str:
    return ok(session.evaluate(f"document.getElementById({element_id!r}).textContent", **args))["result"]


def shop(session: Session, demo) -> None:
    """A fresh webmcp.html whose tools are registered and known to the core."""
    ok(session.navigate(demo.url_for("webmcp.html")))
    wait_until(lambda: page_text(session, "webmcp-status") == "WebMCP ready")
    assert set(tools_of(session.webmcp_list())) >= CART_TOOLS


def register_in_page(session: Session, tool_js: str) -> None:
    """Register a tool from page script (what an agent-facing page would do)."""
    ok(session.evaluate(f"document.modelContext.registerTool({tool_js})"))


# native: discovery ----------------------------------------------------------------------
def test_native_lists_imperative_and_declarative_tools(session, demo):
    shop(session, demo)
    envelope = session.webmcp_list()
    data = ok(envelope)
    assert data["mode"] == "native"
    assert data["url"] == demo.url_for("webmcp.html")
    tools = tools_of(envelope)
    assert set(tools) == CART_TOOLS | {"search_products"}
    main, _ = frame_ids(session)
    origin = demo.url.rstrip("/")
    for tool in tools.values():
        assert tool["frame_id"] == main and tool["origin"] == origin
    assert tools["search_products"]["kind"] == "declarative"
    assert tools["search_products"]["input_schema"]["properties"]["query"]["description"] == "Text to search for"
    assert {tools[name]["kind"] for name in CART_TOOLS} == {"imperative"}
    assert tools["add_to_cart"]["input_schema"]["required"] == ["item", "quantity"]
    assert tools["get_cart"]["annotations"]["readOnlyHint"] is True
    assert tools["add_to_cart"]["annotations"] == {}
    assert envelope.operation.frame_id == main
    text = str(envelope)
    assert "- search_products (declarative;" in text and '"enum": ["Apple"' in text and "hints: readOnly" in text


def test_the_core_view_is_readable_synchronously_on_the_runtime_loop(session, demo):
    shop(session, demo)
    engine = session.engine

    async def read() -> list[str]:
        state = engine.manager.instances["default"].page(None)
        await state.webmcp.settle()
        return [tool.name for tool in state.webmcp.tools]

    names = session._runtime.run(read())
    assert names[0] == "add_to_cart" and set(names) == CART_TOOLS | {"search_products"}


def test_a_tool_inside_an_iframe_is_listed_and_called_in_its_frame(session, demo, events):
    ok(session.navigate(demo.url_for("webmcp-frames.html")))
    main, children = frame_ids(session)
    tools = wait_until(lambda: (found := tools_of(session.webmcp_list())) and len(found) == 2 and found)
    assert tools["page_time"]["frame_id"] == main
    assert tools["page_time"]["title"] == "Page time"  # titles come from getTools(), not the protocol
    assert tools["frame_greet"]["frame_id"] == children[0]
    only_frame = tools_of(session.webmcp_list(frame_id=children[0]))
    assert list(only_frame) == ["frame_greet"]

    envelope = session.webmcp_call("frame_greet", {"name": "Ada"})
    assert ok(envelope)["text"] == "Hello, Ada, from the frame"
    assert ok(envelope)["frame_id"] == children[0]
    assert envelope.operation.frame_id == children[0]
    greeted = ok(session.evaluate("document.getElementById('greeted').textContent", frame_id=children[0]))
    assert greeted["result"] == "Greeted Ada"

    message = error(
        session.webmcp_call("frame_greet", {"name": "Ada"}, frame_id=main),
        "element_not_found",
        outcome="not_started",
        retry="after_correction",
    )
    assert f"in frame {main}" in message
    error(
        session.webmcp_call("frame_greet", {"name": "Ada"}, frame_id="no-such-frame"),
        "frame_not_found",
        outcome="not_started",
        retry="after_correction",
    )


# native: calls ------------------------------------------------------------------------------
def test_results_map_to_structured_text_and_mcp_content(session, demo):
    shop(session, demo)
    data = ok(session.webmcp_call("add_to_cart", {"item": "Fig", "quantity": 2}))
    assert data["structured"] == {"ok": True, "cart": [{"item": "Fig", "quantity": 2}]}
    assert data["text"] is None and data["content"] is None and data["modal_state"] is None
    assert page_text(session, "webmcp-cart") == "Cart: 2 items"
    assert ok(session.webmcp_call("echo_text", {"text": "plain words"}))["text"] == "plain words"
    assert ok(session.webmcp_call("get_cart"))["structured"] == {"cart": [{"item": "Fig", "quantity": 2}], "count": 2}

    declarative = ok(session.webmcp_call("search_products", {"query": "fig"}))
    assert declarative["text"] == "Results for: fig"
    assert page_text(session, "search-results") == "Results for: fig"

    register_in_page(
        session,
        """{name: "mcp_style", description: "MCP-style result",
        inputSchema: {type: "object", properties: {}},
        execute: () => ({content: [{type: "text", text: "hello"}], structuredContent: {n: 1}, isError: false})}""",
    )
    data = ok(session.webmcp_call("mcp_style"))
    assert data["content"] == [{"type": "text", "text": "hello"}]
    assert data["structured"] == {"n": 1} and data["is_error"] is False and data["text"] is None


def test_nulls_in_the_input_reach_the_page(session, demo):
    """A null inside the input arrives as null (Playwright 1.62's client dropped nulls from nested
    objects on their way to DevTools: the tool saw {} for {"note": null})."""
    shop(session, demo)
    register_in_page(
        session,
        """{name: "show_input", description: "Echo the input as the page got it",
        inputSchema: {type: "object", properties: {note: {anyOf: [{type: "string"}, {type: "null"}]},
                                                   nested: {type: "object"}}},
        execute: (input) => JSON.stringify(typeof input === "string" ? JSON.parse(input) : input)}""",
    )
    sent = {"note": None, "nested": {"inner": None, "list": [None, 1]}}
    assert ok(session.webmcp_list())["mode"] == "native"
    assert ok(session.webmcp_call("show_input", sent))["structured"] == sent


def test_invalid_input_is_refused_and_leaves_the_page_untouched(session, demo, events):
    shop(session, demo)
    before = (page_text(session, "last-call"), page_text(session, "webmcp-cart"))
    mark = events.mark()
    for bad, words in [
        ({"item": "Kiwi", "quantity": 1}, "'item': 'Kiwi' is not one of"),
        ({"item": "Apple", "quantity": 0}, "'quantity': 0 is less than the minimum of 1"),
        ({"item": "Apple"}, "'quantity' is a required property"),
        ({"item": "Apple", "quantity": "2"}, "'quantity': '2' is not of type 'integer'"),
    ]:
        message = error(
            session.webmcp_call("add_to_cart", bad), "invalid_params", outcome="not_started", retry="after_correction"
        )
        assert words in message and "Nothing was sent to the page" in message
    error(
        session.call("browser_webmcp_call", name="add_to_cart", input="not an object"),
        "invalid_params",
        outcome="not_started",
        retry="after_correction",
    )
    assert (
        (page_text(session, "last-call"), page_text(session, "webmcp-cart"))
        == before
        == ("No tool called yet", "Cart: 0 items")
    )
    assert [event for event in events.since(mark) if event.kind in ("invoked", "responded")] == []


def test_a_throwing_tool_reports_the_page_message(session, demo):
    shop(session, demo)
    message = error(session.webmcp_call("fail_always"), "evaluation_failed", outcome="unknown", retry="inspect_state")
    assert "This tool always fails" in message
    register_in_page(
        session,
        """{name: "read_fails", description: "A read-only tool that throws",
        inputSchema: {type: "object", properties: {}}, annotations: {readOnlyHint: true},
        execute() { throw new Error("nothing to read"); }}""",
    )
    message = error(session.webmcp_call("read_fails"), "evaluation_failed", outcome="unknown", retry="read_only")
    assert "nothing to read" in message


def test_an_unknown_tool_lists_the_page_tools(session, demo):
    shop(session, demo)
    message = error(
        session.webmcp_call("add_to_basket"), "element_not_found", outcome="not_started", retry="after_correction"
    )
    assert "'add_to_basket'" in message
    assert "add_to_cart, echo_text, fail_always, get_cart, leave_page, search_products" in message


def test_a_call_cut_off_by_navigation_says_so(session, demo, events):
    shop(session, demo)
    mark = events.mark()
    message = error(session.webmcp_call("leave_page"), "evaluation_failed", outcome="unknown", retry="inspect_state")
    assert "cut off" in message and f"navigated to {demo.url_for('index.html')}" in message
    cleared = events.wait(mark, ("cleared",), 1)
    assert cleared[0].reason == "navigation" and {tool.name for tool in cleared[0].tools} == CART_TOOLS | {
        "search_products"
    }
    wait_until(lambda: ok(session.evaluate("location.href"))["result"] == demo.url_for("index.html"))
    assert ok(session.webmcp_list())["tools"] == []


def test_a_tool_that_never_answers_times_out(session, demo):
    shop(session, demo)
    register_in_page(
        session,
        """{name: "hang", description: "Never answers",
        inputSchema: {type: "object", properties: {}}, execute: () => new Promise(() => {})}""",
    )
    started = time.monotonic()
    message = error(
        session.webmcp_call("hang", timeout_s=0.3), "operation_timeout", outcome="unknown", retry="inspect_state"
    )
    assert time.monotonic() - started < 30  # cut off by timeout_s, not the 60 s operation timeout
    assert "timeout_s" in message


def test_a_tool_that_opens_a_dialog_reports_the_modal(session, demo):
    shop(session, demo)
    register_in_page(
        session,
        """{name: "ask", description: "Asks the user",
        inputSchema: {type: "object", properties: {}}, execute: () => { alert("Sure?"); return "done"; }}""",
    )
    data = ok(session.webmcp_call("ask"))
    assert data["modal_state"]["kind"] == "dialog" and data["modal_state"]["message"] == "Sure?"
    ok(session.handle_dialog(accept=True))


def test_results_obey_the_result_byte_limit(fresh_session, demo):
    session = fresh_session(max_result_bytes=4096)
    shop(session, demo)
    assert len(ok(session.webmcp_call("echo_text", {"text": "x" * 1000}))["text"]) == 1000
    message = error(
        session.webmcp_call("echo_text", {"text": "x" * 10_000}),
        "result_too_large",
        outcome="completed",
        retry="inspect_state",
    )
    assert "4096" in message


# native: tool-list changes and in-page calls ------------------------------------------------
def test_toolchange_events_on_register_abort_and_navigation(session, demo, events):
    shop(session, demo)
    mark = events.mark()
    ok(session.evaluate("document.getElementById('unregister').click()"))
    ok(session.evaluate("document.getElementById('register-extra').click()"))
    names = set(tools_of(session.webmcp_list()))  # at once: the list reflects what the page did
    assert "add_to_cart" not in names and "extra_tool" in names
    changes = events.wait(mark, ("added", "removed"), 2)
    assert [(e.kind, [t.name for t in e.tools]) for e in changes] == [
        ("removed", ["add_to_cart"]),
        ("added", ["extra_tool"]),
    ]
    assert all(e.instance == "default" and e.page_id == session.tabs().data["current_page_id"] for e in changes)

    mark = events.mark()
    ok(session.navigate(demo.url_for("webmcp.html")))
    kinds = wait_until(
        lambda: (
            (seen := [e for e in events.since(mark) if e.kind in ("cleared", "added")])
            and {t.name for e in seen if e.kind == "added" for t in e.tools} >= CART_TOOLS
            and seen
        )
    )
    assert kinds[0].kind == "cleared" and kinds[0].reason == "navigation"
    assert "extra_tool" in {tool.name for tool in kinds[0].tools}


def test_calls_by_agents_inside_the_page_are_events(session, demo, events):
    shop(session, demo)
    mark = events.mark()
    result = ok(
        session.evaluate("""async () => {
        const tool = (await document.modelContext.getTools()).find((t) => t.name === "echo_text");
        return await document.modelContext.executeTool(tool, {text: "from the page"});
    }""")
    )["result"]
    assert result == "from the page"
    invoked, responded = events.wait(mark, ("invoked", "responded"), 2)
    assert (invoked.kind, invoked.tool_name, invoked.caller, invoked.input) == (
        "invoked",
        "echo_text",
        "page",
        {"text": "from the page"},
    )
    assert (responded.kind, responded.status, responded.output, responded.caller) == (
        "responded",
        "completed",
        "from the page",
        "page",
    )
    assert responded.invocation_id == invoked.invocation_id

    mark = events.mark()
    ok(session.webmcp_call("get_cart"))
    ours = events.wait(mark, ("invoked", "responded"), 2)
    assert [(e.kind, e.caller, e.tool_name) for e in ours] == [
        ("invoked", "python", "get_cart"),
        ("responded", "python", "get_cart"),
    ]


# the JavaScript path ----------------------------------------------------------------------
def test_page_mode_uses_the_pages_string_input_polyfill_without_running_twice(session, demo):
    ok(session.create_instance("webmcp-page", webmcp="page"))
    try:
        ok(session.navigate(demo.url_for("webmcp-polyfill.html"), instance="webmcp-page"))
        assert page_text(session, "polyfill-status", instance="webmcp-page") == "polyfill"  # no native API
        # The page's convention is real: an object input is refused by its executeTool.
        refused = ok(
            session.evaluate(
                """async () => {
            const tool = (await document.modelContext.getTools()).find((t) => t.name === "count_notes");
            try { await document.modelContext.executeTool(tool, {}); return "accepted"; }
            catch (e) { return e.message; }
        }""",
                instance="webmcp-page",
            )
        )["result"]
        assert refused == "Failed to parse input arguments"

        data = ok(session.webmcp_list(instance="webmcp-page"))
        assert data["mode"] == "page"
        tools = {tool["name"]: tool for tool in data["tools"]}
        assert set(tools) == {"add_note", "count_notes", "broken_note"}
        assert tools["add_note"]["input_schema"]["required"] == ["text"]  # parsed from the page's JSON string
        assert tools["count_notes"]["annotations"] == {"readOnlyHint": True}

        envelope = session.webmcp_call("add_note", {"text": "first"}, instance="webmcp-page")
        assert ok(envelope)["structured"] == {"notes": ["first"]}
        assert page_text(session, "runs", instance="webmcp-page") == "Tool runs: 1"
        assert ok(session.webmcp_call("count_notes", instance="webmcp-page"))["structured"] == {"count": 1}
        assert page_text(session, "runs", instance="webmcp-page") == "Tool runs: 2"

        message = error(
            session.webmcp_call("broken_note", instance="webmcp-page"),
            "evaluation_failed",
            outcome="unknown",
            retry="inspect_state",
        )
        assert "notes are read-only today" in message
        error(
            session.webmcp_call("add_note", {"text": ""}, instance="webmcp-page"),
            "invalid_params",
            outcome="not_started",
            retry="after_correction",
        )
        error(
            session.webmcp_call("add_notes", instance="webmcp-page"),
            "element_not_found",
            outcome="not_started",
            retry="after_correction",
        )
        assert page_text(session, "runs", instance="webmcp-page") == "Tool runs: 3"  # only broken_note ran

        # webmcp.html brings no polyfill: in page mode it has no tools. The old document's tools are
        # gone as the tab commits the new one (before navigate returns, with no read of the page).
        ok(session.navigate(demo.url_for("webmcp.html"), instance="webmcp-page"))
        page_id = ok(session.tabs(instance="webmcp-page"))["current_page_id"]
        assert session.engine.page_tools("webmcp-page", page_id)[1] == []  # type: ignore[index]
        assert page_text(session, "webmcp-status", instance="webmcp-page") == "WebMCP not available"
        assert ok(session.webmcp_list(instance="webmcp-page"))["tools"] == []
    finally:
        ok(session.destroy_instance("webmcp-page"))


def test_polyfill_mode_injects_our_polyfill(session, demo):
    ok(session.create_instance("webmcp-polyfill", webmcp="polyfill"))
    try:
        ok(session.navigate(demo.url_for("webmcp.html"), instance="webmcp-polyfill"))
        wait_until(lambda: page_text(session, "webmcp-status", instance="webmcp-polyfill") == "WebMCP ready")
        data = ok(session.webmcp_list(instance="webmcp-polyfill"))
        assert data["mode"] == "polyfill"
        assert set(tools_of(session.webmcp_list(instance="webmcp-polyfill"))) == CART_TOOLS  # forms are native-only
        data = ok(session.webmcp_call("add_to_cart", {"item": "Date", "quantity": 3}, instance="webmcp-polyfill"))
        assert data["structured"] == {"ok": True, "cart": [{"item": "Date", "quantity": 3}]}
        assert page_text(session, "webmcp-cart", instance="webmcp-polyfill") == "Cart: 3 items"
        assert ok(session.webmcp_call("echo_text", {"text": "hi"}, instance="webmcp-polyfill"))["text"] == "hi"
        error(
            session.webmcp_call("fail_always", instance="webmcp-polyfill"),
            "evaluation_failed",
            outcome="unknown",
            retry="inspect_state",
        )
        ok(session.evaluate("document.getElementById('unregister').click()", instance="webmcp-polyfill"))
        assert "add_to_cart" not in tools_of(session.webmcp_list(instance="webmcp-polyfill"))
    finally:
        ok(session.destroy_instance("webmcp-polyfill"))


def test_off_mode_has_no_webmcp(session, demo):
    ok(session.create_instance("webmcp-off", webmcp="off"))
    try:
        ok(session.navigate(demo.url_for("webmcp.html"), instance="webmcp-off"))
        assert page_text(session, "webmcp-status", instance="webmcp-off") == "WebMCP not available"
        for envelope in (
            session.webmcp_list(instance="webmcp-off"),
            session.webmcp_call("get_cart", instance="webmcp-off"),
        ):
            assert "WebMCP is off" in error(
                envelope, "unsupported_capability", outcome="not_started", retry="after_correction"
            )
        listed = {i["name"]: i["webmcp"] for i in ok(session.list_instances())["instances"]}
        assert listed["webmcp-off"] == "off" and listed["default"] == "native"
    finally:
        ok(session.destroy_instance("webmcp-off"))


# Python functions as page tools -------------------------------------------------------------
def test_a_python_function_becomes_a_page_tool(session, demo, events):
    shop(session, demo)
    seen: list[str] = []

    @session.page_tool(read_only=True)
    def lookup(word: str, times: int = 1) -> dict:
        """Look a word up in the kernel."""
        if word == "boom":
            raise ValueError("no such word in the kernel")
        seen.append(word)
        return {"word": word, "echo": [word] * times}

    assert lookup("direct") == {"word": "direct", "echo": ["direct"]}  # still the function
    tools = tools_of(session.webmcp_list())
    assert tools["lookup"]["description"] == "Look a word up in the kernel."
    assert tools["lookup"]["input_schema"]["required"] == ["word"]
    assert tools["lookup"]["annotations"]["readOnlyHint"] is True

    mark = events.mark()
    result = ok(
        session.evaluate("""async () => {
        const tool = (await document.modelContext.getTools()).find((t) => t.name === "lookup");
        return await document.modelContext.executeTool(tool, {word: "kiwi", times: 2});
    }""")
    )["result"]
    assert result == '{"word":"kiwi","echo":["kiwi","kiwi"]}'
    assert ok(session.webmcp_call("lookup", {"word": "fig"}))["structured"] == {"word": "fig", "echo": ["fig"]}
    assert seen == ["direct", "kiwi", "fig"] and lookup.calls == 2
    invoked = events.wait(mark, ("invoked",), 2)
    assert [(e.tool_name, e.caller) for e in invoked] == [("lookup", "page"), ("lookup", "python")]
    message = error(
        session.webmcp_call("lookup", {"word": "boom"}), "evaluation_failed", outcome="unknown", retry="read_only"
    )
    assert "no such word in the kernel" in message
    error(
        session.webmcp_call("lookup", {"word": "fig", "extra": 1}),
        "invalid_params",
        outcome="not_started",
        retry="after_correction",
    )  # the schema from the signature forbids unknown inputs

    mark = events.mark()
    lookup.unregister()
    assert not lookup.active
    removed = events.wait(mark, ("removed",), 1)
    assert [tool.name for tool in removed[0].tools] == ["lookup"]
    assert "lookup" not in tools_of(session.webmcp_list())


def test_a_python_tool_lives_in_one_document_and_can_be_registered_again(session, demo):
    shop(session, demo)
    first = session.page_tool(lambda: "first", name="version")
    assert ok(session.webmcp_call("version"))["text"] == "first"
    shop(session, demo)  # a navigation ends the registration, as for any page tool
    assert "version" not in tools_of(session.webmcp_list())
    second = session.page_tool(lambda: "second", name="version")
    assert ok(session.webmcp_call("version"))["text"] == "second"
    assert not first.active and second.active and (first.calls, second.calls) == (1, 1)
    second.unregister()
