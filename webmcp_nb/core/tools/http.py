"""`browser_http`: an HTTP request made by the page's own `fetch`, under the result policy.

The page's origin, cookies and CORS apply. The body is pulled from the page in bounded chunks
(`webmcp_nb.core.page_fetch`): a body over its limit is cancelled mid-read and the call fails
(`result_too_large`), nothing is clipped. Outcomes: see `HttpCall.failure`.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, StringConstraints, model_validator

from ..page_fetch import Chunk, FetchFailed, Head, PageFetch, media_type_of
from ..registry import ToolFailure, tool
from ..secret_fields import block_secrets, secret_names
from ..sse import EventStreamParser
from .models import ActionData, Data, FrameParams, Params

if TYPE_CHECKING:
    from ..context import CallContext

Method = Literal["GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"]
ResponseMode = Literal["auto", "json", "text", "ndjson", "sse", "binary"]
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
RESERVED_BYTES = 1024  # of the result budget, kept for the envelope and diagnostics
DEFAULT_MAX_SAVE_BYTES = 64 * 1024 * 1024
MAX_SAFE_INTEGER = 2**53 - 1
MAX_DURATION_MS = 2**31 - 1
CHUNK_BYTES = 256 * 1024  # one pull from the page
DEFAULT_RETRY_MS = 1000  # before an SSE reconnect, unless the server said `retry:`
STREAMING_TYPES = frozenset({"text/event-stream"})
BINARY_TYPES = frozenset({"application/octet-stream", "application/pdf", "application/zip"})
BINARY_PREFIXES = ("image/", "audio/", "video/")
NDJSON_TYPES = frozenset({"application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines"})

PositiveSafe = Annotated[int, Field(gt=0, le=MAX_SAFE_INTEGER)]


def is_binary(media_type: str) -> bool:
    return media_type in BINARY_TYPES or media_type.startswith(BINARY_PREFIXES)


def is_json(media_type: str) -> bool:
    return media_type == "application/json" or media_type.endswith("+json")


class SseLimits(Params):
    max_events: PositiveSafe = Field(description="Fail if another event arrives after this many.")
    max_bytes: PositiveSafe = Field(description="Fail once the events' UTF-8 JSON (with separators) would pass this.")
    max_duration_ms: Annotated[int, Field(gt=0, le=MAX_DURATION_MS)] = Field(
        description="Fail (cancelling the reader in the page) if the stream has not ended by then."
    )


class BinaryOptions(Params):
    mode: Literal["base64", "download"] = Field(
        "base64", description="base64: the bytes in the result (within its budget); download: handed to the "
        "session's binary_renderer, which returns an https URL."
    )
    max_bytes: PositiveSafe | None = Field(None, description="Fail if the body is larger; default: what the mode allows.")


class HttpParams(FrameParams):
    method: Method = Field("GET", description="GET, HEAD and OPTIONS change nothing; the others are mutations.")
    url: Annotated[str, StringConstraints(min_length=1, max_length=8192)] = Field(
        description="Absolute, or relative to the page's URL (such as '/api/items')."
    )
    headers: dict[str, Annotated[str, StringConstraints(max_length=8192)]] = Field(
        default_factory=dict, description="Request headers (the page's cookies are sent as the page would send them)."
    )
    body: Annotated[str, StringConstraints(max_length=1_048_576)] | None = Field(None, description="A text body.")
    json_body: Any = Field(None, alias="json", description="A JSON body (sets Content-Type: application/json).")
    response: ResponseMode = Field(
        "auto", description="How to read the body: auto (JSON, NDJSON or text by its media type), json, text, "
        "ndjson, sse (collect server-sent events; needs `sse` limits) or binary (see `binary`)."
    )
    expect: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = Field(
        None, description="The media type you expect: a streaming or binary one is refused before the request is "
        "sent unless response is 'sse' or 'binary'."
    )
    preflight: bool = Field(False, description="Send a HEAD first to learn the media type, so an unreadable answer "
                            "is refused before the request itself is sent.")
    timeout_s: float | None = Field(None, gt=0, le=600, description="Default: the operation timeout.")
    max_result_bytes: Annotated[int, Field(gt=RESERVED_BYTES, le=MAX_SAFE_INTEGER)] | None = Field(
        None, description=f"The result budget (default and maximum: the session's BROWSER_MCP_MAX_RESULT_BYTES); "
        f"{RESERVED_BYTES} bytes of it are kept for the envelope."
    )
    save: bool = Field(False, description="Stream the body to a file in the artifacts directory instead of "
                       "returning it (for bodies over the result budget).")
    max_save_bytes: PositiveSafe = Field(DEFAULT_MAX_SAVE_BYTES, description="With save=true: fail past this size.")
    strict: bool = Field(False, description="NDJSON: fail on the first malformed line (default: skip it, warn).")
    sse: SseLimits | None = Field(None, description="Required with response='sse': the collection's limits.")
    binary: BinaryOptions | None = Field(None, description="With response='binary': base64 or download, max_bytes.")
    secret_fields: list[Annotated[str, StringConstraints(min_length=1, max_length=100)]] = Field(
        default_factory=list, max_length=50, description="More JSON field names whose values are blocked."
    )

    @model_validator(mode="after")
    def _consistent(self) -> HttpParams:
        problems = []
        if self.body is not None and self.json_body is not None:
            problems.append("give either body or json, not both")
        if (self.body is not None or self.json_body is not None) and self.method in ("GET", "HEAD"):
            problems.append(f"a {self.method} request has no body")
        if (self.response == "sse") != (self.sse is not None):
            problems.append("response='sse' needs the sse limits {max_events, max_bytes, max_duration_ms}, "
                            "and sse limits need response='sse'")
        if self.binary is not None and self.response != "binary":
            problems.append("binary options need response='binary'")
        if self.strict and self.response != "ndjson":
            problems.append("strict applies to response='ndjson' only")
        if self.save and (self.response == "sse" or (self.binary is not None and self.binary.mode == "download")):
            problems.append("save=true cannot be combined with response='sse' or binary download")
        if problems:
            raise ValueError("; ".join(problems))
        return self


class SavedBody(Data):
    path: str
    size_bytes: int
    media_type: str


class HttpData(ActionData):
    url: str = Field(description="The response's URL, after redirects.")
    method: str | None = None
    status: int | None = Field(None, description="The HTTP status: an error status is data, not a tool error.")
    status_text: str | None = None
    headers: dict[str, str] | None = Field(None, description="Response headers, secret ones redacted.")
    content_type: str | None = None
    byte_length: int | None = Field(None, description="Body bytes received (decoded, as the page sees them).")
    response: str | None = Field(None, description="How the body was read (auto resolves to json, ndjson or text).")
    body: Any = Field(None, description="The body in that form; SSE: {events, reconnects}; binary: {kind, ...}.")
    blocked_fields: list[str] = Field(default_factory=list, description="Secret JSON fields replaced by [blocked].")
    warnings: list[str] = Field(default_factory=list)
    saved: SavedBody | None = None


def _read_only_call(args: dict[str, Any]) -> bool:
    method = args.get("method", "GET")
    return isinstance(method, str) and method.upper() in SAFE_METHODS


class Overflow(Exception):
    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


@dataclass
class HttpCall:
    """One call's state: what was sent, the budget, and how a failure is classified."""

    ctx: CallContext
    p: HttpParams
    budget: int
    names: frozenset[str]
    sent: bool = False
    blocked: list[str] = field(default_factory=list)

    @property
    def safe(self) -> bool:
        return self.p.method in SAFE_METHODS

    def failure(self, error_type: str, message: str, details: dict[str, Any] | None = None) -> ToolFailure:
        """A failure with the outcome the policy gives: not sent -> not_started; a safe method ->
        read_only; a mutation cut off after sending -> unknown / inspect_state."""
        if not self.sent:
            return ToolFailure(error_type, message, started=False, details=details)
        if self.safe:
            return ToolFailure(error_type, message, read_only=True, details=details)
        return ToolFailure(
            error_type,
            f"{message} The {self.p.method} request was sent and may have taken effect: check the API's state "
            "before repeating it.",
            read_only=False,
            details=details,
        )

    def clean(self, value: Any, path: str = "") -> Any:
        cleaned, blocked = block_secrets(value, self.names, path)
        self.blocked += blocked
        return cleaned

    def too_large(self, what: str, limit: int, limit_name: str) -> ToolFailure:
        way_out = (
            " Nothing was clipped and nothing was retried. Way out: save=true streams the body to the "
            "artifacts directory (up to max_save_bytes, default 64 MiB)." if not self.p.save else
            " Nothing was kept (the partial file was removed) and nothing was retried; raise max_save_bytes if needed."
        )
        return self.failure(
            "result_too_large", f"The response body is over {limit_name} ({limit:,} bytes): {what}; the read "
            f"was cancelled.{way_out}"
        )


