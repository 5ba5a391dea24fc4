"""The tool list agents are sent: its byte budget, and what shrinking it must not lose.

`webmcp-nb serve --transport stdio` runs as its own process (default grants, and every grant) and
the official Python client lists its tools in both protocol eras; the sizes are those of the wire
JSON (`tool_list_bytes`, what a model reads counting the server's instructions), held to the
ceilings declared in webmcp_nb.mcp.schemas. An agent's schemas hold what its grant admits. Calls
then show what the published schemas promise: ``null`` for an optional field means "left out",
``null`` where a value is needed is invalid_params before anything runs, and a parameter its
grant withholds is refused naming the cap.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.extension import advertise

from webmcp_nb.client import tool_registry
from webmcp_nb.core.guard.grants import CAPS, GATED_PARAMS, Grant
from webmcp_nb.demo import DemoServer
from webmcp_nb.mcp.app import APP_MIME_TYPE, APP_TOOLS, UI_EXTENSION
from webmcp_nb.mcp.schemas import SHARED_FIELDS, TOOL_LIST_BUDGET, budget_bytes, tool_list_bytes
from webmcp_nb.mcp.server import describe_tool

from .helpers import ref_for

AGENT = types.Implementation(name="tool-list-agent", version="1.0")
GRANTS = {"default": [], "every_grant": list(CAPS)}
ERAS = ("auto", "legacy")
APP = "app"


def serve(caps: list[str]) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "webmcp_nb.cli", "serve", "--transport", "stdio", *(["--caps", *caps] if caps else [])],
        env=dict(os.environ),  # this webmcp_nb (its PYTHONPATH), not the client's default environment
    )


def wire(tools: list[types.Tool]) -> list[dict[str, Any]]:
    """The tools as they travelled (camelCase, no nulls)."""
    return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]


async def listing(caps: list[str], mode: str) -> tuple[list[dict[str, Any]], str | None]:
    """The tool list and the server's instructions, as a client in protocol era `mode` gets them
    (``app``: a 2026-07-28 client that renders MCP Apps, as it advertises)."""
    extensions = [advertise(UI_EXTENSION, {"mimeTypes": [APP_MIME_TYPE]})] if mode == APP else None
    era = "auto" if mode == APP else mode
    async with Client(serve(caps), mode=era, client_info=AGENT, extensions=extensions) as client:
        return wire((await client.list_tools()).tools), client.instructions


Listed = dict[tuple[str, str], tuple[list[dict[str, Any]], str | None]]


@pytest.fixture(scope="module")
def listed() -> Listed:
    """Each grant's tool list and instructions, in each protocol era (2026-07-28, and 2025-11-25),
    and as a host that renders apps gets them."""
    return {(grant, mode): asyncio.run(listing(caps, mode)) for grant, caps in GRANTS.items() for mode in (*ERAS, APP)}


def test_the_tool_list_stays_within_its_budget(listed: Listed) -> None:
    for grant in GRANTS:
        assert listed[(grant, "auto")] == listed[(grant, "legacy")], grant  # one list for both eras
    for grant, part in TOOL_LIST_BUDGET:
        for mode in ("auto", APP):  # a host that renders apps is held to the same ceilings
            sizes = tool_list_bytes(*listed[(grant, mode)])
            assert sizes[part] <= budget_bytes(grant, part), (grant, mode, part, sizes)
    default = tool_list_bytes(*listed[("default", "auto")])
    assert default["tools"] == len([spec for spec in tool_registry() if spec.group == "core"])
    # What moved into the instructions is counted in what a model reads.
    assert default["read"] == default["read_tools"] + len((listed[("default", "auto")][1] or "").encode()) > 0


def test_the_testing_tools_need_the_testing_grant(listed: Listed) -> None:
    verify = {spec.name for spec in tool_registry() if spec.group == "testing"}
    assert len(verify) == 4 and all(name.startswith("browser_verify_") for name in verify)
    assert not verify & {tool["name"] for tool in listed[("default", "auto")][0]}
    assert verify <= {tool["name"] for tool in listed[("every_grant", "auto")][0]}


def test_a_schema_holds_only_the_parameters_the_grant_admits(listed: Listed) -> None:
    default = {tool["name"]: tool["inputSchema"] for tool in listed[("default", "auto")][0]}
    every = {tool["name"]: tool["inputSchema"] for tool in listed[("every_grant", "auto")][0]}
    registry = tool_registry()
    for cap, tools in GATED_PARAMS.items():
        others = Grant.build([other for other in CAPS if other != cap])  # the tool listed, the cap not granted
        for name, params in tools.items():
            assert set(params) <= set(every[name]["properties"]), (cap, name)  # granted: listed
            withheld = describe_tool(registry.get(name), others).input_schema["properties"]
            assert not set(params) & set(withheld), (cap, name)  # else left out
            assert set(params) <= Grant.build().withheld(name) and not set(params) & Grant.build([cap]).withheld(name)
    assert {"name", "profile_dir", "viewport"} <= set(default["browser_create_instance"]["properties"])


def _nodes(schema: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every subschema of `schema` with its path (property names are not keywords)."""
    if not isinstance(schema, dict):
        return
    yield path, schema
    for key, value in schema.items():
        if key in ("properties", "patternProperties") and isinstance(value, dict):
            for name, sub in value.items():
                yield from _nodes(sub, f"{path}/{name}")
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            yield from _nodes(value, f"{path}/{key}")
        elif key in ("anyOf", "oneOf", "allOf") and isinstance(value, list):
            for index, sub in enumerate(value):
                yield from _nodes(sub, f"{path}/{key}/{index}")


