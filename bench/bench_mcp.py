"""MCP benchmark: the agent loop over MCP against raw Playwright and `@playwright/mcp`, in one run.

One loop is navigate -> snapshot -> click a button by its ref -> screenshot on the demo shop.
Three sides, alternating loop by loop on one machine:

- raw Playwright (async API, no protocol): the physical limit;
- webmcp_nb: `webmcp-nb serve --transport http` (a process of its own, as a notebook kernel is to
  its agent) on loopback HTTP, driven by the official Python client;
- `@playwright/mcp` over stdio (npm, `bench/peers`), driven by the same client.

Also the round trip of a no-op tool (`browser_health`) with that client and with a bare
keep-alive `http.client` connection (what the server and transport cost without a client
library), the latter also against the SDK's floor: a low-level server with one no-op tool on
the same transport settings, measured in alternating blocks with ours.

    python bench/bench_mcp.py [--rounds 40] [--write BENCHMARKS.md]
    python bench/bench_mcp.py --floor-server   (the floor server alone)
"""

from __future__ import annotations

import asyncio
import http.client
import json
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2
from benchmarks_md import bench_parser, publish
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from playwright.async_api import async_playwright

from webmcp_nb.core.backends.chromium import LAUNCH_ARGS
from webmcp_nb.demo import DemoServer

CHROMIUM = "/usr/bin/chromium"
PEERS = Path(__file__).parent / "peers"
PLAYWRIGHT_MCP = PEERS / "node_modules" / "@playwright" / "mcp" / "cli.js"
CHROME_DEVTOOLS_MCP = (
    PEERS / "node_modules" / "chrome-devtools-mcp" / "build" / "src" / "bin" / "chrome-devtools-mcp.js"
)
BEGIN, END = "<!-- bench_mcp:begin -->", "<!-- bench_mcp:end -->"
REF = re.compile(r'button "Add Banana" \[ref=(\w+)\]')


def ms(seconds: float) -> float:
    return seconds * 1000


def ensure_peers() -> None:
    if not (PLAYWRIGHT_MCP.exists() and CHROME_DEVTOOLS_MCP.exists()):
        subprocess.run([shutil.which("npm") or "npm", "ci", "--no-audit", "--no-fund"], cwd=PEERS, check=True)


def text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


class RawSide:
    name = "raw Playwright"

    async def start(self, shop: str) -> None:
        self.playwright = await async_playwright().start()
        self.browser = await self.playwright.chromium.launch(executable_path=CHROMIUM, args=list(LAUNCH_ARGS))
        self.page = await (await self.browser.new_context(viewport={"width": 1280, "height": 720})).new_page()
        self.shop = shop

    async def loop(self) -> None:
        await self.page.goto(self.shop)
        snapshot = await self.page.aria_snapshot(mode="ai")
        await self.page.locator(f"aria-ref={REF.search(snapshot).group(1)}").click()  # type: ignore[union-attr]
        await self.page.screenshot()

    async def stop(self) -> None:
        await self.browser.close()
        await self.playwright.stop()


class McpSide:
    """An MCP server driven by the official Python client, one loop = four tool calls."""

    def __init__(self, name: str, client: Client, tools: dict[str, str]) -> None:
        self.name, self.client, self.tools = name, client, tools

    async def start(self, shop: str) -> None:
        self.shop = shop
        await self.client.__aenter__()

    async def call(self, tool: str, args: dict[str, Any]) -> Any:
        result = await self.client.call_tool(self.tools[tool], args)
        assert not result.is_error, (tool, text(result)[:500])
        return result

    async def loop(self) -> None:
        await self.call("navigate", {"url": self.shop})
        snapshot = text(await self.call("snapshot", {}))
        ref = REF.search(snapshot).group(1)  # type: ignore[union-attr]
        await self.call("click", {"ref": ref} if self.name == "webmcp_nb" else {"target": ref, "element": "Add Banana"})
        await self.call("screenshot", {})

    async def stop(self) -> None:
        await self.client.__aexit__(None, None, None)


