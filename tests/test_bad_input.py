"""Bad input for every tool: refused before anything is done, and nothing is done.

For each tool in the registry the same battery of malformed calls is sent to a
real Chromium session whose shop page is in a known state (one item in the
cart, a known URL, one tab, one instance). Every call must come back as
``invalid_params`` with outcome ``not_started`` and retry ``after_correction``,
naming the offending field, and the page must be exactly as it was.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import httpx2
import pydantic
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.inbound import encode_header_value

import webmcp_nb.core.tools  # noqa: F401 - registers every tool
from tests.conftest import browser_processes, error, ok, ref_for
from webmcp_nb import Envelope, Session
from webmcp_nb.core.call.bounds import (
    INVALID_TOOL_NAME,
    MAX_ARGUMENT_BYTES,
    MAX_ARGUMENT_DEPTH,
    MAX_INTEGER_BITS,
    MAX_TOOL_NAME_CHARS,
    screen,
)
from webmcp_nb.core.call.registry import REGISTRY, ToolSpec
from webmcp_nb.core.config import MIN_RESULT_BYTES

HUGE = "x" * 200_000
MAX_MESSAGE = 2_000  # an error message never echoes a huge input back
CART = "Cart: 1 item: Apple"

# A valid value for every required parameter, so that each bad call below is
# wrong in exactly one way. (The baseline itself is never sent.)
REQUIRED: dict[str, dict[str, Any]] = {
    "browser_create_instance": {"name": "bad-input-probe"},
    "browser_destroy_instance": {"name": "bad-input-probe"},
    "browser_list_instances": {},
    "browser_storage_state": {"action": "list"},
    "browser_health": {},
    "browser_navigate": {"url": "about:blank"},
    "browser_navigate_back": {},
    "browser_navigate_forward": {},
    "browser_reload": {},
    "browser_snapshot": {},
    "browser_click": {"ref": "e1"},
    "browser_type": {"ref": "e1", "text": "typed"},
    "browser_fill_form": {"fields": [{"ref": "e1", "type": "textbox", "value": "typed"}]},
    "browser_select_option": {"ref": "e1", "values": ["Apple"]},
    "browser_hover": {"ref": "e1"},
    "browser_press_key": {"key": "Enter"},
    "browser_mouse_click_xy": {"x": 10.0, "y": 10.0},
    "browser_keyboard_type": {"text": "typed"},
    "browser_scroll": {"delta_y": 100.0},
    "browser_drag": {"source_ref": "e1", "target_ref": "e2"},
    "browser_file_upload": {"paths": ["/etc/hostname"]},
    "browser_screenshot": {},
    "browser_wait_for": {"time_s": 1.0},
    "browser_handle_dialog": {"accept": True},
    "browser_evaluate": {"expression": "document.body.innerHTML = ''"},
    "browser_execute": {"code": "await page.evaluate(\"document.body.innerHTML = ''\")"},
    "browser_tabs": {"action": "new"},
    "browser_frames": {},
    "browser_webmcp_list": {},
    "browser_webmcp_call": {"name": "add_to_cart", "input": {"item": "Apple", "quantity": 1}},
    "browser_downloads": {},
    "browser_pdf": {},
    "browser_console": {},
    "browser_network": {},
    "browser_network_body": {"request_id": "r1"},
    "browser_events_export": {},
    "browser_trace": {"action": "start"},
    "browser_verify_element_visible": {"role": "button", "name": "Add Apple"},
    "browser_verify_text_visible": {"text": "Cart"},
    "browser_verify_list_visible": {"ref": "e1", "items": ["Apple"]},
    "browser_verify_value": {"ref": "e1", "value": "x"},
    "browser_http": {"url": "/api/items"},
}

# Free-form objects: a page tool's input, checked against that tool's own inputSchema.
FREE_FORM = {("browser_webmcp_call", "/properties/input"), ("browser_http", "/properties/json_body/anyOf/0")}
# Maps from any name to a typed value: HTTP request headers.
MAPS = {("browser_http", "/properties/headers")}

TOOLS = REGISTRY.names()


# schema helpers ------------------------------------------------------------------
def resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def branches(schema: dict[str, Any], root: dict[str, Any]) -> list[dict[str, Any]]:
    """The non-null alternatives a property accepts."""
    schema = resolve(schema, root)
    if "anyOf" in schema:
        return [resolve(b, root) for b in schema["anyOf"] if b.get("type") != "null"]
    return [schema]


def json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def wrong_value(schema: dict[str, Any], root: dict[str, Any]) -> Any:
    """A value of a JSON type the property does not accept (an int where a str is expected...)."""
    accepted = {b.get("type") for b in branches(schema, root)}
    if "number" in accepted:
        accepted.add("integer")
    for candidate in (12345, "not-the-right-type", True, {"nested": 1}):
        if json_type(candidate) not in accepted:
            return candidate
    raise AssertionError(f"no wrong type for {schema}")


def huge_variants(spec: ToolSpec) -> list[tuple[str, dict[str, Any]]]:
    """(dotted field, args) with a 200 000 character string in each string slot, nested ones included."""
    root = spec.input_schema
    base = REQUIRED[spec.name]
    variants = []
    for name, prop in root["properties"].items():
        for branch in branches(prop, root):
            kind = branch.get("type")
            if kind == "string":
                variants.append((name, {**base, name: HUGE}))
            elif kind == "array":
                for item in branches(branch["items"], root):
                    if item.get("type") == "string":
                        variants.append((f"{name}.0", {**base, name: [HUGE]}))
                    elif item.get("type") == "object":
                        template = (base.get(name) or [{}])[0]
                        for sub, sub_schema in item["properties"].items():
                            if any(b.get("type") == "string" for b in branches(sub_schema, root)):
                                variants.append((f"{name}.0.{sub}", {**base, name: [{**template, sub: HUGE}]}))
            elif kind == "object":
                for sub, sub_schema in branch.get("properties", {}).items():
                    if any(b.get("type") == "string" for b in branches(sub_schema, root)):
                        variants.append((f"{name}.{sub}", {**base, name: {**(base.get(name) or {}), sub: HUGE}}))
    return variants


def object_schemas(schema: Any, where: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object schema with properties inside `schema` ($defs included), with its location."""
    if isinstance(schema, dict):
        if schema.get("type") == "object" or "properties" in schema:
            yield where or "(root)", schema
        for key, value in schema.items():
            yield from object_schemas(value, f"{where}/{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            yield from object_schemas(value, f"{where}/{index}")


# page state ----------------------------------------------------------------------
def observe(session: Session) -> dict[str, Any]:
    """Everything a stray call could have changed, read without changing it."""
    return {
        "url": ok(session.evaluate("location.href"))["result"],
        "cart": ok(session.evaluate("document.getElementById('cart').textContent"))["result"],
        "body": ok(session.evaluate("document.body.children.length"))["result"],
        "tabs": [(t["page_id"], t["url"], t["current"]) for t in ok(session.tabs("list"))["tabs"]],
        "instances": [
            (i["name"], i["instance_id"], i["state"], i["pages"]) for i in ok(session.list_instances())["instances"]
        ],
        "current_instance": ok(session.list_instances())["current_instance"],
    }


@pytest.fixture(scope="module")
def known_state(session: Session, demo) -> dict[str, Any]:
    """The shop with one Apple in the cart; returns what `observe` sees."""
    ok(session.navigate(demo.url_for("index.html")))
    ok(session.click(ref_for(ok(session.snapshot())["snapshot"], 'button "Add Apple"')))
    state = observe(session)
    assert state["url"] == demo.url_for("index.html")
    assert state["cart"] == CART
    assert len(state["tabs"]) == 1 and state["tabs"][0][2] is True
    assert [(name, pages) for name, _id, _state, pages in state["instances"]] == [("default", 1)]
    return state


def refused(envelope: Envelope, tool: str, *words: str) -> str:
    """Assert the call was refused as invalid before anything ran; return the message."""
    message = error(envelope, "invalid_params", outcome="not_started", retry="after_correction")
    assert envelope.status == "error"
    assert envelope.instance is None
    assert envelope.data is None
    op = envelope.operation
    assert op.tool == tool
    assert (op.instance_id, op.page_id, op.frame_id) == (None, None, None)
    assert op.artifacts == ()
    assert len(message) <= MAX_MESSAGE, f"{len(message)} characters: {message[:300]}..."
    for word in words:
        assert word in message, f"{word!r} not in: {message}"
    return message


# the registry itself ---------------------------------------------------------------
def test_every_tool_has_a_baseline():
    assert sorted(REQUIRED) == sorted(TOOLS), "add a baseline of valid required arguments for new tools"


@pytest.mark.parametrize("tool", TOOLS)
def test_baseline_is_valid_and_covers_the_required_fields(tool):
    spec = REGISTRY.get(tool)
    assert set(spec.input_schema.get("required", [])) <= set(REQUIRED[tool])
    spec.validate(REQUIRED[tool])  # raises if the baseline is itself invalid


@pytest.mark.parametrize("tool", TOOLS)
def test_input_schema_forbids_unknown_fields_everywhere(tool):
    schema = REGISTRY.get(tool).input_schema
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    for name, definition in schema.get("$defs", {}).items():
        if definition.get("type") == "object":
            assert definition.get("additionalProperties") is False, f"$defs/{name}"
    found = list(object_schemas(schema))
    assert found
    for where, obj in found:
        if (tool, where) in FREE_FORM:
            assert obj.get("additionalProperties") is True and "properties" not in obj
            continue
        if (tool, where) in MAPS:
            assert obj["additionalProperties"]["type"] == "string" and "properties" not in obj
            continue
        assert obj.get("additionalProperties") is False, f"{tool}: {where} allows unknown fields"


@pytest.mark.parametrize("tool", TOOLS)
def test_tool_metadata_is_complete(tool):
    spec = REGISTRY.get(tool)
    assert spec.name == tool and tool.startswith("browser_")
    assert isinstance(spec.title, str) and spec.title.strip()
    assert isinstance(spec.description, str) and len(spec.description.strip()) > 10
    assert spec.data_schema["type"] == "object"
    assert isinstance(spec.data_schema.get("properties"), dict)
    assert spec.data_schema.get("additionalProperties") is False
    assert set(spec.annotations) == {"read_only", "destructive", "idempotent", "open_world"}
    assert all(isinstance(value, bool) for value in spec.annotations.values())
    assert not (spec.read_only and spec.destructive)


# the battery, per tool ---------------------------------------------------------------
@pytest.mark.parametrize("tool", TOOLS)
def test_bad_input_is_refused_and_changes_nothing(session, known_state, tool):
    spec = REGISTRY.get(tool)
    schema = spec.input_schema
    base = REQUIRED[tool]
    required = schema.get("required", [])
    calls = 0

    # an unknown field
    message = refused(session.call(tool, **base, bogus_field=1), tool, "'bogus_field'", "unknown parameter")
    for allowed in schema["properties"]:
        assert allowed in message
    calls += 1

    # a wrong type for each field, required ones first
    for name in [*required, *(n for n in schema["properties"] if n not in required)]:
        value = wrong_value(schema["properties"][name], schema)
        refused(session.call(tool, **{**base, name: value}), tool, f"'{name}")
        calls += 1

    # missing required fields: each alone, then all at once
    for name in required:
        args = {key: value for key, value in base.items() if key != name}
        refused(session.call(tool, **args), tool, f"missing required parameter '{name}'")
        calls += 1
    if required:
        message = refused(session.call(tool), tool)
        for name in required:
            assert f"missing required parameter '{name}'" in message
        calls += 1

    # a huge string in every string slot
    for dotted, args in huge_variants(spec):
        refused(session.call(tool, **args), tool, f"'{dotted}")
        calls += 1

    # explicit None for a required field is not "use the default"
    for name in required:
        refused(session.call(tool, **{**base, name: None}), tool, f"'{name}")
        calls += 1

    assert calls >= 1
    assert observe(session) == known_state


def test_huge_variants_reach_nested_strings():
    labels = {tool: [label for label, _ in huge_variants(REGISTRY.get(tool))] for tool in TOOLS}
    assert {"fields.0.ref", "fields.0.type", "fields.0.value", "fields.0.name"} <= set(labels["browser_fill_form"])
    assert {"values.0"} <= set(labels["browser_select_option"])
    assert {"paths.0"} <= set(labels["browser_file_upload"])
    assert {"args.0", "name", "profile_dir", "locale"} <= set(labels["browser_create_instance"])
    assert {"url", "wait_until", "instance", "page_id"} <= set(labels["browser_navigate"])


# tool names, argument shapes, instances -------------------------------------------------
def test_an_unknown_tool_is_refused_with_close_matches(session, known_state):
    envelope = session.call("browser_snapshots")
    message = refused(envelope, "browser_snapshots", "'browser_snapshots'", "Did you mean", "browser_snapshot")
    envelope = session.call("browser_navigat", url="about:blank")
    refused(envelope, "browser_navigat", "browser_navigate")
    envelope = session.call("qqq")
    message = refused(envelope, "qqq", "Unknown tool 'qqq'")
    assert "Did you mean" not in message
    assert observe(session) == known_state


@pytest.mark.parametrize("args", [None, [], ["about:blank"], "url=about:blank", 42, ("about:blank",)])
def test_non_object_arguments_are_refused_by_the_engine(session, known_state, args):
    envelope = session.call_as("test", "browser_navigate", args)  # type: ignore[arg-type]
    refused(envelope, "browser_navigate", "object")
    assert observe(session) == known_state


def test_non_string_keys_are_refused(session, known_state):
    envelope = session.call_as("test", "browser_navigate", {"url": "about:blank", 1: "x"})
    refused(envelope, "browser_navigate", "'1'")
    assert observe(session) == known_state


def test_an_unknown_field_nested_in_an_object_is_named(session, known_state):
    envelope = session.call("browser_fill_form", fields=[{"ref": "e1", "type": "textbox", "value": "v", "bogus": 1}])
    refused(envelope, "browser_fill_form", "'fields.0.bogus'")
    envelope = session.call(
        "browser_create_instance", name="bad-input-probe", viewport={"width": 800, "height": 600, "depth": 24}
    )
    refused(envelope, "browser_create_instance", "'viewport.depth'")
    assert observe(session) == known_state


def test_an_unknown_nested_field_lists_the_fields_of_that_object(session, known_state):
    # The hint must list what the nested object accepts, not the top-level parameters.
    envelope = session.call("browser_fill_form", fields=[{"ref": "e1", "type": "textbox", "value": "v", "bogus": 1}])
    message = refused(envelope, "browser_fill_form", "'fields.0.bogus'")
    assert "allowed: ref, type, value, name" in message, message


def test_a_huge_unknown_field_name_is_not_echoed_back(session, known_state):
    envelope = session.call("browser_snapshot", **{HUGE: 1})
    refused(envelope, "browser_snapshot", "unknown parameter")  # refused() also bounds the message length
    assert observe(session) == known_state


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("browser_snapshot", {}),
        ("browser_navigate", {"url": "about:blank"}),
        ("browser_evaluate", {"expression": "document.body.innerHTML = ''"}),
        ("browser_tabs", {"action": "new"}),
        ("browser_click", {"ref": "e1"}),
    ],
)
def test_an_unknown_instance_is_not_created(session, known_state, tool, args):
    envelope = session.call(tool, **args, instance="ghost")
    message = error(envelope, "instance_not_found", outcome="not_started", retry="after_correction")
    assert "'ghost'" in message and "default" in message
    assert envelope.operation.page_id is None and envelope.operation.frame_id is None
    assert observe(session) == known_state


