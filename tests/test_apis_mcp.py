"""An API's operations as MCP tools: behind the `api` grant or `api:NAME`, listed once loaded
(list_changed on load and close), called by the official Python client in both protocol eras."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.subscriptions import ToolsListChanged

from webmcp_nb import Session
from webmcp_nb.core.guard.grants import Grant
from webmcp_nb.demo import DemoServer

ERAS = ("auto", "legacy")
AGENT = types.Implementation(name="api-agent", version="1.0")


@pytest.fixture(scope="module")
def served(demo: DemoServer) -> Iterator[tuple[Session, Any]]:
    with Session() as s:
        handle = s.serve_mcp(caps=["api:shop"], approve="none")
        yield s, handle


def client(handle: Any, mode: str, **options: Any) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {handle.token}"}, timeout=60)
    return Client(streamable_http_client(handle.url, http_client=http), mode=mode, client_info=AGENT, **options)


def test_the_api_cap_is_a_grant() -> None:
    assert Grant.build(["api:shop"]).caps[-1] == "api:shop"
    with pytest.raises(ValueError, match="unknown capability api:bad-name"):
        Grant.build(["api:bad-name"])


@pytest.mark.parametrize("mode", ERAS)
def test_api_tools_appear_on_load_and_go_on_close(served: tuple[Session, Any], demo: DemoServer, mode: str) -> None:
    s, handle = served

    async def scenario() -> tuple[list[str], list[str], Any, Any, list[str], int]:
        changes: asyncio.Queue[Any] = asyncio.Queue()

        async def on_message(message: Any) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                await changes.put(message)

        async with client(handle, mode, message_handler=on_message) as agent:
            if mode == "auto":  # the 2026 era: a subscription
                async with agent.listen(tools_list_changed=True) as subscription:
                    events = subscription.__aiter__()

                    async def changed() -> None:
                        assert isinstance(await asyncio.wait_for(events.__anext__(), 10), ToolsListChanged)

                    return await steps(agent, changed)
            await agent.list_tools()
            await asyncio.sleep(0.3)  # the legacy era's standalone stream opens

            async def notified() -> None:
                await asyncio.wait_for(changes.get(), 10)
                await asyncio.sleep(0.2)
                assert changes.empty()  # one notification per load or close, not one per operation

            return await steps(agent, notified)

    async def steps(agent: Client, changed: Any) -> tuple[list[str], list[str], Any, Any, list[str], int]:
        before = [tool.name for tool in (await agent.list_tools(cache_mode="bypass")).tools]
        shop = await asyncio.to_thread(
            s.api, demo.url_for("openapi.json"), name="shop", base_url=demo.url, auth="tok-mcp-api28"
        )
        await changed()
        other = await asyncio.to_thread(s.api, demo.url_for("openapi.json"), name="other", base_url=demo.url)
        await changed()
        tools = (await agent.list_tools(cache_mode="bypass")).tools
        listed = [tool.name for tool in tools]
        read = await agent.call_tool("shop_listItems", {"limit": 2})
        created = await agent.call_tool("shop_createKey", {"body": {"label": "agent"}})
        await asyncio.to_thread(shop.close)
        await changed()
        await asyncio.to_thread(other.close)
        await changed()
        after = [tool.name for tool in (await agent.list_tools(cache_mode="bypass")).tools]
        schema = next(tool for tool in tools if tool.name == "shop_listItems").input_schema
        return before, listed, read, created, after, len(json.dumps(schema))

    before, listed, read, created, after, schema_bytes = asyncio.run(scenario())
    assert not any(name.startswith(("shop_", "other_")) for name in before)
    assert "shop_listItems" in listed and "shop_createKey" in listed
    assert not any(name.startswith("other_") for name in listed)  # api:shop grants that API only
    assert not any(name.startswith("shop_") for name in after)
    assert schema_bytes < 2_000
    data = read.structured_content["data"]  # type: ignore[index]
    assert read.is_error is False and data["value"][0]["name"] == "Apple" and data["http"]["status"] == 200
    made = created.structured_content["data"]  # type: ignore[index]
    assert made["value"]["key"] == "[blocked]" and "key" in made["show_once"]
    assert "tok-mcp-api28" not in json.dumps([read.structured_content, created.structured_content])


def test_a_large_api_is_three_tools(served: tuple[Session, Any], demo: DemoServer) -> None:
    s, handle = served
    big = s.api(demo.url_for("openapi.json"), name="shop", base_url=demo.url, max_tools=3)
    try:
        assert [spec.name for spec in big.tools] == ["shop_search", "shop_describe", "shop_call"]
        assert ok_data(big.call("listItems", limit=1))["value"][0]["name"] == "Apple"  # Python goes through shop_call

        async def scenario() -> tuple[list[str], Any, Any, Any, Any]:
            async with client(handle, "auto") as agent:
                names = [tool.name for tool in (await agent.list_tools(cache_mode="bypass")).tools]
                found = await agent.call_tool("shop_search", {"query": "counter"})
                described = await agent.call_tool("shop_describe", {"operation": "bumpCounter"})
                called = await agent.call_tool("shop_call", {"operation": "listItems", "args": {"limit": 1}})
                bad = await agent.call_tool("shop_call", {"operation": "nope"})
                return names, found, described, called, bad

        names, found, described, called, bad = asyncio.run(scenario())
    finally:
        big.close()
    assert [name for name in names if name.startswith("shop_")] == ["shop_search", "shop_describe", "shop_call"]
    assert [row["name"] for row in data_of(found)["operations"]] == ["getCounter", "bumpCounter"]
    schema = data_of(described)["input_schema"]
    assert {"key", "delay_ms", "body", "preview"} <= set(schema["properties"])
    assert data_of(called)["value"][0]["name"] == "Apple"
    assert bad.is_error is True and "has no operation 'nope'" in bad.structured_content["message"]  # type: ignore[index]


def data_of(result: types.CallToolResult) -> dict[str, Any]:
    assert result.is_error is False, result.structured_content
    return result.structured_content["data"]  # type: ignore[index,no-any-return]


def ok_data(envelope: Any) -> dict[str, Any]:
    assert envelope.ok, envelope.message
    return envelope.data  # type: ignore[no-any-return]
