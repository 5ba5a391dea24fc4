"""`browser_http`: an HTTP request made by the page's own `fetch`, under the result policy.

The page's origin, cookies and CORS apply. The body is pulled from the page in bounded chunks
(`webmcp_nb.core.browsers.page_fetch`): a body over its limit is cancelled mid-read and the call fails
(`result_too_large`), nothing is clipped. Outcomes: see `HttpCall.failure`; SSE: `http_sse`;
binary downloads: `http_binary`.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import mimetypes
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..browsers.page_fetch import Chunk, Fetch, FetchFailed, Head, media_type_of
from ..call.errors import ToolFailure
from ..call.registry import tool
from ..call.util import first_lines
from ..guard.grants import is_absolute
from ..guard.secret_fields import block_in_json_bytes, secret_names
from .http_binary import binary_body
from .http_models import (
    CHUNK_BYTES,
    MAX_SAFE_INTEGER,
    NDJSON_TYPES,
    RESERVED_BYTES,
    STREAMING_TYPES,
    BinaryOptions,
    HttpCall,
    HttpData,
    HttpParams,
    SavedBody,
    describe,
    is_binary,
    is_json,
    read_only_call,
)
from .http_sse import collect_sse
from .navigation import check_url

if TYPE_CHECKING:
    from ..call.context import CallContext

SNIFF_BYTES = 4096  # how much of a saved body is looked at to tell whether it is text


@tool(
    name="browser_http",
    title="HTTP request from the page",
    description="An HTTP request with the page's own fetch (its origin, cookies, CORS); returns status, headers "
    "and body (JSON, text, NDJSON, SSE or binary; too big: an error, never clipped). Error statuses are data; "
    "secret JSON fields come back [blocked].",
    params=HttpParams,
    data=HttpData,
    target="page",
    group="http",
    destructive=True,
    open_world=True,
    read_only_when=read_only_call,
    magic_positional=("method", "url"),
    # An absolute URL is held to the caller's URL grant, as for navigations; a relative one is the
    # page's own (which the grant allowed when the page was loaded).
    check=lambda ctx, p: check_url(ctx, p.url) if is_absolute(p.url) else None,
    too_large_hint="Ask for less (a narrower URL), or save=true (the body to a file).",
)
async def http(ctx: CallContext, p: HttpParams) -> HttpData:
    from playwright.async_api import Error as PlaywrightError

    limit = ctx.engine.limits.max_result_bytes
    if p.max_result_bytes is not None and p.max_result_bytes > limit:
        raise ToolFailure(
            "invalid_params",
            f"max_result_bytes can be at most the session's limit, {limit:,} "
            f"({ctx.engine.limits.source('max_result_bytes')}).",
            started=False,
        )
    call = HttpCall(ctx, p, (p.max_result_bytes or limit) - RESERVED_BYTES, secret_names(p.secret_fields))
    ctx.cut_off = call.failure  # the engine's deadline or the caller's cancel: outcome by method and sending
    if p.binary is not None and p.binary.mode == "download" and ctx.engine.binary_renderer is None:
        raise ToolFailure(
            "unsupported_capability",
            "binary mode 'download' needs a renderer: set Session.binary_renderer in the notebook. Nothing was sent.",
            started=False,
        )
    if p.expect is not None:
        refuse_media_type(call, media_type_of(p.expect), "the call's expect field")
    timeout_s = min(p.timeout_s or math.inf, ctx.remaining_s())
    try:
        if p.response == "sse":
            return await collect_sse(call, timeout_s)
        return await request(call, timeout_s)
    except PlaywrightError as exc:
        if ctx.page.is_closed():
            raise
        raise call.failure(
            "navigation_failed",
            f"The page could not go on with the request to {p.url} (did it navigate away?): {first_lines(exc.message)}",
        ) from None


async def request(call: HttpCall, timeout_s: float) -> HttpData:
    """Send the request and read its answer within `timeout_s`; cut off, the page's fetch is aborted."""
    p = call.p
    fetch = call.new_fetch()
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
        raise call.failure(
            "operation_timeout", f"The request did not finish within {timeout_s:g} s; the page's fetch was aborted."
        ) from None
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
    probe = call.new_fetch()
    try:
        head = await probe.start(call.p.url, "HEAD", call.p.headers, None)
    except FetchFailed:
        return  # no information: the request itself will tell
    finally:
        await probe.cancel()
    if 200 <= head.status < 300 and head.media_type:
        refuse_media_type(call, head.media_type, "from a preflight HEAD")


async def start(call: HttpCall, fetch: Fetch) -> Head:
    headers, body = call.p.request_parts()
    try:
        return await fetch.start(call.p.url, call.p.method, headers, body)
    except FetchFailed as exc:
        raise network_failure(call, fetch, exc.reason) from None


def network_failure(call: HttpCall, fetch: Fetch, reason: str) -> ToolFailure:
    return call.failure("navigation_failed", f"{fetch.sender} of {call.p.url} failed: {reason} ({fetch.failure_note}).")


async def read_body(
    call: HttpCall, fetch: Fetch, head: Head, limit: int, limit_name: str, sink: Callable[[bytes], Any]
) -> int:
    """Pull the body into `sink`; fail once its declared or received size passes `limit`."""
    declared = head.content_length
    if declared is not None and declared > limit and "content-encoding" not in head.headers:
        raise call.too_large(
            f"its Content-Length declares {declared:,} bytes (0 bytes of it were read)", limit, limit_name
        )
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
            raise network_failure(call, fetch, f"{chunk.error}, after {received:,} bytes of the body")
        if chunk.done:
            return received


