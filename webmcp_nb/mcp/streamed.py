"""Which streamable HTTP calls are answered as an event stream: plain JSON for every request,
except a `tools/call` whose client asked for progress (`progressToken` in its `_meta`) and accepts
`text/event-stream`; that one's answer is SSE, so its `notifications/progress` travel before the
result. Applies to the stateless (2026) protocol, where each request is its own exchange and can
carry no server request either way; a 2025 session's answers stay JSON (no progress over HTTP).
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from typing import Any

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

STREAMED: ContextVar[bool] = ContextVar("webmcp_nb_streamed", default=False)
"""Whether the request being handled (this task) is answered as SSE; set by `BoundedRequests`."""


def asks_progress(scope: dict[str, Any], body: bytes) -> bool:
    """A `tools/call` carrying a progress token, from a client that accepts an event stream."""
    accept = dict(scope["headers"]).get(b"accept", b"")
    if b"text/event-stream" not in accept or b"progressToken" not in body:
        return False
    try:
        message = json.loads(body)
    except ValueError:
        return False
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return False
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and isinstance(meta.get("progressToken"), (str, int))


class _JsonUnlessStreamed(StreamableHTTPSessionManager):
    """The SDK's manager, answering JSON except for the request `STREAMED` marks."""

    @property
    def json_response(self) -> bool:
        return bool(self.__dict__["_json_response"]) and not STREAMED.get()

    @json_response.setter
    def json_response(self, value: bool) -> None:
        self.__dict__["_json_response"] = value


def stream_when_asked(manager: StreamableHTTPSessionManager) -> None:
    """Make `manager` (built with json_response=True) stream the calls that ask for progress."""
    json_response = manager.__dict__.pop("json_response")
    manager.__class__ = _JsonUnlessStreamed
    manager.json_response = json_response
