"""`tools/call` requests the SDK's schema would refuse, handed to the engine instead.

The SDK validates `tools/call` params before any handler runs: a `name` that is not a
string or `arguments` that are not an object would be a JSON-RPC error (-32602). Such a
call is about a tool's input, so it gets what any bad input gets: an ``invalid_params``
envelope as an `isError` result. `keep_malformed_calls` (server middleware, which sees
the raw params) puts valid placeholders in their place and keeps what was sent, and the
tool handler reads it back with `as_sent`.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import replace
from typing import Any

import mcp_types as types
from mcp.server.context import CallNext, ServerRequestContext

_SENT: ContextVar[tuple[Any, Any] | None] = ContextVar("webmcp_nb_sent_call", default=None)


async def keep_malformed_calls(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Any:
    """Server middleware: let a `tools/call` with a non-string name or non-object
    arguments reach the tool handler (see the module docstring)."""
    params = ctx.params
    if ctx.method != "tools/call" or params is None:
        return await call_next(ctx)
    name, arguments = params.get("name"), params.get("arguments")
    if isinstance(name, str) and (arguments is None or isinstance(arguments, dict)):
        return await call_next(ctx)
    placeholders = {"name": name if isinstance(name, str) else "", "arguments": None}
    token = _SENT.set((name, arguments))
    try:
        return await call_next(replace(ctx, params={**params, **placeholders}))
    finally:
        _SENT.reset(token)


def as_sent(params: types.CallToolRequestParams) -> tuple[Any, Any]:
    """The tool name and arguments of this call as the client sent them (absent or null
    arguments are an empty object)."""
    sent = _SENT.get()
    return sent if sent is not None else (params.name, params.arguments or {})
