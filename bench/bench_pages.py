"""Pages benchmark: a big form page, a stuck tab and notebook cells, in one run.

1. A generated page of 2,000 table rows, each a link, a button and a filled text field (every
   200th field a password or one-time-code field holding a value): its accessibility snapshot,
   four sides alternating call by call, each on its own browser: raw Playwright's
   ``aria_snapshot(mode="ai")``, `Session.snapshot()`, ``browser_snapshot`` over MCP
   (``webmcp-nb serve --transport http``, the official Python client) and `@playwright/mcp`'s
   ``browser_snapshot`` over stdio (same client, same Chromium). Targets: Session / raw <= 1.15,
   ours over MCP / `@playwright/mcp` <= 1.1.
2. A stuck tab: ``browser_tabs`` (list), ``browser_health`` and a snapshot of another tab, before
   and while one tab runs ``while (true) {}`` (after a call on it timed out). Target: within 50 ms
   of their time before.
3. Notebook cells: the mime bundle of real envelopes against their text form (`render_text`; plus
   the image as base64 for a screenshot). Target: <= 1.5. Its bytes are deterministic, so it can
   be written alone, into its own markers inside the section.

    python bench/bench_pages.py [--rounds 9] [--write BENCHMARKS.md]
    python bench/bench_pages.py --only snapshots   # one part, printed (not written)
    python bench/bench_pages.py --only cells --write BENCHMARKS.md   # the cells' table alone
"""

from __future__ import annotations

import asyncio
import base64
import http.server
import json
import platform
import re
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from bench_mcp import CHROMIUM, RawSide, ensure_peers, playwright_mcp_side, webmcp_server
from benchmarks_md import bench_parser, publish

from webmcp_nb import Envelope, Session
from webmcp_nb.core.render.renderer import mimebundle, render_text
from webmcp_nb.demo import DemoServer

BEGIN, END = "<!-- bench_pages:begin -->", "<!-- bench_pages:end -->"
CELLS_BEGIN, CELLS_END = "<!-- bench_pages:cells:begin -->", "<!-- bench_pages:cells:end -->"
ROWS = 2000
HANG = "setTimeout(() => { while (true) {} }, 50); 'hanging'"


def form_page(rows: int) -> bytes:
    cells = []
    for row in range(rows):
        kind = row // 200 % 2 if row % 200 == 100 else None
        attributes = {None: "", 0: 'type="password"', 1: 'autocomplete="one-time-code"'}[kind]
        cells.append(
            f'<tr><td><a href="#r{row}">Row {row}</a></td><td><button>Edit {row}</button></td>'
            f'<td><input {attributes} aria-label="Note {row}" value="value {row}"></td></tr>'
        )
    return f"<!doctype html><title>Form of {rows} rows</title><table>{''.join(cells)}</table>".encode()


@contextmanager
def form_server(rows: int) -> Iterator[str]:
    body = form_page(rows)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/form.html"
    finally:
        server.shutdown()


def ms(seconds: float) -> float:
    return seconds * 1000


async def snapshots(rounds: int) -> dict[str, Any]:
    with form_server(ROWS) as url, webmcp_server() as server, Session() as session:
        raw = RawSide()
        await raw.start(url)
        await raw.page.goto(url)
        session.navigate(url).raise_for_status()
        ours, peer = server.side(), playwright_mcp_side()
        for side in (ours, peer):
            await side.client.__aenter__()
            await side.call("navigate", {"url": url})
        try:

            async def session_snapshot() -> None:
                (await asyncio.to_thread(session.snapshot)).raise_for_status()

            sides: dict[str, Callable[[], Any]] = {
                "raw": lambda: raw.page.aria_snapshot(mode="ai"),
                "session": session_snapshot,
                "mcp": lambda: ours.call("snapshot", {}),
                "peer": lambda: peer.call("snapshot", {}),
            }
            for run in sides.values():  # warm-up
                await run()
            times: dict[str, list[float]] = {name: [] for name in sides}
            names = list(sides)
            for index in range(rounds):
                for name in names[index % 4 :] + names[: index % 4]:
                    started = time.perf_counter()
                    await sides[name]()
                    times[name].append(ms(time.perf_counter() - started))
            wire = {
                name: len((await sides[name]()).model_dump_json(by_alias=True, exclude_none=True).encode())
                for name in ("mcp", "peer")
            }
            envelope = session.snapshot()
            shown = envelope.data["snapshot"]  # type: ignore[index]
            secrets_shown = sum(bool(re.search(f": value {row}$", shown, re.M)) for row in range(100, ROWS, 200))
            return {
                "medians": {name: statistics.median(values) for name, values in times.items()},
                "spread": {name: (min(values), max(values)) for name, values in times.items()},
                "bytes": len(envelope.data["snapshot"]),  # type: ignore[index]
                "secrets_shown": secrets_shown,
                "wire": wire,
            }
        finally:
            for side in (peer, ours):
                await side.client.__aexit__(None, None, None)
            await raw.stop()


