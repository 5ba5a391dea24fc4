"""Page tools, resources and prompts as the WebMCP adapter reference maps them to MCP, and
browser_execute failures that keep their logs.

Real Chromium against the demo site's webmcp-conformance.html (tools registered as the page
loads, so the init script that captures output schemas must run before the page's own), through
`Session`, the Python MCP client in both protocol eras and the TypeScript SDK v2 client.
"""

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
from mcp.shared.exceptions import MCPError

from webmcp_nb import Session
from webmcp_nb.core.call.errors import ToolFailure
from webmcp_nb.core.evidence.failure import EMPTY_PAGE_WARNING
from webmcp_nb.demo import DemoServer

from .helpers import error, ok, ts_report, wait_until
from .test_failure_context import ts_calls
from .test_webmcp import Events, page_text, tools_of

pytestmark = pytest.mark.playwright_sensitive  # see tests/test_compat_scope.py

AGENT = types.Implementation(name="conformance-agent", version="1.0")
ERAS = ["auto", "legacy"]  # the Python client's 2026-07-28, and 2025-11-25
TS_ERAS = ["legacy", "2026-07-28"]
MEASURE_OUTPUT = {
    "type": "object",
    "properties": {"n": {"type": "number", "description": "How many items"}, "unit": {"type": ["string", "null"]}},
    "required": ["n"],
}
MISMATCH = "'n': does not satisfy type \"number\""
DOC = {"type": "doc", "content": [{"type": "paragraph", "content": [{"type": "text", "text": "A ripe fig."}]}]}


def conformance_page(session: Session, demo: DemoServer) -> None:
    ok(session.navigate(demo.url_for("webmcp-conformance.html")))
    wait_until(lambda: page_text(session, "webmcp-status") == "WebMCP ready")


def agent(server: Any, mode: str = "auto") -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.token}"}, timeout=60)
    return Client(streamable_http_client(server.url, http_client=http), client_info=AGENT, mode=mode)


@pytest.fixture(scope="module")
def served(session: Session) -> Iterator[Any]:
    server = session.serve_mcp(caps=["code"])
    yield server
    server.stop()


@pytest.fixture(scope="module")
def events(session: Session) -> Iterator[Events]:
    collected = Events(session)
    yield collected
    collected.remove()


# --------------------------------------------------------------------------- #
# Output schemas
# --------------------------------------------------------------------------- #


def test_an_output_schema_is_listed_and_a_python_caller_is_warned_of_a_result_that_misses_it(session, demo):
    conformance_page(session, demo)
    listed = session.webmcp_list()
    tools = tools_of(listed)
    assert tools["measure"]["output_schema"] == MEASURE_OUTPUT  # Chromium itself dropped it
    assert tools["quote"]["output_schema"] is None
    assert f"  output: {json.dumps(MEASURE_OUTPUT)}" in str(listed)

    good = ok(session.webmcp_call("measure"))
    assert good["structured"] == {"n": 3, "unit": "items"} and good["warnings"] is None
    broken = session.webmcp_call("measure", {"broken": True})
    data = ok(broken)  # from Python: the result, and a warning (not a silent pass)
    assert data["structured"] == {"n": "not a number", "unit": None}
    assert data["warnings"] == [f"the result does not match the tool's outputSchema: {MISMATCH}"]
    assert "not a number" not in data["warnings"][0]  # rules and paths, not the page's values

    # Registered later by page script, re-registered without a schema: the capture follows.
    ok(
        session.evaluate("""(() => { const c = new AbortController(); window.later = c;
        document.modelContext.registerTool({name: "later", description: "Registered late",
          inputSchema: {type: "object", properties: {}}, outputSchema: {type: "object", required: ["ok"]},
          execute: () => ({nope: 1})}, {signal: c.signal}); })()""")
    )
    assert ok(session.webmcp_call("later"))["warnings"] == [
        "the result does not match the tool's outputSchema: '(root)': 'ok' is a required property"
    ]
    ok(
        session.evaluate("""(() => { window.later.abort(); document.modelContext.registerTool({name: "later",
        description: "Again", inputSchema: {type: "object", properties: {}}, execute: () => ({nope: 1})}); })()""")
    )
    wait_until(lambda: tools_of(session.webmcp_list())["later"]["description"] == "Again")
    assert tools_of(session.webmcp_list())["later"]["output_schema"] is None
    assert ok(session.webmcp_call("later"))["warnings"] is None


