"""`webmcp-nb attach`: a stdio MCP server forwarding to a notebook's HTTP server.

Lists and calls go upstream unchanged (results included, so the client sees
exactly what an HTTP client sees); each call names the stdio client in `_meta`
so the notebook's call log shows who called. Upstream list changes are passed on.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.context import ServerRequestContext
from mcp.shared.subscriptions import PromptsListChanged, ResourcesListChanged, ToolsListChanged

from .server import CALLER_META_KEY, ChangeNotifier, new_server
from .wire import stdio_transport

_KINDS = {ToolsListChanged: "tools", ResourcesListChanged: "resources", PromptsListChanged: "prompts"}


def _client_name(ctx: ServerRequestContext[Any]) -> str:
    params = ctx.session.client_params
    return params.client_info.name if params is not None and params.client_info is not None else "stdio client"


async def _follow_changes(upstream: Client, notifier: ChangeNotifier) -> None:
    async with upstream.listen(tools_list_changed=True, resources_list_changed=True, prompts_list_changed=True) as sub:
        async for event in sub:
            kind = _KINDS.get(type(event))
            if kind is not None:
                await notifier.changed(kind)  # type: ignore[arg-type]


async def attach_stdio(url: str, token: str) -> None:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(120.0))
    async with Client(streamable_http_client(url, http_client=http), cache=None) as upstream:
        notifier: ChangeNotifier

        async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> Any:
            notifier.seen(ctx)
            return await upstream.list_tools(cursor=params.cursor if params else None)

        async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> Any:
            notifier.seen(ctx)
            meta: Any = {CALLER_META_KEY: _client_name(ctx)}
            return await upstream.session.call_tool(params.name, params.arguments, meta=meta)

        async def list_resources(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> Any:
            notifier.seen(ctx)
            return await upstream.list_resources(cursor=params.cursor if params else None)

        async def read_resource(ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams) -> Any:
            return await upstream.read_resource(str(params.uri))

        async def list_prompts(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> Any:
            notifier.seen(ctx)
            return await upstream.list_prompts(cursor=params.cursor if params else None)

        async def get_prompt(ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams) -> Any:
            return await upstream.get_prompt(params.name, params.arguments)

        server, notifier = new_server(
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            on_list_resources=list_resources,
            on_read_resource=read_resource,
            on_list_prompts=list_prompts,
            on_get_prompt=get_prompt,
        )
        follower = asyncio.create_task(_follow_changes(upstream, notifier))
        try:
            async with stdio_transport() as (read, write):
                await server.run(read, write, server.create_initialization_options())
        finally:
            follower.cancel()
            notifier.close()