async def read_response(call: HttpCall, fetch: Fetch, head: Head) -> HttpData:
    p = call.p
    refuse_media_type(call, head.media_type, f"its Content-Type {head.content_type!r}")
    common = describe(call, head)
    if p.save:
        saved, arrived = await save_body(call, fetch, head)
        return HttpData(**common, byte_length=arrived, response="saved", saved=saved, blocked_fields=call.blocked)
    binary = p.response == "binary"
    mode_limit, limit_name = call.budget, "the result budget"
    if binary:
        options = p.binary or BinaryOptions(mode="base64", max_bytes=None)
        if options.mode == "base64":  # the base64 expansion must fit the budget
            mode_limit = min(call.budget * 3 // 4, options.max_bytes or MAX_SAFE_INTEGER)
        else:  # the bytes go to the renderer, not into the result
            mode_limit = options.max_bytes or p.max_save_bytes
        limit_name = "the binary max_bytes / result budget"
    received = bytearray()
    length = await read_body(call, fetch, head, mode_limit, limit_name, received.extend)
    warnings: list[str] = []
    if binary:  # JSON asked for as bytes still has its secret fields blocked, before the renderer sees it
        raw, blocked = block_in_json_bytes(bytes(received), call.names)
        call.blocked += blocked
        mode, body = "binary", await binary_body(call, raw, head.media_type)
    else:
        mode, body = decode(call, bytes(received), head, warnings)
    size = len(
        json.dumps(body, default=lambda value: "x" * (4 * math.ceil(len(value) / 3)), ensure_ascii=False).encode()
    )
    if size > call.budget:
        raise call.too_large(f"the {mode} value is {size:,} bytes of JSON", call.budget, "the result budget")
    return HttpData(
        **common, byte_length=length, response=mode, body=body, blocked_fields=call.blocked, warnings=warnings
    )


def decode(call: HttpCall, raw: bytes, head: Head, warnings: list[str]) -> tuple[str, Any]:
    """The body as the response mode asks (auto picks by media type); no body at all (HEAD, 204)
    is ``("empty", None)``."""
    mode = call.p.response
    media = head.media_type
    if not raw:
        return "empty", None
    if mode == "auto":
        mode = "json" if is_json(media) else "ndjson" if media in NDJSON_TYPES else "text"
    try:
        text = raw.decode(_charset(head.content_type))
    except (UnicodeDecodeError, LookupError):
        raise call.failure(
            "evaluation_failed",
            f"The body ({len(raw):,} bytes of {media or 'unknown type'}) is not "
            "text in its charset; ask for it with response='binary'.",
        ) from None
    if mode == "json":
        try:
            value = json.loads(text)
        except ValueError as exc:
            if call.p.response == "json":
                raise call.failure("evaluation_failed", f"The body is not JSON: {exc}.") from None
            warnings.append(f"declared {media} but is not JSON ({exc}); returned as text")
            return "text", call.clean_text(text)
        return "json", call.clean(value)
    if mode == "ndjson":
        return "ndjson", parse_ndjson(call, text, warnings)
    return "text", call.clean_text(text)  # JSON or NDJSON text, whatever its media type, has them blocked


def _charset(content_type: str) -> str:
    for part in content_type.split(";")[1:]:
        name, _, value = part.strip().partition("=")
        if name.lower() == "charset" and value:
            return value.strip('"')
    return "utf-8"


def parse_ndjson(call: HttpCall, text: str, warnings: list[str]) -> list[Any]:
    values: list[Any] = []
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


async def save_body(call: HttpCall, fetch: Fetch, head: Head) -> tuple[SavedBody, int]:
    """Stream the body to a new artifact, chunk by chunk (removed again if it fails); with the
    bytes received (the file's size differs when secret fields were blocked in it)."""
    path = call.ctx.engine.artifact_path("http", mimetypes.guess_extension(head.media_type) or ".bin")
    handle = await asyncio.to_thread(open, path, "wb")
    try:
        size = await read_body(
            call,
            fetch,
            head,
            call.p.max_save_bytes,
            "max_save_bytes",
            lambda data: asyncio.to_thread(handle.write, data),
        )
        await asyncio.to_thread(handle.close)
        size_on_disk = await asyncio.to_thread(block_saved_secrets, call, path, _charset(head.content_type))
    except BaseException:
        await asyncio.to_thread(handle.close)
        path.unlink(missing_ok=True)  # nothing half-written stays (nor a body whose secrets were not yet blocked)
        raise
    call.ctx.artifacts.append(str(path))
    return SavedBody(path=str(path), size_bytes=size_on_disk, media_type=head.media_type), size


def block_saved_secrets(call: HttpCall, path: Path, charset: str) -> int:
    """Block the secret fields of a saved JSON or NDJSON body in its file, which an agent can read
    (rewritten only if something was blocked; the whole file is read, as much as max_save_bytes).
    Returns the file's size. Any media type is checked; a file that does not start as text is not
    read further."""
    with path.open("rb") as file:
        head = file.read(SNIFF_BYTES)
    try:
        head.decode(charset)
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not just a character cut at the sniff's end: not text
            return path.stat().st_size
    except LookupError:
        return path.stat().st_size
    try:
        text = path.read_bytes().decode(charset)
    except (UnicodeDecodeError, LookupError):
        return path.stat().st_size  # not text in its charset: no JSON fields to find
    cleaned = call.ctx.engine.manager.secrets.scrub(call.clean_text(text))  # nor known secrets
    if cleaned != text:
        path.write_bytes(cleaned.encode(charset))
    return path.stat().st_size