@pytest.mark.parametrize("mode", ERAS)
def test_an_agent_gets_a_tool_error_for_a_result_that_misses_the_output_schema(session, demo, served, mode):
    conformance_page(session, demo)

    async def scenario() -> tuple[dict[str, types.Tool], list[types.CallToolResult]]:
        async with agent(served, mode) as client:
            assert client.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            results = [
                await client.call_tool("webmcp_measure", {}),  # the client validates it against the schema
                await client.call_tool("webmcp_measure", {"broken": True}),
                await client.call_tool("browser_webmcp_call", {"name": "measure", "input": {"broken": True}}),
            ]
            return tools, results

    tools, (good, mirrored, direct) = asyncio.run(scenario())
    schema = tools["webmcp_measure"].output_schema
    assert schema is not None
    success = success_branch(schema)
    structured = success["properties"]["data"]["properties"]["structured"]
    assert structured["properties"]["n"] == {"type": "number", "description": "How many items"}
    assert structured["properties"]["unit"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}  # portable
    assert "structured" in success["properties"]["data"]["required"]
    assert "title" not in json.dumps(structured)
    plain = success_branch(tools["webmcp_quote"].output_schema)["properties"]["data"]
    assert plain["properties"]["structured"] == {"type": "object"}  # no schema declared: the generic one,
    assert "structured" not in plain["required"]  # optional: left out when null
    assert good.is_error is False and good.structured_content["data"]["structured"] == {"n": 3, "unit": "items"}
    for result in (mirrored, direct):
        envelope = result.structured_content
        assert result.is_error is True and envelope["error_type"] == "evaluation_failed"
        assert (envelope["operation"]["outcome"], envelope["operation"]["retry"]) == ("completed", "read_only")
        assert f"its result does not match its outputSchema: {MISMATCH}" in envelope["message"]
        assert "not a number" not in envelope["message"]


def success_branch(schema: dict[str, Any] | None) -> dict[str, Any]:
    """The part of a tool's output schema that clients validate a success's envelope against."""
    assert schema is not None and "data" in schema["properties"]
    return schema


# --------------------------------------------------------------------------- #
# Results: multi-round, CallToolResult or not, exact text
# --------------------------------------------------------------------------- #


def test_results_map_as_the_reference_says(session, demo):
    conformance_page(session, demo)
    message = error(session.webmcp_call("choose_size"), "evaluation_failed", "unknown", "inspect_state")
    assert "multi-round result (input_required)" in message

    doc = ok(session.webmcp_call("describe_fruit"))
    assert doc["structured"] == DOC and doc["content"] is None and doc["images"] is None

    assert ok(session.webmcp_call("quote"))["text"] == '"quoted"'
    assert ok(session.webmcp_call("quote", {"kind": "spaced"}))["text"] == "[1, 2 ]"
    assert ok(session.webmcp_call("quote", {"kind": "number"}))["text"] == "42"
    # A valid CallToolResult still passes through as content; one with a block of no MCP type does not.
    ok(
        session.evaluate("""document.modelContext.registerTool({name: "blocks", description: "MCP or not",
        inputSchema: {type: "object", properties: {mcp: {type: "boolean"}}},
        execute: ({mcp}) => ({content: [{type: "text", text: "hi"}, mcp ? {type: "resource_link", uri: "a:b", name: "b"}
                                                                       : {type: "paragraph", text: "hi"}]})})""")
    )
    valid = ok(session.webmcp_call("blocks", {"mcp": True}))
    assert valid["content"] == [{"type": "text", "text": "hi"}, {"type": "resource_link", "uri": "a:b", "name": "b"}]
    invalid = ok(session.webmcp_call("blocks", {"mcp": False}))
    assert invalid["content"] is None
    assert invalid["structured"] == {"content": [{"type": "text", "text": "hi"}, {"type": "paragraph", "text": "hi"}]}