@tool(
    name="browser_http",
    title="HTTP request from the page",
    description="Make an HTTP request with the page's own fetch (its origin, cookies and CORS) and return the "
    "status, headers and body (JSON, text, NDJSON, collected server-sent events or binary), bounded by the "
    "result budget: nothing is clipped, a body over a limit fails. Secret JSON fields come back as [blocked]. "
    "HTTP error statuses are data, not errors. POST, PUT, PATCH and DELETE are mutations.",
    params=HttpParams,
    data=HttpData,
    target="page",
    group="http",
    destructive=True,
    open_world=True,
    read_only_when=_read_only_call,
    positional=("method", "url"),
    too_large_hint="Ask for less (a narrower URL), or save=true (the body to a file).",
)
async def http(ctx: CallContext, p: HttpParams) -> HttpData:
    assert ctx.frame is not None
    limit = ctx.engine.limits.max_result_bytes
    if p.max_result_bytes is not None and p.max_result_bytes > limit:
        raise ToolFailure("invalid_params", f"max_result_bytes can be at most the session's limit, {limit:,} "
                          "(BROWSER_MCP_MAX_RESULT_BYTES).", started=False)
    call = HttpCall(ctx, p, (p.max_result_bytes or limit) - RESERVED_BYTES, secret_names(p.secret_fields))
    if p.binary is not None and p.binary.mode == "download" and ctx.engine.binary_renderer is None:
        raise ToolFailure("unsupported_capability", "binary mode 'download' needs a renderer: set "
                          "Session.binary_renderer in the notebook. Nothing was sent.", started=False)
    if p.expect is not None:
        refuse_media_type(call, media_type_of(p.expect), "the call's expect field")
    timeout_s = min(p.timeout_s or math.inf, ctx.remaining_s())
    if p.response == "sse":
        return await collect_sse(call, timeout_s)
    fetch = PageFetch(ctx.frame)
    finished = False
    try:
        async with asyncio.timeout(timeout_s):
            if p.preflight and p.method != "HEAD":
                await preflight(call)
            call.sent = True
            head = await start(call, fetch)
            data = await read_response(call, fetch, head)
            finished = True
            return data
    except TimeoutError:
        raise call.failure("operation_timeout", f"The request did not finish within {timeout_s:g} s; the "
                           "page's fetch was aborted.") from None
    finally:
        if not finished:
            await fetch.cancel()


