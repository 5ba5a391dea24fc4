"""The result contract at its edges, with real clients: big pages, images, save=true, page tools.

A `Session` serves MCP over streamable HTTP; the official Python client (protocol 2026-07-28
and, in legacy mode, 2025-11-25) and the TypeScript SDK v2 client (2025-11-25 and 2026-07-28)
drive it. Both clients validate every structured result against the tool's output schema
(the Python client raises, the TypeScript client throws, on a mismatch); the tests also
validate each structured result themselves.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import jsonschema
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from webmcp_nb import Session
from webmcp_nb.client import tool_registry
from webmcp_nb.core.call.envelope import Envelope
from webmcp_nb.core.call.registry import REGISTRY
from webmcp_nb.core.tools.saving import HEAD_LINES
from webmcp_nb.demo import DemoServer
from webmcp_nb.mcp.mirror import CALL_TOOL
from webmcp_nb.mcp.results import SENT_ONCE_CHARS, call_result, output_schema, send_once

from .conftest import error, make_operation, ok
from .helpers import ts_report

BROWSER_FIXTURES = {"served"}  # a session and its MCP server, on Chromium (see conftest.py)

AGENT = types.Implementation(name="results-agent", version="1.0")
BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{200,}")
ERAS = ["auto", "legacy"]  # the Python client: 2026-07-28, and 2025-11-25


def schema_problems(schema: Any, path: str = "") -> list[str]:
    """Where `schema` is not portable: type arrays, enumerations without their type, empty schemas."""
    problems = []
    if isinstance(schema, dict):
        if isinstance(schema.get("type"), list):
            problems.append(f"{path}: type array {schema['type']}")
        if ("enum" in schema or "const" in schema) and "type" not in schema:
            problems.append(f"{path}: enum/const without a type")
        if schema == {}:
            problems.append(f"{path}: an empty schema")
        for key, value in schema.items():
            if key in ("properties", "$defs", "patternProperties") and isinstance(value, dict):
                problems += [p for name, sub in value.items() for p in schema_problems(sub, f"{path}/{key}/{name}")]
            elif key in ("items", "additionalProperties", "not") and isinstance(value, dict):
                problems += schema_problems(value, f"{path}/{key}")
            elif key in ("anyOf", "oneOf", "allOf", "prefixItems") and isinstance(value, list):
                problems += [p for i, sub in enumerate(value) for p in schema_problems(sub, f"{path}/{key}/{i}")]
    return problems


class Served:
    def __init__(self, session: Session, demo: DemoServer) -> None:
        self.session, self.demo = session, demo
        self.handle = session.serve_mcp(caps=["js"])

    def client(self, mode: str = "auto") -> Client:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {self.handle.token}"}, timeout=120)
        return Client(streamable_http_client(self.handle.url, http_client=http), mode=mode, client_info=AGENT)

    def calls(
        self, mode: str, *calls: tuple[str, dict[str, Any]]
    ) -> tuple[list[types.Tool], list[types.CallToolResult]]:
        """The tool list, then each call's result, over one connection in protocol era `mode`."""

        async def scenario() -> tuple[list[types.Tool], list[types.CallToolResult]]:
            async with self.client(mode) as client:
                assert client.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
                tools = (await client.list_tools()).tools
                return tools, [await client.call_tool(name, args) for name, args in calls]

        return asyncio.run(scenario())


@pytest.fixture(scope="module")
def served(demo: DemoServer) -> Iterator[Served]:
    with Session() as session:
        yield Served(session, demo)


def text_of(result: types.CallToolResult) -> str:
    texts = [block.text for block in result.content if isinstance(block, types.TextContent)]
    assert len(texts) == 1, result.content
    return texts[0]


def validated(tools: list[types.Tool], name: str, result: types.CallToolResult) -> dict[str, Any]:
    """The structured result, checked against the output schema the tool declared."""
    declared = {tool.name: tool for tool in tools}[name].output_schema
    assert declared is not None and isinstance(result.structured_content, dict), name
    jsonschema.validate(result.structured_content, declared)
    return result.structured_content


