"""Evidence: console and network capture on real Chromium, read with cursors, exported, traced.

The demo page `evidence.html` logs at every level, throws, and makes requests that succeed,
fail, redirect, wait and carry secrets. Exports are checked by real consumers: HAR by the
har-validator JSON Schema (Node), the trace as the zip Playwright's viewer opens.
"""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import jsonschema
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from webmcp_nb.core.browsers.aria import find_ref
from webmcp_nb.core.render.renderer import render_text
from webmcp_nb.demo import PNG, DemoServer

from .conftest import CheckedSession, error, ok
from .helpers import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.playwright_sensitive]  # every test records what a real page does

HAR_CHECK = Path(__file__).parent / "har_check"


def click(s: CheckedSession, name: str) -> None:
    snapshot = ok(s.snapshot())["snapshot"]
    ok(s.click(find_ref(snapshot, name, role="button")))


@pytest.fixture(scope="module")
def evidence_session(demo: DemoServer) -> Iterator[CheckedSession]:
    with CheckedSession() as s:
        ok(s.navigate(demo.url_for("evidence.html")))
        click(s, "Log every level")
        click(s, "Throw")
        click(s, "Make requests")
        ok(s.wait_for(text="Requests done"))
        yield s


def entries(s: CheckedSession, tool: str, **args: Any) -> list[dict[str, Any]]:
    return ok(s.call(tool, **args))["entries"]


def wait_for_entry(s: CheckedSession, tool: str, predicate: Any, **args: Any) -> dict[str, Any]:
    for _ in range(100):
        found = [entry for entry in entries(s, tool, limit=500, **args) if predicate(entry)]
        if found:
            return found[0]
        s.wait_for(time_s=0.05)
    raise AssertionError(f"no {tool} entry matched")


def test_console_records_every_level_and_uncaught_errors(evidence_session: CheckedSession) -> None:
    s = evidence_session
    error_entry = wait_for_entry(s, "browser_console", lambda e: e["kind"] == "pageerror")
    logged = entries(s, "browser_console", limit=500)
    levels = {e["text"]: e["level"] for e in logged if e["kind"] == "console"}
    assert levels["debug message"] == "debug" and levels["info message"] == "info"
    assert levels["warning message"] == "warning" and levels["error message"] == "error"
    assert levels["log message {n: 1}"] == "log"
    assert error_entry["level"] == "error" and "boom from the demo page" in error_entry["text"]
    assert "evidence.html" in (error_entry["stack"] or "")
    first = next(e for e in logged if e["text"] == "debug message")
    assert first["url"].endswith("/evidence.html") and first["line"] > 0 and first["page_id"]
    seqs = [e["seq"] for e in logged]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)

    only_errors = entries(s, "browser_console", level="error", limit=500)
    assert {e["kind"] for e in only_errors} == {"console", "pageerror"}
    assert all(e["level"] == "error" for e in only_errors)
    assert [e["text"] for e in entries(s, "browser_console", text="WARNING")] == ["warning message"]


def test_network_records_status_failures_redirects_and_timing(evidence_session: CheckedSession) -> None:
    s = evidence_session
    failed = wait_for_entry(s, "browser_network", lambda e: e["state"] == "failed")
    assert failed["url"] == "http://127.0.0.1:2/unreachable"
    assert failed["failure"] == "net::ERR_CONNECTION_REFUSED" and failed["status"] is None
    by_url = {e["url"].split("/", 3)[-1]: e for e in entries(s, "browser_network", limit=500)}
    not_found = by_url["status?code=404"]
    assert (not_found["status"], not_found["method"], not_found["resource_type"]) == (404, "GET", "fetch")
    redirect, target = by_url["redirect?to=/help.html"], by_url["help.html"]
    assert redirect["status"] == 302 and redirect["response_headers"]["location"] == "/help.html"
    assert target["redirected_from"] == redirect["request_id"]
    assert target["redirect_chain"] == [redirect["url"]]
    slow = wait_for_entry(s, "browser_network", lambda e: e["url"].endswith("slow?ms=300") and e["state"] == "finished")
    assert slow["timing"]["start"] > 0 and slow["timing"]["response_end"] >= 300
    assert [e["url"] for e in entries(s, "browser_network", failed=True)] == [failed["url"]]
    assert {e["status"] for e in entries(s, "browser_network", status=404)} == {404}


