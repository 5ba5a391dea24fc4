"""Bad input for every tool: refused before anything is done, and nothing is done.

For each tool in the registry the same battery of malformed calls is sent to a
real Chromium session whose shop page is in a known state (one item in the
cart, a known URL, one tab, one instance). Every call must come back as
``invalid_params`` with outcome ``not_started`` and retry ``after_correction``,
naming the offending field, and the page must be exactly as it was.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import webmcp_nb.core.tools  # noqa: F401 - registers every tool
from tests.conftest import error, ok, ref_for
from webmcp_nb import Envelope, Session
from webmcp_nb.core.registry import REGISTRY, ToolSpec

HUGE = "x" * 200_000
MAX_MESSAGE = 2_000  # an error message never echoes a huge input back
CART = "Cart: 1 item: Apple"

# A valid value for every required parameter, so that each bad call below is
# wrong in exactly one way. (The baseline itself is never sent.)
REQUIRED: dict[str, dict[str, Any]] = {
    "browser_create_instance": {"name": "bad-input-probe"},
    "browser_destroy_instance": {"name": "bad-input-probe"},
    "browser_list_instances": {},
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
    "browser_http": {"url": "/api/items"},
}

# Free-form objects: a page tool's input, checked against that tool's own inputSchema.
FREE_FORM = {("browser_webmcp_call", "/properties/input")}
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
        "instances": [(i["name"], i["instance_id"], i["state"], i["pages"]) for i in ok(session.list_instances())["instances"]],
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
    envelope = session.call("browser_create_instance", name="bad-input-probe", viewport={"width": 800, "height": 600, "depth": 24})
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
    "tool, args",
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


@pytest.mark.parametrize("name", ["bad name", "-leading-dash", ".hidden", "x" * 65, "", "a/b", "über", "a\nb", "name\n"])
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