@pytest.mark.parametrize(
    "name", ["bad name", "-leading-dash", ".hidden", "x" * 65, "", "a/b", "über", "a\nb", "name\n"]
)
def test_a_bad_instance_name_is_invalid(session, known_state, name):
    refused(session.call("browser_snapshot", instance=name), "browser_snapshot", "'instance'")
    refused(session.call("browser_create_instance", name=name), "browser_create_instance", "'name'")
    refused(session.call("browser_destroy_instance", name=name), "browser_destroy_instance", "'name'")
    assert observe(session) == known_state


def test_destroying_an_unknown_instance_changes_nothing(session, known_state):
    envelope = session.destroy_instance("ghost")
    message = error(envelope, "instance_not_found", outcome="not_started", retry="after_correction")
    assert "'ghost'" in message
    assert observe(session) == known_state


# bounds before validation: depth, size, numbers ----------------------------------------
def nested(levels: int, leaf: Any = 1) -> Any:
    """`levels` objects nested in one another around `leaf`."""
    value = leaf
    for _ in range(levels):
        value = {"a": value}
    return value


def test_depth_bound_is_exact():
    # The arguments object is level 1: 1 + 63 levels under "input" is the deepest allowed.
    assert screen("browser_webmcp_call", {"name": "t", "input": nested(MAX_ARGUMENT_DEPTH - 1)}) is None
    refusal = screen("browser_webmcp_call", {"name": "t", "input": nested(MAX_ARGUMENT_DEPTH)})
    assert refusal is not None and refusal.error_type == "invalid_params" and refusal.started is False
    assert f"deeper than {MAX_ARGUMENT_DEPTH} levels" in refusal.message
    deep_list: Any = 1
    for _ in range(MAX_ARGUMENT_DEPTH):
        deep_list = [deep_list]
    assert screen("browser_select_option", {"values": deep_list}) is not None  # arrays count too
    assert MAX_ARGUMENT_DEPTH == 64 and MAX_ARGUMENT_BYTES == 1_048_576