def test_published_schemas_are_lean_and_strict(listed: Listed) -> None:
    tools = {tool["name"]: tool for tool in listed[("every_grant", APP)][0]}  # the app-only tools too
    assert set(tools) == {spec.name for spec in tool_registry() if spec.group != "notebook"} | set(APP_TOOLS)
    shared = set(SHARED_FIELDS.values())
    for name, tool in tools.items():
        data = (tool.get("outputSchema") or {}).get("properties", {}).get("data")
        if data is not None:  # strict; an optional field is left out when null, so it has no null branch
            assert data["type"] == "object" and data["additionalProperties"] is False, name
            optional = set(data["properties"]) - set(data.get("required", []))
            assert not [f for f in optional if {"type": "null"} in data["properties"][f].get("anyOf", [])], name
        schema = tool["inputSchema"]
        assert schema["type"] == "object" and "description" not in schema, name
        for path, node in _nodes(schema):
            assert not {"title", "$ref", "$defs", "pattern", "maxLength"} & set(node), (name, path)
            assert node.get("description") not in shared, (name, path)  # worded once, in the instructions
            if node.get("type") == "object" and "properties" in node:
                assert node.get("additionalProperties") is False, (name, path)
            required = set(node.get("required", []))
            for field, prop in node.get("properties", {}).items():
                if field not in required:  # optional: simply not required, no null branch
                    assert {"type": "null"} not in prop.get("anyOf", []), (name, path, field)
                    assert prop.get("default", "") is not None, (name, path, field)


def test_annotations_say_what_the_registry_says_under_mcp_defaults(listed: Listed) -> None:
    """Hints equal to MCP's defaults are left out; read back with those defaults they are the tool's."""
    tools = {tool["name"]: tool for tool in listed[("every_grant", "auto")][0]}
    for spec in tool_registry():
        if spec.name not in tools:
            continue
        hints = tools[spec.name].get("annotations", {})  # none at all when every hint is MCP's default
        assert hints.get("readOnlyHint", False) is spec.read_only, spec.name
        assert hints.get("openWorldHint", True) is spec.open_world, spec.name
        if not spec.read_only:
            assert hints.get("destructiveHint", True) is spec.destructive, spec.name
            assert hints.get("idempotentHint", False) is spec.idempotent, spec.name
        assert tools[spec.name]["title"] == spec.title and "title" not in hints


def test_the_shared_fields_are_worded_once_in_the_instructions(listed: Listed) -> None:
    for era in ERAS:
        instructions = listed[("default", era)][1] or ""
        for name, wording in SHARED_FIELDS.items():
            assert instructions.count(wording.rstrip(".")) == 1, (era, name)
    observe = next(t for t in listed[("default", "auto")][0] if t["name"] == "browser_click")["inputSchema"][
        "properties"
    ]
    assert observe["observe"]["properties"]["kind"]["enum"][0] == "response"  # its structure stays, its prose moved
    assert "timeout_ms" in observe["observe"]["properties"] and "description" not in observe["observe"]