def test_a_record_follows_its_request_and_long_fields_are_cut(demo: DemoServer) -> None:
    """Records are read from the request as it progresses: pending, then finished in place
    (same seq and id); a URL or header value over 4,096 characters is cut and listed."""
    with CheckedSession() as s:
        ok(s.navigate(demo.url_for("index.html")))
        long_url = "/status?code=200&pad=" + "x" * 5000
        headers = "{headers: {'X-Long': 'y'.repeat(5000)}}"
        fetches = f"[fetch('/slow?ms=4000'), fetch({json.dumps(long_url)}, {headers})]"
        ok(s.evaluate(f"() => {{ {fetches}.forEach(sent => sent.then(response => response.text())); }}"))
        pending = wait_for_entry(s, "browser_network", lambda e: e["url"].endswith("slow?ms=4000"))
        assert (pending["state"], pending["status"], pending["response_headers"], pending["timing"]) == (
            "pending",
            None,
            None,
            None,
        )
        ok(s.wait_for(network_idle=True, time_s=30))
        [done] = entries(s, "browser_network", url="slow?ms=4000")
        assert (done["seq"], done["request_id"], done["state"], done["status"]) == (
            pending["seq"],
            pending["request_id"],
            "finished",
            200,
        )
        assert done["mime_type"] == "text/html" and done["timing"]["response_end"] >= 4000
        [long] = entries(s, "browser_network", url="pad=xxx")
        assert len(long["url"]) == 4096 and long["url"] in demo.url_for(long_url.lstrip("/"))
        assert len(long["request_headers"]["x-long"]) == 4096 and long["status"] == 200
        assert long["truncated_fields"] == ["request_headers.x-long", "url"]
        assert done["truncated_fields"] == []


def test_secret_headers_are_redacted_unless_revealed(evidence_session: CheckedSession) -> None:
    s = evidence_session
    [request] = entries(s, "browser_network", url="status?code=201")
    assert request["request_headers"]["authorization"] == "[redacted]"
    assert request["request_headers"]["x-api-key"] == "[redacted]"
    envelope = s.call("browser_network", limit=500)
    assert "demo-secret-token" not in envelope.to_json() and "demo-secret-token" not in str(envelope)
    revealed = ok(s.call("browser_network", url="status?code=201", reveal_secrets=True))
    assert revealed["secrets_revealed"] is True
    assert revealed["entries"][0]["request_headers"]["authorization"] == "Bearer demo-secret-token"


def test_cursors_page_through_a_page_that_keeps_logging_without_loss_or_repeats(demo: DemoServer) -> None:
    with CheckedSession() as s:
        ok(s.navigate(demo.url_for("evidence.html")))
        click(s, "Start logging")
        seen: list[dict[str, Any]] = []
        cursor = None
        reads = 0
        while sum(e["text"].startswith("tick ") for e in seen) < 30:  # read while the page logs
            reads += 1
            assert reads < 2000, "the page stopped logging"
            data = ok(
                s.call("browser_console", after=cursor, limit=7) if cursor else s.call("browser_console", limit=7)
            )
            assert data["retention_lost"] is False
            seen += data["entries"]
            cursor = data["next_cursor"]
        click(s, "Stop logging")

        def read_to_the_end() -> bool:
            nonlocal cursor
            data = ok(s.call("browser_console", after=cursor, limit=500))
            seen.extend(data["entries"])
            cursor = data["next_cursor"]
            return any(e["text"].startswith("stopped after") for e in seen) and not data["has_more"]

        wait_until(read_to_the_end, message="the page to log its last line")
        seqs = [e["seq"] for e in seen]
        assert seqs == list(range(1, len(seqs) + 1))  # nothing lost, nothing repeated
        ticks = [int(e["text"].split()[1]) for e in seen if e["text"].startswith("tick ")]
        assert ticks == list(range(1, len(ticks) + 1)) and len(ticks) >= 30
        assert seen[-1]["text"] == f"stopped after {ticks[-1]}"


def test_a_reader_that_falls_behind_the_buffer_is_told(demo: DemoServer) -> None:
    with CheckedSession(event_buffer_size=5) as s:
        ok(s.navigate(demo.url_for("evidence.html")))  # logs "evidence page loaded"
        first = ok(s.call("browser_console"))
        assert [e["seq"] for e in first["entries"]] == [1]
        click(s, "Log every level")  # five more: the first is dropped
        wait = ok(s.call("browser_console", after=first["next_cursor"]))
        assert wait["retention_lost"] is False and [e["seq"] for e in wait["entries"]] == [2, 3, 4, 5, 6]
        click(s, "Log every level")
        behind = ok(s.call("browser_console", after=first["next_cursor"]))
        assert behind["retention_lost"] is True
        assert [e["seq"] for e in behind["entries"]] == [7, 8, 9, 10, 11]
        assert (behind["retained_count"], behind["dropped_count"]) == (5, 6)


