"""One JSON Schema reader for the magics' parsers, the page-tool forms and the renderer."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Literal

import ipywidgets as widgets
from pydantic import BaseModel, Field

from webmcp_nb.core.call.schema_fields import MISSING, read_fields
from webmcp_nb.core.render.renderer import _inputs_html
from webmcp_nb.notebook.webmcp_tools import PageToolCall


class Size(StrEnum):
    small = "small"
    large = "large"


class Point(BaseModel):
    x: int
    y: int = 0


class Order(BaseModel):
    size: Size = Field(description="How big")
    count: int = Field(ge=1, description="How many")
    note: str | None = None
    tags: list[Literal["a", "b"]] = []
    where: Point | None = None
    either: int | str = 1


SCHEMA = Order.model_json_schema()


def test_refs_and_nullable_unions_are_resolved() -> None:
    fields = {field.name: field for field in read_fields(SCHEMA)}
    assert list(fields) == ["size", "count", "note", "tags", "where", "either"]
    size = fields["size"]
    assert (size.kind, size.choices, size.required, size.description) == ("string", ("small", "large"), True, "How big")
    count = fields["count"]
    assert (count.kind, count.minimum, count.required, count.default) == ("integer", 1, True, MISSING)
    note = fields["note"]
    assert (note.kind, note.nullable, note.required, note.default) == ("string", True, False, None)
    assert fields["tags"].kind == "array" and fields["tags"].item.choices == ("a", "b")
    where = fields["where"]
    assert (where.kind, where.nullable) == ("object", True)
    assert [(f.name, f.kind, f.required) for f in where.fields] == [("x", "integer", True), ("y", "integer", False)]
    either = fields["either"]
    assert (either.kind, either.types, either.type_label) == ("json", ("integer", "string"), "integer | string")


def test_a_page_schema_of_any_shape_reads_without_error() -> None:
    cyclic = {"$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
              "properties": {"head": {"$ref": "#/$defs/Node"}, "odd": 3, "typed": {"type": ["number", "null"]},
                             "missing": {"$ref": "#/$defs/Nowhere"}}}  # fmt: skip
    fields = {field.name: field for field in read_fields(cyclic)}
    assert fields["head"].kind == "object" and fields["head"].fields[0].name == "next"
    assert (fields["odd"].kind, fields["typed"].kind, fields["typed"].nullable) == ("json", "number", True)
    assert fields["missing"].kind == "json"
    assert read_fields("not a schema") == [] and read_fields({"properties": []}) == []


def test_the_renderer_lists_resolved_types() -> None:
    rows = [re.sub(r"<[^>]+>", "", row) for row in _inputs_html(SCHEMA).split("<br>")]
    assert rows == ["size* small | large — How big", "count* integer — How many", "note string", "tags array",
                    "where object", "either integer | string"]  # fmt: skip


def test_the_page_tool_form_follows_refs_and_unions() -> None:
    info = {"name": "order", "description": "Order", "input_schema": SCHEMA, "frame_id": "f0"}
    form = PageToolCall(None, info, {}).form()  # type: ignore[arg-type]
    inputs = {child.description.rstrip(" *"): child for child in form.children[1:-2]}
    assert isinstance(inputs["size"], widgets.Dropdown) and inputs["size"].options == ("small", "large")
    assert isinstance(inputs["count"], widgets.IntText) and inputs["count"].value == 1
    assert isinstance(inputs["note"], widgets.Text) and inputs["note"].placeholder == ""
    assert isinstance(inputs["where"], widgets.Text) and inputs["where"].placeholder == "JSON"
