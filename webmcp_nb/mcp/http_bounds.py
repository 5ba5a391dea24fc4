"""The HTTP server's own bounds (`HttpLimits`): what any client, token or not, can hold.

`BoundedRequests` (ASGI, inside the token check) refuses a body over the limit while
reading it (413, by `Content-Length` up front, else by counting what arrives), caps the
POST requests being read or handled (503; a request counts until its answer starts), cuts JSON nested too deep for the SDK (`wire.shallow`) and
puts the request's id into the SDK's -32700 answers where one can be read. `protocol`
is uvicorn's h11 protocol with a connection cap (a connection over it is closed as soon as
it is accepted, so its descriptor is freed at once) and deadlines: a connection with no
request on it is closed after `idle_timeout_s`, and one whose request has not fully arrived
`request_timeout_s` after its first byte (slow headers or body). `quiet_bursts` makes each
kind of warning one line per burst (asyncio's accept errors once descriptors run out,
uvicorn's warnings, ours).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from ..serve_options import HttpLimits
from .streamed import STREAMED, asks_progress
from .wire import request_id, shallow_bytes

BURST_WINDOW_S = 10.0
"""Repeats of one warning within this are counted, not printed (the next line says how many)."""
LOG = logging.getLogger("webmcp_nb.mcp.streamable_http")


async def _refuse(send: Any, status: int, message: str, *headers: tuple[bytes, bytes]) -> None:
    """Answer with a small JSON error before the body is read. The connection stays open:
    uvicorn drops the rest of the body as it arrives (holding none of it), so the client
    reads the answer instead of a reset, and may send its next request."""
    body = json.dumps({"error": message}).encode()
    start = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *headers]
    await send({"type": "http.response.start", "status": status, "headers": start})
    await send({"type": "http.response.body", "body": body})


class BoundedRequests:
    """ASGI wrapper bounding each POST request's body and how many are in flight."""

    def __init__(self, app: Any, limits: HttpLimits) -> None:
        self.app, self.limits = app, limits
        self.in_flight = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        if self.in_flight >= self.limits.max_requests:
            LOG.warning("refused a request: %d are in flight (WEBMCP_NB_HTTP_MAX_REQUESTS)", self.in_flight)
            await _refuse(send, 503, "too many requests at once; retry shortly", (b"retry-after", b"1"))
            return
        self.in_flight += 1
        counted = True

        def answering() -> None:
            """A request counts until its answer starts: a stream (`subscriptions/listen`) that
            stays open afterwards holds no body and no place."""
            nonlocal counted
            if counted:
                counted = False
                self.in_flight -= 1

        try:
            body = await self._read(scope, receive, send)
            if body is not None:
                await self._handle(scope, receive, send, body, answering)
        finally:
            answering()

    async def _read(self, scope: dict[str, Any], receive: Any, send: Any) -> bytes | None:
        """The whole body, or None once refused (413) or disconnected; never more than the limit."""
        limit = self.limits.max_body_bytes
        declared = dict(scope["headers"]).get(b"content-length", b"")
        too_large = f"the request body is over the limit of {limit:,} bytes (WEBMCP_NB_HTTP_MAX_BODY_BYTES)"
        if declared.isdigit() and int(declared) > limit:
            await _refuse(send, 413, too_large)
            return None
        chunks: list[bytes] = []
        size, more = 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                del chunks
                await _refuse(send, 413, too_large)
                return None
            chunks.append(chunk)
            more = message.get("more_body", False)
        return shallow_bytes(b"".join(chunks))

    async def _handle(
        self, scope: dict[str, Any], receive: Any, send: Any, body: bytes, answering: Callable[[], None]
    ) -> None:
        replay: list[dict[str, Any]] = [{"type": "http.request", "body": body, "more_body": False}]

        async def replayed() -> dict[str, Any]:
            return replay.pop() if replay else await receive()

        held: dict[str, Any] | None = None

        async def with_id(message: dict[str, Any]) -> None:
            """The SDK answers -32700 with a null id; the id goes in when it can be read."""
            nonlocal held
            if message["type"] == "http.response.start":
                answering()
            if message["type"] == "http.response.start" and message["status"] == 400:
                held = message
                return
            if held is not None and message["type"] == "http.response.body" and not message.get("more_body"):
                start, held, content = held, None, message.get("body", b"")
                content = _with_request_id(content, body)
                headers = [(k, v) for k, v in start["headers"] if k != b"content-length"]
                headers.append((b"content-length", str(len(content)).encode()))
                await send({**start, "headers": headers})
                await send({**message, "body": content})
                return
            if held is not None:
                start, held = held, None
                await send(start)
            await send(message)

        streamed = STREAMED.set(asks_progress(scope, body))  # read by the SDK's manager, in this task
        try:
            await self.app(scope, replayed, with_id)
        finally:
            STREAMED.reset(streamed)