def test_each_call_gets_its_own_exact_text(session, demo):
    """The exact text is asked for with the call and comes back as the tool ends: a call's text is
    never an earlier in-page call's of the same input, nor held by a call that threw."""
    conformance_page(session, demo)
    ok(
        session.evaluate("""(() => { let n = 0;
        document.modelContext.registerTool({name: "tick", description: "Counts its calls, as JSON text",
          inputSchema: {type: "object", properties: {}},
          execute: async () => {
            n += 1;
            await new Promise((resolve) => setTimeout(resolve, 50));  // our ask for the text comes first
            if (n === 3) throw new Error("three");
            return JSON.stringify(`tick ${n}`);
          }});
        return true; })()""")
    )
    in_page = session.evaluate("""(async () => {
        const tool = (await document.modelContext.getTools()).find((t) => t.name === "tick");
        return await document.modelContext.executeTool(tool, {}); })()""")
    assert ok(in_page)["result"] == '"tick 1"'  # its text is kept in the page, unread
    assert ok(session.webmcp_call("tick"))["text"] == '"tick 2"'
    error(session.webmcp_call("tick"), "evaluation_failed")
    assert ok(session.webmcp_call("tick"))["text"] == '"tick 4"'


@pytest.mark.parametrize("mode", ERAS)
def test_an_agent_reads_the_same_results(session, demo, served, mode):
    conformance_page(session, demo)

    async def scenario() -> list[types.CallToolResult]:
        async with agent(served, mode) as client:
            return [
                await client.call_tool("webmcp_choose_size", {}),
                await client.call_tool("webmcp_describe_fruit", {}),
                await client.call_tool("webmcp_quote", {}),
            ]

    asked, doc, quoted = asyncio.run(scenario())
    assert asked.is_error is True and "multi-round result (input_required)" in asked.structured_content["message"]
    assert doc.is_error is False and [block.type for block in doc.content] == ["text"]
    assert doc.structured_content["data"]["structured"] == DOC and "content" not in doc.structured_content["data"]
    assert quoted.structured_content["data"]["text"] == '"quoted"'
    assert quoted.content[0].text.endswith('\ntext: "quoted"')  # as the page produced it, quotes kept


@pytest.mark.parametrize("era", TS_ERAS)
def test_the_typescript_client_reads_page_tool_results_against_their_schemas(session, demo, served, era):
    conformance_page(session, demo)
    calls = [
        ("webmcp_measure", {}),
        ("webmcp_measure", {"broken": True}),
        ("webmcp_choose_size", {}),
        ("webmcp_describe_fruit", {}),
        ("webmcp_quote", {}),
    ]
    good, broken, asked, doc, quoted = ts_calls(served, calls, era)
    for call in (good, broken, asked, doc, quoted):
        assert "thrown" not in call, call  # the client's own output-schema check passed
        assert call["schemaCheck"] == {"valid": True, "errorMessage": None}, call
    assert good["isError"] is False and good["structured"]["data"]["structured"] == {"n": 3, "unit": "items"}
    assert broken["isError"] is True and MISMATCH in broken["structured"]["message"]
    assert broken["text"].startswith("browser_webmcp_call: error evaluation_failed")
    assert asked["isError"] is True and asked["structured"]["error_type"] == "evaluation_failed"
    assert doc["contentTypes"] == ["text"] and doc["structured"]["data"]["structured"] == DOC
    assert quoted["structured"]["data"]["text"] == '"quoted"'


