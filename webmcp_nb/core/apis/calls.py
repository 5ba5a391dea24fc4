"""An API's operations as tools: the request each call sends and the result policy it answers under."""

from __future__ import annotations

import asyncio
import base64
import contextvars
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

from pydantic import Field, PrivateAttr, create_model

from ..call.errors import InvalidParams, ToolFailure
from ..call.registry import ToolSpec
from ..evidence.recorder import redact_headers
from ..guard.known_secrets import REDACTED
from ..guard.secret_fields import secret_names
from ..tools.http import request
from ..tools.http_models import RESERVED_BYTES, BinaryOptions, HttpCall, HttpParams, StreamCollection
from ..tools.http_sse import collect_sse
from ..tools.models import Data, FrameParams, ModalState, Params
from .spec import BASE_URI, Document, Operation, Parameter
from .transport import KernelFetch, PageApiFetch, WireParts

if TYPE_CHECKING:
    import httpx

    from ..call.context import CallContext

REVEAL: contextvars.ContextVar[tuple[list[str], dict[str, Any]] | None] = contextvars.ContextVar(
    "webmcp_nb_api_reveal", default=None
)
"""Set by the notebook's own Python (`ApiHandle.call(..., reveal=[...])`) around a call: the show-once
fields to hand back, and where to put them. No argument can set it, so no agent can."""
SCHEMA_DEPTH = 12


class Verify(Params):
    operation: str = Field(description="The read that checks the call's effect.")
    params: dict[str, Any] = Field(default_factory=dict)
    expect: dict[str, Any] = Field(default_factory=dict, description="Fields the read's value must have.")


class ApiParams(Params):
    body: Any = Field(None, description="The request body (JSON).")
    preview: bool = Field(False, description="Return the exact request without sending it.")
    idempotency_key: str | None = Field(None, max_length=200, description="Default: a fresh key per call.")
    verify: Verify | None = Field(None, description="A follow-up read that checks the effect.")
    _outgoing: Any = PrivateAttr(None)  # the request, once built: what approval showed is what is sent


class PageApiParams(ApiParams, FrameParams):
    """`via="page"`: the tab (and frame) whose `fetch` sends the request."""


class SearchParams(Params):
    query: str = Field("", max_length=200, description="Words in the operation's name, path or summary; empty: all.")
    limit: int = Field(20, gt=0, le=100)


class SearchData(Data):
    operations: list[dict[str, Any]]
    total: int = Field(description="How many operations matched.")


class DescribeParams(Params):
    operation: str = Field(max_length=200)


class DescribeData(Data):
    operation: dict[str, Any]
    input_schema: dict[str, Any] = Field(description="The arguments `call` takes in `args`.")


class CallParams(Params):
    operation: str = Field(max_length=200)
    args: dict[str, Any] = Field(default_factory=dict, description="The operation's arguments (see describe).")
    _inner: Any = PrivateAttr(None)  # (operation, its validated arguments), once resolved


class PageCallParams(CallParams, FrameParams):
    """`via="page"`: the tab (and frame) whose `fetch` sends the request."""


class ApiData(Data):
    operation: str
    value: Any = Field(None, description="The response body (JSON, NDJSON array, SSE events, binary, text).")
    response: str | None = Field(None, description="How the body was read: json, ndjson, text, sse, binary, empty.")
    http: dict[str, Any] | None = Field(
        None, description="method, url, status, headers, content_type, byte_length, duration_ms."
    )
    blocked_fields: list[str] = Field(default_factory=list)
    show_once: dict[str, str] | None = Field(None, description="Show-once fields present but blocked.")
    idempotency_key: str | None = None
    preview: dict[str, Any] | None = Field(None, description="preview=true: the request that would be sent.")
    verification: dict[str, Any] | None = None
    warnings: list[str] = Field(default_factory=list)