def test_cursors_of_another_stream_or_instance_are_refused(evidence_session: CheckedSession) -> None:
    s = evidence_session
    console_cursor = ok(s.call("browser_console"))["next_cursor"]
    message = error(
        s.call("browser_network", after=console_cursor), "invalid_params", "not_started", "after_correction"
    )
    assert "network stream" in message
    ok(s.create_instance("evidence-other"))
    try:
        error(
            s.call("browser_console", after=console_cursor, instance="evidence-other"), "invalid_params", "not_started"
        )
    finally:
        ok(s.destroy_instance("evidence-other"))
    error(s.call("browser_console", after="garbage"), "invalid_params", "not_started")


def test_bodies_as_text_saved_or_refused_when_too_large(demo: DemoServer, tmp_path: Path) -> None:
    with CheckedSession(max_result_bytes=4096, artifacts_dir=str(tmp_path)) as s:
        ok(s.navigate(demo.url_for("evidence.html")))
        click(s, "Make requests")
        ok(s.wait_for(text="Requests done"))
        [found] = entries(s, "browser_network", url="status?code=404")
        body = ok(s.call("browser_network_body", request_id=found["request_id"]))
        assert body["encoding"] == "text" and "404 Not Found" in body["body"] and body["mime_type"] == "text/html"
        ok(s.navigate(demo.url_for("api/large?kb=8")))
        [page] = entries(s, "browser_network", url="api/large")
        message = error(
            s.call("browser_network_body", request_id=page["request_id"]), "result_too_large", retry="read_only"
        )
        assert "save=true" in message and "nothing was clipped" in message
        saved = ok(s.call("browser_network_body", request_id=page["request_id"], save=True))
        assert saved["encoding"] == "none" and saved["body"] is None
        assert json.loads(Path(saved["path"]).read_text())["items"][0]["id"] == 0
        assert Path(saved["path"]).parent == tmp_path and saved["size_bytes"] > 4096
        [unread] = entries(s, "browser_network", url="status?code=200")
        gone = s.call("browser_network_body", request_id=unread["request_id"])  # its page navigated away
        assert "no longer available" in error(gone, "stale_ref", "unknown", "read_only")
        error(s.call("browser_network_body", request_id="r999999"), "invalid_params", "not_started")


def test_an_image_body_is_bytes_in_python_and_an_image_block_over_mcp(demo: DemoServer) -> None:
    """An image body is never base64 in text or structured content: Python gets its bytes, JSON
    base64, an agent an image block (structured content notes where the bytes went)."""
    with CheckedSession() as s:
        ok(s.navigate(demo.url_for("api/image.png")))
        [image] = entries(s, "browser_network", url="api/image.png")
        envelope = s.call("browser_network_body", request_id=image["request_id"])
        body = ok(envelope)
        assert body["encoding"] == "image" and body["body"] is None and body["mime_type"] == "image/png"
        assert body["image"] == {"data": PNG, "mime_type": "image/png"}
        assert json.loads(envelope.to_json())["data"]["image"]["data"] == base64.b64encode(PNG).decode()
        assert base64.b64encode(PNG).decode() not in render_text(envelope)
        server = s.serve_mcp()

        async def agent() -> tuple[types.CallToolResult, dict[str, Any] | None]:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.token}"}, timeout=60)
            async with Client(streamable_http_client(server.url, http_client=http)) as client:
                listed = {tool.name: tool for tool in (await client.list_tools()).tools}
                result = await client.call_tool("browser_network_body", {"request_id": image["request_id"]})
                return result, listed["browser_network_body"].output_schema

        result, schema = asyncio.run(agent())
    assert result.is_error is False and schema is not None
    jsonschema.validate(result.structured_content, schema)
    [block] = [block for block in result.content if isinstance(block, types.ImageContent)]
    assert base64.b64decode(block.data) == PNG and block.mime_type == "image/png"
    assert result.structured_content["data"]["image"]["data"] == f"<{len(PNG)} bytes: sent as an image block>"
    texts = "".join(block.text for block in result.content if isinstance(block, types.TextContent))
    assert base64.b64encode(PNG).decode() not in texts + json.dumps(result.structured_content)


