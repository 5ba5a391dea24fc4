"""Envelopes as MCP tool results, and the output schemas that describe them.

Every result carries the envelope twice, in the two forms clients read: as
`structuredContent` and as one text block from the notebook's own renderer
(`render_text`). A tool whose data holds an image also returns it as an image
block and declares no output schema (clients that validate schemas would
otherwise insist on structured content alone). A tool without structured output
(`ToolSpec.structured_output`: browser_execute) declares none either; it sends
structured content only with a success that holds no image.
"""

from __future__ import annotations

import base64
import copy
import json
from functools import cache
from typing import Any

import mcp_types as types

from ..core.envelope import ERROR_TYPES, Envelope, enforce_size_limit
from ..core.registry import ToolSpec
from ..core.render import render_text

_NULLABLE_STRING = {"type": ["string", "null"]}

OPERATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "tool": {"type": "string"},
        "instance_id": _NULLABLE_STRING,
        "page_id": _NULLABLE_STRING,
        "frame_id": _NULLABLE_STRING,
        "started_at": {"type": "string"},
        "finished_at": {"type": "string"},
        "duration_ms": {"type": "number"},
        "outcome": {"enum": ["completed", "not_started", "unknown"]},
        "retry": {"enum": ["not_needed", "after_correction", "read_only", "inspect_state"]},
        "artifacts": {"type": "array", "items": {"type": "string"}},
        "references_omitted": {"type": "boolean"},
    },
    "required": [
        "id", "tool", "instance_id", "page_id", "frame_id", "started_at", "finished_at",
        "duration_ms", "outcome", "retry", "artifacts",
    ],
}

_ERROR_BRANCH: dict[str, Any] = {
    "type": "object",
    "properties": {
        "status": {"const": "error"},
        "instance": _NULLABLE_STRING,
        "error_type": {"enum": list(ERROR_TYPES)},
        "message": {"type": "string"},
        "operation": {"$ref": "#/$defs/Operation"},
    },
    "required": ["status", "instance", "error_type", "message", "operation"],
    "additionalProperties": False,
}


def carries_image(spec: ToolSpec) -> bool:
    """Whether the tool's data holds binary image data (`bytes` fields)."""
    return any(field.annotation is bytes for field in spec.data.model_fields.values())


@cache
def output_schema(spec: ToolSpec) -> dict[str, Any] | None:
    """The envelope of `spec` (success with its data schema, or error), or None for image tools
    and tools without structured output."""
    if carries_image(spec) or not spec.structured_output:
        return None
    data = copy.deepcopy(spec.data_schema)
    defs = data.pop("$defs", {})
    success = {
        "type": "object",
        "properties": {
            "status": {"const": "success"},
            "instance": _NULLABLE_STRING,
            "data": data,
            "operation": {"$ref": "#/$defs/Operation"},
        },
        "required": ["status", "instance", "data", "operation"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "anyOf": [success, _ERROR_BRANCH],
        "$defs": {**defs, "Operation": OPERATION_SCHEMA},
    }


def _image_blocks(envelope: Envelope) -> list[types.ImageContent]:
    data = envelope.data or {}
    return [
        types.ImageContent(type="image", data=base64.b64encode(value).decode("ascii"), mime_type=data["mime_type"])
        for value in data.values()
        if isinstance(value, bytes) and "mime_type" in data
    ]


# Bytes of result JSON beyond its parts (keys, content types, mime types), with room to spare.
_FRAMING_BYTES = 512


def _sends_structured(envelope: Envelope, spec: ToolSpec | None, images: list[types.ImageContent]) -> bool:
    """Whether the result carries `structuredContent`. A tool without structured output
    (`ToolSpec.structured_output`) sends it only on a success without an image: its
    failures are text only, its images an image block and text."""
    return spec is None or spec.structured_output or (envelope.ok and not images)


def _result(envelope: Envelope, spec: ToolSpec | None) -> tuple[types.CallToolResult, int]:
    """The result and an upper bound of its JSON size."""
    images = _image_blocks(envelope)
    text = render_text(envelope)
    envelope_json = envelope.to_json_bytes()
    bound = (
        len(envelope_json) + len(json.dumps(text).encode()) + sum(len(i.data) for i in images) + _FRAMING_BYTES
    )
    content: list[Any] = [*images, types.TextContent(type="text", text=text)]
    structured = json.loads(envelope_json) if _sends_structured(envelope, spec, images) else None
    result = types.CallToolResult(content=content, structured_content=structured, is_error=not envelope.ok)
    return result, bound


def result_size(result: types.CallToolResult) -> int:
    return len(result.model_dump_json(by_alias=True, exclude_none=True).encode())


def call_result(envelope: Envelope, spec: ToolSpec | None, limit: int) -> types.CallToolResult:
    """The MCP result for `envelope`, held to `limit` bytes of result JSON as the client receives it.

    The exact size is measured only when a cheap upper bound exceeds the limit.
    """
    result, bound = _result(envelope, spec)
    if bound <= limit:
        return result
    size = result_size(result)
    if size <= limit:
        return result
    limited = enforce_size_limit(
        envelope,
        limit,
        read_only=spec.read_only if spec else True,
        hint=spec.too_large_hint if spec else "",
        size=size,
        what="MCP result (the envelope as structured content, its text rendering and any image)",
    )
    return _result(limited, spec)[0]