class PageApiData(ApiData):
    """`via="page"`: a dialog the page opened during the call is reported as for other page actions."""

    operation: str = ""
    url: str | None = Field(None, description="The page's URL.")
    modal_state: ModalState | None = None


@dataclass(frozen=True)
class Outgoing:
    """One request: as it goes on the wire (`url`, `headers`), and as the page is given it under
    `via="page"` (`page_url`, `page_headers`: without the credentials, which the kernel adds on the
    wire; a cookie is refused there)."""

    url: str
    page_url: str
    page_headers: dict[str, str]
    wire_headers: dict[str, str]  # auth headers and Cookie
    body: Any
    secrets: list[str]
    idempotency_key: str | None

    @property
    def headers(self) -> dict[str, str]:
        return {**self.page_headers, **self.wire_headers}

    def preview(self, method: str) -> dict[str, Any]:
        """The exact request, its secret header and query values redacted."""
        headers = {
            name: REDACTED if any(s and s in value for s in self.secrets) else value
            for name, value in redact_headers(self.headers).items()
        }
        return {"method": method, "url": redact_url(self.url, self.secrets), "headers": headers, "body": self.body}


@dataclass
class ApiPolicy:
    base_url: str
    via: str = "kernel"  # or "page": the page's fetch sends the request (see transport)
    auth: Any = None
    stream_collection: StreamCollection | None = None
    binary: BinaryOptions | None = None
    max_result_bytes: int | None = None
    strict: bool = False


