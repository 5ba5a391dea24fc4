"""Reading the evidence an instance records: console, network, bodies, exports and traces."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from ..call.errors import ToolFailure
from ..call.registry import tool
from ..call.util import first_lines
from ..evidence.har import har_log
from ..evidence.recorder import NetworkRecord, Record, StreamName, Window
from ..evidence.trace_scrub import scrub_trace
from ..guard.grants import SECRETS_CAP
from ..guard.secret_fields import block_in_json_bytes, block_in_json_text
from .models import Data, Identifier, InstanceParams

if TYPE_CHECKING:
    from ..call.context import CallContext
    from ..evidence.recorder import Evidence

Cursor = Annotated[str, StringConstraints(min_length=1, max_length=200)]
Filter = Annotated[str, StringConstraints(min_length=1, max_length=2000)]
ConsoleLevel = Literal["log", "debug", "info", "warning", "error", "trace", "assert", "dir", "table"]
_BODY_MARGIN = 1024  # bytes of the result budget kept for the envelope around a body
_TEXT_TYPES = (
    "text/",
    "application/json",
    "application/javascript",
    "application/xml",
    "+json",
    "+xml",
    "application/x-www-form-urlencoded",
    "image/svg+xml",
)


class StreamParams(InstanceParams):
    after: Cursor | None = Field(None, description="A next_cursor: newer entries only.")
    limit: int = Field(100, ge=1, le=500)
    page_id: Identifier | None = Field(None, description="Only this tab's.")
    reveal_secrets: bool = Field(False, description="Secret headers unredacted.")


class ConsoleParams(StreamParams):
    level: ConsoleLevel | None = Field(None, description="'error' includes uncaught page errors.")
    text: Filter | None = Field(None, description="A substring (any case).")


class NetworkParams(StreamParams):
    url: Filter | None = Field(None, description="A URL substring.")
    method: Annotated[str, StringConstraints(pattern=r"^[A-Za-z]{1,16}$")] | None = None
    status: int | None = Field(None, ge=0, le=999, description="0: no response.")
    resource_type: Annotated[str, StringConstraints(min_length=1, max_length=40)] | None = Field(
        None, description="document, script, fetch, xhr, image..."
    )
    failed: bool | None = Field(None, description="Only failed (true) or not (false).")


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seq: int
    at: str
    page_id: str
    frame_id: str | None
    truncated_fields: list[str] = Field(default_factory=list)


class ConsoleEntry(_Entry):
    kind: Literal["console", "pageerror"]
    level: str
    text: str
    url: str | None
    line: int | None
    column: int | None
    stack: str | None = None


class NetworkEntry(_Entry):
    request_id: str
    method: str
    url: str
    resource_type: str
    state: Literal["pending", "finished", "failed"]
    status: int | None
    status_text: str | None
    failure: str | None
    redirected_from: str | None
    redirect_chain: list[str]
    request_headers: dict[str, str]
    response_headers: dict[str, str] | None
    mime_type: str | None
    timing: dict[str, float | None] | None
    encoded_size: int | None


class _StreamData(Data):
    next_cursor: str = Field(description="Pass as `after` to read only what comes next.")
    has_more: bool
    retained_count: int
    dropped_count: int = Field(description="Entries dropped from the buffer (event_buffer_size).")
    retention_lost: bool = Field(description="Entries after `after` were dropped; reading resumed at the oldest.")
    secrets_revealed: bool


class ConsoleData(_StreamData):
    entries: list[ConsoleEntry]


class NetworkData(_StreamData):
    entries: list[NetworkEntry]


def _evidence(ctx: CallContext) -> Evidence:
    return ctx.require_instance().evidence


def _check_reveal(ctx: CallContext, reveal: bool) -> bool:
    if reveal and not ctx.allows(SECRETS_CAP):
        raise ToolFailure(
            "invalid_params",
            "reveal_secrets needs the 'secrets' grant, which this caller does not have "
            "(the notebook user can grant it: `%browser serve --caps secrets`).",
            started=False,
        )
    return reveal


def _window_data(window: Window[Any], reveal: bool) -> dict[str, Any]:
    return {
        "entries": [record.view(reveal) for record in window.records],
        "next_cursor": window.next_cursor,
        "has_more": window.has_more,
        "retained_count": window.retained_count,
        "dropped_count": window.dropped_count,
        "retention_lost": window.retention_lost,
        "secrets_revealed": reveal,
    }


@tool(
    name="browser_console",
    title="Console messages",
    description="Console messages and uncaught errors of the instance's tabs, oldest first, from `after` on.",
    params=ConsoleParams,
    data=ConsoleData,
    target="instance",
    read_only=True,
    idempotent=True,
)
async def console(ctx: CallContext, p: ConsoleParams) -> ConsoleData:
    reveal = _check_reveal(ctx, p.reveal_secrets)
    needle = p.text.lower() if p.text else None

    def keep(record: Record) -> bool:
        fields = record.fields
        return (
            (p.level is None or fields["level"] == p.level)
            and (p.page_id is None or fields["page_id"] == p.page_id)
            and (needle is None or needle in fields["text"].lower())
        )

    window = _evidence(ctx).console.read(p.after, p.limit, keep)
    return ConsoleData.model_validate(_window_data(window, reveal))


@tool(
    name="browser_network",
    title="Network requests",
    description="Network requests of the instance's tabs (status, timing, sizes, headers...), oldest first, "
    "from `after` on.",
    params=NetworkParams,
    data=NetworkData,
    target="instance",
    read_only=True,
    idempotent=True,
)
async def network(ctx: CallContext, p: NetworkParams) -> NetworkData:
    reveal = _check_reveal(ctx, p.reveal_secrets)
    method = p.method.upper() if p.method else None

    def keep(record: Record) -> bool:
        fields = record.fields
        return (
            (p.page_id is None or fields["page_id"] == p.page_id)
            and (p.url is None or p.url in fields["url"])
            and (method is None or fields["method"] == method)
            and (p.status is None or (fields["status"] or 0) == p.status)
            and (p.resource_type is None or fields["resource_type"] == p.resource_type)
            and (p.failed is None or (fields["state"] == "failed") == p.failed)
        )

    evidence = _evidence(ctx)
    window = evidence.network.read(p.after, p.limit, keep)
    await evidence.fill_sizes(window.records)
    return NetworkData.model_validate(_window_data(window, reveal))


# bodies -------------------------------------------------------------------------------
class BodyParams(InstanceParams):
    request_id: Identifier = Field(description="From browser_network.")
    part: Literal["response", "request"] = "response"
    save: bool = Field(False, description="To an artifact file.")


class BodyImage(Data):
    data: bytes = Field(description="The image's bytes (base64 in JSON; an image block over MCP).")
    mime_type: str


class BodyData(Data):
    request_id: str
    part: Literal["response", "request"]
    mime_type: str | None
    size_bytes: int
    encoding: Literal["text", "base64", "image", "none"] = Field(
        description="How the bytes are held: 'text' or 'base64' in `body`, 'image' in `image`, 'none': saved."
    )
    body: str | None
    image: BodyImage | None = None
    path: str | None
    blocked_fields: list[str] | None = Field(
        None, description="Secret JSON fields replaced by [blocked] (in the text or the saved file)."
    )


@tool(
    name="browser_network_body",
    title="Network body",
    description="A recorded request's or response's body: text, an image or base64 (too large: use save).",
    params=BodyParams,
    data=BodyData,
    target="instance",
    read_only=True,
    idempotent=True,
    too_large_hint="Call again with save=true to write the body to a file.",
)
async def network_body(ctx: CallContext, p: BodyParams) -> BodyData:
    from playwright.async_api import Error

    record = _evidence(ctx).network.get(p.request_id)
    if record is None:
        raise ToolFailure(
            "invalid_params",
            f"No retained request {p.request_id!r} in this instance; list them with browser_network.",
            started=False,
        )
    if not isinstance(record, NetworkRecord):
        raise ToolFailure("invalid_params", f"{p.request_id} is a WebSocket, which has no body.", started=False)
    request = record.request
    mime_type = record.fields["mime_type"]
    try:
        if p.part == "request":
            body = request.post_data_buffer or b""
            mime_type = request.headers.get("content-type", "").split(";")[0].strip() or None
        else:
            response = record.response or await request.response()
            if response is None:
                raise ToolFailure(
                    "stale_ref", f"Request {p.request_id} has no response ({record.fields['state']}).", read_only=True
                )
            body = await response.body()
    except Error as exc:
        raise ToolFailure(
            "stale_ref",
            f"The {p.part} body of {p.request_id} is no longer available (the browser drops bodies when "
            f"their page navigates or closes): {exc.message.splitlines()[0]}",
            read_only=True,
        ) from None
    text = _as_text(body, mime_type)
    blocked: list[str] = []
    if text:  # secret JSON fields never leave in a result nor in a file an agent can read
        text, blocked = block_in_json_text(text)
        if blocked:
            body = text.encode()
    elif text is None:  # nor as bytes: JSON sent under another media type is still checked
        body, blocked = block_in_json_bytes(body)
    if p.save:
        if text:  # a file agents can read: no known secret either
            scrubbed = ctx.require_instance().secrets.scrub(text)
            body = scrubbed.encode() if scrubbed != text else body
        path = ctx.engine.artifact_path(f"body-{p.request_id}", _ending(mime_type))
        path.write_bytes(body)
        ctx.artifacts.append(str(path))
        return BodyData(
            request_id=p.request_id,
            part=p.part,
            mime_type=mime_type,
            size_bytes=len(body),
            encoding="none",
            body=None,
            path=str(path),
            blocked_fields=blocked or None,
        )
    budget = ctx.engine.limits.max_result_bytes - _BODY_MARGIN
    image_type = mime_type if text is None and mime_type and mime_type.startswith("image/") else None
    encoding: Literal["text", "base64", "image"] = "text" if text is not None else "image" if image_type else "base64"
    value = text if text is not None else base64.b64encode(body).decode("ascii")
    if len(value.encode()) > budget:
        raise ToolFailure(
            "result_too_large",
            f"The {p.part} body of {p.request_id} is {len(body)} bytes ({encoding}: {len(value.encode())}), over "
            f"the result budget of {budget} bytes (max_result_bytes, {ctx.engine.limits.source('max_result_bytes')}, "
            f"less {_BODY_MARGIN} for the "
            "envelope). Call again with save=true to write it to a file; nothing was clipped.",
            read_only=True,
        )
    return BodyData(
        request_id=p.request_id,
        part=p.part,
        mime_type=mime_type,
        size_bytes=len(body),
        encoding=encoding,
        body=None if image_type else value,
        image=BodyImage(data=body, mime_type=image_type) if image_type else None,
        path=None,
        blocked_fields=blocked or None,
    )


def _as_text(body: bytes, mime_type: str | None) -> str | None:
    if not body:
        return ""
    if mime_type is None or not any(marker in mime_type for marker in _TEXT_TYPES):
        return None
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _ending(mime_type: str | None) -> str:
    endings = {
        "application/json": ".json",
        "text/html": ".html",
        "text/plain": ".txt",
        "image/png": ".png",
        "image/jpeg": ".jpg",
        "text/css": ".css",
        "application/javascript": ".js",
        "text/javascript": ".js",
    }
    return endings.get(mime_type or "", ".bin")


# export -------------------------------------------------------------------------------
class ExportParams(InstanceParams):
    stream: StreamName = "network"
    format: Literal["jsonl", "har"] = Field("jsonl", description="har: network only.")
    page_id: Identifier | None = Field(None, description="Only this tab's.")


class ExportData(Data):
    path: str = Field(description="The file, under the session's artifacts directory.")
    stream: StreamName
    format: Literal["jsonl", "har"]
    entries: int
    size_bytes: int


@tool(
    name="browser_events_export",
    title="Export events",
    description="Write the retained console or network entries to an artifact file.",
    params=ExportParams,
    data=ExportData,
    target="instance",
    read_only=True,
)
async def events_export(ctx: CallContext, p: ExportParams) -> ExportData:
    if p.format == "har" and p.stream != "network":
        raise ToolFailure("invalid_params", "format='har' exports the network stream only.", started=False)
    evidence = _evidence(ctx)
    instance = ctx.require_instance()
    await instance.secrets.refresh(instance.instance_id, instance.context)  # a file agents can read: no secret
    records = [r for r in evidence.stream(p.stream).records if p.page_id is None or r.fields["page_id"] == p.page_id]
    if p.stream == "network":
        await evidence.fill_sizes(records)
    entries = [record.view(False) for record in records]
    if p.format == "har":
        pages = [state for state in instance.pages.values() if p.page_id in (None, state.page_id)]
        text = json.dumps(instance.secrets.scrub(har_log(entries, pages)), ensure_ascii=False, indent=1)
        path = ctx.engine.artifact_path("network", ".har")
    else:
        text = "".join(json.dumps(entry, ensure_ascii=False) + "\n" for entry in entries)
        path = ctx.engine.artifact_path(p.stream, ".jsonl")
    path.write_text(text, encoding="utf-8")
    ctx.artifacts.append(str(path))
    return ExportData(
        path=str(path), stream=p.stream, format=p.format, entries=len(entries), size_bytes=path.stat().st_size
    )


# traces -------------------------------------------------------------------------------
class TraceParams(InstanceParams):
    action: Literal["start", "stop"]
    screenshots: bool = Field(True, description="start: record screenshots.")
    snapshots: bool = Field(True, description="start: record DOM snapshots.")
    reveal_secrets: bool = Field(
        False,
        description="stop: keep secrets unredacted.",
    )


class TraceData(Data):
    action: Literal["start", "stop"]
    recording: bool
    path: str | None = Field(description="stop: trace.zip under the artifacts directory (`playwright show-trace`).")
    size_bytes: int | None
    secrets_revealed: bool | None = Field(None, description="stop: whether the trace keeps its secrets raw.")


@tool(
    name="browser_trace",
    title="Playwright trace",
    description="Start or stop a Playwright trace of the instance; stop saves trace.zip (secrets [redacted]).",
    params=TraceParams,
    data=TraceData,
    target="instance",
    group="tracing",
)
async def trace(ctx: CallContext, p: TraceParams) -> TraceData:
    instance = ctx.require_instance()
    assert instance.context is not None
    if p.reveal_secrets and p.action == "start":
        raise ToolFailure("invalid_params", "reveal_secrets applies to action='stop'.", started=False)
    reveal = _check_reveal(ctx, p.reveal_secrets)
    if p.action == "start":
        if instance.tracing:
            raise ToolFailure("invalid_params", "A trace is already recording; stop it first.", started=False)
        await instance.context.tracing.start(screenshots=p.screenshots, snapshots=p.snapshots, sources=False)
        instance.tracing = True
        return TraceData(action="start", recording=True, path=None, size_bytes=None)
    if not instance.tracing:
        raise ToolFailure("invalid_params", "No trace is recording; start one first.", started=False)
    path = ctx.engine.artifact_path("trace", ".zip")
    instance.tracing = False
    await instance.context.tracing.stop(path=str(path))
    if not reveal:
        try:
            await asyncio.to_thread(scrub_trace, path, instance.secrets.values())
        except BaseException as exc:
            path.unlink(missing_ok=True)  # never leave the raw trace behind
            if not isinstance(exc, Exception):
                raise
            raise ToolFailure(
                "internal_error",
                f"The trace stopped, but it could not be scrubbed of secrets ({type(exc).__name__}: "
                f"{first_lines(str(exc))}), so it was deleted; record it again and stop with reveal_secrets=true "
                "to keep it raw.",
            ) from None
    ctx.artifacts.append(str(path))
    return TraceData(
        action="stop", recording=False, path=str(path), size_bytes=path.stat().st_size, secrets_revealed=reveal
    )