def test_har_export_is_valid_har_with_every_request(evidence_session: CheckedSession, tmp_path: Path) -> None:
    node, npm = shutil.which("node"), shutil.which("npm")
    assert node and npm, "Node.js and npm are needed to validate HAR"
    if not (HAR_CHECK / "node_modules" / "har-validator").exists():
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=HAR_CHECK, check=True, timeout=300)
    s = evidence_session
    wait_for_entry(s, "browser_network", lambda e: e["url"].endswith("slow?ms=300") and e["state"] == "finished")
    retained = entries(s, "browser_network", limit=500)
    exported = ok(s.call("browser_events_export", stream="network", format="har"))
    assert exported["entries"] == len(retained) and exported["path"] in s.history[-1].envelope.operation.artifacts
    checked = subprocess.run([node, "check.mjs", exported["path"]], cwd=HAR_CHECK, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert json.loads(checked.stdout) == {"valid": True, "entries": len(retained)}
    har = json.loads(Path(exported["path"]).read_text())
    statuses = {
        entry["request"]["url"].rsplit("/", 1)[-1]: entry["response"]["status"] for entry in har["log"]["entries"]
    }
    assert statuses["status?code=404"] == 404 and statuses["unreachable"] == 0
    assert "demo-secret-token" not in Path(exported["path"]).read_text()

    broken = tmp_path / "broken.har"  # the validator does reject what is not HAR
    del har["log"]["entries"][0]["request"]["method"]
    broken.write_text(json.dumps(har))
    assert subprocess.run([node, "check.mjs", str(broken)], cwd=HAR_CHECK, capture_output=True).returncode == 1

    lines = ok(s.call("browser_events_export", stream="console", format="jsonl"))
    records = [json.loads(line) for line in Path(lines["path"]).read_text().splitlines()]
    assert len(records) == lines["entries"] and {"seq", "level", "text"} <= set(records[0])
    error(s.call("browser_events_export", stream="console", format="har"), "invalid_params", "not_started")


def test_trace_is_saved_as_a_playwright_trace_zip(evidence_session: CheckedSession, demo: DemoServer) -> None:
    s = evidence_session
    error(s.call("browser_trace", action="stop"), "invalid_params", "not_started")
    ok(s.call("browser_trace", action="start"))
    error(s.call("browser_trace", action="start"), "invalid_params", "not_started")
    ok(s.navigate(demo.url_for("index.html")))
    stopped = ok(s.call("browser_trace", action="stop"))
    with zipfile.ZipFile(stopped["path"]) as archive:
        names = archive.namelist()
        assert "trace.trace" in names and "trace.network" in names
        assert any(name.startswith("resources/") for name in names)
        events = [json.loads(line) for line in archive.read("trace.trace").decode().splitlines() if line]
    assert events[0]["type"] == "context-options"
    assert any(e.get("type") == "screencast-frame" for e in events)
    ok(s.navigate(demo.url_for("evidence.html")))


def test_agents_need_the_secrets_grant_to_reveal(demo: DemoServer) -> None:
    with CheckedSession() as s:
        plain = s.serve_mcp(caps=[])
        granted = s.serve_mcp(caps=["secrets"])

        async def agent(server: Any) -> tuple[types.CallToolResult, types.CallToolResult]:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.token}"}, timeout=60)
            async with Client(streamable_http_client(server.url, http_client=http)) as client:
                await client.call_tool("browser_navigate", {"url": demo.url_for("evidence.html")})
                listed = await client.call_tool("browser_network", {})
                revealed = await client.call_tool("browser_network", {"reveal_secrets": True})
                return listed, revealed

        listed, refused = asyncio.run(agent(plain))
        assert listed.is_error is False and listed.structured_content["data"]["entries"]
        assert refused.is_error is True
        assert refused.structured_content["error_type"] == "invalid_params"
        assert "secrets" in refused.structured_content["message"]
        _, revealed = asyncio.run(agent(granted))
        assert revealed.is_error is False and revealed.structured_content["data"]["secrets_revealed"] is True


def test_waterfall_is_static_svg_with_a_row_per_request(evidence_session: CheckedSession) -> None:
    import xml.etree.ElementTree as ET

    from webmcp_nb.core.render.waterfall import waterfall_svg

    s = evidence_session
    ok(s.wait_for(network_idle=True))
    network = entries(s, "browser_network", limit=500)
    svg = waterfall_svg(network)
    root = ET.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert "<script" not in svg
    texts = ["".join(node.itertext()) for node in root.iter("{http://www.w3.org/2000/svg}text")]
    labels = [text for text in texts if text.startswith("GET ")]
    assert len(labels) == len(network)
    assert any("unreachable" in text and "ERR_CONNECTION" in text for text in labels)
    assert texts.count("✕ failed") == 1 + 1  # the failed row and the legend
    out = Path(__file__).resolve().parents[1] / "build" / "evidence"
    out.mkdir(parents=True, exist_ok=True)
    (out / "network-waterfall.svg").write_text(svg, encoding="utf-8")  # the README's picture comes from here