@pytest.mark.parametrize(
    ("tool", "args", "where"),
    [
        ("browser_webmcp_call", {"name": "add_to_cart", "input": nested(3_000)}, "input.a.a"),
        ("browser_snapshot", {"bogus": nested(3_000)}, "bogus.a.a"),
        ("browser_fill_form", {"fields": [nested(200)]}, "fields.0.a.a"),
        ("browser_navigate", {"url": "about:blank", "extra": nested(MAX_ARGUMENT_DEPTH)}, "extra.a"),
    ],
    ids=["free-form-input", "unknown-field", "list-item", "one-past-the-bound"],
)
def test_deep_arguments_are_refused_before_validation(session, known_state, tool, args, where):
    envelope = session.call_as("test", tool, args)
    message = refused(envelope, tool, f"deeper than {MAX_ARGUMENT_DEPTH} levels", f"'{where}")
    assert "no tool takes input that deep" in message
    assert observe(session) == known_state


def test_a_cyclic_argument_is_refused_as_too_deep(session, known_state):
    cycle: dict[str, Any] = {}
    cycle["self"] = cycle
    envelope = session.call_as("test", "browser_webmcp_call", {"name": "x", "input": cycle})
    refused(envelope, "browser_webmcp_call", "deeper than")
    assert observe(session) == known_state