# --------------------------------------------------------------------------- #
# Cancelled calls are events
# --------------------------------------------------------------------------- #


def test_a_call_that_times_out_is_cancelled_in_the_page_and_the_listeners_hear_it(session, demo, events):
    conformance_page(session, demo)
    mark = events.mark()
    error(session.webmcp_call("wait_for_abort", timeout_s=0.5), "operation_timeout", "unknown", "inspect_state")
    invoked, cancelled = events.wait(mark, ("invoked", "responded", "cancelled"), 2)
    assert (invoked.kind, invoked.tool_name, invoked.caller) == ("invoked", "wait_for_abort", "python")
    assert (cancelled.kind, cancelled.tool_name, cancelled.caller) == ("cancelled", "wait_for_abort", "python")
    assert cancelled.invocation_id == invoked.invocation_id and cancelled.summary().startswith("cancelled")
    wait_until(lambda: page_text(session, "aborted") == "Aborted wait_for_abort")  # its AbortSignal fired
    assert not [e for e in events.since(mark) if e.kind == "responded"]


def test_in_polyfill_mode_the_output_schema_comes_from_the_tool_list_and_a_timeout_is_an_event(session, demo, events):
    ok(session.create_instance("poly", webmcp="polyfill"))
    try:
        ok(session.navigate(demo.url_for("webmcp-conformance.html"), instance="poly"))
        tools = wait_until(
            lambda: (found := tools_of(session.webmcp_list(instance="poly"))) and len(found) == 5 and found
        )
        assert tools["measure"]["output_schema"] == MEASURE_OUTPUT
        data = ok(session.webmcp_call("measure", {"broken": True}, instance="poly"))
        assert data["warnings"] == [f"the result does not match the tool's outputSchema: {MISMATCH}"]
        assert ok(session.webmcp_call("quote", instance="poly"))["text"] == '"quoted"'
        mark = events.mark()
        error(session.webmcp_call("wait_for_abort", timeout_s=0.5, instance="poly"), "operation_timeout")
        _, cancelled = events.wait(mark, ("invoked", "cancelled"), 2)
        assert (cancelled.kind, cancelled.instance, cancelled.tool_name) == ("cancelled", "poly", "wait_for_abort")
    finally:
        ok(session.call("browser_destroy_instance", name="poly"))


# --------------------------------------------------------------------------- #
# Python page tools: one per name
# --------------------------------------------------------------------------- #


def test_a_second_python_page_tool_of_the_same_name_is_refused(session, demo):
    conformance_page(session, demo)
    first = session.page_tool(lambda: "first", name="version")
    with pytest.raises(
        ToolFailure, match=r"named 'version' is already registered in page .*unregister it first"
    ) as info:
        session.page_tool(lambda: "second", name="version")
    assert info.value.error_type == "invalid_params"
    assert ok(session.webmcp_call("version"))["text"] == "first" and first.active  # the first is untouched
    with pytest.raises(ToolFailure, match=r"already has a tool named 'measure' \(the page's own\)") as info:
        session.page_tool(lambda: "mine", name="measure")
    assert info.value.error_type == "invalid_params"
    first.unregister()
    second = session.page_tool(lambda: "second", name="version")
    assert ok(session.webmcp_call("version"))["text"] == "second"
    second.unregister()


# --------------------------------------------------------------------------- #
# Resource templates and prompt argument schemas
# --------------------------------------------------------------------------- #