def refuse_media_type(call: HttpCall, media_type: str, source: str) -> None:
    """Fail if `media_type` cannot be read under the call's response mode (streaming, binary)."""
    mode = call.p.response
    streaming, binary = media_type in STREAMING_TYPES, is_binary(media_type)
    if (streaming and mode != "sse") or (binary and mode != "binary"):
        ask = "response='sse' with its limits" if streaming else "response='binary'"
        where = "before the request was sent" if not call.sent else "and the body was not read"
        raise call.failure(
            "unsupported_capability" if call.sent else "invalid_params",
            f"The response is {media_type} ({source}), which is refused {where}: ask for it with {ask}.",
        )


async def preflight(call: HttpCall) -> None:
    probe = PageFetch(call.ctx.frame)  # type: ignore[arg-type]
    try:
        head = await probe.start(call.p.url, "HEAD", call.p.headers, None)
    except FetchFailed:
        return  # no information: the request itself will tell
    finally:
        await probe.cancel()
    if 200 <= head.status < 300 and head.media_type:
        refuse_media_type(call, head.media_type, "from a preflight HEAD")


async def start(call: HttpCall, fetch: PageFetch, headers: dict[str, str] | None = None) -> Head:
    p = call.p
    body = p.body
    headers = dict(p.headers if headers is None else headers)
    if p.json_body is not None:
        body = json.dumps(p.json_body)
        if not any(name.lower() == "content-type" for name in headers):
            headers["Content-Type"] = "application/json"
    try:
        return await fetch.start(p.url, p.method, headers, body)
    except FetchFailed as exc:
        raise network_failure(call, exc.reason) from None


def network_failure(call: HttpCall, reason: str, details: dict[str, Any] | None = None) -> ToolFailure:
    return call.failure("navigation_failed", f"The page's fetch of {call.p.url} failed: {reason} (the browser's "
                        "reason; CORS refusals and network errors look alike to the page).", details)


