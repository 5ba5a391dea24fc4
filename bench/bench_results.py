"""Results benchmark: the demo's 2,000-row table snapshot over MCP against the same `Session` call.

Two sides, alternating call by call on one machine, each on its own browser with the table loaded:

- `Session.snapshot()` in this process (the notebook's own call);
- `browser_snapshot` over MCP: `webmcp-nb serve --transport http` (a process of its own, as a
  notebook kernel is to its agent) on loopback HTTP, driven by the official Python client at
  protocol 2026-07-28 (it validates the structured result against the output schema).

The MCP result carries the ~0.3-0.7 MB envelope twice (structured content and text) at the
default limit. Target: MCP / Session <= 1.15.

    python bench/bench_results.py [--rounds 15] [--write BENCHMARKS.md]
"""

from __future__ import annotations

import asyncio
import platform
import statistics
import time
from typing import Any

from bench_mcp import CHROMIUM, webmcp_server
from benchmarks_md import bench_parser, publish

from webmcp_nb import Session
from webmcp_nb.demo import DemoServer

BEGIN, END = "<!-- bench_results:begin -->", "<!-- bench_results:end -->"
TARGET = 1.15


def ms(seconds: float) -> float:
    return seconds * 1000


async def run(rounds: int) -> dict[str, Any]:
    with DemoServer() as demo, webmcp_server() as server, Session() as session:
        table = demo.url_for("table.html")
        session.navigate(table).raise_for_status()
        side = server.side()
        await side.client.__aenter__()
        try:
            await side.call("navigate", {"url": table})
            for _ in range(2):  # warm-up: first validations, caches
                await side.call("snapshot", {})
                await asyncio.to_thread(session.snapshot)
            times: dict[str, list[float]] = {"session": [], "mcp": []}
            sizes: dict[str, int] = {}
            for index in range(rounds):
                order = ["session", "mcp"] if index % 2 == 0 else ["mcp", "session"]
                for name in order:
                    started = time.perf_counter()
                    if name == "session":
                        envelope = await asyncio.to_thread(session.snapshot)
                        envelope.raise_for_status()
                        sizes["envelope"] = len(envelope.to_json_bytes())
                    else:
                        result = await side.call("snapshot", {})
                        sizes["mcp"] = len(result.model_dump_json(by_alias=True, exclude_none=True).encode())
                    times[name].append(ms(time.perf_counter() - started))
        finally:
            await side.client.__aexit__(None, None, None)
    return {"medians": {name: statistics.median(values) for name, values in times.items()}, "sizes": sizes}


def report(results: dict[str, Any], rounds: int) -> str:
    session_ms, mcp_ms = results["medians"]["session"], results["medians"]["mcp"]
    sizes = results["sizes"]
    return "\n".join(
        [
            BEGIN,
            (
                f"Results: the demo's 2,000-row table (`table.html`) as an accessibility snapshot, median of {rounds} calls "
                "per side, sides alternating (`python bench/bench_results.py`). `Session.snapshot()` in-process against "
                "`browser_snapshot` over MCP (`webmcp-nb serve --transport http`, its own process, loopback HTTP, the "
                f"official Python client at 2026-07-28, default result limit). The envelope is {sizes['envelope']:,} bytes "
                f"of JSON; the MCP result that carries it as structured content and text, {sizes['mcp']:,} bytes."
            ),
            (
                f"Machine: {platform.machine()}, {platform.python_version()}, Chromium at {CHROMIUM}, "
                f"run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}."
            ),
            "",
            "| side | snapshot (ms) | MCP / side | target |",
            "|---|---:|---:|---:|",
            f"| `Session.snapshot()` | {session_ms:.1f} | {mcp_ms / session_ms:.2f} | <= {TARGET} |",
            f"| over MCP | {mcp_ms:.1f} | 1.00 | |",
            END,
        ]
    )


def main() -> None:
    parser = bench_parser(__doc__, 15)
    options = parser.parse_args()
    section = report(asyncio.run(run(options.rounds)), options.rounds)
    publish(section, options.write, BEGIN, END)


if __name__ == "__main__":
    main()