def test_agents_fetch_what_a_call_wrote_through_resource_links(demo: DemoServer, tmp_path: Path) -> None:
    with CheckedSession(artifacts_dir=str(tmp_path), max_result_bytes=65536) as s:
        server = s.serve_mcp()

        async def agent() -> tuple[types.CallToolResult, list[Any], str]:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.token}"}, timeout=60)
            async with Client(streamable_http_client(server.url, http_client=http)) as client:
                await client.call_tool("browser_navigate", {"url": demo.url_for("evidence.html")})
                exported = await client.call_tool("browser_events_export", {"stream": "console", "format": "jsonl"})
                [link] = [block for block in exported.content if isinstance(block, types.ResourceLink)]
                read = await client.read_resource(link.uri)
                big = await client.call_tool("browser_network_body", {"request_id": "r1", "save": True})
                await client.call_tool("browser_navigate", {"url": demo.url_for("api/large?kb=100")})
                huge = await client.call_tool("browser_network_body", {"request_id": "r2", "save": True})
                [huge_link] = [block for block in huge.content if isinstance(block, types.ResourceLink)]
                outside = ""
                for uri in ("webmcp-nb://artifacts/../secret", "webmcp-nb://artifacts/nothing.txt", huge_link.uri):
                    try:
                        await client.read_resource(uri)
                    except Exception as exc:  # noqa: BLE001 - the protocol error is what is checked
                        outside += f"{exc}\n"
                return exported, [link, read, big], outside

        exported, (link, read, big), refused = asyncio.run(agent())
        path = Path(exported.structured_content["data"]["path"])
        assert str(link.uri) == f"webmcp-nb://artifacts/{path.name}" and link.size == path.stat().st_size
        assert link.mime_type == "application/jsonl"
        [contents] = read.contents
        assert contents.text == path.read_text() and "evidence page loaded" in contents.text
        assert [block.uri for block in big.content if isinstance(block, types.ResourceLink)] == [
            f"webmcp-nb://artifacts/{Path(big.structured_content['data']['path']).name}"
        ]
        assert refused.count("No artifact") == 2
        assert "over what one read may return within max_result_bytes (65536, Session(max_result_bytes=...))" in refused


def test_entries_render_as_tables_or_lines_with_failures_marked_and_as_rows(evidence_session: CheckedSession) -> None:
    from webmcp_nb.core.render.renderer import ERROR_COLOUR, render_html

    s = evidence_session
    wait_for_entry(s, "browser_network", lambda e: e["state"] == "failed")
    network = s.network(limit=500)
    text = str(network)
    failed = [line for line in text.splitlines() if "unreachable" in line]
    assert failed == [
        (
            f"- #{failed[0].split('#')[1].split()[0]} {failed[0].split()[2]} GET failed "
            "net::ERR_CONNECTION_REFUSED http://127.0.0.1:2/unreachable fetch"
        )
    ]
    assert "request headers: " in text and '"authorization": "[redacted]"' in text
    html = render_html(network)
    rows = html.split("<tr")
    red = [row for row in rows if ERROR_COLOUR in row.split(">")[0]]
    assert any("unreachable" in row for row in red) and any("code=404" in row for row in red)
    assert not any("code=200" in row for row in red)
    console = s.console(limit=500)
    assert "- #" in str(console) and "error (uncaught): " in str(console)
    # The console (a log) shows its rows as its text lines, errors in red.
    marked = render_html(console).split(f'<span style="color:{ERROR_COLOUR}">')[1:]
    red = [chunk.split("</span>", 1)[0] for chunk in marked]
    assert any("boom from the demo page" in line and " error (uncaught): " in line for line in red)
    assert red and all(" error" in line and " log: " not in line for line in red)

    rows_ = network.rows()
    assert rows_ == network.data["entries"]
    frame = network.to_pandas()
    assert list(frame["request_id"]) == [entry["request_id"] for entry in rows_]
    picture = network.plot()
    bundle, _ = picture._repr_mimebundle_()
    assert (
        bundle["image/svg+xml"].startswith("<svg")
        and bundle["text/plain"] == f"<network waterfall: {len(rows_)} requests>"
    )
    with pytest.raises(ValueError, match="plot\\(\\) draws browser_network results"):
        console.plot()
    with pytest.raises(ValueError, match="lists nothing"):
        s.health().rows()