async def read_body(call: HttpCall, fetch: PageFetch, head: Head, limit: int, limit_name: str,
                    sink: Callable[[bytes], Any]) -> int:
    """Pull the body into `sink`; fail once its declared or received size passes `limit`."""
    declared = head.content_length
    if declared is not None and declared > limit and "content-encoding" not in head.headers:
        raise call.too_large(f"its Content-Length declares {declared:,} bytes", limit, limit_name)
    received = 0
    while True:
        chunk: Chunk = await fetch.read(min(CHUNK_BYTES, limit - received + 1))
        received += len(chunk.data)
        if received > limit:
            raise call.too_large(f"more than {limit:,} bytes arrived ({received:,} so far)", limit, limit_name)
        result = sink(chunk.data)
        if inspect.isawaitable(result):
            await result
        if chunk.error is not None:
            raise network_failure(call, f"{chunk.error}, after {received:,} bytes of the body")
        if chunk.done:
            return received


async def read_response(call: HttpCall, fetch: PageFetch, head: Head) -> HttpData:
    p = call.p
    refuse_media_type(call, head.media_type, f"its Content-Type {head.content_type!r}")
    common = describe(call, head)
    if p.save:
        saved = await save_body(call, fetch, head)
        return HttpData(**common, byte_length=saved.size_bytes, response="saved", saved=saved)
    binary = p.response == "binary"
    mode_limit = call.budget * 3 // 4 if binary and (p.binary is None or p.binary.mode == "base64") else call.budget
    if binary and p.binary is not None and p.binary.max_bytes is not None:
        mode_limit = min(mode_limit, p.binary.max_bytes) if p.binary.mode == "base64" else p.binary.max_bytes
    limit_name = "the binary max_bytes / result budget" if binary else "the result budget"
    received = bytearray()
    length = await read_body(call, fetch, head, mode_limit, limit_name, received.extend)
    warnings: list[str] = []
    if binary:
        mode, body = "binary", await binary_body(call, bytes(received), head.media_type)
    else:
        mode, body = decode(call, bytes(received), head, warnings)
    size = len(json.dumps(body, default=lambda value: "x" * (4 * math.ceil(len(value) / 3)), ensure_ascii=False).encode())
    if size > call.budget:
        raise call.too_large(f"the {mode} value is {size:,} bytes of JSON", call.budget, "the result budget")
    return HttpData(**common, byte_length=length, response=mode, body=body, blocked_fields=call.blocked,
                    warnings=warnings)


def describe(call: HttpCall, head: Head) -> dict[str, Any]:
    from ..evidence import redact_headers

    return {
        "url": head.url, "method": call.p.method, "status": head.status, "status_text": head.status_text,
        "headers": redact_headers(head.headers), "content_type": head.content_type,
    }


def decode(call: HttpCall, raw: bytes, head: Head, warnings: list[str]) -> tuple[str, Any]:
    """The body as the response mode asks (auto picks by media type)."""
    mode = call.p.response
    media = head.media_type
    if mode == "auto":
        mode = "json" if is_json(media) else "ndjson" if media in NDJSON_TYPES else "text"
    try:
        text = raw.decode(_charset(head.content_type))
    except (UnicodeDecodeError, LookupError):
        raise call.failure("evaluation_failed", f"The body ({len(raw):,} bytes of {media or 'unknown type'}) is not "
                           "text in its charset; ask for it with response='binary'.") from None
    if mode == "json":
        try:
            value = json.loads(text)
        except ValueError as exc:
            if call.p.response == "json":
                raise call.failure("evaluation_failed", f"The body is not JSON: {exc}.") from None
            warnings.append(f"declared {media} but is not JSON ({exc}); returned as text")
            return "text", text
        return "json", call.clean(value)
    if mode == "ndjson":
        return "ndjson", parse_ndjson(call, text, warnings)
    if is_json(media) or media in NDJSON_TYPES:
        with contextlib.suppress(ValueError):
            cleaned = call.clean(json.loads(text))
            if call.blocked:  # the text would reveal them: it is the cleaned JSON instead
                return "text", json.dumps(cleaned, ensure_ascii=False)
    return "text", text


def _charset(content_type: str) -> str:
    for part in content_type.split(";")[1:]:
        name, _, value = part.strip().partition("=")
        if name.lower() == "charset" and value:
            return value.strip('"')
    return "utf-8"


