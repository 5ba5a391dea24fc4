"""Envelopes as MCP tool results, and the output schemas that describe them.

A result carries the envelope in the two forms clients read: as `structuredContent`
and as one text block from the notebook's own renderer (`render_text`), which holds
everything needed to act on it (clients that read only text). A big string of the
data travels once (`SENT_ONCE_CHARS`, `send_once`): in the text block, where the
rendering holds it as whole lines (a snapshot); structured content names those lines
in its place and under ``in_text``. `BROWSER_MCP_MAX_RESULT_BYTES` bounds the envelope,
as on every front end.

Images (``bytes`` in the data, next to a ``mime_type``) travel only as image
blocks, never as base64 in structured content or text:

- a tool that declares no output schema (its data holds an image at the top,
  see `carries_image`) sends the image blocks and a text block with the
  envelope's facts, and no structured content (`image_result`);
- a tool with an output schema (a page tool's result) keeps its structured
  content, in which each image is replaced by a short note naming its block.

A tool without structured output (`ToolSpec.structured_output`: browser_execute,
whose data has no fixed shape) declares no output schema either; its failures are
text only, and its successes carry structured content unless they hold an image.

Every schema here is portable: no type arrays (a data field that is null is left out of
structured content: its schema needs no ``null``; a page tool's own nullable types are ``anyOf``
of single types) and every enumeration says its type.
"""

from __future__ import annotations

import base64
import json
import mimetypes
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any, get_args

import mcp_types as types

from ..core.call.envelope import Envelope, enforce_size_limit
from ..core.call.registry import ToolSpec
from ..core.render.renderer import render_text
from .schemas import agent_data, agent_data_schema

ARTIFACT_URI = "webmcp-nb://artifacts/"
"""Files a call wrote are offered to agents as resource links under this URI."""


ENVELOPE_NOTE = (
    "Results are envelopes {status, instance, data | error_type + message, operation}; "
    "operation.outcome and .retry say whether anything happened and whether repeating is safe."
)
"""The envelope around every tool's data, described once (the server's instructions); each
output schema holds it loosely (`output_schema`)."""


def carries_image(spec: ToolSpec) -> bool:
    """Whether the tool's data holds binary image data at the top (`bytes` or `bytes | None` fields):
    such a tool declares no output schema and its images go out through `image_result`."""
    return any(bytes in (field.annotation, *get_args(field.annotation)) for field in spec.data.model_fields.values())


@cache
def output_schema(spec: ToolSpec) -> dict[str, Any] | None:
    """The envelope of `spec`, or None for image tools and tools without structured output.

    Loose around the tool's own data (`agent_data_schema`, strict): the other envelope keys
    (`ENVELOPE_NOTE`) are not spelled out, so an error envelope validates too (clients
    validate successes only)."""
    if carries_image(spec) or not spec.structured_output:
        return None
    return {"type": "object", "properties": {"data": agent_data_schema(spec.data_schema)}}


# --------------------------------------------------------------------------- #
# Images
# --------------------------------------------------------------------------- #


def _images(value: Any) -> Iterator[tuple[bytes, str]]:
    """Every image in `value`: the `bytes` of an object that names its `mime_type` (or an image
    `media_type`, as browser_http's binary bodies do)."""
    if isinstance(value, dict):
        mime = value.get("mime_type")
        if mime is None and str(value.get("media_type", "")).startswith("image/"):
            mime = value["media_type"]
        for item in value.values():
            if isinstance(item, (bytes, bytearray)) and isinstance(mime, str):
                yield bytes(item), mime
            elif isinstance(item, (dict, list)):
                yield from _images(item)
    elif isinstance(value, list):
        for item in value:
            yield from _images(item)


def image_blocks(envelope: Envelope) -> list[types.ImageContent]:
    """The envelope's images as MCP image blocks (none for errors and image-free data)."""
    return [
        types.ImageContent(type="image", data=base64.b64encode(data).decode("ascii"), mime_type=mime)
        for data, mime in _images(envelope.data)
    ]


def facts_text(envelope: Envelope) -> str:
    """The text block of a result without structured content: the rendering (images appear
    as their type, size and dimensions, never as base64) plus the operation id."""
    return f"{render_text(envelope)}\noperation: {envelope.operation.id}"


def image_result(envelope: Envelope) -> types.CallToolResult:
    """A successful envelope whose data holds images, for a tool without an output schema:
    the image blocks and a text block with the envelope's facts, no structured content.
    (`browser_screenshot`; any tool whose data holds ``bytes`` next to a ``mime_type``.)"""
    content: list[Any] = [
        *image_blocks(envelope),
        types.TextContent(type="text", text=facts_text(envelope)),
        *artifact_links(envelope),
    ]
    return types.CallToolResult(content=content, is_error=not envelope.ok)


