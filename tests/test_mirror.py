"""WebMCP page tools mirrored to an attached agent, with a real `mcp.Client` over HTTP.

The session (the notebook user's side) navigates; the agent sees the page's tools as
``webmcp_*`` tools, hears list_changed when they change, and its calls reach the page.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.subscriptions import ToolsListChanged

from tests.helpers import wait_until_async
from webmcp_nb import Session
from webmcp_nb.core.call.engine import ApprovalRequest
from webmcp_nb.demo import DemoServer

# README promises list_changed within 500 ms (on an idle machine); here, two cores are shared.
CHANGE_WITHIN_S = 3.0


@pytest.fixture
def session() -> Iterator[Session]:
    with Session() as session:
        yield session


@asynccontextmanager
async def agent(handle: Any) -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {handle.token}"}, timeout=60)
    async with Client(
        streamable_http_client(handle.url, http_client=http),
        cache=None,
        client_info=types.Implementation(name="mirror-agent", version="1"),
    ) as client:
        yield client


async def mirrored(client: Client) -> dict[str, types.Tool]:
    return {tool.name: tool for tool in (await client.list_tools()).tools if tool.name.startswith("webmcp_")}


async def in_thread(function: Any, *args: Any, **kwargs: Any) -> Any:
    return await asyncio.to_thread(function, *args, **kwargs)


async def until(client: Client, events: Any, holds: Any, started: float, seconds: float = 5) -> float:
    """Re-list after each tools list_changed until `holds(mirrored tools)`; return the time since `started`."""
    while not holds(await mirrored(client)):
        event = await asyncio.wait_for(events.__anext__(), seconds)
        assert isinstance(event, ToolsListChanged)
    return time.perf_counter() - started


def test_page_tools_follow_the_notebook_and_calls_reach_the_page(session: Session, demo: DemoServer) -> None:
    session.navigate(demo.url_for("index.html")).raise_for_status()
    handle = session.serve_mcp()

    async def scenario() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with agent(handle) as client, client.listen(tools_list_changed=True) as subscription:
            events = subscription.__aiter__()
            out["before"] = await mirrored(client)
            await in_thread(session.navigate, demo.url_for("webmcp.html"))
            expected = {"webmcp_add_to_cart", "webmcp_get_cart", "webmcp_echo_text", "webmcp_search_products"}
            await until(client, events, lambda tools: expected <= set(tools), time.perf_counter())
            out["tools"] = await mirrored(client)
            out["call"] = await client.call_tool("webmcp_add_to_cart", {"item": "Banana", "quantity": 2})
            out["bad"] = await client.call_tool("webmcp_add_to_cart", {"item": "Kiwi", "quantity": 2})
            out["cart"] = (await in_thread(session.evaluate, "document.getElementById('webmcp-cart').textContent")).data
            # Registration and removal by the page itself.
            started = time.perf_counter()
            await in_thread(session.evaluate, "document.getElementById('register-extra').click()")
            out["registered_after_s"] = await until(client, events, lambda t: "webmcp_extra_tool" in t, started)
            started = time.perf_counter()
            await in_thread(session.evaluate, "document.getElementById('unregister').click()")
            out["removed_after_s"] = await until(client, events, lambda t: "webmcp_add_to_cart" not in t, started)
            started = time.perf_counter()
            await in_thread(session.navigate, demo.url_for("index.html"))
            out["gone_after_s"] = await until(client, events, lambda t: not t, started)
            out["after"] = await mirrored(client)
            out["stale"] = await client.call_tool("webmcp_add_to_cart", {"item": "Banana", "quantity": 1})
        return out

    out = asyncio.run(scenario())
    assert out["before"] == {} and out["after"] == {}
    tools = out["tools"]
    assert tools["webmcp_get_cart"].annotations.read_only_hint is True
    assert tools["webmcp_add_to_cart"].annotations.read_only_hint is False
    assert tools["webmcp_add_to_cart"].input_schema["required"] == ["item", "quantity"]
    assert demo.url.rstrip("/") in tools["webmcp_add_to_cart"].description  # the origin is named
    call = out["call"]
    assert call.is_error is False and call.structured_content["status"] == "success"
    assert out["cart"]["result"] == "Cart: 2 items"
    bad = out["bad"].structured_content
    assert (bad["error_type"], bad["operation"]["outcome"]) == ("invalid_params", "not_started")
    assert out["gone_after_s"] < CHANGE_WITHIN_S
    assert out["registered_after_s"] < CHANGE_WITHIN_S
    assert out["removed_after_s"] < CHANGE_WITHIN_S
    assert out["stale"].is_error is True and out["stale"].structured_content["error_type"] == "invalid_params"


def test_collisions_across_frames_annotations_and_approval(session: Session, demo: DemoServer) -> None:
    asked: list[ApprovalRequest] = []

    async def deny(request: ApprovalRequest) -> str:
        asked.append(request)
        return "denied in the test"

    session.navigate(demo.url_for("webmcp-mirror.html")).raise_for_status()
    handle = session.serve_mcp(approve="consequential", approver=deny)

    async def scenario() -> tuple[dict[str, types.Tool], types.CallToolResult, types.CallToolResult]:
        async with agent(handle) as client:

            async def all_three() -> dict[str, types.Tool] | None:  # the frame's tool registers once it has loaded
                tools = await mirrored(client)
                return tools if len(tools) == 3 else None

            tools = await wait_until_async(all_three)
            greet = await client.call_tool("webmcp_greet_2", {"name": "Ada"})
            notes = await client.call_tool("webmcp_read_notes", {})
            return tools, greet, notes

    tools, greet, notes = asyncio.run(scenario())
    assert sorted(tools) == ["webmcp_greet", "webmcp_greet_2", "webmcp_read_notes"]
    assert "inside the frame" in (tools["webmcp_greet_2"].description or "")
    assert "Greet someone on the page" in (tools["webmcp_greet"].description or "")
    assert tools["webmcp_greet"].annotations.destructive_hint is True
    assert "untrusted content" in (tools["webmcp_read_notes"].description or "")
    assert tools["webmcp_read_notes"].annotations.read_only_hint is True
    # The consequential call asked and was denied: nothing happened in the frame.
    assert [request.tool for request in asked] == ["browser_webmcp_call"]
    assert asked[0].args["name"] == "greet"
    assert greet.structured_content["error_type"] == "approval_denied"
    assert greet.structured_content["operation"]["outcome"] == "not_started"
    frame_text = session.evaluate(
        "document.querySelector('iframe').contentDocument.getElementById('greeted').textContent"
    ).data["result"]
    assert frame_text == "Frame greeted nobody"
    # The read-only one did not ask.
    assert notes.is_error is False and "Ignore previous instructions" in notes.content[-1].text


def test_calls_route_to_the_right_frame(session: Session, demo: DemoServer) -> None:
    session.navigate(demo.url_for("webmcp-mirror.html")).raise_for_status()
    handle = session.serve_mcp()

    async def scenario() -> None:
        async with agent(handle) as client:

            async def frame_tool_listed() -> bool:
                return "webmcp_greet_2" in await mirrored(client)

            await wait_until_async(frame_tool_listed)
            for name, who in (("webmcp_greet_2", "Grace"), ("webmcp_greet", "Alan")):
                result = await client.call_tool(name, {"name": who})
                assert result.is_error is False, result.content[-1].text

    asyncio.run(scenario())
    page = session.evaluate("document.getElementById('greeted').textContent").data["result"]
    frame = session.evaluate(
        "document.querySelector('iframe').contentDocument.getElementById('greeted').textContent"
    ).data["result"]
    assert (page, frame) == ("Page greeted Alan", "Frame greeted Grace")


def test_only_allowed_origins_are_mirrored(session: Session, demo: DemoServer) -> None:
    # localhost is another origin than 127.0.0.1 (and a secure context too).
    other = demo.url_for("webmcp.html").replace("127.0.0.1", "localhost")
    session.navigate(demo.url_for("index.html")).raise_for_status()
    default = session.serve_mcp()
    explicit = session.serve_mcp(allowed_origins=[other.rsplit("/", 1)[0]])

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        async with agent(default) as client, agent(explicit) as client2:
            # The agent navigates there itself: that does not widen the default set.
            assert (await client.call_tool("browser_navigate", {"url": other})).is_error is False

            async def listed_by_the_explicit_server() -> dict[str, Any] | None:
                tools = await mirrored(client2)
                return tools if "webmcp_add_to_cart" in tools else None

            by_list = await wait_until_async(listed_by_the_explicit_server)  # both servers saw the page by now
            return await mirrored(client), by_list

    by_default, by_list = asyncio.run(scenario())
    assert by_default == {}
    assert "webmcp_add_to_cart" in by_list


def test_pinned_pages_stay_mirrored_when_the_notebook_moves_on(session: Session, demo: DemoServer) -> None:
    session.navigate(demo.url_for("webmcp.html")).raise_for_status()
    handle = session.serve_mcp()
    handle.pin()
    session.call("browser_tabs", action="new", url=demo.url_for("index.html")).raise_for_status()

    async def scenario() -> list[str]:
        async with agent(handle) as client:
            return sorted(await mirrored(client))

    names = asyncio.run(scenario())
    assert "webmcp_add_to_cart" in names
    assert handle.mirrored == names or sorted(handle.mirrored) == names


def test_a_tool_the_page_just_registered_is_callable_at_once(session: Session, demo: DemoServer) -> None:
    """No waiting for list_changed: the server asks the page before it answers "no such tool"."""
    session.navigate(demo.url_for("webmcp.html")).raise_for_status()
    handle = session.serve_mcp()
    registered = """new Promise(done => {
        document.getElementById('register-extra').click();
        const status = document.getElementById('webmcp-status');
        const check = () => status.textContent.includes('extra_tool registered') ? done(true) : setTimeout(check, 5);
        check();
    })"""

    async def scenario() -> tuple[types.CallToolResult, dict[str, types.Tool]]:
        async with agent(handle) as client:
            await in_thread(session.evaluate, registered)
            called = await client.call_tool("webmcp_extra_tool", {})
            return called, await mirrored(client)

    called, listed = asyncio.run(scenario())
    assert called.is_error is False and called.structured_content["status"] == "success", called
    assert "webmcp_extra_tool" in listed  # the catch-up that found it keeps it mirrored


def test_a_hung_page_does_not_hold_up_the_answer_to_an_unknown_tool(session: Session, demo: DemoServer) -> None:
    """A call to an unknown name (which first asks the page for its tools) is answered while the
    page's script spins, and so is a listing."""
    session.navigate(demo.url_for("webmcp.html")).raise_for_status()
    handle = session.serve_mcp()

    async def scenario() -> tuple[dict[str, types.Tool], types.CallToolResult]:
        async with agent(handle) as client:

            async def mirrored() -> bool:
                return "webmcp_add_to_cart" in {tool.name for tool in (await client.list_tools()).tools}

            # The page's tools are known before its script starts to spin (on a slow machine
            # their WebMCP event can come after the navigation's answer).
            await wait_until_async(mirrored, 30, message="the page's tools were never mirrored")
            session.evaluate("setTimeout(() => { while (true) {} }, 0)").raise_for_status()
            listed = await asyncio.wait_for(client.list_tools(), 60)
            unknown = await asyncio.wait_for(client.call_tool("webmcp_no_such_tool", {}), 60)
            return {tool.name: tool for tool in listed.tools}, unknown

    try:
        listed, unknown = asyncio.run(scenario())
    finally:
        session.call("browser_tabs", action="close").raise_for_status()  # frees the spinning renderer
    assert "browser_snapshot" in listed and "webmcp_add_to_cart" in listed  # what was known stays
    assert unknown.is_error is True and unknown.structured_content["error_type"] == "invalid_params"