def timed(call: Callable[[], Envelope]) -> float:
    started = time.perf_counter()
    call().raise_for_status()
    return ms(time.perf_counter() - started)


def stuck_tab(rounds: int) -> dict[str, tuple[float, float]]:
    with DemoServer() as demo, Session() as session:
        session.navigate(demo.url).raise_for_status()
        stuck = session.tabs().data["current_page_id"]  # type: ignore[index]
        other = session.tabs("new", url=demo.url_for("form.html")).data["current_page_id"]  # type: ignore[index]
        calls: dict[str, Callable[[], Envelope]] = {
            "browser_tabs (list)": session.tabs,
            "browser_health": session.health,
            "browser_snapshot of another tab": lambda: session.snapshot(page_id=other),
        }
        before = {name: statistics.median(timed(call) for _ in range(rounds)) for name, call in calls.items()}
        session.reconfigure(operation_timeout_s=2)
        session.evaluate(HANG, page_id=stuck).raise_for_status()
        while session.evaluate("1", page_id=stuck).ok:
            time.sleep(0.05)
        first = timed(session.tabs)  # right after the timeout, while the tab is checked
        while not any(tab["status"] == "unresponsive" for tab in session.tabs().data["tabs"]):  # type: ignore[index]
            time.sleep(0.1)
        stuck_times = {name: statistics.median(timed(call) for _ in range(rounds)) for name, call in calls.items()}
        result = {name: (before[name], stuck_times[name]) for name in calls}
        result["browser_tabs (list), first call after the timeout"] = (before["browser_tabs (list)"], first)
        session.reload(page_id=stuck, force=True)
        return result


def cells() -> dict[str, tuple[int, int, str]]:
    """Mime-bundle bytes, text-form bytes and the views of the cells of real envelopes."""
    found: dict[str, tuple[int, int, str]] = {}

    def measure(name: str, envelope: Envelope) -> None:
        data, _ = mimebundle(envelope)
        bundle = sum(len((v if isinstance(v, str) else json.dumps(v)).encode()) for v in data.values())
        image = (envelope.data or {}).get("image") if envelope.ok else None
        text = len(render_text(envelope).encode()) + (len(base64.b64encode(image)) if isinstance(image, bytes) else 0)
        found[name] = (bundle, text, ", ".join(data))

    with DemoServer() as demo, form_server(ROWS) as url, Session() as session:
        session.navigate(demo.url_for("table.html")).raise_for_status()
        measure("snapshot, the demo's 2,000-row table", session.snapshot())
        session.navigate(demo.url).raise_for_status()
        measure("snapshot, the demo's shop page", session.snapshot())
        measure("tabs", session.tabs())
        session.navigate(url).raise_for_status()
        measure(f"snapshot, {ROWS:,}-row form page", session.snapshot())
        measure("screenshot (png)", session.screenshot())
        session.navigate(demo.url_for("evidence.html")).raise_for_status()
        session.evaluate("Promise.all(Array.from({length: 300}, (_, i) => fetch('/api/items?i=' + i)))")
        session.evaluate("for (let i = 0; i < 300; i++) console.log('message ' + i); 1")
        measure("network list (300+ requests)", session.network(limit=500))
        measure("console (300 messages)", session.console(limit=500))
        measure("error (element not found)", session.click("e99999"))
        measure("navigate", session.navigate(demo.url))
    return found