def parse_ndjson(call: HttpCall, text: str, warnings: list[str]) -> list[Any]:
    values = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:
            if call.p.strict:
                raise call.failure("evaluation_failed", f"NDJSON line {number} is malformed: {exc}.") from None
            warnings.append(f"line {number} skipped: malformed JSON ({exc})")
            continue
        values.append(call.clean(value, f"[{len(values)}]"))
    return values


async def save_body(call: HttpCall, fetch: PageFetch, head: Head) -> SavedBody:
    """Stream the body to a new artifact, chunk by chunk (removed again if it fails)."""
    path = call.ctx.engine.artifact_path("http", ".bin")
    handle = await asyncio.to_thread(open, path, "wb")
    try:
        size = await read_body(call, fetch, head, call.p.max_save_bytes, "max_save_bytes",
                               lambda data: asyncio.to_thread(handle.write, data))
    except BaseException:
        await asyncio.to_thread(handle.close)
        path.unlink(missing_ok=True)
        raise
    await asyncio.to_thread(handle.close)
    call.ctx.artifacts.append(str(path))
    return SavedBody(path=str(path), size_bytes=size, media_type=head.media_type)


# --------------------------------------------------------------------------- #
# Binary
# --------------------------------------------------------------------------- #


async def binary_body(call: HttpCall, data: bytes, media_type: str) -> dict[str, Any]:
    options = call.p.binary or BinaryOptions()
    if options.mode == "base64":
        # bytes stay bytes in Python; JSON carries them as base64 (and MCP sends images as image blocks)
        return {"kind": "binary", "encoding": "base64", "media_type": media_type, "byte_length": len(data), "data": data}
    renderer = call.ctx.engine.binary_renderer
    assert renderer is not None
    cancelled = threading.Event()
    operation = {"tool": call.ctx.spec.name, "method": call.p.method, "url": call.p.url, "caller": call.ctx.caller}
    try:
        if inspect.iscoroutinefunction(renderer):
            rendered = await renderer(data, media_type, operation, cancelled)
        else:
            rendered = await asyncio.to_thread(renderer, data, media_type, operation, cancelled)
    except asyncio.CancelledError:
        cancelled.set()
        raise
    except Exception as exc:  # noqa: BLE001 - the renderer is the user's code
        raise render_failure(call, f"the binary_renderer raised {type(exc).__name__}: {exc}") from None
    problem = check_rendered(rendered)
    if problem:
        raise render_failure(call, problem)
    return {"kind": "download", "media_type": media_type, "byte_length": len(data),
            "url": rendered["url"], "expires_at": rendered["expires_at"]}


def check_rendered(rendered: Any) -> str | None:
    """Why a renderer's answer is unacceptable (None if it is fine)."""
    if not isinstance(rendered, dict):
        return f"the binary_renderer returned {type(rendered).__name__}, not a dict with url and expires_at"
    url, expires = rendered.get("url"), rendered.get("expires_at")
    if not isinstance(url, str):
        return "the binary_renderer returned no url"
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        return f"the binary_renderer's url must be https:// (got {url[:60]!r})"
    if parts.username is not None or parts.password is not None:
        return "the binary_renderer's url embeds credentials"
    if not isinstance(expires, int) or isinstance(expires, bool) or expires <= time.time() * 1000:
        return f"expires_at must be a future integer (epoch ms), got {expires!r}"
    return None


def render_failure(call: HttpCall, problem: str) -> ToolFailure:
    return call.failure("download_failed", f"The body arrived but could not be handed out: {problem}. The request "
                        "itself may already have had effects.")


# --------------------------------------------------------------------------- #
# Server-sent events
# --------------------------------------------------------------------------- #


@dataclass
class Collection:
    events: list[dict[str, Any]] = field(default_factory=list)
    used: int = 2  # the JSON array's brackets
    received: int = 0  # body bytes, every connection
    reconnects: int = 0

    def details(self, call: HttpCall) -> dict[str, Any]:
        return {"partial": self.events, "reconnects": self.reconnects, "blocked_fields": call.blocked}


