"""Tool-list benchmark: the bytes of `tools/list` for webmcp_nb and its two peers, in one run.

Each server runs as its own process over stdio and the official Python client lists its tools;
the size is that of the `tools` array's wire JSON (`webmcp_nb.mcp.schemas.tool_list_bytes`:
compact, camelCase, no nulls), whole, and without output schemas plus the server's instructions
(what a model reads; the peers send no instructions).

- webmcp_nb: `webmcp-nb serve --transport stdio`, default grants and every grant (`--caps` all),
  each also as a host that renders MCP Apps gets it (its client advertises the UI extension: the
  app-only tools and `_meta`, which `read` leaves out as such a host keeps them from its model);
- `@playwright/mcp` 0.0.83 (npm, `bench/peers`): default options, and every cap;
- `chrome-devtools-mcp` 1.11.0 (npm, `bench/peers`) on the same Chromium, default options.

Bytes are deterministic, so one round is enough (`--rounds` is accepted and ignored).

    python bench/bench_tool_list.py [--write BENCHMARKS.md]
"""

from __future__ import annotations

import asyncio
import os
import platform
import sys
import tempfile
import time
from typing import Any

from bench_mcp import CHROME_DEVTOOLS_MCP, CHROMIUM, PLAYWRIGHT_MCP, ensure_peers
from benchmarks_md import bench_parser, publish
from mcp import Client, StdioServerParameters
from mcp.client.extension import advertise

from webmcp_nb.core.guard.grants import CAPS
from webmcp_nb.mcp.app import APP_MIME_TYPE, UI_EXTENSION
from webmcp_nb.mcp.schemas import PEER_TOOL_LIST_BYTES, TOOL_LIST_BUDGET, TOOL_LIST_TARGET, tool_list_bytes

BEGIN, END = "<!-- bench_tool_list:begin -->", "<!-- bench_tool_list:end -->"
PLAYWRIGHT_CAPS = "vision,pdf,testing,tracing,network,storage,devtools"


def ours(caps: list[str]) -> StdioServerParameters:
    extra = ["--caps", *caps] if caps else []
    # This process's environment (its PYTHONPATH: the webmcp_nb being measured), not the client's default.
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "webmcp_nb.cli", "serve", "--transport", "stdio", *extra],
        env=dict(os.environ),
    )


def playwright_mcp(*extra: str) -> StdioServerParameters:
    args = [str(PLAYWRIGHT_MCP), "--headless", "--isolated", "--no-sandbox", "--executable-path", CHROMIUM]
    return StdioServerParameters(
        command="node", args=[*args, "--output-dir", tempfile.mkdtemp(prefix="playwright-mcp-"), *extra]
    )


def chrome_devtools_mcp() -> StdioServerParameters:
    args = ["--headless", "--isolated", "--executablePath", CHROMIUM, "--no-usage-statistics"]
    return StdioServerParameters(command="node", args=[str(CHROME_DEVTOOLS_MCP), *args, "--chromeArg=--no-sandbox"])


SERVERS: dict[str, tuple[str, StdioServerParameters]] = {
    "ours_default": ("webmcp_nb, default grants", ours([])),
    "ours_every_grant": (f"webmcp_nb, every grant (`--caps {' '.join(CAPS)}`)", ours(list(CAPS))),
    "ours_default_app": ("webmcp_nb, default grants, a host rendering the MCP App", ours([])),
    "ours_every_grant_app": ("webmcp_nb, every grant, a host rendering the MCP App", ours(list(CAPS))),
    "playwright_default": ("`@playwright/mcp` 0.0.83, default", playwright_mcp()),
    "playwright_every_cap": (
        f"`@playwright/mcp` 0.0.83, `--caps {PLAYWRIGHT_CAPS}`",
        playwright_mcp("--caps", PLAYWRIGHT_CAPS),
    ),
    "chrome_devtools": ("`chrome-devtools-mcp` 1.11.0, default", chrome_devtools_mcp()),
}


APP_HOSTS = {"ours_default_app", "ours_every_grant_app"}
"""The listings of a client that advertises the MCP Apps UI extension."""


async def measure(params: StdioServerParameters, app: bool = False) -> dict[str, int]:
    extensions = [advertise(UI_EXTENSION, {"mimeTypes": [APP_MIME_TYPE]})] if app else None
    async with Client(params, extensions=extensions) as client:
        tools, instructions = (await client.list_tools()).tools, client.instructions
    wire = (tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools)
    return tool_list_bytes(wire, instructions)


async def run() -> dict[str, dict[str, int]]:
    return {key: await measure(params, key in APP_HOSTS) for key, (_, params) in SERVERS.items()}


def report(sizes: dict[str, dict[str, int]]) -> str:
    peer = {"default": sizes["playwright_default"], "every_grant": sizes["playwright_every_cap"]}
    rows = []
    for key, (label, _) in SERVERS.items():
        size = sizes[key]
        rows.append(
            f"| {label} | {size['tools']} | {size['whole']:,} | {size['read_tools']:,} | {size['instructions']:,} "
            f"| {size['read']:,} | {size['input']:,} | {size['output']:,} |"
        )
    checks = []
    for (grant, part), target in TOOL_LIST_TARGET.items():
        for host in ("", "_app"):
            mine = sizes[f"ours_{grant}{host}"][part]
            ratio = mine / peer[grant][part]
            held = TOOL_LIST_BUDGET[(grant, part)]
            verdict = "met" if ratio <= target else "not met"
            label = f"{grant.replace('_', ' ')}, {part}{', app host' if host else ''}"
            checks.append(f"| {label} | {ratio:.2f} | <= {target:g} ({verdict}) | {held:g} |")
    recorded = ", ".join(f"{grant}: {value:,}" for grant, value in PEER_TOOL_LIST_BYTES.items())
    told = "; ".join(
        f"{grant.replace('_', ' ')} {sizes[f'ours_{grant}']['whole'] + sizes[f'ours_{grant}']['instructions']:,} "
        f"({(sizes[f'ours_{grant}']['whole'] + sizes[f'ours_{grant}']['instructions']) / peer[grant]['whole']:.2f}x)"
        for grant in peer
    )
    return "\n".join(
        [
            BEGIN,
            (
                "Tool list: the bytes of `tools/list` (`whole`: the `tools` array as compact wire JSON), and what a "
                "model reads of it (`read`: the array without `outputSchema`, plus the server's instructions, where "
                "our shared wording lives), each server its own process over stdio, listed by the official Python "
                "client (`python bench/bench_tool_list.py`). Bytes are deterministic: one run, no noise."
            ),
            (
                f"Machine: {platform.machine()}, {platform.python_version()}, Chromium at {CHROMIUM}, "
                f"run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}."
            ),
            "",
            "| server | tools | whole | without output schemas | instructions | read | input schemas | output schemas |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
            *rows,
            "",
            "| webmcp_nb / `@playwright/mcp` (same grant) | ratio | issue 22's target | ceiling the tests hold |",
            "|---|---:|---:|---:|",
            *checks,
            "",
            f"Counting our instructions in `whole` too: {told}.",
            "",
            (
                f"The tests hold the ceilings against the peer sizes recorded in `webmcp_nb.mcp.schemas` ({recorded} "
                "bytes); this run measured "
                f"{peer['default']['whole']:,} and {peer['every_grant']['whole']:,}."
            ),
            END,
        ]
    )


def main() -> None:
    options = bench_parser(__doc__, 1).parse_args()
    ensure_peers()
    sizes: dict[str, Any] = asyncio.run(run())
    publish(report(sizes), options.write, BEGIN, END)


if __name__ == "__main__":
    main()