class HttpServer:
    """An MCP server in a process of its own that prints `MCP server: <url>` when ready."""

    TOKEN = "bench-token"

    def __init__(self, *arguments: str) -> None:
        self.command = [sys.executable, *arguments]

    def __enter__(self) -> HttpServer:
        self.process = subprocess.Popen(self.command, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        for line in self.process.stdout:
            found = re.search(r"MCP server: (\S+)", line)
            if found:
                self.url = found.group(1)
                return self
        raise RuntimeError(f"{' '.join(self.command)} did not start")

    def __exit__(self, *exc_info: object) -> None:
        self.process.terminate()
        self.process.wait(30)

    def side(self) -> McpSide:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {self.TOKEN}"}, timeout=60)
        client = Client(streamable_http_client(self.url, http_client=http))
        tools = {
            "navigate": "browser_navigate",
            "snapshot": "browser_snapshot",
            "click": "browser_click",
            "screenshot": "browser_screenshot",
        }
        return McpSide("webmcp_nb", client, tools)


def webmcp_server() -> HttpServer:
    """`webmcp-nb serve --transport http`, as a notebook kernel is to its agent."""
    return HttpServer("-m", "webmcp_nb.cli", "serve", "--transport", "http", "--token", HttpServer.TOKEN)


def floor_server() -> HttpServer:
    """The SDK's floor: a low-level server with one no-op tool on the same transport settings."""
    return HttpServer(__file__, "--floor-server")


def serve_floor() -> None:
    import mcp_types as types
    import uvicorn
    from mcp.server import Server

    from webmcp_nb.mcp.streamable_http import MCP_PATH, BearerToken, bind

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name="browser_health", input_schema={"type": "object"})])

    async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text="ok")])

    async def main() -> None:
        server = Server("floor", on_list_tools=list_tools, on_call_tool=call_tool)
        app = server.streamable_http_app(streamable_http_path=MCP_PATH, json_response=True, host="127.0.0.1")
        sock = bind("127.0.0.1", 0)
        config = uvicorn.Config(
            BearerToken(app, HttpServer.TOKEN), log_config=None, access_log=False, proxy_headers=False, lifespan="on"
        )
        print(f"MCP server: http://127.0.0.1:{sock.getsockname()[1]}{MCP_PATH}", flush=True)
        await uvicorn.Server(config).serve(sockets=[sock])

    asyncio.run(main())


def playwright_mcp_side() -> McpSide:
    params = StdioServerParameters(
        command="node",
        args=[
            str(PLAYWRIGHT_MCP),
            "--headless",
            "--isolated",
            "--no-sandbox",
            "--executable-path",
            CHROMIUM,
            "--viewport-size",
            "1280x720",
            "--output-dir",
            tempfile.mkdtemp(prefix="playwright-mcp-"),
        ],
    )
    tools = {
        "navigate": "browser_navigate",
        "snapshot": "browser_snapshot",
        "click": "browser_click",
        "screenshot": "browser_take_screenshot",
    }
    return McpSide("@playwright/mcp", Client(params), tools)


async def client_round_trip(client: Client, n: int) -> float:
    """Median ms of `browser_health` through the official Python client."""
    times = []
    for _ in range(n):
        started = time.perf_counter()
        await client.call_tool("browser_health", {})
        times.append(ms(time.perf_counter() - started))
    return statistics.median(times)