@pytest.fixture(scope="module")
def published() -> Iterator[Any]:
    """A session (no browser) publishing a resource template, a resource and two prompts."""
    with Session() as s:
        s.resource("notes://today", "buy figs")

        @s.resource("notes://{id}", description="One note by its id")
        def note(id: str) -> str:
            return f"Note {id}"

        @s.prompt(
            args_schema={
                "type": "object",
                "properties": {
                    "language": {"type": "string", "enum": ["python", "rust"], "description": "The code's language"},
                    "depth": {"type": "integer", "minimum": 1, "description": "How deep to go"},
                },
                "required": ["language"],
            }
        )
        def review(language: str, depth: int = 1) -> str:
            """Review some code."""
            return f"Review the {language} code, depth {depth!r}."

        server = s.serve_mcp()
        yield server
        server.stop()


def test_a_resource_template_and_prompt_arguments_in_python(published):
    with Session() as s:
        with pytest.raises(ValueError, match="takes no parameter 'id'"):
            s.resource("notes://{id}", lambda: "x")
        with pytest.raises(ValueError, match="needs a function"):
            s.resource("notes://{id}", "fixed")
        with pytest.raises(ValueError, match="names 'colour', which the function does not take"):
            s.prompt(
                lambda topic: topic,
                name="p",
                args_schema={"properties": {"colour": {}, "topic": {}}, "required": ["topic"]},
            )
        with pytest.raises(ValueError, match="parameter 'topic' has no default, so args_schema must require it"):
            s.prompt(lambda topic: topic, name="p", args_schema={"properties": {"topic": {"type": "string"}}})

        @s.prompt
        def typed(count: int, flavour: str = "plain") -> str:
            return f"{count!r} {flavour}"

        prompt = s.published.prompts["typed"]
        assert [(a.name, a.description, a.required) for a in prompt.arguments] == [
            ("count", "(integer)", True),
            ("flavour", "", False),
        ]
        assert prompt.bind({"count": "3"}) == {"count": 3}
        with pytest.raises(ValueError, match="'count': 'three' is not of type 'integer'"):
            prompt.bind({"count": "three"})


@pytest.mark.parametrize("mode", ERAS)
def test_an_agent_reads_a_resource_template_and_typed_prompt_arguments(published, mode):
    async def scenario() -> tuple[Any, ...]:
        async with agent(published, mode) as client:
            templates = (await client.list_resource_templates()).resource_templates
            resources = (await client.list_resources()).resources
            note = await client.read_resource("notes://42")
            spaced = await client.read_resource("notes://a%20b")
            prompts = (await client.list_prompts()).prompts
            got = await client.get_prompt("review", {"language": "rust", "depth": "2"})
            refusals = []
            for args in ({"language": "go"}, {"language": "rust", "depth": "0"}, {"depth": "2"}):
                with pytest.raises(MCPError) as info:
                    await client.get_prompt("review", args)
                refusals.append(info.value.error.message)
            with pytest.raises(MCPError) as info:
                await client.read_resource("notes://a/b")
            return templates, resources, note, spaced, prompts, got, refusals, info.value.error.message

    templates, resources, note, spaced, prompts, got, refusals, unknown = asyncio.run(scenario())
    assert [(t.uri_template, t.description) for t in templates] == [("notes://{id}", "One note by its id")]
    assert [r.uri for r in resources] == ["notes://today"]
    assert note.contents[0].text == "Note 42" and spaced.contents[0].text == "Note a b"
    (review,) = prompts
    assert [(a.name, a.description, a.required) for a in review.arguments or []] == [
        ("language", "The code's language (one of: python, rust)", True),
        ("depth", "How deep to go (integer)", False),
    ]
    assert got.messages[0].content.text == "Review the rust code, depth 2."  # an int, as the schema says
    assert "'language': 'go' is not one of ['python', 'rust']" in refusals[0]
    assert "'depth': 0 is less than the minimum of 1" in refusals[1]
    assert "'language' is a required property" in refusals[2]
    assert "Unknown resource notes://a/b" in unknown