def _with_request_id(answer: bytes, request: bytes) -> bytes:
    try:
        error = json.loads(answer)
    except ValueError:
        return answer
    if not (isinstance(error, dict) and error.get("id") is None and isinstance(error.get("error"), dict)):
        return answer
    found = request_id(request)
    return answer if found is None else json.dumps({**error, "id": found}).encode()


def protocol(limits: HttpLimits) -> type[H11Protocol]:
    """uvicorn's h11 protocol under `limits`' connection cap and deadlines."""

    class Bounded(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None
        _reading = False  # a request has begun arriving and is not complete yet

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > limits.max_connections:
                LOG.warning(
                    "closed a new connection: %d are open (WEBMCP_NB_HTTP_MAX_CONNECTIONS)", limits.max_connections
                )
                self.connections.discard(self)
                transport.abort()
                return
            self._arm(limits.idle_timeout_s)

        def data_received(self, data: bytes) -> None:
            if not self._reading and (self.cycle is None or self.cycle.response_complete):
                self._reading = True
                self._arm(limits.request_timeout_s)
            super().data_received(data)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._reading = False
            if not self.transport.is_closing():
                self._arm(limits.idle_timeout_s)

        def connection_lost(self, exc: Exception | None) -> None:
            self._arm(None)
            super().connection_lost(exc)

        def _arm(self, delay: float | None) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
            self._deadline = None if delay is None else self.loop.call_later(delay, self._expire)

        def _expire(self) -> None:
            self._deadline = None
            cycle = self.cycle
            if self.transport.is_closing():
                return
            if self._reading and cycle is not None and not cycle.response_complete and not cycle.more_body:
                return  # the request is all here: the app answers it, under its own timeouts
            which = "sent no complete request in time" if self._reading else "stayed idle"
            LOG.warning("closed a connection that %s (WEBMCP_NB_HTTP_*_TIMEOUT_SECONDS)", which)
            self.transport.close()

    return Bounded


class OncePerBurst(logging.Filter):
    """Lets one record of each kind through per `BURST_WINDOW_S`; the next one that passes
    says how many were held back. asyncio's accept error (once descriptors run out, it
    repeats for every pending connection) becomes one line, without its traceback."""

    def __init__(self) -> None:
        super().__init__()
        self._seen: dict[str, tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        first_line = str(record.msg).split("\n", 1)[0]
        if record.name == "asyncio" and not first_line.startswith("socket.accept()"):
            return True
        key = f"{record.name}:{first_line}"
        now = time.monotonic()
        since, held = self._seen.get(key, (-BURST_WINDOW_S, 0))
        if now - since < BURST_WINDOW_S:
            self._seen[key] = (since, held + 1)
            return False
        self._seen[key] = (now, 0)
        if record.name == "asyncio":
            error = record.exc_info[1] if record.exc_info else None
            record.msg, record.args = f"{first_line}: {error}", None
            record.exc_info = record.exc_text = None
        if held:
            record.msg = f"{record.msg} (and {held:,} more like it within {BURST_WINDOW_S:g} s)"
        return True


_QUIET = OncePerBurst()


def quiet_bursts() -> None:
    """Install `OncePerBurst` on the loggers the HTTP server writes to (once per process)."""
    for name in ("asyncio", "uvicorn.error", LOG.name):
        logger = logging.getLogger(name)
        if _QUIET not in logger.filters:
            logger.addFilter(_QUIET)