def sent_once(structured: dict[str, Any], text: str, pointer: str) -> str:
    """The data string at `pointer` that travelled once, in the text (`send_once`): its lines there."""
    first, end = structured["in_text"][pointer]
    return "\n".join(text.split("\n")[first:end])


def assert_no_base64(result: types.CallToolResult) -> None:
    assert not BASE64_RUN.search(text_of(result))
    assert not BASE64_RUN.search(json.dumps(result.structured_content))


# --------------------------------------------------------------------------- #
# Portable schemas
# --------------------------------------------------------------------------- #


def test_every_schema_is_portable() -> None:
    for spec in tool_registry():
        assert schema_problems(spec.input_schema) == [], spec.name
        assert schema_problems(output_schema(spec)) == [], spec.name
    # The mirrors of page tools are called through browser_webmcp_call and share its output schema.
    assert output_schema(tool_registry().get(CALL_TOOL)) is not None
    # The walk finds what it looks for.
    nullable = {"type": "object", "properties": {"a": {"type": ["string", "null"]}, "b": {"items": {}}}}
    assert schema_problems(nullable) == [
        "/properties/a: type array ['string', 'null']",
        "/properties/b/items: an empty schema",
    ]


@pytest.mark.parametrize("mode", ERAS)
def test_listed_schemas_are_portable(served: Served, mode: str) -> None:
    served.session.navigate(served.demo.url_for("webmcp-results.html")).raise_for_status()
    assert ok(served.session.call("browser_webmcp_list"))["tools"]  # registered, so mirrored
    tools, _ = served.calls(mode)
    assert {"browser_webmcp_call", "webmcp_draw_badge", "webmcp_reserve_item"} <= {tool.name for tool in tools}
    for tool in tools:
        assert schema_problems(tool.input_schema) == [], tool.name
        assert schema_problems(tool.output_schema or {"type": "object"}) == [], tool.name


NULLABLE_TOOL = """() => document.modelContext.registerTool({
  name: "note_maybe",
  description: "Echo a note that may be null, and tags of two types (its schema uses type arrays).",
  inputSchema: {type: "object", properties: {
    note: {type: ["string", "null"], maxLength: 20},
    tags: {type: "array", items: {type: ["string", "integer"]}},
  }},
  execute: (input) => JSON.stringify(input),
})"""


def test_a_page_tools_type_arrays_are_listed_as_any_of(fresh_session: Any, demo: DemoServer) -> None:
    s = fresh_session()
    s.navigate(demo.url_for("webmcp-results.html")).raise_for_status()
    ok(s.evaluate(NULLABLE_TOOL))
    assert "note_maybe" in [tool["name"] for tool in ok(s.call("browser_webmcp_list"))["tools"]]
    served = Served(s, demo)
    tools, (called,) = served.calls("auto", ("webmcp_note_maybe", {"note": "hi", "tags": ["a", 1]}))
    schema = {tool.name: tool for tool in tools}["webmcp_note_maybe"].input_schema
    assert schema_problems(schema) == []
    assert schema["properties"] == {
        "note": {"maxLength": 20, "anyOf": [{"type": "string"}, {"type": "null"}]},
        "tags": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
    }
    assert validated(tools, "webmcp_note_maybe", called)["data"]["structured"] == {"note": "hi", "tags": ["a", 1]}