def snapshot_lines(snap: dict[str, Any], rounds: int) -> list[str]:
    m, spread, wire = snap["medians"], snap["spread"], snap["wire"]

    def row(label: str, name: str, ratio: str = "", target: str = "") -> str:
        low, high = spread[name]
        return re.sub(r"\|  (?=\|)", "| ", f"| {label} | {m[name]:.0f} | {low:.0f}-{high:.0f} | {ratio} | {target} |")

    return [
        (
            f"A generated page of {ROWS:,} rows (a link, a button and a filled text field each; every 200th field a "
            f"password or one-time-code field holding a value): its snapshot, {snap['bytes']:,} characters, median of "
            f"{rounds} calls per side, four sides alternating, each on its own browser. Secret values shown: "
            f"{snap['secrets_shown']}."
        ),
        "",
        "| side | snapshot (ms) | min-max (ms) | ratio | target |",
        "|---|---:|---:|---:|---:|",
        row('raw Playwright `aria_snapshot(mode="ai")`', "raw"),
        row("`Session.snapshot()`", "session", f"{m['session'] / m['raw']:.2f} (/ raw)", "<= 1.15"),
        row("`@playwright/mcp` `browser_snapshot`", "peer"),
        row(
            "webmcp_nb `browser_snapshot` over MCP",
            "mcp",
            f"{m['mcp'] / m['peer']:.2f} (/ `@playwright/mcp`)",
            "<= 1.1",
        ),
        "",
        (
            f"The result as JSON (the client's parsed result, compact): webmcp_nb {wire['mcp']:,} bytes, "
            f"`@playwright/mcp` {wire['peer']:,} bytes, ratio {wire['mcp'] / wire['peer']:.2f} (target <= 1.1)."
        ),
    ]


def stuck_lines(stuck: dict[str, tuple[float, float]], rounds: int) -> list[str]:
    lines = [
        f"A stuck tab: calls before and while another tab of the instance runs `while (true) {{}}` (median of {rounds}).",
        "",
        "| call | before (ms) | tab stuck (ms) | difference (ms) | target |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, (before, during) in stuck.items():
        lines.append(f"| {name} | {before:.1f} | {during:.1f} | {during - before:+.1f} | <= +50 |")
    return lines


def cell_lines(bundles: dict[str, tuple[int, int, str]]) -> list[str]:
    lines = [
        CELLS_BEGIN,
        (
            "Notebook cells: the whole mime bundle against the text form (`render_text`; for a screenshot, plus the "
            "image as base64), and the views the cell holds. Bytes, not timings: the load does not change them, only the printed "
            "widths of ports and times do (`python bench/bench_pages.py "
            f"--only cells --write BENCHMARKS.md` writes this part alone; run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})."
        ),
        "",
        "| envelope | text form (bytes) | mime bundle (bytes) | ratio | target | views |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for name, (bundle, text, views) in bundles.items():
        lines.append(f"| {name} | {text:,} | {bundle:,} | {bundle / text:.2f} | <= 1.5 | {views} |")
    lines.append(CELLS_END)
    return lines


def report(parts: list[list[str]]) -> str:
    heading = (
        f"Pages (`python bench/bench_pages.py`), run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on "
        f"{platform.machine()}, {platform.python_version()}, Chromium at {CHROMIUM}."
    )
    lines = [BEGIN, heading]
    for part in parts:
        lines += ["", *part]
    lines.append(END)
    return "\n".join(lines)


def main() -> None:
    parser = bench_parser(__doc__, 9)
    parser.add_argument("--only", choices=["snapshots", "stuck", "cells"], help="run one part; print it only")
    options = parser.parse_args()
    if options.only == "cells":  # deterministic bytes: written alone, between its own markers
        publish("\n".join(cell_lines(cells())), options.write, CELLS_BEGIN, CELLS_END)
        return
    if options.only and options.write:
        parser.error("--only prints one part (but cells); --write needs them all")
    if options.only in (None, "snapshots"):
        ensure_peers()
    parts = {
        "snapshots": lambda: snapshot_lines(asyncio.run(snapshots(options.rounds)), options.rounds),
        "stuck": lambda: stuck_lines(stuck_tab(options.rounds), options.rounds),
        "cells": lambda: cell_lines(cells()),
    }
    chosen = [options.only] if options.only else list(parts)
    publish(report([parts[name]() for name in chosen]), options.write, BEGIN, END)


if __name__ == "__main__":
    main()
