"""`Session.api(...)`: an OpenAPI document's operations as Python calls and session tools.

Each operation is a tool in the session's registry (group ``api``), so a call from Python, the
notebook or an agent is validated, approved, logged and enveloped like any other
(`webmcp_nb.core.apis` holds the request and the result policy).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from .core.apis.calls import REVEAL, Api, ApiPolicy
from .core.apis.spec import METHODS, ApiSpecError, Document, load_document, operations, sanitise
from .core.apis.validation import validate_document
from .core.call.util import utc_now
from .core.tools.http_models import BinaryOptions, StreamCollection

if TYPE_CHECKING:
    from .client import Session
    from .core.apis.page_tools import PageExposure
    from .core.call.envelope import Envelope
    from .core.call.registry import ToolSpec

__all__ = ["ApiHandle", "ApiSpecError", "load_api"]

FULL_VALIDATION_OPERATIONS = 300
"""Above this many operations `validation="auto"` checks each operation on its first call (a full
validation of GitHub's 1,200 operations takes about 16 s)."""


def load_api(
    session: Session,
    spec: Any,
    *,
    name: str,
    base_url: str | None = None,
    via: str = "kernel",
    auth: Any = None,
    include: list[str] | None = None,
    exclude: list[str] | None = None,
    stream_collection: dict[str, Any] | None = None,
    binary: dict[str, Any] | None = None,
    max_result_bytes: int | None = None,
    strict: bool = False,
    max_tools: int = 40,
    validation: str = "auto",
    expose_to_page: list[str] | None = None,
) -> ApiHandle:
    """See `Session.api`. Above `max_tools` operations the API is three tools (search, describe,
    call) rather than one per operation. `validation`: "full" (openapi-spec-validator, once per document
    content), "per_operation" (each operation's schemas checked on its first call, before it is sent), or
    "auto" (full up to FULL_VALIDATION_OPERATIONS operations). `expose_to_page`: origins whose documents get
    the API's tools as WebMCP tools (`webmcp_nb.core.apis.page_tools`)."""
    if via not in ("kernel", "page"):
        raise ValueError(f"via={via!r}: choose 'kernel' (httpx, from Python) or 'page' (the page's fetch)")
    if sanitise(name) != name:
        raise ValueError(f"API name {name!r}: use letters, digits and underscores")
    origins = None
    if expose_to_page is not None:
        from .core.call.errors import ToolFailure
        from .core.webmcp.page_tools import parse_origins

        try:
            origins = parse_origins(expose_to_page)
        except ToolFailure as exc:
            raise ValueError(str(exc.message)) from None
        if not origins:
            raise ValueError("expose_to_page needs at least one origin (scheme://host[:port])")
    document = load_document(spec)
    if validation not in ("auto", "full", "per_operation"):
        raise ValueError(f"validation={validation!r}: choose auto, full or per_operation")
    paths = document.get("paths")
    count = sum(
        len(set(item) & set(METHODS))
        for item in (paths.values() if isinstance(paths, dict) else [])
        if isinstance(item, dict)
    )
    lazy = validation == "per_operation" or (validation == "auto" and count > FULL_VALIDATION_OPERATIONS)
    if not lazy:
        validate_document(document)
    try:
        found = {op.name: op for op in operations(Document(document))}
    except (AttributeError, TypeError, KeyError) as exc:
        raise ApiSpecError(
            f"The OpenAPI document's paths are malformed ({exc}); load it with validation='full' for where"
        ) from None
    unknown = sorted(set(include or []) - set(found)) + sorted(set(exclude or []) - set(found))
    if unknown:
        raise ValueError(f"no such operation in the document: {', '.join(unknown)}")
    found = {key: op for key, op in found.items() if (include is None or key in include) and key not in (exclude or [])}
    if base_url is None:
        servers = document.get("servers") or []
        base_url = str(servers[0].get("url", "")) if servers else ""
        if not base_url.startswith(("http://", "https://")) and via == "kernel":
            raise ValueError("base_url is needed: the document names no absolute server URL")
    policy = ApiPolicy(
        base_url=base_url,
        via=via,
        auth=auth,
        stream_collection=StreamCollection.model_validate(stream_collection) if stream_collection is not None else None,
        binary=BinaryOptions.model_validate(binary) if binary is not None else None,
        max_result_bytes=max_result_bytes,
        strict=strict,
    )
    if name in session.apis:
        raise ValueError(f"an API named {name!r} is loaded already (close it first)")
    api = Api(name, Document(document), found, policy, lazy=lazy)
    handle = ApiHandle(session, api)
    handle.tools = [api.spec(op) for op in found.values()] if len(found) <= max_tools else api.discovery_specs()
    session.published.tools.add_all(handle.tools)
    session.apis[name] = handle
    if origins is not None:
        from .core.apis.page_tools import PageExposure

        handle.exposure = PageExposure(session.engine, handle.tools, origins, via_page=via == "page")
        session.runtime.run(handle.exposure.start())
    return handle


class ApiHandle:
    """A loaded API: `operations`, `call`/`acall`, `api.<operation>(...)`, `close()`."""

    def __init__(self, session: Session, api: Api) -> None:
        self._session = session
        self._api = api
        self.tools: list[ToolSpec] = []  # what agents see of it
        self.exposure: PageExposure | None = None  # its tools in pages (expose_to_page), if any

    @property
    def name(self) -> str:
        return self._api.name

    @property
    def operations(self) -> list[dict[str, Any]]:
        """Each operation's name, method, path, summary and whether it is consequential."""
        return [op.row() for op in self._api.operations.values()]

    def tool_name(self, operation: str) -> str:
        if operation not in self._api.operations:
            raise AttributeError(f"API {self.name!r} has no operation {operation!r}")
        return self._api.tool_name(operation)

    def call(
        self, operation: str, /, *, reveal: list[str] | None = None, call_timeout_s: float | None = None, **args: Any
    ) -> Any:
        """Call `operation`; the envelope. With `reveal`: ``(envelope, {field: value})``, the show-once
        values for this caller only (never in the envelope, the history or an export)."""
        return self._session.runtime.run(self._execute(operation, args, reveal, call_timeout_s))

    async def acall(
        self, operation: str, /, *, reveal: list[str] | None = None, call_timeout_s: float | None = None, **args: Any
    ) -> Any:
        return await self._session.runtime.arun(self._execute(operation, args, reveal, call_timeout_s))

    async def _execute(
        self, operation: str, args: dict[str, Any], reveal: list[str] | None, timeout_s: float | None
    ) -> Envelope | tuple[Envelope, dict[str, Any]]:
        op = self._api.operations.get(operation)
        if op is None:
            raise AttributeError(f"API {self.name!r} has no operation {operation!r}")
        tool, call_args = self._api.tool_name(operation), args
        if self.tools and self.tools[-1].name == f"{self.name}_call":  # a large API: through its call tool
            tool, call_args = f"{self.name}_call", {"operation": operation, "args": args}
        sink: dict[str, Any] = {}
        REVEAL.set((list(reveal), sink) if reveal else None)  # this task's only (not the page's calls)
        envelope = await self._session.engine.execute(
            tool,
            call_args,
            submitted=time.monotonic(),
            started_at=utc_now(),
            caller=self._session.caller,
            timeout_s=timeout_s,
        )
        return (envelope, sink) if reveal else envelope

    def __getattr__(self, operation: str) -> Any:
        if operation.startswith("_") or operation not in self.__dict__.get("_api").operations:  # type: ignore[union-attr]
            raise AttributeError(operation)
        return lambda **args: self.call(operation, **args)

    def __dir__(self) -> list[str]:
        return [*super().__dir__(), *self._api.operations]

    def close(self) -> int:
        """Cancel the running calls (each reports its outcome) and unregister the tools (the page
        tools too); returns how many calls were cancelled. Idempotent."""
        if self._session.apis.get(self.name) is not self:
            return 0
        del self._session.apis[self.name]
        if self.exposure is not None:
            self._session.runtime.run(self.exposure.close())
        self._session.published.tools.remove_all([spec.name for spec in self.tools])
        return self._session.runtime.run(self._api.close())

    def __repr__(self) -> str:
        return f"<ApiHandle {self.name!r}: {len(self._api.operations)} operations>"
