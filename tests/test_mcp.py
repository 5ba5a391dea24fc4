"""The MCP server with real clients over real transports.

A real kernel serves its notebook session (`nb.serve_mcp`) over streamable HTTP;
`mcp.Client` (both protocol eras), the stdio console script, the stdio bridge and
the TypeScript SDK v2 client drive it, while the kernel checks what happened to
its own browser and call log. Approval prompts are answered the way JupyterLab
would: a comm message to the button's widget.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import mcp_types as types
import pytest
from jupyter_client.manager import start_new_kernel
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.subscriptions import ToolsListChanged

from webmcp_nb import Session
from webmcp_nb.client import tool_registry
from webmcp_nb.core.guard.grants import Grant
from webmcp_nb.demo import DemoServer
from webmcp_nb.mcp.schemas import agent_input_schema

from .helpers import SLEEPING_CELL, Kernel, ref_for, ts_report, wait_until

AGENT = types.Implementation(name="pytest-agent", version="1.0")

# Agents drive a kernel's (or a session's) Chromium; the few tests that do not still serve a kernel (slow).
pytestmark = pytest.mark.browser


class Served:
    """A kernel whose notebook session serves MCP, with clients for it."""

    def __init__(self, kernel: Kernel, url: str, token: str, demo: DemoServer) -> None:
        self.kernel, self.url, self.token, self.demo = kernel, url, token, demo

    def client(self, mode: str = "auto", token: str | None = None, **options: Any) -> Client:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token or self.token}"}, timeout=60)
        return Client(streamable_http_client(self.url, http_client=http), mode=mode, client_info=AGENT, **options)

    def run(self, coroutine: Any) -> Any:
        return asyncio.run(coroutine)


@pytest.fixture(scope="module")
def served(demo: DemoServer) -> Iterator[Served]:
    manager, client = start_new_kernel(kernel_name="python3")
    kernel = Kernel(manager, client)
    kernel.run(f"%load_ext webmcp_nb\nimport json, webmcp_nb\nnb = webmcp_nb.session()\nDEMO = {demo.url!r}")
    outputs = kernel.run("server = nb.serve_mcp(caps=['js'])\nprint(json.dumps([server.url, server.token]))")
    url, token = json.loads("".join(o["text"] for o in outputs if o["type"] == "stream").splitlines()[-1])
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs), outputs
    yield Served(kernel, url, token, demo)
    client.stop_channels()
    manager.shutdown_kernel(now=False)


def structured(result: types.CallToolResult) -> dict[str, Any]:
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def text_of(result: types.CallToolResult) -> str:
    texts = [block.text for block in result.content if isinstance(block, types.TextContent)]
    assert len(texts) == 1, result.content
    return texts[0]


# --------------------------------------------------------------------------- #
# Tools and results
# --------------------------------------------------------------------------- #


def test_tools_are_generated_from_the_registry_for_the_granted_groups(served: Served) -> None:
    async def scenario() -> list[types.Tool]:
        async with served.client() as client:
            return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in served.run(scenario())}
    expected = [spec.name for spec in tool_registry() if spec.group in ("core", "js")]
    assert list(tools) == expected
    assert "browser_evaluate" in tools and "browser_file_upload" not in tools
    for spec in tool_registry():
        if spec.name not in tools:
            continue
        tool = tools[spec.name]
        assert tool.input_schema == agent_input_schema(spec.input_schema, Grant.build(["js"]).withheld(spec.name))
        hints = tool.annotations or types.ToolAnnotations()  # left out when every hint is MCP's default
        assert bool(hints.read_only_hint) is spec.read_only
        assert (tool.output_schema is None) == (spec.name == "browser_screenshot"), spec.name
    assert "Consequential" in (tools["browser_evaluate"].description or "")


def test_agent_calls_drive_the_notebook_browser_and_appear_in_its_log(served: Served) -> None:
    async def scenario() -> tuple[types.CallToolResult, types.CallToolResult, types.CallToolResult]:
        async with served.client() as client:
            navigate = await client.call_tool("browser_navigate", {"url": served.demo.url_for("index.html")})
            snapshot = await client.call_tool("browser_snapshot", {})
            ref = ref_for(structured(snapshot)["data"]["snapshot"], 'button "Add Banana"')
            click = await client.call_tool("browser_click", {"ref": ref})
            return navigate, snapshot, click

    navigate, snapshot, click = served.run(scenario())
    assert structured(navigate)["status"] == "success" and navigate.is_error is False
    assert text_of(navigate).startswith("browser_navigate: success")
    snapshot_yaml = structured(snapshot)["data"]["snapshot"]
    assert snapshot_yaml in text_of(snapshot) and "[ref=e" in text_of(snapshot)
    assert structured(click)["operation"]["outcome"] == "completed"
    # The notebook sees the same browser, page and history.
    cart = served.kernel.value(
        "print(json.dumps(nb.call('browser_evaluate', expression=\"document.getElementById('cart').textContent\")"
        ".data['result']))"
    )
    assert cart == "Cart: 1 item: Banana"
    callers = served.kernel.value(
        "print(json.dumps([[r.caller, r.tool] for r in nb.history if r.caller.startswith('agent:')][-3:]))"
    )
    assert callers == [
        ["agent:pytest-agent", "browser_navigate"],
        ["agent:pytest-agent", "browser_snapshot"],
        ["agent:pytest-agent", "browser_click"],
    ]


def test_a_screenshot_arrives_as_an_image_with_the_envelope(served: Served) -> None:
    async def scenario() -> types.CallToolResult:
        async with served.client() as client:
            return await client.call_tool("browser_screenshot", {})

    result = served.run(scenario())
    image, text = result.content
    assert isinstance(image, types.ImageContent) and image.mime_type == "image/png"
    assert base64.b64decode(image.data)[:8] == b"\x89PNG\r\n\x1a\n"
    assert result.structured_content is None  # the image travels once, as an image
    assert isinstance(text, types.TextContent) and text.text.startswith("browser_screenshot: success")
    assert "image: image/png" in text.text and "operation: " in text.text


def test_errors_are_tool_results_carrying_everything_in_text_and_structure(served: Served) -> None:
    async def scenario() -> list[types.CallToolResult]:
        async with served.client() as client:
            return [
                await client.call_tool("browser_click", {"ref": 12}),
                await client.call_tool("browser_click", {"ref": "e9999"}),
                await client.call_tool("browser_file_upload", {"paths": []}),
                await client.call_tool("browser_navigat", {"url": "http://127.0.0.1/"}),
            ]

    bad_type, unknown_ref, ungranted, misspelt = served.run(scenario())
    for result in (bad_type, unknown_ref, ungranted, misspelt):
        assert result.is_error is True
        envelope, text = structured(result), text_of(result)
        assert envelope["status"] == "error"
        assert envelope["message"] in text and envelope["error_type"] in text
        assert f"retry: {envelope['operation']['retry']}" in text
    bad = structured(bad_type)
    assert (bad["error_type"], bad["operation"]["outcome"], bad["operation"]["retry"]) == (
        "invalid_params",
        "not_started",
        "after_correction",
    )
    assert "parameter 'ref'" in text_of(bad_type)
    assert structured(unknown_ref)["error_type"] == "element_not_found"
    assert structured(ungranted)["error_type"] == "invalid_params"
    assert "'files' was not granted" in text_of(ungranted)
    assert "Did you mean: browser_navigate" in text_of(misspelt)


def test_the_result_limit_bounds_the_envelope_on_every_front_end(demo: DemoServer) -> None:
    # A screenshot whose envelope fits the limit arrives, although the MCP result carries more
    # (the image block and the text); one whose envelope does not is refused alike by both.
    with Session() as session:
        session.navigate(demo.url_for("index.html")).raise_for_status()
        size = len(session.screenshot().raise_for_status().to_json_bytes())
        session.reconfigure(max_result_bytes=size + 2_000)
        handle = session.serve_mcp()

        async def scenario() -> types.CallToolResult:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {handle.token}"})
            async with Client(streamable_http_client(handle.url, http_client=http)) as client:
                return await client.call_tool("browser_screenshot", {})

        fits = asyncio.run(scenario())
        limit = size - 2_000
        session.reconfigure(max_result_bytes=limit)
        own = session.screenshot()
        refused = asyncio.run(scenario())
    assert fits.is_error is False and isinstance(fits.content[0], types.ImageContent)
    assert own.error_type == "result_too_large"
    assert refused.is_error is True
    limited = structured(refused)
    assert limited["error_type"] == "result_too_large"
    assert limited["operation"]["outcome"] == "completed" and limited["operation"]["retry"] == "read_only"
    assert (
        f"limit of {limit} bytes" in limited["message"] and "(reconfigure(max_result_bytes=...))" in limited["message"]
    )


# --------------------------------------------------------------------------- #
# Published functions, resources, prompts and list changes
# --------------------------------------------------------------------------- #


async def _next_notification(queue: asyncio.Queue[Any], timeout: float = 5.0) -> Any:
    return await asyncio.wait_for(queue.get(), timeout)


def test_published_tools_send_list_changed_to_2026_clients(served: Served) -> None:
    async def scenario() -> tuple[list[str], Any, list[str]]:
        async with served.client() as client:
            assert client.protocol_version == "2026-07-28"
            async with client.listen(tools_list_changed=True) as subscription:
                events = subscription.__aiter__()
                served.kernel.run("@nb.tool\ndef double(x: int) -> int:\n    'Twice x.'\n    return 2 * x")
                assert isinstance(await asyncio.wait_for(events.__anext__(), 5), ToolsListChanged)
                listed = [tool.name for tool in (await client.list_tools()).tools]
                called = await client.call_tool("double", {"x": 21})
                served.kernel.run("double.unregister()")
                assert isinstance(await asyncio.wait_for(events.__anext__(), 5), ToolsListChanged)
                after = [tool.name for tool in (await client.list_tools()).tools]
                return listed, called, after

    listed, called, after = served.run(scenario())
    assert "double" in listed and "double" not in after
    assert structured(called)["data"] == {"result": 42}
    assert text_of(called).splitlines()[1] == "result: 42"


def test_published_tools_send_list_changed_to_2025_clients(served: Served) -> None:
    async def scenario() -> tuple[list[str], list[str]]:
        notifications: asyncio.Queue[Any] = asyncio.Queue()

        async def on_message(message: Any) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                await notifications.put(message)

        async with served.client(mode="legacy", message_handler=on_message) as client:
            assert client.protocol_version.startswith("2025")
            await client.list_tools()
            await asyncio.sleep(0.3)  # the standalone GET stream opens
            served.kernel.run("@nb.tool(read_only=True)\ndef triple(x: int) -> int:\n    return 3 * x")
            await _next_notification(notifications)
            listed = [tool.name for tool in (await client.list_tools(cache_mode="bypass")).tools]
            served.kernel.run("triple.unregister()")
            await _next_notification(notifications)
            after = [tool.name for tool in (await client.list_tools(cache_mode="bypass")).tools]
            return listed, after

    listed, after = served.run(scenario())
    assert "triple" in listed and "triple" not in after


def test_published_resources_and_prompts(served: Served) -> None:
    async def scenario() -> tuple[Any, ...]:
        async with served.client() as client:
            async with client.listen(resources_list_changed=True, prompts_list_changed=True) as subscription:
                events = subscription.__aiter__()
                served.kernel.run(
                    "notes = nb.resource('notes://today', 'buy bananas', description='Shopping notes')\n"
                    "@nb.prompt\ndef review(page: str) -> str:\n    'Review a page.'\n"
                    "    return f'Review {page} carefully.'"
                )
                kinds = {type(await asyncio.wait_for(events.__anext__(), 5)).__name__ for _ in range(2)}
            assert kinds == {"ResourcesListChanged", "PromptsListChanged"}
            resources = (await client.list_resources()).resources
            content = await client.read_resource("notes://today")
            prompts = (await client.list_prompts()).prompts
            prompt = await client.get_prompt("review", {"page": "the cart"})
            return resources, content, prompts, prompt

    resources, content, prompts, prompt = served.run(scenario())
    served.kernel.run("notes.unregister(); review.unregister()")
    assert [(r.uri, r.description) for r in resources] == [("notes://today", "Shopping notes")]
    assert content.contents[0].text == "buy bananas"
    assert [(p.name, [a.name for a in p.arguments or []]) for p in prompts] == [("review", ["page"])]
    assert prompt.messages[0].content.text == "Review the cart carefully."


# --------------------------------------------------------------------------- #
# One shared session, safely
# --------------------------------------------------------------------------- #


def test_agents_are_answered_while_a_cell_sleeps(served: Served) -> None:
    msg_id = served.kernel.start("import time; print('sleeping', flush=True); time.sleep(10)")

    async def scenario() -> tuple[float, types.CallToolResult]:
        async with served.client() as client:
            started = time.perf_counter()
            result = await client.call_tool("browser_snapshot", {})
            return time.perf_counter() - started, result

    try:
        elapsed, result = served.run(scenario())
        assert result.is_error is False
        assert elapsed < 5.0, elapsed  # answered while the 10 s cell still runs
    finally:
        served.kernel.finish(msg_id, 20)  # let the cell finish before the next test uses the kernel


def test_agents_are_answered_while_another_agent_call_waits_on_a_slow_page(served: Served) -> None:
    async def scenario() -> tuple[bool, float, types.CallToolResult]:
        async with served.client() as slow_client, served.client() as client:
            started = time.perf_counter()
            slow = asyncio.create_task(
                slow_client.call_tool("browser_navigate", {"url": served.demo.url_for("slow?ms=6000")})
            )
            await asyncio.sleep(0.3)
            health = await client.call_tool("browser_health", {})
            slow_still_waiting = not slow.done()
            await slow
            return slow_still_waiting, time.perf_counter() - started, health

    slow_still_waiting, slow, health = served.run(scenario())
    assert health.is_error is False
    assert slow >= 6.0 and slow_still_waiting, slow


def test_interrupting_the_kernel_still_works_while_serving(served: Served) -> None:
    msg_id = served.kernel.start(SLEEPING_CELL)
    served.kernel.manager.interrupt_kernel()
    outputs = served.kernel.finish(msg_id, 15)
    # uvicorn on the runtime thread did not take SIGINT
    assert [o["ename"] for o in outputs if o["type"] == "error"] == ["KeyboardInterrupt"]


def test_a_call_that_launches_sends_progress_over_http_to_a_client_with_a_token(served: Served) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))

    async def scenario() -> list[types.CallToolResult]:
        async with served.client() as client:
            assert client.protocol_version == "2026-07-28"
            created = await client.call_tool("browser_create_instance", {"name": "progress"}, None, progress)
            listed = await client.call_tool("browser_list_instances", {}, None, progress)  # launches nothing
            return [created, listed]

    results = served.run(scenario())
    served.kernel.run("assert nb.destroy_instance('progress').ok")  # the notebook's own call: default is current again
    assert [result.is_error for result in results] == [False, False], [text_of(r) for r in results]
    assert [(value, total) for value, total, _ in seen] == [(1, None), (2, None)], seen
    assert seen[0][2] == "launching Chromium…"
    assert re.fullmatch(r"launching Chromium… ready in \d+\.\d s", seen[1][2] or ""), seen


def test_security_token_host_and_origin(served: Served) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    auth = {"Authorization": f"Bearer {served.token}"}
    with httpx.Client() as http:
        assert http.post(served.url, json=body, headers=headers).status_code == 401
        assert http.post(served.url, json=body, headers={**headers, "Authorization": "Bearer nope"}).status_code == 401
        foreign_host = http.post(served.url, json=body, headers={**headers, **auth, "Host": "evil.example:80"})
        assert foreign_host.status_code == 421
        foreign_origin = http.post(served.url, json=body, headers={**headers, **auth, "Origin": "http://evil.example"})
        assert foreign_origin.status_code == 403


def test_an_approval_policy_needs_someone_to_ask() -> None:
    with Session() as session:
        with pytest.raises(ValueError, match="needs an approver"):
            session.serve_mcp(approve="consequential")
        with pytest.raises(ValueError, match="approve must be one of"):
            session.serve_mcp(approve="sometimes")
        assert session.servers == []


def test_remote_binding_needs_an_explicit_flag() -> None:
    with Session() as session:
        with pytest.raises(ValueError, match="allow_remote"):
            session.serve_mcp(host="0.0.0.0")
        with pytest.warns(UserWarning, match="reachable from other machines"):
            handle = session.serve_mcp(host="0.0.0.0", allow_remote=True)
        assert handle.running
    assert not handle.running  # closing the session stops its servers


def _answer_approval(served: Served, answer: str, tool: str, deadline_s: float = 20.0) -> str:
    """Wait for the approval prompt on iopub, click `answer` like a front end; return the prompt text.

    The click is sent once the row holding the button is opened: the panel builds the row after it
    has wired the buttons, as a person can click only what the panel shows (a click sent on the
    button's own comm_open could reach the kernel before its handler, and be lost)."""
    comms: dict[str, dict[str, Any]] = {}

    def clicked() -> str | None:
        """Read one iopub message; click `answer` once its row and the prompt are both shown."""
        try:
            msg = served.kernel.client.get_iopub_msg(timeout=1)
        except Exception:  # noqa: BLE001 - queue.Empty: keep waiting
            return None
        if msg["msg_type"] != "comm_open":
            return None
        state = msg["content"]["data"].get("state", {})
        comms[msg["content"]["comm_id"]] = state
        prompt = next((s["value"] for s in comms.values() if tool in str(s.get("value", ""))), None)
        children = {str(child).removeprefix("IPY_MODEL_") for child in state.get("children", ())}
        button = next((c for c in children if comms.get(c, {}).get("description") == answer), None)
        if button is None or prompt is None:
            return None
        click = served.kernel.client.session.msg(
            "comm_msg", {"comm_id": button, "data": {"method": "custom", "content": {"event": "click"}}}
        )
        served.kernel.client.shell_channel.send(click)
        return str(prompt)

    return wait_until(clicked, deadline_s, 0, f"no approval prompt for {tool} with a {answer!r} button")


@pytest.mark.parametrize("answer", ["Deny", "Approve"])
def test_consequential_calls_wait_for_the_notebook_user(served: Served, answer: str) -> None:
    served.kernel.run("nb.navigate(DEMO + 'index.html')")
    expression = "document.title = 'changed by the agent'"

    async def scenario() -> tuple[str, types.CallToolResult]:
        async with served.client() as client:
            call = asyncio.create_task(client.call_tool("browser_evaluate", {"expression": expression}))
            prompt = await asyncio.to_thread(_answer_approval, served, answer, "browser_evaluate")
            started = time.perf_counter()
            result = await call
            assert time.perf_counter() - started < 20, "the answer did not reach the waiting call (45 s timeout)"
            return prompt, result

    prompt, result = served.run(scenario())
    assert "agent:pytest-agent wants browser_evaluate" in prompt and "index.html" in prompt
    title = served.kernel.value(
        "print(json.dumps(nb.call('browser_evaluate', expression='document.title').data['result']))"
    )
    if answer == "Deny":
        envelope = structured(result)
        assert result.is_error is True
        assert (envelope["error_type"], envelope["operation"]["outcome"]) == ("approval_denied", "not_started")
        assert "denied" in envelope["message"]
        assert title == "Demo Shop"
    else:
        assert result.is_error is False
        assert title == "changed by the agent"


def test_read_only_tools_never_wait_for_approval(served: Served) -> None:
    async def scenario() -> float:
        async with served.client() as client:
            started = time.perf_counter()
            result = await client.call_tool("browser_tabs", {"action": "list"})
            assert result.is_error is False
            started = time.perf_counter()
            assert (await client.call_tool("browser_snapshot", {})).is_error is False
            return time.perf_counter() - started

    assert served.run(scenario()) < 20.0  # an approval would wait 45 s for an answer nobody gives


# --------------------------------------------------------------------------- #
# stdio: the console script and the bridge
# --------------------------------------------------------------------------- #


def _script(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "webmcp_nb.cli", *args])