class BareConnection:
    """A keep-alive `http.client` connection speaking MCP by hand: what a server and its
    transport cost without a client library."""

    def __init__(self, server: HttpServer) -> None:
        self.url = urlsplit(server.url)
        self.connection = http.client.HTTPConnection(self.url.hostname, self.url.port)
        self.headers = {
            "Authorization": f"Bearer {server.TOKEN}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
        response = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
        self.headers |= {
            "mcp-session-id": response.getheader("mcp-session-id") or "",
            "mcp-protocol-version": "2025-11-25",
        }
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.calls = 0

    def post(self, body: dict[str, Any]) -> http.client.HTTPResponse:
        self.connection.request("POST", self.url.path, json.dumps(body), self.headers)
        response = self.connection.getresponse()
        response.read()
        return response

    def health(self) -> float:
        """One `browser_health` round trip, in ms."""
        self.calls += 1
        call = {
            "jsonrpc": "2.0",
            "id": self.calls,
            "method": "tools/call",
            "params": {"name": "browser_health", "arguments": {}},
        }
        started = time.perf_counter()
        assert self.post(call).status == 200
        return ms(time.perf_counter() - started)


def bare_round_trips(ours: HttpServer, floor: HttpServer, blocks: int = 20, per_block: int = 25) -> tuple[float, float]:
    """Median ms of a bare `browser_health` round trip against webmcp_nb and against the SDK's
    floor, in alternating blocks so that both see the same moments of a noisy machine."""
    connections = BareConnection(ours), BareConnection(floor)
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(blocks):
        for connection, series in zip(connections, times, strict=False):
            series.extend(connection.health() for _ in range(per_block))
    for connection in connections:
        connection.connection.close()
    return statistics.median(times[0]), statistics.median(times[1])


async def run(rounds: int) -> dict[str, Any]:
    with DemoServer() as demo, webmcp_server() as server, floor_server() as floor:
        shop = demo.url_for("index.html")
        ours = server.side()
        sides = [RawSide(), ours, playwright_mcp_side()]
        started: list[Any] = []
        try:
            for side in sides:
                await side.start(shop)
                started.append(side)
                for _ in range(3):  # warm-up: launch, first validations, caches
                    await side.loop()
            return await measure(sides, ours, server, floor, rounds)
        finally:
            for side in reversed(started):
                await side.stop()


async def measure(
    sides: list[Any], ours: McpSide, server: HttpServer, floor: HttpServer, rounds: int
) -> dict[str, Any]:
    times: dict[str, list[float]] = {side.name: [] for side in sides}
    for index in range(rounds):
        for side in sides[index % 3 :] + sides[: index % 3]:
            started = time.perf_counter()
            await side.loop()
            times[side.name].append(ms(time.perf_counter() - started))
    return {
        "loops": {name: statistics.median(values) for name, values in times.items()},
        "client": await client_round_trip(ours.client, 300),
        "bare": await asyncio.to_thread(bare_round_trips, server, floor),
    }


def report(results: dict[str, Any], rounds: int) -> str:
    loops = results["loops"]
    raw, ours, peer = loops["raw Playwright"], loops["webmcp_nb"], loops["@playwright/mcp"]
    bare_ms, floor_ms = results["bare"]
    return "\n".join(
        [
            BEGIN,
            (
                f"MCP: one agent loop (navigate, snapshot, click by ref, screenshot on the demo shop), median of "
                f"{rounds} loops per side, sides alternating (`python bench/bench_mcp.py`). webmcp_nb serves "
                "`webmcp-nb serve --transport http` (its own process) on loopback HTTP; `@playwright/mcp` 0.0.83 runs "
                "over stdio with the same "
                "Chromium; both are driven by the official Python client (`mcp` 2.x)."
            ),
            (
                f"Machine: {platform.machine()}, {platform.python_version()}, Chromium at {CHROMIUM}, "
                f"run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}."
            ),
            "",
            "| side | loop (ms) | webmcp_nb / side | target |",
            "|---|---:|---:|---:|",
            f"| raw Playwright | {raw:.1f} | {ours / raw:.2f} | <= 1.5 |",
            f"| webmcp_nb over MCP | {ours:.1f} | 1.00 | |",
            f"| @playwright/mcp | {peer:.1f} | {ours / peer:.2f} | <= 0.35 |",
            "",
            "| no-op tool (`browser_health`) round trip | ms | target |",
            "|---|---:|---:|",
            f"| bare keep-alive `http.client` connection | {bare_ms:.2f} | <= 3 |",
            f"| the same against the SDK's floor (a no-op low-level server, same transport) | {floor_ms:.2f} | |",
            f"| the official Python client | {results['client']:.2f} | |",
            END,
        ]
    )


def main() -> None:
    parser = bench_parser(__doc__, 40)
    parser.add_argument("--floor-server", action="store_true", help="run the SDK floor server and nothing else")
    options = parser.parse_args()
    if options.floor_server:
        serve_floor()
        return
    ensure_peers()
    section = report(asyncio.run(run(options.rounds)), options.rounds)
    publish(section, options.write, BEGIN, END)


if __name__ == "__main__":
    main()