# --------------------------------------------------------------------------- #
# Limits that fit big pages
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("mode", ERAS)
def test_the_2000_row_snapshot_arrives_at_the_default_limit(served: Served, mode: str) -> None:
    session = served.session
    assert session.limits.max_result_bytes == 1_048_576
    session.navigate(served.demo.url_for("table.html")).raise_for_status()
    own = session.snapshot().raise_for_status()
    tools, (result,) = served.calls(mode, ("browser_snapshot", {}))
    assert result.is_error is False
    envelope = validated(tools, "browser_snapshot", result)
    # The snapshot travels once, in the text; structured content names its lines there.
    first, end = envelope["in_text"]["/data/snapshot"]
    assert list(envelope["in_text"]) == ["/data/snapshot"] and (first, end) == (
        3,
        3 + own.data["snapshot"].count("\n") + 1,
    )
    assert envelope["data"]["snapshot"] == (
        f"<{len(own.data['snapshot']):,} characters, sent once: lines 4-{end:,} of the text content>"
    )
    assert sent_once(envelope, text_of(result), "/data/snapshot") == own.data["snapshot"]
    assert 'cell "Item 2000"' in own.data["snapshot"]
    assert {key: value for key, value in envelope["data"].items() if key != "snapshot"} == {
        key: value for key, value in own.data.items() if key != "snapshot" and value is not None
    }  # an optional field that is null is left out (its schema has no null branch)
    # The text is the Session's rendering (its first line carries the call's own duration).
    assert text_of(result).split("\n", 1)[1] == str(own).split("\n", 1)[1]