def artifact_uri(name: str) -> str:
    return ARTIFACT_URI + name


_TEXT_ENDINGS = {".har": "application/json", ".jsonl": "application/jsonl", ".yaml": "application/yaml"}


def artifact_mime_type(name: str) -> str:
    return _TEXT_ENDINGS.get(Path(name).suffix) or mimetypes.guess_type(name)[0] or "application/octet-stream"


def is_text(mime_type: str) -> bool:
    return mime_type.startswith("text/") or mime_type in ("application/json", *_TEXT_ENDINGS.values())


def artifact_links(envelope: Envelope) -> list[types.ResourceLink]:
    """A resource link for each file the call wrote (`operation.artifacts`), so an agent on
    another machine can fetch it with resources/read (see `AgentServer`)."""
    links = []
    for artifact in envelope.operation.artifacts:
        path = Path(artifact)
        size = path.stat().st_size if path.is_file() else None
        links.append(
            types.ResourceLink(
                type="resource_link",
                uri=artifact_uri(path.name),
                name=path.name,
                size=size,
                mime_type=artifact_mime_type(path.name),
            )
        )
    return links


def _without_bytes(value: Any) -> Any:
    """`value` with each binary value replaced by a note (its bytes travel as an image block)."""
    if isinstance(value, (bytes, bytearray)):
        return f"<{len(value)} bytes: sent as an image block>"
    if isinstance(value, dict):
        return {key: _without_bytes(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_without_bytes(item) for item in value]
    return value


# --------------------------------------------------------------------------- #
# Results
# --------------------------------------------------------------------------- #

SENT_ONCE_CHARS = 16 * 1024
"""A data string at least this long that the text block holds as whole lines travels only there.
Below it, structured content holds the string too: a second copy costs less than a look-up."""


def _pointer_token(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")  # RFC 6901


def send_once(structured: dict[str, Any], text: str) -> dict[str, Any]:
    """`structured` with each data string of `SENT_ONCE_CHARS` or more that `text` holds as whole
    lines replaced by a note naming them; ``in_text`` maps its JSON Pointer to ``[first, end]``:
    the string is ``"\\n".join(text.split("\\n")[first:end])`` (the same in every language)."""
    framed = f"\n{text}\n"
    places: dict[str, list[int]] = {}

    def once(value: Any, pointer: str) -> Any:
        if isinstance(value, dict):
            return {key: once(item, f"{pointer}/{_pointer_token(key)}") for key, item in value.items()}
        if isinstance(value, list):
            return [once(item, f"{pointer}/{index}") for index, item in enumerate(value)]
        if not isinstance(value, str) or len(value) < SENT_ONCE_CHARS:
            return value
        at = framed.find(f"\n{value}\n")
        if at < 0:
            return value
        first = text.count("\n", 0, at)
        end = first + value.count("\n") + 1
        places[pointer] = [first, end]
        return f"<{len(value):,} characters, sent once: lines {first + 1:,}-{end:,} of the text content>"

    if not isinstance(structured.get("data"), (dict, list)):
        return structured
    data = once(structured["data"], "/data")
    return {**structured, "data": data, "in_text": places} if places else structured


def call_result(
    envelope: Envelope, spec: ToolSpec | None, limit: int, source: str | None = None
) -> types.CallToolResult:
    """The MCP result for `envelope`, whose JSON is held to `limit` bytes (`result_too_large`
    otherwise; `source`: where the limit came from). `spec` is None for a tool that does not exist
    (its envelope is an error)."""
    envelope = enforce_size_limit(
        envelope,
        limit,
        source=source,
        read_only=spec.read_only if spec is not None else False,
        hint=spec.too_large_hint if spec is not None else "",
    )
    images = image_blocks(envelope)
    if images and (spec is None or output_schema(spec) is None):
        return image_result(envelope)
    if images:
        structured = json.loads(json.dumps(_without_bytes(envelope.to_dict()), default=list))
    else:
        structured = json.loads(envelope.to_json_bytes())
    schema = output_schema(spec) if spec is not None else None
    if schema is not None and isinstance(structured.get("data"), dict):
        structured["data"] = agent_data(structured["data"], schema["properties"]["data"])
    text = render_text(envelope)
    content: list[Any] = [*images, types.TextContent(type="text", text=text), *artifact_links(envelope)]
    if spec is not None and not spec.structured_output and not envelope.ok:
        return types.CallToolResult(content=content, is_error=True)  # no shape to validate against
    return types.CallToolResult(
        content=content, structured_content=send_once(structured, text), is_error=not envelope.ok
    )
