"""A JSON Schema's properties read as a list of fields, for the front ends that present inputs:
the magics' argument parsers, the page-tool forms and the renderer's input lists.

`$ref`s (into ``$defs`` / ``definitions``) are inlined and ``X | None`` unions (``anyOf`` with a
``null`` branch, or ``"type": [X, "null"]``) unwrapped into a nullable X. Schemas may come from
web pages: anything unexpected reads as a field of kind ``json`` rather than an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

KINDS = ("string", "integer", "number", "boolean", "array", "object")
MAX_DEPTH = 8  # $refs and nesting followed at most this deep (a page's schema may be cyclic)


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""The `default` of a field whose schema gives none."""


@dataclass(frozen=True)
class SchemaField:
    """One property of an object schema."""

    name: str
    kind: str
    """One of `KINDS`, or ``json`` for a union of several types or a schema without a type."""
    types: tuple[str, ...] = ()
    """The JSON types the value may have, ``null`` aside (several for a union)."""
    description: str = ""
    required: bool = False
    nullable: bool = False
    default: Any = MISSING
    choices: tuple[Any, ...] | None = None
    """The allowed values (``enum``, or a ``const``)."""
    minimum: float | None = None
    item: SchemaField | None = None
    """The items of an array."""
    fields: tuple[SchemaField, ...] = ()
    """The properties of an object."""

    @property
    def has_default(self) -> bool:
        return self.default is not MISSING

    @property
    def type_label(self) -> str:
        """The choices (``a | b``) or the type(s) (``integer | string``), for display."""
        if self.choices is not None:
            return " | ".join(map(str, self.choices))
        return " | ".join(self.types)


def read_fields(schema: Any) -> list[SchemaField]:
    """The properties of an object schema, in declaration order ([] if it declares none)."""
    if not isinstance(schema, dict):
        return []
    defs = {**_dict(schema.get("definitions")), **_dict(schema.get("$defs"))}
    return _fields(schema, defs, 0)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _fields(node: dict[str, Any], defs: dict[str, Any], depth: int) -> list[SchemaField]:
    properties = _dict(node.get("properties"))
    required = node.get("required")
    required = set(required) if isinstance(required, list) else set()
    return [_field(str(name), prop, defs, name in required, depth) for name, prop in properties.items()]


def resolve(given: Any, defs: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    """`given` with its `$ref` inlined and an ``X | None`` union unwrapped (``nullable: True``);
    the outer node's keywords win over the referenced ones."""
    node: dict[str, Any] = dict(given) if isinstance(given, dict) else {}
    if depth > MAX_DEPTH:
        return {}
    ref = node.pop("$ref", None)
    if isinstance(ref, str):
        node = {**resolve(defs.get(ref.rsplit("/", 1)[-1], {}), defs, depth + 1), **node}
    options = node.pop("anyOf", None)
    if options is None:
        options = node.pop("oneOf", None)
    if isinstance(options, list):
        kept = [option for option in options if not (isinstance(option, dict) and option.get("type") == "null")]
        if len(kept) < len(options):
            node["nullable"] = True
        if len(kept) == 1:
            node = {**resolve(kept[0], defs, depth + 1), **node}
        else:
            node["union"] = [resolve(option, defs, depth + 1) for option in kept]
    kind = node.get("type")
    if isinstance(kind, list):
        named = [str(name) for name in kind if name != "null"]
        if len(named) < len(kind):
            node["nullable"] = True
        node["type"] = named[0] if len(named) == 1 else None
        if len(named) > 1:
            node["union"] = [{"type": name} for name in named]
    return node


def _field(name: str, node: Any, defs: dict[str, Any], required: bool, depth: int) -> SchemaField:
    node = resolve(node, defs)
    choices: tuple[Any, ...] | None = None
    if "const" in node:
        choices = (node["const"],)
    elif isinstance(node.get("enum"), list):
        choices = tuple(node["enum"])
    kind = node.get("type")
    if kind is None and choices:
        kind = {bool: "boolean", int: "integer", float: "number"}.get(type(choices[0]), "string")
    union = node.get("union")
    if isinstance(union, list) and union:
        types = tuple(dict.fromkeys(str(option.get("type") or "json") for option in union))
    else:
        types = (kind,) if isinstance(kind, str) else ()
    if kind not in KINDS or isinstance(union, list):
        kind = "json"
    item = None
    fields: tuple[SchemaField, ...] = ()
    if depth < MAX_DEPTH:
        if kind == "array":
            item = _field(name, node.get("items", {}), defs, False, depth + 1)
        elif kind == "object":
            fields = tuple(_fields(node, defs, depth + 1))
    minimum = node.get("minimum")
    description = node.get("description")
    return SchemaField(
        name=name,
        kind=kind,
        types=types,
        description=description if isinstance(description, str) else "",
        required=required,
        nullable=bool(node.get("nullable")),
        default=node.get("default", MISSING),
        choices=choices,
        minimum=minimum if isinstance(minimum, (int, float)) and not isinstance(minimum, bool) else None,
        item=item,
        fields=fields,
    )
