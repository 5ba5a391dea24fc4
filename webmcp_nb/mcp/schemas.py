"""The tool schemas agents are sent: the registry's pydantic schemas, shrunk at one place.

A tool list is read by the model in every conversation before its first call, so what
it carries is what a model or a validating client uses, once:

- no ``title`` on every property, no ``$defs``/``$ref`` (each definition inlined where it
  is used), no length/pattern/range constraints (the server checks them and answers
  ``invalid_params`` naming the field and the limit);
- an optional field is simply not required: ``X | None = None`` is published as ``X``
  (a client that sends ``null`` for it is still served, as "left out"), and a flag off by
  default does not say so;
- the parameters many tools share (`SHARED_FIELDS`: instance, page_id, frame_id, ref, observe)
  keep their structure without prose (no descriptions, no defaults): the server's instructions
  word them once;
- an agent's schemas hold only what its grant admits: the parameters that need a cap it lacks
  (`webmcp_nb.core.guard.grants.GATED_PARAMS`) are left out (sent anyway, the tool refuses them naming
  the cap);
- output schemas hold the envelope loosely (the tool's `data` typed; the rest of the envelope
  is described once, in the instructions) and the data as an outline without prose (each
  field's type, not what an object or a list holds), no field with a ``null`` branch (a null
  one is left out of the result, `agent_data`): clients validate structured content (successes
  only), they do not read it.

Every object keeps ``additionalProperties: false`` wherever the model declared it.
The full schemas stay with the core (`ToolSpec.input_schema`: the Python API, the
magics, the forms). `tool_list_bytes` is the one measure the budgets below are held to: what
moved into the instructions is counted there, since the model reads them too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import mcp_types as types

from ..core.browsers.observe import OBSERVE_DESCRIPTION
from ..core.tools.models import REF_DESCRIPTION, FrameParams

SHARED_FIELDS: dict[str, str] = {
    **{name: field.description or "" for name, field in FrameParams.model_fields.items()},
    "ref": REF_DESCRIPTION,
    "observe": OBSERVE_DESCRIPTION,
}
"""The parameters many tools share, with their one wording (`FrameParams`, `Ref`, `Observe`): a
property described in just these words (a `ref`, a `source_ref`...) is published as its structure
alone (its wording says what its defaults are)."""

_CONSTRAINTS = frozenset(
    {
        "pattern",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minProperties",
        "maxProperties",
        "multipleOf",
    }
)
_MAPS = ("properties", "patternProperties")
_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMAS = ("items", "additionalProperties", "not", "contains", "propertyNames")
_NULL = {"type": "null"}


def agent_input_schema(schema: Mapping[str, Any], withheld: Iterable[str] = ()) -> dict[str, Any]:
    """A tool's input schema as agents are sent it (see the module docstring), without the
    `withheld` parameters (those the agent's grant does not admit); the root's description
    (the params model's docstring) is the tool description's job."""
    withheld = frozenset(withheld)
    lean = _lean(schema, _defs(schema), keep_prose=True, optional_null=True, depth=0)
    lean.pop("description", None)
    if withheld:
        lean["properties"] = {name: sub for name, sub in lean["properties"].items() if name not in withheld}
        if "required" in lean:
            lean["required"] = [name for name in lean["required"] if name not in withheld]
    return lean


def agent_data_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A tool's data schema for validating clients: its fields strictly (names, types, which are
    always there), what they hold by type alone (an object or a list is not spelled out), without
    prose or defaults. No field has a ``null`` branch: a null one is left out (`agent_data`), so a
    field that may be null is not required."""
    lean = _lean(schema, _defs(schema), keep_prose=True, optional_null=False, depth=0)
    root = {k: v for k, v in lean.items() if k not in ("description", "default")}
    properties = lean.get("properties", {})
    required = [name for name in lean.get("required", ()) if _NULL not in properties[name].get("anyOf", ())]
    data = {**root, "properties": {name: _outline(_without_null(sub)) for name, sub in properties.items()}}
    data.pop("required", None)
    return {**data, "required": required} if required else data


def agent_data(data: dict[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """`data` as agents are sent it under its `agent_data_schema`: its null fields left out (that
    schema gives them no ``null`` branch), but for those of any value (null is one)."""
    properties = schema.get("properties", {})
    return {name: value for name, value in data.items() if value is not None or _any_value(properties.get(name))}


def _any_value(prop: Any) -> bool:
    return isinstance(prop, dict) and "type" not in prop and "anyOf" not in prop


def _without_null(prop: dict[str, Any]) -> dict[str, Any]:
    options = prop.get("anyOf")
    if not isinstance(options, list) or _NULL not in options:
        return prop
    kept = [option for option in options if option != _NULL]
    rest = {k: v for k, v in prop.items() if k != "anyOf"}
    return {**kept[0], **rest} if len(kept) == 1 else {"anyOf": kept, **rest}


def _outline(node: dict[str, Any]) -> dict[str, Any]:
    """`node` by its type alone: objects lose their properties, arrays their items."""
    if isinstance(node.get("anyOf"), list):
        options = [_outline(option) for option in node["anyOf"]]
        return {"anyOf": [o for i, o in enumerate(options) if o not in options[:i]]}
    kind = node.get("type")
    if kind == "array":
        return {"type": "array"}
    if kind == "object" or (kind is None and "properties" in node):
        return {"type": "object"}
    typed = {k: v for k, v in node.items() if k in ("type", "enum", "const")}
    # Any value: a description stands in for a type (an empty schema is not portable).
    return typed or {"description": ANY_VALUE}


ANY_VALUE = "Any JSON value."


def _defs(schema: Mapping[str, Any]) -> dict[str, Any]:
    return {**schema.get("definitions", {}), **schema.get("$defs", {})}


def _lean(
    node: Mapping[str, Any], defs: dict[str, Any], *, keep_prose: bool, optional_null: bool, depth: int
) -> dict[str, Any]:
    if depth > 32:
        raise ValueError("schema nests too deeply (a cyclic $ref?)")
    ref = node.get("$ref")
    if isinstance(ref, str):
        node = {**defs[ref.rsplit("/", 1)[-1]], **{k: v for k, v in node.items() if k != "$ref"}}

    def lean(sub: Mapping[str, Any]) -> dict[str, Any]:
        return _lean(sub, defs, keep_prose=keep_prose, optional_null=optional_null, depth=depth + 1)

    result: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("$defs", "definitions", "title", "$schema") or key in _CONSTRAINTS:
            continue
        if not keep_prose and key in ("description", "default", "examples"):
            continue
        if key in _MAPS and isinstance(value, dict):
            value = {name: lean(sub) for name, sub in value.items()}
        elif key in _LISTS and isinstance(value, list):
            value = [lean(sub) for sub in value]
        elif key in _SCHEMAS and isinstance(value, dict):
            value = lean(value)
        result[key] = value
    if optional_null and isinstance(result.get("properties"), dict):
        required = set(result.get("required", ()))
        result["properties"] = {
            name: _shared(_optional(sub) if name not in required else sub) for name, sub in result["properties"].items()
        }
    return result


def _optional(prop: dict[str, Any]) -> dict[str, Any]:
    """An optional property without what goes without saying: its ``null`` branch with its
    ``default: null`` (left out and null mean the same to the tool), and a flag's ``default: false``."""
    if prop.get("default", ...) is None:
        return {k: v for k, v in _without_null(prop).items() if k != "default"}
    if prop.get("type") == "boolean" and prop.get("default") is False:
        return {k: v for k, v in prop.items() if k != "default"}
    return prop


def _shared(prop: dict[str, Any]) -> dict[str, Any]:
    return _structure(prop) if prop.get("description") in _SHARED_WORDINGS else prop


def _structure(node: Any) -> Any:
    """`node` without descriptions and defaults, at every level (property names are kept)."""
    if isinstance(node, list):
        return [_structure(item) for item in node]
    if not isinstance(node, dict):
        return node
    return {
        key: {name: _structure(sub) for name, sub in value.items()} if key in _MAPS else _structure(value)
        for key, value in node.items()
        if key not in ("description", "default")
    }


_SHARED_WORDINGS = frozenset(SHARED_FIELDS.values())


def tool_annotations(
    *, read_only: bool, destructive: bool, idempotent: bool, open_world: bool
) -> types.ToolAnnotations | None:
    """The hints that differ from MCP's defaults (readOnly false, destructive true, idempotent
    false, openWorld true); destructive and idempotent only where they mean something (not read-only).
    None if every hint is the default."""
    hints = types.ToolAnnotations(
        read_only_hint=True if read_only else None,
        destructive_hint=False if not read_only and not destructive else None,
        idempotent_hint=True if idempotent and not read_only else None,
        open_world_hint=False if not open_world else None,
    )
    return hints if hints.model_dump(exclude_none=True) else None


def shared_fields_note() -> str:
    """The one wording of the shared parameters (`SHARED_FIELDS`), for the server's instructions."""
    return "; ".join(f"{name}: {description.rstrip('.')}" for name, description in SHARED_FIELDS.items()) + "."


# --------------------------------------------------------------------------- #
# The budget
# --------------------------------------------------------------------------- #

PEER_TOOL_LIST_BYTES = {"default": 20_286, "every_grant": 45_224}
"""`@playwright/mcp` 0.0.83's tool list (bytes, `tool_list_bytes`): its default options, and
``--caps vision,pdf,testing,tracing,network,storage,devtools``. It sends no output schemas and no
instructions, so all of it is read (bench/bench_tool_list.py measures it again)."""

TOOL_LIST_TARGET = {
    ("default", "whole"): 1.5,
    ("default", "read"): 1.0,
    ("every_grant", "whole"): 1.0,
}
"""Issue 22's targets, as multiples of the peer's list of the same grant (`tool_list_bytes`):
``whole``, the `tools` array; ``read``, what a model reads (the array without output schemas,
and the server's instructions)."""

TOOL_LIST_BUDGET = {
    ("default", "whole"): 1.5,
    ("default", "read"): 1.0,
    ("every_grant", "whole"): 1.0,
}
"""The most the list may weigh (tests/test_tool_list.py holds it), in the same multiples: issue 22's
targets themselves. A tool or field that would pass them must pay for itself elsewhere (the groups
`testing`, `vision` and `tracing` keep the default list at Playwright MCP's size, as its caps do)."""


def budget_bytes(grant: str, part: str, budget: Mapping[tuple[str, str], float] = TOOL_LIST_BUDGET) -> int:
    """A ratio of `budget` (or of `TOOL_LIST_TARGET`) in bytes of the peer's list."""
    return int(PEER_TOOL_LIST_BYTES[grant] * budget[(grant, part)])


def tool_list_bytes(tools: Iterable[Mapping[str, Any]], instructions: str | None = None) -> dict[str, int]:
    """The size of a `tools/list` answer's `tools` array (wire JSON, camelCase, no nulls, as compact
    JSON): ``whole``; ``read``, what a model reads: the array without output schemas, and the
    server's `instructions` (the initialize answer's: text moved there is still read); their
    parts: ``read_tools`` (the array without output schemas, and without what a host that renders
    MCP Apps keeps from its model: ``_meta``, and the tools only apps see), ``instructions``,
    ``input`` and ``output`` (the schemas alone)."""
    tools = list(tools)

    def size(value: Any) -> int:
        return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())

    def app_only(tool: Mapping[str, Any]) -> bool:
        return bool((tool.get("_meta") or {}).get("ui", {}).get("visibility") == ["app"])

    told = len((instructions or "").encode())
    read = [
        {k: v for k, v in tool.items() if k not in ("outputSchema", "_meta")} for tool in tools if not app_only(tool)
    ]
    read_tools = size(read)
    return {
        "tools": len(tools),
        "whole": size(tools),
        "read": read_tools + told,
        "read_tools": read_tools,
        "instructions": told,
        "input": sum(size(tool["inputSchema"]) for tool in tools),
        "output": sum(size(tool["outputSchema"]) for tool in tools if tool.get("outputSchema") is not None),
    }