def test_stdio_serve_runs_a_session_of_its_own(demo: DemoServer) -> None:
    async def scenario() -> tuple[list[str], types.CallToolResult]:
        async with Client(_script("serve", "--transport", "stdio"), client_info=AGENT) as client:
            tools = [tool.name for tool in (await client.list_tools()).tools]
            await client.call_tool("browser_navigate", {"url": demo.url_for("index.html")})
            return tools, await client.call_tool("browser_snapshot", {})

    tools, snapshot = asyncio.run(scenario())
    assert tools == [spec.name for spec in tool_registry() if spec.group == "core"]
    assert 'button "Add Banana"' in text_of(snapshot)


def test_a_call_that_launches_the_browser_sends_progress_to_a_client_with_a_token(demo: DemoServer) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))

    async def scenario() -> list[types.CallToolResult]:
        async with Client(_script("serve", "--transport", "stdio"), client_info=AGENT) as client:
            first = await client.call_tool("browser_navigate", {"url": demo.url_for("index.html")}, None, progress)
            launched = list(seen)
            second = await client.call_tool("browser_snapshot", {}, None, progress)
            assert seen == launched  # the browser was up: nothing to report
            return [first, second]

    first, second = asyncio.run(scenario())
    assert not first.is_error and not second.is_error
    assert [(value, total) for value, total, _ in seen] == [(1, None), (2, None)]
    assert seen[0][2] == "launching Chromium…"
    assert re.fullmatch(r"launching Chromium… ready in \d+\.\d s", seen[1][2] or ""), seen


