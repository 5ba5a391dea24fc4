"""Under approval, the notebook's approval panel shows an API operation's exact request (secret headers
redacted), in a real kernel with an MCP agent attached; the request approved is the request sent."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import httpx2
import mcp_types as types
from jupyter_client.manager import start_new_kernel
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.helpers import Kernel
from webmcp_nb.demo import DemoServer

TOKEN = "tok-apipage-approval"
AGENT = types.Implementation(name="approval-agent", version="1.0")


async def agent_call(url: str, token: str, tool: str, args: dict[str, Any]) -> types.CallToolResult:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120)
    async with Client(streamable_http_client(url, http_client=http), client_info=AGENT) as agent:
        return await agent.call_tool(tool, args)


def test_the_approval_panel_shows_the_request_an_operation_would_send(demo: DemoServer) -> None:
    manager, client = start_new_kernel(kernel_name="python3")
    kernel = Kernel(manager, client)
    try:
        kernel.run(
            "import json, webmcp_nb\nnb = webmcp_nb.session()\n"
            f"shop = nb.api({demo.url_for('openapi.json')!r}, name='shop', base_url={demo.url!r}, auth={TOKEN!r})\n"
            "server = nb.serve_mcp(caps=['api:shop'])"  # approves consequential calls in its panel
        )
        url, token = kernel.value("print(json.dumps([server.url, server.token]))")
        answers: list[types.CallToolResult] = []
        agent = threading.Thread(
            target=lambda: answers.append(
                asyncio.run(agent_call(url, token, "shop_createKey", {"body": {"label": "from-agent"}}))
            )
        )
        agent.start()
        preview, row = kernel.value(
            "pending = server.approvals.next_request(timeout_s=60)\n"
            "print(json.dumps([pending.request.preview, pending.row.children[0].value]))"
        )
        kernel.run("pending.approve()")
        agent.join(60)
        denying = threading.Thread(
            target=lambda: answers.append(
                asyncio.run(agent_call(url, token, "shop_bumpCounter", {"key": "approval", "body": {}}))
            )
        )
        denying.start()
        denied = kernel.value(
            "pending = server.approvals.next_request(timeout_s=60)\nprint(json.dumps(pending.request.preview))"
        )
        kernel.run("pending.deny()")
        denying.join(60)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    key = preview["headers"]["Idempotency-Key"]
    assert preview == {
        "method": "POST",
        "url": demo.url_for("api/keys"),
        "headers": {"Content-Type": "application/json", "Idempotency-Key": key, "Authorization": "[redacted]"},
        "body": {"label": "from-agent"},
    }
    assert f"POST {demo.url_for('api/keys')}\nContent-Type: application/json\nIdempotency-Key: {key}" in row
    assert "Authorization: [redacted]" in row and "&quot;label&quot;: &quot;from-agent&quot;" in row
    assert TOKEN not in row
    created, bumped = answers
    data = created.structured_content["data"]  # type: ignore[index]
    assert created.is_error is False and data["idempotency_key"] == key  # approved: exactly that request went
    assert data["value"]["idempotency_key"] == key and data["value"]["key"] == "[blocked]"
    assert denied["url"] == demo.url_for("api/counter?key=approval")
    assert bumped.is_error is True
    assert bumped.structured_content["error_type"] == "approval_denied"  # type: ignore[index]