# --------------------------------------------------------------------------- #
# What a client may send
# --------------------------------------------------------------------------- #


@pytest.mark.browser
def test_null_for_an_optional_field_is_left_out_and_null_for_a_value_is_invalid(demo: DemoServer) -> None:
    async def scenario() -> dict[str, types.CallToolResult]:
        async with Client(serve([]), client_info=AGENT) as client:
            results = {"navigate": await client.call_tool("browser_navigate", {"url": demo.url_for("index.html")})}
            nulls = {"instance": None, "page_id": None, "frame_id": None, "ref": None, "depth": None}
            results["snapshot"] = await client.call_tool("browser_snapshot", nulls)
            ref = ref_for(results["snapshot"].structured_content["data"]["snapshot"], 'button "Add Banana"')  # type: ignore[index]
            results["click"] = await client.call_tool("browser_click", {"ref": ref, "observe": None, "instance": None})
            results["flag"] = await client.call_tool("browser_snapshot", {"save": None})
            results["observe"] = await client.call_tool(
                "browser_click", {"ref": ref, "observe": {"kind": "popup", "timeout_ms": None}}
            )
            return results

    results = asyncio.run(scenario())
    for name in ("navigate", "snapshot", "click"):
        assert results[name].is_error is False, name
        assert results[name].structured_content["status"] == "success", name  # type: ignore[index]
    for name, field in (("flag", "save"), ("observe", "observe.timeout_ms")):
        envelope = results[name].structured_content
        assert results[name].is_error is True and envelope is not None, name
        assert envelope["error_type"] == "invalid_params", envelope
        assert envelope["operation"]["outcome"] == "not_started", envelope
        assert f"parameter '{field}'" in envelope["message"], envelope


WITHHELD_VALUES: dict[str, dict[str, Any]] = {
    "args": {"args": ["--no-first-run"]},
    "executable_path": {"executable_path": "/bin/sh"},
    "endpoint": {"backend": "remote", "endpoint": "ws://127.0.0.1:9/x"},
    "cdp_endpoint": {"backend": "remote", "cdp_endpoint": "http://127.0.0.1:9"},
    "headers": {"headers": {"X-Token": "t"}},
    "headless": {"headless": False},
    "reveal_secrets": {"reveal_secrets": True},
    "storage_state": {"storage_state": "shop-login"},
}
"""A value for each parameter a cap gates (`GATED_PARAMS`) that the tool refuses without it."""
REFUSAL = {
    "browser": ("`browser` capability", "--caps browser"),
    "secrets": ("'secrets' grant", "--caps secrets"),
    "storage": ("`storage` capability", "--caps storage"),
}


@pytest.mark.browser
def test_a_withheld_parameter_sent_anyway_is_refused_naming_its_cap() -> None:
    base = {"browser_create_instance": {"name": "widened"}, "browser_trace": {"action": "stop"}}
    calls = [
        (cap, name, param, {**base.get(name, {}), **WITHHELD_VALUES[param]})
        for cap, tools in GATED_PARAMS.items()
        for name, params in tools.items()
        for param in params
    ]
    assert {param for _, _, param, _ in calls} == set(WITHHELD_VALUES) and set(GATED_PARAMS) == set(REFUSAL)

    async def scenario() -> list[types.CallToolResult]:
        async with Client(serve(["tracing"]), client_info=AGENT) as client:  # browser_trace listed, no secrets
            return [await client.call_tool(name, args) for _, name, _, args in calls]

    for (cap, name, param, _), result in zip(calls, asyncio.run(scenario()), strict=True):
        envelope = result.structured_content
        assert result.is_error is True and envelope is not None, (name, param)
        assert (envelope["error_type"], envelope["operation"]["outcome"]) == ("invalid_params", "not_started"), envelope
        assert all(words in envelope["message"] for words in REFUSAL[cap]), (name, param, envelope["message"])