def test_caps_grant_the_file_and_pdf_tools(demo: DemoServer, tmp_path: Path) -> None:
    """What an agent saves stays in --artifacts-dir after the server stops (by default it goes to a
    temporary directory removed with the server)."""

    async def scenario() -> tuple[list[str], types.CallToolResult, types.CallToolResult]:
        serve = _script("serve", "--transport", "stdio", "--caps", "files", "pdf", "--artifacts-dir", str(tmp_path))
        async with Client(serve, client_info=AGENT) as client:
            tools = [tool.name for tool in (await client.list_tools()).tools]
            await client.call_tool("browser_navigate", {"url": demo.url_for("downloads.html")})
            return tools, await client.call_tool("browser_pdf", {}), await client.call_tool("browser_downloads", {})

    tools, pdf, downloads = asyncio.run(scenario())
    assert tools == [spec.name for spec in tool_registry() if spec.group in ("core", "files", "pdf")]
    assert {"browser_pdf", "browser_downloads", "browser_file_upload"} <= set(tools)
    saved = structured(pdf)["data"]["path"]
    assert Path(saved).parent == tmp_path and saved in text_of(pdf)
    assert Path(saved).read_bytes().startswith(b"%PDF-")
    assert structured(downloads)["data"] == {"downloads": []}