async def collect_sse(call: HttpCall, timeout_s: float) -> HttpData:
    """Collect events until the stream ends; a dropped connection of a safe request reconnects
    (after the server's `retry`, with `Last-Event-ID`). Every failure keeps the partial events."""
    p, ctx = call.p, call.ctx
    assert p.sse is not None
    limits = p.sse
    duration_s = min(limits.max_duration_ms / 1000, timeout_s)
    byte_cap = min(limits.max_bytes, call.budget)
    deadline = time.monotonic() + duration_s
    parser = EventStreamParser()
    got = Collection()
    headers = {"Accept": "text/event-stream", **p.headers}

    def fail(error_type: str, message: str) -> ToolFailure:
        note = (f" Partial output: {len(got.events)} events and {got.reconnects} reconnects (in details.partial); it "
                "is incomplete and is not an instruction to retry.")
        return call.failure(error_type, message + note, got.details(call))

    def add(event: Any) -> None:
        if len(got.events) >= limits.max_events:
            raise fail("result_too_large", f"Another event arrived after max_events ({limits.max_events}).")
        index = len(got.events)
        collected = event.to_dict(lambda data: call.clean(data, f"events[{index}].data"))
        size = collected["bytes"] + (1 if got.events else 0)
        if got.used + size > byte_cap:
            which = "max_bytes" if byte_cap == limits.max_bytes else "the result budget"
            raise fail("result_too_large", f"The events would pass {which} ({byte_cap:,} bytes).")
        got.events.append(collected)
        got.used += size
        if ctx.on_progress is not None:
            ctx.on_progress({"kind": "sse_event", "event": collected, "count": len(got.events),
                             "reconnects": got.reconnects})

    while True:
        fetch = PageFetch(ctx.frame)  # type: ignore[arg-type]
        finished = False
        try:
            async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
                call.sent = True
                try:
                    head = await fetch.start(p.url, p.method, headers, p.body)
                except FetchFailed as exc:
                    raise network_failure(call, exc.reason, got.details(call)) from None
                if got.reconnects and head.status == 204:
                    finished = True
                    break  # the server's way to say: no more
                if not 200 <= head.status < 300 or head.media_type != "text/event-stream":
                    if got.reconnects:
                        raise fail("navigation_failed", f"The reconnect was answered {head.status} "
                                   f"{head.content_type or '(no type)'}, not an event stream.")
                    if head.status >= 300:  # an HTTP error is data: its body as in response='auto'
                        call.p = p.model_copy(update={"response": "auto", "sse": None})
                        data = await read_response(call, fetch, head)
                        finished = True
                        return data
                    refuse_media_type(call, head.media_type, f"its Content-Type {head.content_type!r}")
                    raise fail("unsupported_capability", f"response='sse' but the answer is "
                               f"{head.content_type or 'untyped'}; the body was not read.")
                while True:
                    chunk = await fetch.read(CHUNK_BYTES, eager=True)
                    got.received += len(chunk.data)
                    for event in parser.feed(chunk.data):
                        add(event)
                    if chunk.done:
                        finished = True
                        return HttpData(**describe(call, head), byte_length=got.received, response="sse",
                                        body={"events": got.events, "reconnects": got.reconnects},
                                        blocked_fields=call.blocked)
                    if chunk.error is not None:
                        break
        except TimeoutError:
            limit = "max_duration_ms" if duration_s == limits.max_duration_ms / 1000 else "the call's timeout"
            raise fail("operation_timeout", f"The stream did not end within {limit} ({duration_s * 1000:g} ms); "
                       "the reader in the page was cancelled.") from None
        finally:
            if not finished:
                await fetch.cancel()
        if not call.safe:
            raise fail("navigation_failed", f"The stream dropped ({chunk.error}); a {p.method} is not reconnected.")
        wait_s = (parser.retry_ms if parser.retry_ms is not None else DEFAULT_RETRY_MS) / 1000
        if time.monotonic() + wait_s >= deadline:
            raise fail("operation_timeout", f"The stream dropped ({chunk.error}) and max_duration_ms ends before "
                       "the server's retry delay.")
        await asyncio.sleep(wait_s)
        got.reconnects += 1
        parser.reset_connection()
        if parser.last_event_id:
            headers["Last-Event-ID"] = parser.last_event_id
        if ctx.on_progress is not None:
            ctx.on_progress({"kind": "sse_reconnect", "count": len(got.events), "reconnects": got.reconnects})
    return HttpData(**describe(call, head), byte_length=got.received, response="sse",
                    body={"events": got.events, "reconnects": got.reconnects}, blocked_fields=call.blocked)
