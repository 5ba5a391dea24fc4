"""webmcp_nb beside `nest_asyncio.apply()` in a real kernel.

Many notebooks patch the kernel's loop with nest_asyncio. webmcp_nb does not need it (its
browser lives on a runtime thread), but must keep working beside it: magics, blocking and
awaited calls, the panel, the MCP server, and cells sent back to back without waiting.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import httpx2
import mcp_types as types
import pytest
from jupyter_client.manager import start_new_kernel
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from webmcp_nb.core.render.renderer import ENVELOPE_MIME
from webmcp_nb.demo import DemoServer

from .conftest import Kernel
from .helpers import FULL_CELLS

pytestmark = pytest.mark.browser  # every test runs a kernel that drives a Chromium

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


@pytest.fixture
def kernel(demo: DemoServer) -> Iterator[Kernel]:
    manager, client = start_new_kernel(kernel_name="python3", extra_arguments=FULL_CELLS)
    kernel = Kernel(manager, client)
    outputs = kernel.run(
        "import nest_asyncio, asyncio\nnest_asyncio.apply()\nprint(type(asyncio.get_event_loop()).__module__)"
    )
    assert not [o for o in outputs if o["type"] == "error"], outputs
    kernel.run(f"%load_ext webmcp_nb\nimport json, webmcp_nb\nnb = webmcp_nb.session()\nDEMO = {demo.url!r}")
    yield kernel
    client.stop_channels()
    if manager.is_alive():
        manager.shutdown_kernel(now=False)


def results(outputs: list[dict]) -> list[dict]:
    errors = [o for o in outputs if o["type"] == "error"]
    assert not errors, errors
    return [o for o in outputs if o["type"] == "execute_result"]


def test_magics_calls_and_awaits_work_after_nest_asyncio(kernel: Kernel) -> None:
    assert kernel.value("print(json.dumps(getattr(asyncio, '_nest_patched', False)))") is True
    [navigated] = results(kernel.run("%browser navigate {DEMO}"))
    assert navigated["data"][ENVELOPE_MIME]["data"]["title"] == "Demo Shop"
    assert kernel.value("print(json.dumps(nb.snapshot().ok))") is True
    assert kernel.value(
        "env = await nb.acall('browser_snapshot')\nprint(json.dumps('Add Banana' in env.data['snapshot']))"
    )
    [panel] = [o for o in kernel.run("nb.panel()") if o["type"] in ("execute_result", "display_data")]
    assert WIDGET_MIME in panel["data"]


def test_the_panel_drives_and_follows_the_browser(kernel: Kernel, demo: DemoServer) -> None:
    """The panel's URL bar sends a call from the kernel thread (answered on the runtime thread),
    its live view receives frames, and it follows a blocking call made in a later cell."""
    evidence = demo.url_for("evidence.html")
    kernel.run("p = nb.panel()\ndisplay(p)\nnb.navigate(DEMO).raise_for_status()")
    kernel.run(f"p.url.value = {evidence!r}")  # what typing a URL and pressing Enter does
    wait = (
        "import time\n"
        "deadline = time.monotonic() + 60\n"
        "def by_panel():\n"
        "    return [r for r in nb.history if r.caller == 'panel' and r.tool == 'browser_navigate']\n"
        "while time.monotonic() < deadline and not (by_panel() and p.live.frames_shown):\n"
        "    time.sleep(0.05)\n"
        "print(json.dumps([[r.envelope.status, r.args['url']] for r in by_panel()] + [p.live.frames_shown > 0]))"
    )
    assert kernel.value(wait) == [["success", evidence], True]
    assert kernel.value("nb.navigate(DEMO).raise_for_status()\nprint(json.dumps(p.url.value))") == demo.url


def test_cells_sent_back_to_back_all_run_in_order(kernel: Kernel) -> None:
    kernel.run("order = []")
    codes = [
        "order.append(1); nb.navigate(DEMO).raise_for_status()",
        "order.append(2); (await nb.acall('browser_snapshot')).raise_for_status()",
        "order.append(3)\n%browser snapshot",
        "order.append(4); nb.call('browser_tabs', action='list').raise_for_status()",
        "order.append(5)",
    ]
    ids = [kernel.client.execute(code) for code in codes]  # no waiting in between
    replies = {}
    while not set(ids) <= set(replies):  # earlier cells' replies may still be queued
        reply = kernel.client.get_shell_msg(timeout=120)
        replies[reply["parent_header"]["msg_id"]] = reply["content"]
    assert [replies[msg_id]["status"] for msg_id in ids] == ["ok"] * 5
    counts = [replies[msg_id]["execution_count"] for msg_id in ids]
    assert counts == sorted(counts) and len(set(counts)) == 5
    assert kernel.value("print(json.dumps(order))") == [1, 2, 3, 4, 5]


def test_the_mcp_server_answers_agents_beside_nest_asyncio(kernel: Kernel, demo: DemoServer) -> None:
    outputs = kernel.run(
        "server = nb.serve_mcp(approve='none')\nnb.navigate(DEMO)\nprint(json.dumps([server.url, server.token]))"
    )
    url, token = json.loads("".join(o["text"] for o in outputs if o["type"] == "stream").splitlines()[-1])

    async def agent() -> types.CallToolResult:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
        async with Client(streamable_http_client(url, http_client=http)) as client:
            return await client.call_tool("browser_snapshot", {})

    result = asyncio.run(agent())
    assert result.is_error is False
    assert "Add Banana" in result.structured_content["data"]["snapshot"]
    # While a cell runs (and waits for it), the server answers: it does not need the kernel's loop.
    busy = kernel.start(
        "print('waiting')\nimport time\ndeadline = time.monotonic() + 60\n"
        "while time.monotonic() < deadline and sum(r.caller.startswith('agent:') for r in nb.history) < 2:\n"
        "    time.sleep(0.05)\n"
        "print(json.dumps(sum(r.caller.startswith('agent:') for r in nb.history)))"
    )
    assert asyncio.run(agent()).is_error is False
    printed = "".join(o["text"] for o in kernel.finish(busy) if o["type"] == "stream")
    assert printed.splitlines()[-1] == "2"
    callers = kernel.value("print(json.dumps([r.caller for r in nb.history][-1:]))")
    assert callers[0].startswith("agent:")
    kernel.run("server.stop()")