def test_attach_bridges_stdio_to_the_notebook(served: Served) -> None:
    async def scenario() -> tuple[list[str], types.CallToolResult]:
        async with Client(_script("attach", "--url", served.url, "--token", served.token), client_info=AGENT) as client:
            tools = [tool.name for tool in (await client.list_tools()).tools]
            return tools, await client.call_tool("browser_tabs", {"action": "list"})

    tools, tabs = asyncio.run(scenario())
    assert "browser_evaluate" in tools  # the notebook granted js
    assert structured(tabs)["status"] == "success"
    last = served.kernel.value("print(json.dumps([nb.history[-1].caller, nb.history[-1].tool]))")
    assert last == ["agent:pytest-agent", "browser_tabs"]


# --------------------------------------------------------------------------- #
# A third-party client: the TypeScript SDK v2
# --------------------------------------------------------------------------- #


def test_the_typescript_sdk_client_validates_every_result(served: Served) -> None:
    served.kernel.run("nb.navigate(DEMO + 'index.html')")
    report = ts_report("check.mjs", served.url, served.token, served.demo.url)
    listed = {tool["name"]: tool["hasOutputSchema"] for tool in report["tools"]}
    assert listed["browser_screenshot"] is False and listed["browser_snapshot"] is True
    calls = report["calls"]
    for name, call in calls.items():
        expected_error = name == "browser_handle_dialog"
        status = "error" if expected_error else "success"
        assert call["isError"] is expected_error, (name, call)
        # A screenshot is an image and a text, without structured content.
        assert call["status"] == (None if name == "browser_screenshot" else status)
        assert call["text"].startswith(f"{name}: {status}")
    assert calls["browser_screenshot"]["contentTypes"] == ["image", "text"]
    assert calls["browser_screenshot"]["imageMime"] == "image/png" and calls["browser_screenshot"]["imageBytes"] > 1000
    assert calls["browser_handle_dialog"]["errorType"] == "modal_state_blocked"
    assert "Cart: 1 item" in served.kernel.value(
        "print(json.dumps(nb.call('browser_evaluate', expression=\"document.getElementById('cart').textContent\")"
        ".data['result']))"
    )


def test_kernel_shutdown_stops_the_server(demo: DemoServer) -> None:
    manager, client = start_new_kernel(kernel_name="python3")
    kernel = Kernel(manager, client)
    outputs = kernel.run(
        "import json, webmcp_nb\ns = webmcp_nb.session().serve_mcp(approve='none')\nprint(json.dumps(s.url))"
    )
    url = json.loads("".join(o["text"] for o in outputs if o["type"] == "stream").splitlines()[-1])
    with httpx.Client() as http:
        assert http.post(url, json={}).status_code == 401  # up
        client.stop_channels()
        manager.shutdown_kernel(now=False)
        with pytest.raises(httpx.ConnectError):
            http.post(url, json={})