@dataclass
class Api:
    """One loaded API: its operations, their tools, the kernel's client and the calls running."""

    name: str
    document: Document
    operations: dict[str, Operation]
    policy: ApiPolicy
    lazy: bool = False  # each operation's schemas checked on its first call (not the whole document at load)
    checked: set[str] = field(default_factory=set)
    running: set[asyncio.Task[Any]] = field(default_factory=set)
    closed: bool = False
    _client: httpx.AsyncClient | None = None
    _validators: dict[str, Any] = field(default_factory=dict)
    _secrets: dict[str, tuple[frozenset[str], frozenset[str]]] = field(default_factory=dict)

    def is_closed(self) -> bool:
        return self.closed

    def tool_name(self, operation: str) -> str:
        return f"{self.name}_{operation}"

    # tools --------------------------------------------------------------------
    @property
    def base_params(self) -> type[ApiParams]:
        return PageApiParams if self.policy.via == "page" else ApiParams

    @property
    def data_model(self) -> type[ApiData]:
        return PageApiData if self.policy.via == "page" else ApiData

    def key(self, param: Parameter) -> str:
        """The argument naming `param` (suffixed with _ where it would shadow one of ours)."""
        return param.key if param.key not in self.base_params.model_fields else f"{param.key}_"

    def spec(self, op: Operation) -> ToolSpec:
        fields: dict[str, Any] = {}
        for param in op.parameters:
            about = f"{param.where} parameter {param.name!r}. {param.description}".strip()
            fields[self.key(param)] = (Any, Field(... if param.required else None, description=about))
        model = create_model(f"{self.name}_{op.name}_params", __base__=self.base_params, **fields)

        async def handler(ctx: CallContext, p: Any) -> ApiData:
            return await self.run(ctx, op, p)

        return ToolSpec(
            name=self.tool_name(op.name),
            title=f"{self.name}: {op.method} {op.path}",
            description=(op.summary or f"{op.method} {op.path}")[:300],
            params=model,
            data=self.data_model,
            handler=handler,
            target="page" if self.policy.via == "page" else "server",
            group="api",
            read_only=not op.consequential,
            destructive=op.consequential,
            open_world=True,
            positional=(),
            api=self.name,
            preview=lambda ctx, p: self.prepare(ctx, op, p).preview(op.method),
        )

    def discovery_specs(self) -> list[ToolSpec]:
        """For a large API: three tools (search, describe, call one) instead of one per operation."""

        async def search(ctx: CallContext, p: SearchParams) -> SearchData:
            words = p.query.lower().split()
            rows = [
                op.row()
                for op in self.operations.values()
                if all(word in f"{op.name} {op.path} {op.summary}".lower() for word in words)
            ]
            return SearchData(operations=rows[: p.limit], total=len(rows))

        async def describe(ctx: CallContext, p: DescribeParams) -> DescribeData:
            op = self.operation(p.operation)
            if self.lazy and op.name not in self.checked:  # an invalid operation is reported before any call
                self.check_operation(op)
            return DescribeData(operation=op.row(), input_schema=self.spec(op).input_schema)

        def resolve(p: CallParams) -> tuple[Operation, Any]:
            if p._inner is None:
                op = self.operation(p.operation)
                where = {key: getattr(p, key) for key in ("instance", "page_id", "frame_id") if hasattr(p, key)}
                p._inner = (op, self.spec(op).validate({**p.args, **where}))
            return p._inner  # type: ignore[no-any-return]

        async def call(ctx: CallContext, p: CallParams) -> ApiData:
            return await self.run(ctx, *resolve(p))

        def preview(ctx: CallContext, p: CallParams) -> dict[str, Any]:
            op, inner = resolve(p)
            return self.prepare(ctx, op, inner).preview(op.method)

        common: dict[str, Any] = {"group": "api", "api": self.name, "positional": ()}
        page = self.policy.via == "page"
        return [
            ToolSpec(
                name=f"{self.name}_search",
                title=f"{self.name}: search operations",
                description=f"Search the {len(self.operations)} operations of the API {self.name!r}.",
                params=SearchParams,
                data=SearchData,
                handler=search,
                target="server",
                read_only=True,
                **common,
            ),
            ToolSpec(
                name=f"{self.name}_describe",
                title=f"{self.name}: describe an operation",
                description=f"One operation of {self.name!r}: method, path and the arguments {self.name}_call takes.",
                params=DescribeParams,
                data=DescribeData,
                handler=describe,
                target="server",
                read_only=True,
                **common,
            ),
            ToolSpec(
                name=f"{self.name}_call",
                title=f"{self.name}: call an operation",
                description=f"Call one operation of {self.name!r} (consequential ones change the API's state).",
                params=PageCallParams if page else CallParams,
                data=self.data_model,
                handler=call,
                target="page" if page else "server",
                destructive=True,
                open_world=True,
                read_only_when=lambda args: self.is_read(args.get("operation")),
                preview=preview,
                **common,
            ),
        ]

    def is_read(self, name: Any) -> bool:
        op = self.operations.get(name) if isinstance(name, str) else None
        return op is not None and not op.consequential

    def operation(self, name: str) -> Operation:
        op = self.operations.get(name)
        if op is None:
            raise InvalidParams(f"The API {self.name!r} has no operation {name!r} (search with {self.name}_search).")
        return op

    # one call -----------------------------------------------------------------
    async def run(self, ctx: CallContext, op: Operation, p: Any) -> ApiData:
        if self.closed:
            raise ToolFailure("invalid_params", f"The API {self.name!r} was closed.", started=False)
        task = asyncio.current_task()
        assert task is not None
        self.running.add(task)
        try:
            return await self._run(ctx, op, p)
        except asyncio.CancelledError:
            if self.is_closed() and ctx.cut_off is not None:
                raise ctx.cut_off("operation_timeout", f"The API {self.name!r} was closed during the call.") from None
            raise
        finally:
            self.running.discard(task)

    def where(self, ctx: CallContext) -> dict[str, Any]:
        """`via="page"`: the page's URL, as page actions report it."""
        return {"url": ctx.frame.url} if self.policy.via == "page" and ctx.frame is not None else {}

    def prepare(self, ctx: CallContext, op: Operation, p: Any) -> Outgoing:
        """The request `p` asks of `op`, built once per call: the one an approval prompt showed is
        the one sent (its Idempotency-Key included)."""
        if p._outgoing is None:
            if self.lazy and op.name not in self.checked:
                self.check_operation(op)
            p._outgoing = self.outgoing(op, p)
            ctx.engine.manager.secrets.add(p._outgoing.secrets)
        return p._outgoing  # type: ignore[no-any-return]

    async def _run(self, ctx: CallContext, op: Operation, p: Any) -> ApiData:
        out = self.prepare(ctx, op, p)
        if p.preview:
            ctx.previewed = True
            return self.data_model(
                operation=op.name,
                preview=out.preview(op.method),
                idempotency_key=out.idempotency_key,
                **self.where(ctx),
            )
        secrets, body = out.secrets, out.body
        mode = (
            "sse"
            if op.streaming
            else "binary"
            if op.binary
            else "ndjson"
            if op.ndjson and self.policy.strict
            else "auto"
        )
        limit = ctx.engine.limits.max_result_bytes
        hp = HttpParams(
            method=op.method,  # type: ignore[arg-type]
            url=out.url if self.policy.via == "kernel" else out.page_url,
            headers=out.headers if self.policy.via == "kernel" else out.page_headers,
            body=None if body is None else json.dumps(body),
            response=mode,  # type: ignore[arg-type]
            sse=self.policy.stream_collection if mode == "sse" else None,
            binary=self.policy.binary if mode == "binary" else None,
            strict=mode == "ndjson",
        )
        budget = min(self.policy.max_result_bytes or limit, limit) - RESERVED_BYTES
        blocked, show_once = self.secret_fields(op)
        capture = bytearray()
        if self.policy.via == "page":
            assert ctx.frame is not None
            frame = ctx.frame
            wire = WireParts(out.url, out.wire_headers) if out.wire_headers or out.url != out.page_url else None
            transport: Any = lambda: PageApiFetch(frame, wire, capture)  # noqa: E731
        else:
            transport = lambda: KernelFetch(self.client, capture)  # noqa: E731
        call = HttpCall(ctx, hp, budget, secret_names(blocked | show_once), transport=transport)
        ctx.cut_off = call.failure
        started = time.monotonic()
        data = await self._send(call, mode, ctx)
        raw = parse_json(bytes(capture)) if data.response == "json" else None
        warnings = list(data.warnings)
        problem = self.check_response(op, data.status or 0, data.content_type or "", raw) if raw is not None else None
        if problem is not None:
            if self.policy.strict:
                raise ToolFailure(
                    "evaluation_failed", f"The response does not match its schema: {problem}", completed=True
                )
            warnings.append(f"response schema: {problem}")
        present = sorted(name for name in show_once if has_field(raw, name))
        reveal = REVEAL.get()
        if reveal is not None and raw is not None:
            names, sink = reveal
            sink.update({name: found for name in names if (found := find_field(raw, name)) is not None})
        result = self.data_model(
            **self.where(ctx),
            operation=op.name,
            value=data.body,
            response=data.response,
            http={
                "method": op.method,
                "url": redact_url(data.url, secrets),
                "status": data.status,
                "headers": data.headers,
                "content_type": data.content_type,
                "byte_length": data.byte_length,
                "duration_ms": round((time.monotonic() - started) * 1000, 3),
            },
            blocked_fields=data.blocked_fields,
            show_once={
                name: f"shown once and blocked here; the notebook's own Python gets it with "
                f"api.call({op.name!r}, ..., reveal=[{name!r}])"
                for name in present
            }
            or None,
            idempotency_key=out.idempotency_key,
            warnings=warnings,
        )
        if p.verify is not None and data.status is not None and data.status < 300:
            result.verification = await self.verify(ctx, p.verify)
            if result.verification["status"] == "failed":
                raise ToolFailure(
                    "verification_failed",
                    f"{op.name} completed, but its check {p.verify.operation} failed: {result.verification['reason']}",
                    completed=True,
                    context={
                        "verification": result.verification,
                        "result": result.model_dump(exclude={"verification"}),
                    },
                )
        return result

    async def verify(self, ctx: CallContext, check: Verify) -> dict[str, Any]:
        op = self.operations.get(check.operation)
        if op is None or op.consequential:
            return {"status": "skipped", "operation": check.operation, "reason": "not a read of this API"}
        model = self.spec(op).params
        read = await self._run(ctx, op, model.model_validate(check.params))
        mismatch = [
            key for key, want in check.expect.items() if not isinstance(read.value, dict) or read.value.get(key) != want
        ]
        if mismatch:
            got = {key: read.value.get(key) if isinstance(read.value, dict) else None for key in mismatch}
            return {"status": "failed", "operation": op.name, "reason": f"expected {check.expect}, got {got}"}
        return {"status": "passed", "operation": op.name}

    # the request --------------------------------------------------------------
    async def _send(self, call: HttpCall, mode: str, ctx: CallContext) -> Any:
        from playwright.async_api import Error as PlaywrightError

        try:
            return await (collect_sse(call, ctx.remaining_s()) if mode == "sse" else request(call, ctx.remaining_s()))
        except PlaywrightError as exc:  # via="page": the page navigated away (or closed) meanwhile
            if ctx.page_state is not None and ctx.page_state.page.is_closed():
                raise
            raise call.failure(
                "navigation_failed", f"The page could not go on with the request (did it navigate away?): {exc.message}"
            ) from None

    def outgoing(self, op: Operation, p: Any) -> Outgoing:
        """The request `p` asks of `op`: checked against the document, with auth applied (InvalidParams)."""
        path = op.path
        query: list[tuple[str, str]] = []
        headers: dict[str, str] = {}
        cookies: list[str] = []
        for param in op.parameters:
            value = getattr(p, self.key(param))
            if value is None:
                continue
            self._check_value(param, value)
            text = wire(value)
            if param.where == "path":
                path = path.replace("{" + param.name + "}", quote(text, safe=""))
            elif param.where == "query":
                query.extend((param.name, wire(item)) for item in value) if isinstance(value, list) else query.append(
                    (param.name, text)
                )
            elif param.where == "header":
                headers[param.name] = text
            elif param.where == "cookie":
                cookies.append(f"{param.name}={text}")
        if op.body is None and p.body is not None:
            raise InvalidParams(f"{op.name} takes no request body.")
        if op.body is not None:
            if p.body is None and op.body["required"]:
                raise InvalidParams(f"{op.name} needs a request body ({op.body['media_type']}).")
            if p.body is not None and op.body["has_schema"]:
                problem = self.check(op.body["pointer"], p.body)
                if problem is not None:
                    raise InvalidParams(f"{op.name}'s body does not match its schema: {problem}")
        if op.streaming and self.policy.stream_collection is None:
            raise InvalidParams(
                f"{op.name} answers text/event-stream, refused before the request was sent: load the API with "
                "stream_collection={max_events, max_bytes, max_duration_ms} (max_event_bytes optional)."
            )
        if op.binary and self.policy.binary is None:
            raise InvalidParams(
                f"{op.name} answers a binary type ({', '.join(sorted(op.media_types))}), refused before the request "
                "was sent: load the API with binary={mode: 'base64', max_bytes} (or mode 'download')."
            )
        if p.body is not None and not any(name.lower() == "content-type" for name in headers):
            headers["Content-Type"] = (op.body or {}).get("media_type", "application/json")
        idempotency_key = None
        if op.idempotency_header is not None:
            idempotency_key = p.idempotency_key or str(uuid.uuid4())
            headers[op.idempotency_header] = idempotency_key
        elif p.idempotency_key is not None:
            raise InvalidParams(f"{op.name} declares no Idempotency-Key header; idempotency_key does not apply.")
        page_url = self.policy.base_url.rstrip("/") + path + ("?" + urlencode(query) if query else "")
        auth_headers: dict[str, str] = {}
        secrets = self._auth(op, auth_headers, query, cookies)
        if cookies and self.policy.via == "page":
            raise InvalidParams(
                f"{op.name} sends a cookie ({', '.join(c.split('=', 1)[0] for c in cookies)}); with via='page' only the "
                "page's own cookies go (no script or route may set the Cookie header): load the API with "
                "via='kernel'. Nothing was sent."
            )
        if cookies:
            auth_headers["Cookie"] = "; ".join(cookies)
        url = self.policy.base_url.rstrip("/") + path + ("?" + urlencode(query) if query else "")
        return Outgoing(url, page_url, headers, auth_headers, p.body, secrets, idempotency_key)

    def _auth(
        self, op: Operation, headers: dict[str, str], query: list[tuple[str, str]], cookies: list[str]
    ) -> list[str]:
        """Apply `auth` to the first security requirement it covers; the secret values, to be scrubbed."""
        auth = self.policy.auth
        if auth is None or not op.security:
            return []
        schemes = (self.document.content.get("components") or {}).get("securitySchemes") or {}
        for requirement in op.security:
            names = list(requirement)
            if not names or not all(name in schemes for name in names):
                continue
            if isinstance(auth, dict) and not all(name in auth for name in names):
                continue
            secrets: list[str] = []
            for name in names:
                scheme, _ = self.document.deref(schemes[name], "")
                value = auth[name] if isinstance(auth, dict) else auth
                secrets += apply_scheme(scheme, value, headers, query, cookies)
            return secrets
        return []

    # schemas ------------------------------------------------------------------
    def check_operation(self, op: Operation) -> None:
        """Validate `op` in the document before its first use (per-operation validation)."""
        pointers = [param.pointer for param in op.parameters if param.schema]
        pointers += [op.body["pointer"]] if op.body is not None and op.body["has_schema"] else []
        pointers += [pointer for by_media in op.responses.values() for pointer in by_media.values()]
        problem = self.document.checks.problem(op.path, op.method, pointers)
        if problem is not None:
            raise ToolFailure(
                "invalid_params",
                f"{op.name} is invalid in the document {problem[:400]}. Nothing was sent.",
                started=False,
            )
        self.checked.add(op.name)

    def validator(self, pointer: str) -> Any:
        """The value check for the schema at `pointer`: OpenAPI's own dialect (3.0's `nullable`, 3.1's
        JSON Schema 2020-12), with `format` an annotation."""
        found = self._validators.get(pointer)
        if found is None:
            from openapi_schema_validator import OAS30Validator, OAS31Validator

            version_30 = str(self.document.content.get("openapi", "")).startswith("3.0")
            kind = OAS30Validator if version_30 else OAS31Validator
            found = kind({"$ref": f"{BASE_URI}#{pointer}"}, registry=self.document.registry)
            self._validators[pointer] = found
        return found

    def check(self, pointer: str, value: Any) -> str | None:
        """The first way `value` breaks the schema at `pointer` (its path in the value), or None."""
        from jsonschema.exceptions import best_match

        error = best_match(self.validator(pointer).iter_errors(value))
        if error is None:
            return None
        where = error.json_path if error.path else "$"
        return f"at {where}: {error.message[:300]}"

    def _check_value(self, param: Parameter, value: Any) -> None:
        if not param.schema:
            return
        problem = self.check(param.pointer, value)
        if problem is not None:
            raise InvalidParams(f"parameter {param.name!r} ({param.where}): {problem}")

    def check_response(self, op: Operation, status: int, content_type: str, value: Any) -> str | None:
        by_media = (
            op.responses.get(str(status)) or op.responses.get(f"{status // 100}XX") or op.responses.get("default")
        )
        if not by_media:
            return None
        media = content_type.split(";")[0].strip().lower()
        pointer = by_media.get(media) or next(iter(by_media.values()))
        return self.check(pointer, value)

    def secret_fields(self, op: Operation) -> tuple[frozenset[str], frozenset[str]]:
        """The response fields marked secret (password format, writeOnly, x-secret) and show-once."""
        found = self._secrets.get(op.name)
        if found is None:
            secret: set[str] = set()
            once: set[str] = set()
            seen: set[str] = set()
            for by_media in op.responses.values():
                for pointer in by_media.values():
                    node = self.document.registry.resolver(base_uri="").lookup(f"urn:webmcp-nb:api#{pointer}").contents
                    self._walk(node, pointer, secret, once, seen, 0)
            found = self._secrets[op.name] = (frozenset(secret), frozenset(once))
        return found

    def _walk(self, node: Any, pointer: str, secret: set[str], once: set[str], seen: set[str], depth: int) -> None:
        node, pointer = self.document.deref(node, pointer)
        if not isinstance(node, dict) or pointer in seen or depth > SCHEMA_DEPTH:
            return
        seen.add(pointer)
        for name, sub in (node.get("properties") or {}).items():
            sub_node, _ = self.document.deref(sub, "")
            if isinstance(sub_node, dict):
                if sub_node.get("x-show-once") is True:
                    once.add(name)
                elif sub_node.get("format") == "password" or sub_node.get("writeOnly") or sub_node.get("x-secret"):
                    secret.add(name)
            self._walk(sub, f"{pointer}/properties/{name}", secret, once, seen, depth + 1)
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), dict):
                self._walk(node[key], f"{pointer}/{key}", secret, once, seen, depth + 1)
        for key in ("allOf", "anyOf", "oneOf"):
            for index, sub in enumerate(node.get(key) or []):
                self._walk(sub, f"{pointer}/{key}/{index}", secret, once, seen, depth + 1)

    # lifecycle ----------------------------------------------------------------
    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            import httpx

            self._client = httpx.AsyncClient(timeout=None, follow_redirects=True)
        return self._client

    async def close(self) -> int:
        """Cancel the running calls (each reports its outcome); returns how many there were."""
        self.closed = True
        tasks = list(self.running)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=10)
        if self._client is not None:
            await self._client.aclose()
        return len(tasks)