@pytest.mark.browser
def test_the_limit_bounds_the_envelope_and_the_result_carries_its_snapshot_once(demo: DemoServer) -> None:
    with Session() as session:
        session.navigate(demo.url_for("table.html")).raise_for_status()
        size = len(session.snapshot().raise_for_status().to_json_bytes())
        session.reconfigure(max_result_bytes=size + 2_000)  # the envelope fits
        served = Served(session, demo)
        tools, (fits,) = served.calls("auto", ("browser_snapshot", {}))
        assert fits.is_error is False
        wire = len(fits.model_dump_json(by_alias=True, exclude_none=True).encode())
        assert size < wire < size + 2_000  # the snapshot once (in the text), the envelope's facts twice
        session.reconfigure(max_result_bytes=size // 2)
        own = session.snapshot()
        _, (refused,) = served.calls("auto", ("browser_snapshot", {}))
    message = error(own, "result_too_large", "completed", "read_only")
    envelope = validated(tools, "browser_snapshot", refused)
    assert refused.is_error is True and envelope["error_type"] == "result_too_large"
    assert (envelope["operation"]["outcome"], envelope["operation"]["retry"]) == ("completed", "read_only")
    for way_out in ("ref=", "depth=", "save=true"):
        assert way_out in message and way_out in envelope["message"]
    assert f"limit of {size // 2} bytes" in envelope["message"]


def test_a_script_result_over_the_limit_names_its_ways_out(fresh_session: Any, demo: DemoServer) -> None:
    s = fresh_session(max_result_bytes=4096)
    s.navigate(demo.url_for("table.html")).raise_for_status()
    message = error(s.evaluate("document.body.innerHTML"), "result_too_large", "completed", "inspect_state")
    assert "over the limit of 4096 bytes" in message and "ref=" in message and "save=true" in message
    # The way out fits the smallest limit: the head is cut to an eighth of it.
    saved = ok(s.evaluate("document.body.innerHTML", save=True))["saved"]
    assert saved["size_bytes"] > 100_000 and Path(saved["path"]).parent == s.engine.artifacts_dir
    assert "Item 2000" in Path(saved["path"]).read_text() and len(saved["head"]) == 4096 // 8
    assert ok(s.snapshot(save=True))["saved"]["head"].startswith("- generic")


def test_a_big_string_travels_once_in_the_text_and_structured_content_names_its_lines() -> None:
    snapshot = "\n".join(f'- row "Row {row}" [ref=e{row}]' for row in range(2000))
    data = {"url": "http://127.0.0.1/", "title": "Rows", "snapshot": snapshot}
    spec = REGISTRY.get("browser_snapshot")
    result = call_result(
        Envelope("success", "default", make_operation(tool="browser_snapshot"), data=data), spec, 10**7
    )
    structured = result.structured_content
    assert structured is not None
    jsonschema.validate(structured, output_schema(spec))
    assert structured["in_text"] == {"/data/snapshot": [3, 2003]}  # after the header, url and title lines
    assert structured["data"] == {
        **data,
        "snapshot": f"<{len(snapshot):,} characters, sent once: lines 4-2,003 of the text content>",
    }
    assert sent_once(structured, text_of(result), "/data/snapshot") == snapshot
    # The pointer escapes its keys (RFC 6901); a short string, or one the text holds only within a
    # line, stays where it is.
    long = "x" * SENT_ONCE_CHARS
    assert send_once({"data": {"a/b~": [long]}}, f"head\n{long}")["in_text"] == {"/data/a~1b~0/0": [1, 2]}
    kept = {"data": {"value": long, "short": "x" * (SENT_ONCE_CHARS - 1)}}
    assert send_once(kept, f"value: {long}\n{'x' * (SENT_ONCE_CHARS - 1)}") == kept


def test_an_unknown_tool_gives_an_envelope_within_the_limit() -> None:
    # call_result with no spec (the tool does not exist): the envelope is held to the limit, and
    # the advice is that of a call that did not start.
    op = make_operation(tool="no_such_tool", outcome="not_started", retry="after_correction", artifacts=())
    envelope = Envelope("error", None, op, error_type="invalid_params", message="Unknown tool " + "x" * 20_000)
    result = call_result(envelope, None, 4_096)
    structured = result.structured_content
    assert result.is_error is True and structured is not None
    assert len(json.dumps(structured, ensure_ascii=False, separators=(",", ":")).encode()) <= 4_096  # as written
    # An error keeps its type over the limit: its message is cut, head and tail kept.
    assert (structured["error_type"], structured["operation"]["outcome"], structured["operation"]["retry"]) == (
        "invalid_params",
        "not_started",
        "after_correction",
    )
    assert structured["message"].startswith("Unknown tool xxx") and "cut to fit the limit" in structured["message"]
    small = call_result(
        Envelope("error", None, op, error_type="invalid_params", message="Unknown tool 'x'"), None, 4_096
    )
    assert small.structured_content["message"] == "Unknown tool 'x'" and text_of(small).startswith(
        "no_such_tool: error"
    )


# --------------------------------------------------------------------------- #
# Images
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("mode", ERAS)
def test_a_screenshot_is_an_image_and_its_facts_without_structured_content(served: Served, mode: str) -> None:
    served.session.navigate(served.demo.url_for("index.html")).raise_for_status()
    tools, (result,) = served.calls(mode, ("browser_screenshot", {}))
    assert {tool.name: tool for tool in tools}["browser_screenshot"].output_schema is None
    assert result.is_error is False and result.structured_content is None
    image, text = result.content
    assert isinstance(image, types.ImageContent) and image.mime_type == "image/png"
    png = base64.b64decode(image.data)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert isinstance(text, types.TextContent) and text.text.startswith("browser_screenshot: success")
    assert f"url: {served.demo.url_for('index.html')}" in text.text
    assert f"image: image/png 1280x720 (source 1280x720), {len(png):,} bytes" in text.text
    assert re.search(r"^operation: [0-9a-f-]{36}$", text.text, re.MULTILINE)
    assert not BASE64_RUN.search(text.text) and image.data[:100] not in text.text


# --------------------------------------------------------------------------- #
# save=true
# --------------------------------------------------------------------------- #


def test_save_writes_the_whole_snapshot_and_returns_its_head(served: Served) -> None:
    session = served.session
    session.navigate(served.demo.url_for("table.html")).raise_for_status()
    whole = ok(session.snapshot())["snapshot"]
    envelope = session.snapshot(save=True)
    data = ok(envelope)
    saved = data["saved"]
    path = Path(saved["path"])
    assert data["snapshot"] is None and envelope.operation.artifacts == (str(path),)
    assert path.suffix == ".yaml" and path.read_text() == whole
    assert saved["size_bytes"] == len(whole.encode()) and saved["lines"] == len(whole.splitlines())
    assert saved["head"] == "\n".join(whole.splitlines()[:HEAD_LINES])
    text = str(envelope)
    assert (
        f"saved: {path} ({saved['size_bytes']:,} bytes, {saved['lines']} lines); the first {HEAD_LINES} lines:" in text
    )
    assert len(text) < 4_000 and "Item 2000" not in text


def test_save_writes_a_script_result_as_text_or_json(served: Served) -> None:
    session = served.session
    session.navigate(served.demo.url_for("table.html")).raise_for_status()
    html = ok(session.evaluate("document.body.innerHTML"))["result"]
    as_text = ok(session.evaluate("document.body.innerHTML", save=True))["saved"]
    assert as_text["path"].endswith(".txt") and Path(as_text["path"]).read_text() == html
    rows = "[...document.querySelectorAll('tbody tr')].map(r => ({id: r.cells[0].textContent}))"
    envelope = session.evaluate(rows, save=True)
    data = ok(envelope)
    assert data["result"] is None and "result:" not in str(envelope)
    assert json.loads(Path(data["saved"]["path"]).read_text()) == [{"id": str(i)} for i in range(1, 2001)]
    assert data["saved"]["head"].splitlines()[:3] == ["[", "  {", '    "id": "1"']


@pytest.mark.parametrize("mode", ERAS)
def test_save_over_mcp_validates(served: Served, mode: str) -> None:
    served.session.navigate(served.demo.url_for("table.html")).raise_for_status()
    tools, (snapshot, script) = served.calls(
        mode, ("browser_snapshot", {"save": True}), ("browser_evaluate", {"expression": "document.title", "save": True})
    )
    for name, result in (("browser_snapshot", snapshot), ("browser_evaluate", script)):
        envelope = validated(tools, name, result)
        assert Path(envelope["data"]["saved"]["path"]).exists()
        assert envelope["operation"]["artifacts"] == [envelope["data"]["saved"]["path"]]
    assert Path(script.structured_content["data"]["saved"]["path"]).read_text() == "Big Table"


# --------------------------------------------------------------------------- #
# Page tools: MCP-style results and non-object inputs
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("mode", ERAS)
def test_page_tool_errors_and_images_reach_the_agent(served: Served, mode: str) -> None:
    session = served.session
    session.navigate(served.demo.url_for("webmcp-results.html")).raise_for_status()
    assert ok(session.call("browser_webmcp_list"))["tools"]  # registered
    tools, (reserve, badge, direct) = served.calls(
        mode,
        ("webmcp_reserve_item", {"item": "Kiwi"}),
        ("webmcp_draw_badge", {"colour": "green"}),
        (CALL_TOOL, {"name": "draw_badge", "input": {"colour": "blue"}}),
    )
    failed = validated(tools, "webmcp_reserve_item", reserve)
    assert reserve.is_error is True
    assert (failed["error_type"], failed["operation"]["outcome"], failed["operation"]["retry"]) == (
        "evaluation_failed",
        "unknown",
        "inspect_state",
    )
    assert "Out of stock: Kiwi. Try again tomorrow." in failed["message"]
    for result, name in ((badge, "webmcp_draw_badge"), (direct, CALL_TOOL)):
        assert result.is_error is False
        envelope = validated(tools, name, result)
        image, text = result.content
        assert isinstance(image, types.ImageContent) and image.mime_type == "image/png"
        assert base64.b64decode(image.data)[:8] == b"\x89PNG\r\n\x1a\n"
        (described,) = envelope["data"]["images"]
        assert described["mime_type"] == "image/png" and described["data"].endswith("bytes: sent as an image block>")
        assert envelope["data"]["content"] == [
            {"type": "text", "text": f"A {'green' if result is badge else 'blue'} badge, 64x32 pixels."}
        ]
        assert isinstance(text, types.TextContent) and "badge, 64x32 pixels" in text.text
        assert_no_base64(result)
    # The Session gets the image itself.
    own = ok(session.call(CALL_TOOL, name="draw_badge", input={"colour": "red"}))
    assert own["images"][0]["data"][:8] == b"\x89PNG\r\n\x1a\n"


def test_a_page_tool_without_an_object_input_is_not_mirrored_but_callable(served: Served) -> None:
    session = served.session
    session.navigate(served.demo.url_for("webmcp-results.html")).raise_for_status()
    assert "shout" in [tool["name"] for tool in ok(session.call("browser_webmcp_list"))["tools"]]
    tools, (shouted,) = served.calls("auto", (CALL_TOOL, {"name": "shout", "input": {"text": "hi"}}))
    names = [tool.name for tool in tools]
    assert "webmcp_draw_badge" in names and "webmcp_shout" not in names
    assert validated(tools, CALL_TOOL, shouted)["data"]["text"] == "HI!"
    warnings = [event for event in session.webmcp_history if event.kind == "warning"]
    assert warnings and warnings[-1].tool_name == "shout"
    assert "not offered to agents" in warnings[-1].summary() and "'string'" in warnings[-1].summary()
    assert CALL_TOOL in warnings[-1].summary()


# --------------------------------------------------------------------------- #
# The TypeScript SDK v2 client, both protocol eras
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
def test_the_typescript_client_reads_the_same_results(served: Served, era: str) -> None:
    session = served.session
    session.navigate(served.demo.url_for("table.html")).raise_for_status()  # the origin mirrors may use
    whole = ok(session.snapshot())["snapshot"]
    report = ts_report("results.mjs", served.handle.url, served.handle.token, served.demo.url, era, era=era)
    schemas = {tool["name"]: tool for tool in report["tools"]}
    for tool in report["tools"]:
        assert (
            schema_problems(tool["inputSchema"]) == []
            and schema_problems(tool["outputSchema"] or {"type": "object"}) == []
        )
    calls = report["calls"]
    for label, call in calls.items():
        if call["structured"] is not None:
            name = {"reserve": "webmcp_reserve_item", "badge": "webmcp_draw_badge", "shout": CALL_TOOL}.get(
                label, "browser_snapshot" if label.startswith("snapshot") else "browser_navigate"
            )
            jsonschema.validate(call["structured"], schemas[name]["outputSchema"])
    # The client loaded the page anew: the same tree, with refs of that document.
    unref = re.compile(r" \[ref=\w+\]")
    snapshot = calls["snapshot"]
    theirs = sent_once(snapshot["structured"], snapshot["text"], "/data/snapshot")  # its lines, as JS splits them
    assert unref.sub("", theirs) == unref.sub("", whole) and 'cell "Item 2000"' in theirs
    assert snapshot["structured"]["data"]["snapshot"] == (
        f"<{len(theirs):,} characters, sent once: lines 4-{3 + len(whole.splitlines()):,} of the text content>"
    )
    assert calls["snapshot_saved"]["structured"]["data"]["saved"]["lines"] == len(whole.splitlines())
    screenshot = calls["screenshot"]
    assert screenshot["contentTypes"] == ["image", "text"] and screenshot["structured"] is None
    assert screenshot["imageMime"] == "image/png" and base64.b64decode(screenshot["imageData"])[:4] == b"\x89PNG"
    assert "operation: " in screenshot["text"] and "1280x720" in screenshot["text"]
    assert not BASE64_RUN.search(screenshot["text"])
    reserve = calls["reserve"]
    assert reserve["isError"] is True and reserve["structured"]["error_type"] == "evaluation_failed"
    assert "Out of stock: Kiwi" in reserve["text"]
    badge = calls["badge"]
    assert badge["contentTypes"] == ["image", "text"] and badge["imageMime"] == "image/png"
    assert not BASE64_RUN.search(json.dumps(badge["structured"])) and not BASE64_RUN.search(badge["text"])
    assert "webmcp_shout" not in schemas and calls["shout"]["structured"]["data"]["text"] == "HI!"