@pytest.mark.parametrize("era", TS_ERAS)
def test_the_typescript_client_reads_a_resource_template_and_prompt_arguments(published, era):
    asks = {"read": ["notes://42", "notes://today"], "prompts": [["review", {"language": "python"}], ["review", {}]]}
    report = ts_report("published.mjs", published.url, published.token, json.dumps(asks), era, era=era)
    assert [t["uriTemplate"] for t in report["templates"]] == ["notes://{id}"]
    assert [r["uri"] for r in report["resources"]] == ["notes://today"]
    assert [read["contents"][0]["text"] for read in report["read"]] == ["Note 42", "buy figs"]
    assert report["prompts"][0]["arguments"][0] == {
        "name": "language",
        "description": "The code's language (one of: python, rust)",
        "required": True,
    }
    rendered, refused = report["got"]
    assert rendered["messages"][0]["content"]["text"] == "Review the python code, depth 1."
    assert "'language' is a required property" in refused["thrown"]


# --------------------------------------------------------------------------- #
# browser_execute failures keep their logs and hints
# --------------------------------------------------------------------------- #

FAILING_SNIPPET = "print('one')\nawait page.evaluate(\"console.log('from the page')\")\nprint('two', end='')\nraise ValueError('boom')"
LOGS = ["print: one", "console.log: from the page", "print: two"]
LOCATOR_SNIPPET = "await page.goto('about:blank')\nprint('going')\nawait page.locator('#nothing').click(timeout=500)"


def test_a_failed_snippet_keeps_its_prints_and_the_empty_page_warning(session, demo):
    ok(session.navigate(demo.url_for("index.html")))
    failed = session.call("browser_execute", code=FAILING_SNIPPET)
    error(failed, "evaluation_failed", "unknown", "inspect_state")
    assert failed.context == {"logs": LOGS}  # the page's console is in them, once
    text = str(failed).splitlines()
    assert text[-6:-2] == ["Logs (latest of the call):", *(f"  {line}" for line in LOGS)]

    lost = session.call("browser_execute", code=LOCATOR_SNIPPET)
    error(lost, "evaluation_failed")
    assert lost.context["warnings"] == [EMPTY_PAGE_WARNING] and lost.context["logs"] == ["print: going"]
    assert list(lost.context)[-1] == "logs"
    assert f"Warnings:\n- {EMPTY_PAGE_WARNING}" in str(lost)
    # A snippet that fails otherwise on an empty page gets no such warning.
    other = session.call("browser_execute", code="1 / 0")
    assert "warnings" not in (other.context or {})


@pytest.mark.parametrize("mode", ERAS)
def test_an_agent_reads_a_failed_snippets_logs(session, demo, served, mode):
    ok(session.navigate(demo.url_for("index.html")))

    async def scenario() -> list[types.CallToolResult]:
        async with agent(served, mode) as client:
            return [
                await client.call_tool("browser_execute", {"code": FAILING_SNIPPET}),
                await client.call_tool("browser_execute", {"code": LOCATOR_SNIPPET}),
            ]

    failed, lost = asyncio.run(scenario())
    for result in (failed, lost):
        assert result.is_error is True and [block.type for block in result.content] == ["text"]
    assert "\nLogs (latest of the call):\n  print: one\n  console.log: from the page\n  print: two\noutcome:" in (
        failed.content[0].text
    )
    assert f"\nWarnings:\n- {EMPTY_PAGE_WARNING}\n" in lost.content[0].text
    assert "\nLogs (latest of the call):\n  print: going\noutcome:" in lost.content[0].text


def test_the_typescript_client_reads_a_failed_snippets_logs(session, demo, served):
    ok(session.navigate(demo.url_for("index.html")))
    failed, lost = ts_calls(
        served,
        [("browser_execute", {"code": FAILING_SNIPPET}), ("browser_execute", {"code": LOCATOR_SNIPPET})],
        "legacy",
    )
    assert failed["isError"] is True and "Logs (latest of the call):\n  print: one\n" in failed["text"]
    assert f"Warnings:\n- {EMPTY_PAGE_WARNING}" in lost["text"]
