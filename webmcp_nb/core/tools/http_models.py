"""browser_http's parameters, data and per-call policy (budget, outcomes, secret blocking)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, StringConstraints, model_validator

from ..browsers.page_fetch import Fetch, Head, PageFetch
from ..call.errors import ToolFailure
from ..evidence.recorder import redact_headers
from ..guard.secret_fields import block_in_json_text, block_secrets
from .models import ActionData, Data, FrameParams, Params

if TYPE_CHECKING:
    from ..call.context import CallContext
    from ..call.envelope import ErrorType

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
    max_bytes: PositiveSafe = Field(description="Fail past this many bytes of event JSON.")
    max_duration_ms: Annotated[int, Field(gt=0, le=MAX_DURATION_MS)] = Field(
        description="Fail if the stream has not ended by then."
    )


class StreamCollection(SseLimits):
    """An API's `stream_collection`: browser_http's limits and a bound on each event."""

    max_event_bytes: PositiveSafe | None = Field(
        None, description="Fail once one event's lines, as received, pass this many bytes."
    )


class BinaryOptions(Params):
    mode: Literal["base64", "download"] = Field(
        "base64",
        description="base64: in the result; download: an https URL from the session's binary_renderer.",
    )
    max_bytes: PositiveSafe | None = Field(
        None, description="Fail if the body is larger; default: what the mode allows."
    )


class HttpParams(FrameParams):
    method: Method = Field("GET", description="GET, HEAD and OPTIONS change nothing; the others are mutations.")
    url: Annotated[str, StringConstraints(min_length=1, max_length=8192)] = Field(
        description="Absolute, or relative to the page ('/api/items')."
    )
    headers: dict[str, Annotated[str, StringConstraints(max_length=8192)]] = Field(
        default_factory=dict, description="The page's cookies go as usual."
    )
    body: Annotated[str, StringConstraints(max_length=1_048_576)] | None = Field(None, description="A text body.")
    json_body: dict[str, Any] | None = Field(None, description="A JSON object body (other JSON: `body`).")
    response: ResponseMode = Field(
        "auto",
        description="auto: by media type; sse: collect server-sent events (needs `sse`); binary: see `binary`.",
    )
    expect: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = Field(
        None,
        description="The media type expected (a streaming or binary one needs response sse or binary).",
    )
    preflight: bool = Field(
        False,
        description="HEAD first: refuse an unreadable answer before sending.",
    )
    timeout_s: float | None = Field(None, gt=0, le=600, description="Default: the operation timeout.")
    max_result_bytes: Annotated[int, Field(gt=RESERVED_BYTES, le=MAX_SAFE_INTEGER)] | None = Field(
        None,
        description="Default and maximum: BROWSER_MCP_MAX_RESULT_BYTES.",
    )
    save: bool = Field(
        False,
        description="Stream the body to an artifact file.",
    )
    max_save_bytes: PositiveSafe = Field(DEFAULT_MAX_SAVE_BYTES, description="save=true: fail past this size.")
    strict: bool = Field(False, description="NDJSON: fail on a malformed line (else skip it).")
    sse: SseLimits | None = Field(None, description="response='sse': the limits.")
    binary: BinaryOptions | None = Field(
        None,
        description="response='binary': how to hand the bytes over.",
    )
    secret_fields: list[Annotated[str, StringConstraints(min_length=1, max_length=100)]] = Field(
        default_factory=list, max_length=50, description="More JSON fields to block."
    )

    @model_validator(mode="after")
    def _consistent(self) -> HttpParams:
        problems = []
        if self.body is not None and self.json_body is not None:
            problems.append("give either body or json_body, not both")
        if (self.body is not None or self.json_body is not None) and self.method in ("GET", "HEAD"):
            problems.append(f"a {self.method} request has no body")
        if (self.response == "sse") != (self.sse is not None):
            problems.append(
                "response='sse' needs the sse limits {max_events, max_bytes, max_duration_ms}, "
                "and sse limits need response='sse'"
            )
        if self.binary is not None and self.response != "binary":
            problems.append("binary options need response='binary'")
        if self.strict and self.response != "ndjson":
            problems.append("strict applies to response='ndjson' only")
        if self.save and (self.response == "sse" or (self.binary is not None and self.binary.mode == "download")):
            problems.append("save=true cannot be combined with response='sse' or binary download")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def request_parts(self) -> tuple[dict[str, str], str | None]:
        """The headers and body to send (`json` becomes the body, typed application/json)."""
        headers = dict(self.headers)
        if self.json_body is None:
            return headers, self.body
        if not any(name.lower() == "content-type" for name in headers):
            headers["Content-Type"] = "application/json"
        return headers, json.dumps(self.json_body)


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
    response: str | None = Field(
        None,
        description="How the body was read: json, ndjson, text, sse, binary; 'saved' (save=true) or 'empty' (no body).",
    )
    body: Any = Field(None, description="The body in that form; SSE: {events, reconnects}; binary: {kind, ...}.")
    blocked_fields: list[str] = Field(default_factory=list, description="Secret JSON fields replaced by [blocked].")
    warnings: list[str] = Field(default_factory=list)
    saved: SavedBody | None = None


def read_only_call(args: dict[str, Any]) -> bool:
    method = args.get("method", "GET")
    return isinstance(method, str) and method.upper() in SAFE_METHODS


@dataclass
class HttpCall:
    """One call's state: what was sent, the budget, and how a failure is classified."""

    ctx: CallContext
    p: HttpParams
    budget: int
    names: frozenset[str]
    sent: bool = False
    blocked: list[str] = field(default_factory=list)
    transport: Callable[[], Fetch] | None = None  # another fetch than the page's (an API's kernel client)

    def new_fetch(self) -> Fetch:
        return self.transport() if self.transport is not None else PageFetch(self.ctx.frame)  # type: ignore[arg-type]

    @property
    def safe(self) -> bool:
        return self.p.method in SAFE_METHODS

    def failure(self, error_type: ErrorType, message: str, context: dict[str, Any] | None = None) -> ToolFailure:
        """A failure with the outcome the policy gives: not sent -> not_started; a safe method ->
        read_only; a mutation cut off after sending -> unknown / inspect_state."""
        if not self.sent:
            return ToolFailure(error_type, message, started=False, context=context)
        if self.safe:
            return ToolFailure(error_type, message, read_only=True, context=context)
        return ToolFailure(
            error_type,
            f"{message} The {self.p.method} request was sent and may have taken effect: check the API's state "
            "before repeating it.",
            read_only=False,
            context=context,
        )

    def clean(self, value: Any, path: str = "") -> Any:
        cleaned, blocked = block_secrets(value, self.names, path)
        self.blocked += blocked
        return cleaned

    def clean_text(self, text: str) -> str:
        """`text` with the secret fields of the JSON in it blocked (a JSON document, or NDJSON lines)."""
        cleaned, blocked = block_in_json_text(text, "", self.names)
        self.blocked += blocked
        return cleaned

    def too_large(self, what: str, limit: int, limit_name: str) -> ToolFailure:
        way_out = (
            " Nothing was clipped and nothing was retried. Way out: save=true streams the body to the "
            "artifacts directory (up to max_save_bytes, default 64 MiB)."
            if not self.p.save
            else " Nothing was kept (the partial file was removed) and nothing was retried; raise max_save_bytes if needed."
        )
        return self.failure(
            "result_too_large",
            f"The response body is over {limit_name} ({limit:,} bytes): {what}; the read was cancelled.{way_out}",
        )


def describe(call: HttpCall, head: Head) -> dict[str, Any]:
    return {
        "url": head.url,
        "method": call.p.method,
        "status": head.status,
        "status_text": head.status_text,
        "headers": redact_headers(head.headers),
        "content_type": head.content_type,
    }