def apply_scheme(
    scheme: dict[str, Any], value: Any, headers: dict[str, str], query: list[tuple[str, str]], cookies: list[str]
) -> list[str]:
    kind = scheme.get("type")
    if kind == "http" and str(scheme.get("scheme", "")).lower() == "basic":
        user, password = value if isinstance(value, (tuple, list)) else str(value).split(":", 1)
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        headers["Authorization"] = f"Basic {token}"
        return [token, str(password)]
    if kind in ("http", "oauth2", "openIdConnect"):
        headers["Authorization"] = f"Bearer {value}"
        return [str(value)]
    if kind == "apiKey":
        name, where = str(scheme.get("name")), scheme.get("in")
        if where == "query":
            query.append((name, str(value)))
        elif where == "cookie":
            cookies.append(f"{name}={value}")
        else:
            headers[name] = str(value)
        return [str(value)]
    return []


def wire(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)


def redact_url(url: str, secrets: list[str]) -> str:
    parts = urlsplit(url)
    if not parts.query or not secrets:
        return url
    pairs = [pair.partition("=") for pair in parts.query.split("&")]
    query = "&".join(
        f"{name}={REDACTED}" if any(quote(s, safe="") == value or s == value for s in secrets) else f"{name}{eq}{value}"
        for name, eq, value in pairs
    )
    return urlunsplit(parts._replace(query=query))


def parse_json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None


def find_field(value: Any, name: str) -> Any:
    if isinstance(value, dict):
        if name in value:
            return value[name]
        children: Any = value.values()
    elif isinstance(value, list):
        children = value
    else:
        return None
    for child in children:
        found = find_field(child, name)
        if found is not None:
            return found
    return None


def has_field(value: Any, name: str) -> bool:
    return find_field(value, name) is not None