def test_nesting_within_the_bound_reaches_validation(session, known_state):
    envelope = session.call_as("test", "browser_snapshot", {"bogus": nested(MAX_ARGUMENT_DEPTH - 2)})
    refused(envelope, "browser_snapshot", "unknown parameter 'bogus'")


@pytest.mark.parametrize(
    ("tool", "args", "where"),
    [
        ("browser_type", {"ref": "e1", "text": "x" * (MAX_ARGUMENT_BYTES + 1)}, "text"),
        ("browser_type", {"ref": "e1", "text": "é" * (MAX_ARGUMENT_BYTES // 2 + 1)}, "text"),  # 2 bytes each in UTF-8
        ("browser_select_option", {"ref": "e1", "values": ["a"] * 600_000}, "values"),
        ("browser_snapshot", {"x" * (MAX_ARGUMENT_BYTES + 1): 1}, "(arguments)"),
        ("qqq", {"bogus": list(range(10_000_000))}, "bogus"),
    ],
    ids=["ascii", "two-byte", "wide-list", "huge-key", "ten-million-items"],
)
def test_large_arguments_are_refused_before_validation(session, known_state, tool, args, where):
    message = refused(session.call_as("test", tool, args), tool, f"larger than {MAX_ARGUMENT_BYTES:,} bytes")
    assert f"crossed at '{where}" in message
    assert observe(session) == known_state


def test_arguments_within_the_size_bound_reach_validation(session, known_state):
    # Just under a MiB of two-byte characters: validation runs and names the field.
    envelope = session.call_as("test", "browser_snapshot", {"bogus": "é" * 500_000})
    refused(envelope, "browser_snapshot", "unknown parameter 'bogus'")


@pytest.mark.parametrize("value", [10**100_000, -(2**MAX_INTEGER_BITS)], ids=["googol-ish", "minus-2**1024"])
def test_integers_beyond_any_json_number_are_refused(session, known_state, value):
    envelope = session.call("browser_scroll", delta_y=value)
    refused(envelope, "browser_scroll", "The integer at 'delta_y'", f"2**{MAX_INTEGER_BITS}")
    envelope = session.call("browser_webmcp_call", name="add_to_cart", input={"quantity": [value]})
    refused(envelope, "browser_webmcp_call", "'input.quantity.0'")
    assert observe(session) == known_state


def test_the_largest_integer_reaches_validation(session, known_state):
    envelope = session.call("browser_scroll", delta_y=2**MAX_INTEGER_BITS - 1)
    message = refused(envelope, "browser_scroll", "parameter 'delta_y'")
    assert "..." in message  # the 309-digit number is clipped, not echoed whole


# tool names ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", [1, None, 2.5, b"browser_snapshot", ["browser_snapshot"], {"a": 1}, object()])
def test_a_non_string_tool_name_is_invalid_everywhere(session, known_state, name):
    kind = type(name).__name__
    for envelope in (
        session.call(name),  # type: ignore[arg-type]
        session.call_as("test", name, {}),  # type: ignore[arg-type]
        asyncio.run(session.acall(name)),  # type: ignore[arg-type]
    ):
        refused(envelope, INVALID_TOOL_NAME, f"The tool name must be a string, not {kind}.")
        assert envelope.to_dict()["operation"]["tool"] == "(invalid tool name)"
    assert observe(session) == known_state


def test_a_huge_unknown_tool_name_gives_a_small_envelope(session, known_state):
    envelope = session.call("x" * 2_000_000)
    message = refused(
        envelope, INVALID_TOOL_NAME, "2,000,000 characters long", f"over the limit of {MAX_TOOL_NAME_CHARS}"
    )
    assert "x" * 41 not in message  # only the start is quoted
    assert len(envelope.to_json_bytes()) < 1_500
    assert len(str(envelope)) < 1_500
    assert observe(session) == known_state


def test_tool_names_up_to_the_limit_are_kept(session, known_state):
    longest = "browser_" + "z" * (MAX_TOOL_NAME_CHARS - 8)
    refused(session.call(longest), longest, f"Unknown tool {longest!r}.")
    refused(session.call(longest + "z"), INVALID_TOOL_NAME, f"{MAX_TOOL_NAME_CHARS + 1:,} characters long")


def test_every_envelope_is_held_to_the_byte_limit(fresh_session):
    s = fresh_session(max_result_bytes=MIN_RESULT_BYTES)
    for name in ("q" * MAX_TOOL_NAME_CHARS, "x" * 10_000_000, 7):
        envelope = s.call(name)  # type: ignore[arg-type]
        assert envelope.error_type == "invalid_params"
        assert len(envelope.to_json_bytes()) <= MIN_RESULT_BYTES


# lone surrogates -------------------------------------------------------------------------
def test_a_lone_surrogate_in_a_tool_name_serialises(session, known_state):
    envelope = session.call("browser_\ud800snapshot")
    refused(envelope, "browser_\ud800snapshot", "Unknown tool 'browser_\\ud800snapshot'")
    as_json = envelope.to_json()
    as_json.encode("utf-8")  # encodable
    assert json.loads(as_json)["operation"]["tool"] == "browser_\\ud800snapshot"  # the escape, as text
    text = str(envelope)
    text.encode("utf-8")
    assert text.startswith("browser_\\ud800snapshot: error invalid_params")
    data, _ = envelope._repr_mimebundle_()
    for value in data.values():
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    assert "\\ud800" in repr(envelope)
    assert observe(session) == known_state


def test_a_lone_surrogate_in_arguments_is_invalid_and_serialises(session, known_state):
    envelope = session.call("browser_navigate", url="http://127.0.0.1/\udfff")
    message = refused(envelope, "browser_navigate", "parameter 'url'", "\\udfff")
    envelope.to_json().encode("utf-8")
    assert "\\udfff" in message
    assert observe(session) == known_state


def test_a_page_value_with_a_lone_surrogate_serialises(session, known_state):
    envelope = session.evaluate("'a' + String.fromCharCode(0xd800) + 'b'")
    value = ok(envelope)["result"]
    assert value in ("a\ud800b", "a\ufffdb")  # Playwright 1.62 replaces it on the way; 1.65 keeps it
    written = "a\\ud800b" if value == "a\ud800b" else value  # kept in Python, escaped when written
    assert json.loads(envelope.to_json())["data"]["result"] == written
    assert f'result: "{written}"' in str(envelope)
    str(envelope).encode("utf-8")


# over MCP: what the SDK refuses before our code runs, and what reaches the tools -----------
PROTOCOLS = ("2025-11-25", "2026-07-28")


class RawMCP:
    """Hand-written JSON-RPC over streamable HTTP (httpx), in either protocol era, so that
    requests no client library would send can be sent."""

    def __init__(self, handle: Any, protocol: str) -> None:
        self.url, self.protocol = handle.url, protocol
        self.http = httpx.Client(timeout=60)
        self.headers = {
            "Authorization": f"Bearer {handle.token}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        if protocol == "2025-11-25":
            init = {"protocolVersion": protocol, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
            response = self.post('{"jsonrpc":"2.0","id":0,"method":"initialize","params":' + json.dumps(init) + "}")
            self.headers |= {"mcp-session-id": response.headers["mcp-session-id"], "mcp-protocol-version": protocol}
            self.post('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        else:
            self.headers |= {"mcp-protocol-version": protocol, "mcp-method": "tools/call"}

    def post(self, body: str, **headers: str) -> httpx.Response:
        return self.http.post(self.url, content=body.encode("utf-8"), headers={**self.headers, **headers})

    def call(self, params: str, name_header: str | None = None) -> tuple[int, dict[str, Any]]:
        """POST a tools/call whose params are the JSON text `params` (a lone surrogate can
        only be written as an escape); returns the HTTP status and the JSON-RPC response."""
        if self.protocol != "2025-11-25":
            meta = {
                "io.modelcontextprotocol/protocolVersion": self.protocol,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
            }
            params = '{"_meta":' + json.dumps(meta) + "," + params[1:]
        headers = {"mcp-name": name_header} if name_header is not None else {}
        response = self.post('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":' + params + "}", **headers)
        return response.status_code, response.json()


@pytest.fixture(scope="module")
def mcp_server(session: Session) -> Iterator[Any]:
    handle = session.serve_mcp()
    yield handle
    handle.stop()


def refused_result(response: dict[str, Any], tool: str, *words: str) -> dict[str, Any]:
    """Assert a tools/call answered with an isError result carrying an invalid_params envelope."""
    assert "error" not in response, response
    result = response["result"]
    assert result["isError"] is True
    envelope = result["structuredContent"]
    assert (envelope["status"], envelope["error_type"], envelope["instance"]) == ("error", "invalid_params", None)
    op = envelope["operation"]
    assert (op["tool"], op["outcome"], op["retry"]) == (tool, "not_started", "after_correction")
    (text,) = [block["text"] for block in result["content"] if block["type"] == "text"]
    for word in words:
        assert word in envelope["message"] and word in text, (word, envelope["message"])
    return envelope


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("arguments", ["[]", '["about:blank"]', '"url=about:blank"', "42", "true"])
def test_non_object_arguments_over_mcp_are_an_invalid_params_result(
    session, known_state, mcp_server, protocol, arguments
):
    raw = RawMCP(mcp_server, protocol)
    params = '{"name":"browser_navigate","arguments":' + arguments + "}"
    status, response = raw.call(params, name_header="browser_navigate")
    assert status == 200
    refused_result(response, "browser_navigate", "Arguments must be an object of named parameters.")
    assert observe(session) == known_state


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_null_or_absent_arguments_over_mcp_are_an_empty_object(session, known_state, mcp_server, protocol):
    raw = RawMCP(mcp_server, protocol)
    for params in ('{"name":"browser_health","arguments":null}', '{"name":"browser_health"}'):
        status, response = raw.call(params, name_header="browser_health")
        assert status == 200 and response["result"]["isError"] is False
        assert response["result"]["structuredContent"]["status"] == "success"


@pytest.mark.parametrize("name", ["5", "null", '["browser_snapshot"]', "{}"])
def test_a_non_string_tool_name_over_mcp_is_an_invalid_params_result(session, known_state, mcp_server, name):
    kind = {"5": "int", "null": "NoneType", '["browser_snapshot"]': "list", "{}": "dict"}[name]
    status, response = RawMCP(mcp_server, "2025-11-25").call('{"name":' + name + ',"arguments":{}}')
    assert status == 200
    refused_result(response, INVALID_TOOL_NAME, f"The tool name must be a string, not {kind}.")
    # 2026-07-28 requests repeat the name in an `Mcp-Name` header, which the SDK's transport
    # compares with the body before any server code runs: a non-string never matches.
    if name != "null":
        params = '{"name":' + name + ',"arguments":{}}'
        status, response = RawMCP(mcp_server, "2026-07-28").call(params, name_header=name)
        assert status == 400 and response["error"]["code"] == -32020
        assert "mcp-name header does not match" in response["error"]["message"]
    else:  # no name to compare: the call reaches the server
        status, response = RawMCP(mcp_server, "2026-07-28").call('{"name":null,"arguments":{}}')
        refused_result(response, INVALID_TOOL_NAME, "The tool name must be a string, not NoneType.")
    assert observe(session) == known_state


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_huge_tool_name_over_mcp_gives_a_small_result(session, known_state, mcp_server, protocol):
    name = "x" * 2_000_000  # 2026-07-28 repeats it in the Mcp-Name header
    header = name if protocol == "2026-07-28" else None
    status, response = RawMCP(mcp_server, protocol).call('{"name":"' + name + '","arguments":{}}', name_header=header)
    assert status == 200
    refused_result(response, INVALID_TOOL_NAME, "2,000,000 characters long")
    assert len(json.dumps(response)) < 5_000


def test_lone_surrogates_over_mcp(session, known_state, mcp_server):
    # 2025-era: the SDK's JSON parser refuses a lone surrogate escape (-32700, HTTP 400).
    legacy = RawMCP(mcp_server, "2025-11-25")
    for params in (
        '{"name":"browser_\\ud800","arguments":{}}',
        '{"name":"browser_navigate","arguments":{"url":"\\udfff"}}',
    ):
        status, response = legacy.call(params)
        assert status == 400 and response["error"]["code"] == -32700, response
    # 2026-07-28: the body parses; the value reaches the tool, which refuses it.
    modern = RawMCP(mcp_server, "2026-07-28")
    status, response = modern.call(
        '{"name":"browser_navigate","arguments":{"url":"http://127.0.0.1/\\udfff"}}', name_header="browser_navigate"
    )
    assert status == 200
    envelope = refused_result(response, "browser_navigate", "parameter 'url'")
    assert "\\udfff" in envelope["message"]
    # ... while a name with one cannot be written into the `Mcp-Name` header at all.
    with pytest.raises(UnicodeEncodeError):
        encode_header_value("browser_\ud800")
    status, response = modern.call('{"name":"browser_\\ud800","arguments":{}}')
    assert status == 400 and response["error"]["code"] == -32020
    assert observe(session) == known_state


def test_the_python_client_refuses_malformed_calls_before_sending(mcp_server):
    """mcp 2.3's `Client.call_tool` validates its own request: non-object arguments and
    non-string names raise pydantic's ValidationError, a lone surrogate UnicodeEncodeError."""

    async def scenario() -> list[str]:
        seen = []
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {mcp_server.token}"}, timeout=60)
        async with Client(streamable_http_client(mcp_server.url, http_client=http)) as client:
            for name, arguments in (("browser_navigate", ["about:blank"]), ("browser_navigate", "x"), (5, {})):
                with pytest.raises(pydantic.ValidationError) as caught:
                    await client.call_tool(name, arguments)  # type: ignore[arg-type]
                seen.append(caught.value.errors()[0]["loc"][0])
            with pytest.raises(UnicodeEncodeError):
                await client.call_tool("browser_\ud800", {})
        return seen

    assert asyncio.run(scenario()) == ["arguments", "arguments", "name"]


@pytest.mark.parametrize("locale", ["Mi-v1J", "en-US-abcdefgh-abcdefgh"])
def test_a_locale_chromium_refuses_is_invalid_and_leaves_no_browser(session, known_state, locale):
    # The pattern lets these through; Chromium's ICU refuses them once the browser is up.
    processes = len(browser_processes())
    envelope = session.call("browser_create_instance", name="bad-locale", locale=locale)
    message = error(envelope, "invalid_params", outcome="not_started", retry="after_correction")
    assert f"Chromium does not accept the locale {locale!r}" in message
    assert "bad-locale" not in [i["name"] for i in ok(session.list_instances())["instances"]]
    assert len(browser_processes()) == processes  # the browser launched for it was closed
    assert observe(session) == known_state
