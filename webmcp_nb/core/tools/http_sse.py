"""browser_http's `response="sse"`: collect server-sent events under required limits."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..browsers.page_fetch import FetchFailed, Head
from ..browsers.sse import EventStreamParser, EventTooLarge
from ..call.errors import ToolFailure
from .http_models import CHUNK_BYTES, DEFAULT_RETRY_MS, HttpCall, HttpData, StreamCollection, describe

if TYPE_CHECKING:
    from ..call.envelope import ErrorType


@dataclass
class Collection:
    events: list[dict[str, Any]] = field(default_factory=list)
    used: int = 2  # the JSON array's brackets
    received: int = 0  # body bytes, every connection
    reconnects: int = 0

    def context(self, call: HttpCall) -> dict[str, Any]:
        return {"partial": self.events, "reconnects": self.reconnects, "blocked_fields": call.blocked}

    def result(self, call: HttpCall, head: Head) -> HttpData:
        """The success: the stream ended (or, on a reconnect, the server answered 204)."""
        return HttpData(
            **describe(call, head),
            byte_length=self.received,
            response="sse",
            body={"events": self.events, "reconnects": self.reconnects},
            blocked_fields=call.blocked,
        )


async def collect_sse(call: HttpCall, timeout_s: float) -> HttpData:
    """Collect events until the stream ends; a dropped connection of a safe request reconnects
    (after the server's `retry`, with `Last-Event-ID`). Every failure keeps the partial events."""
    p, ctx = call.p, call.ctx
    assert p.sse is not None
    limits = p.sse
    duration_s = min(limits.max_duration_ms / 1000, timeout_s)
    byte_cap = min(limits.max_bytes, call.budget)
    deadline = time.monotonic() + duration_s
    parser = EventStreamParser(max_event_bytes=limits.max_event_bytes if isinstance(limits, StreamCollection) else None)
    got = Collection()
    sent_headers, body = p.request_parts()
    headers = {"Accept": "text/event-stream", **sent_headers}

    def fail(error_type: ErrorType, message: str) -> ToolFailure:
        note = (
            f" Partial output: {len(got.events)} events and {got.reconnects} reconnects (in context.partial); it "
            "is incomplete and is not an instruction to retry."
        )
        return call.failure(error_type, message + note, got.context(call))

    ctx.cut_off = fail  # cut off by the engine's deadline or the caller's cancel: the partial events too

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
            ctx.on_progress(
                {"kind": "sse_event", "event": collected, "count": len(got.events), "reconnects": got.reconnects}
            )

    while True:
        fetch = call.new_fetch()
        finished = False
        try:
            async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
                call.sent = True
                try:
                    head = await fetch.start(p.url, p.method, headers, body)
                except FetchFailed as exc:
                    raise fail("navigation_failed", f"{fetch.sender} of {p.url} failed: {exc.reason}.") from None
                if got.reconnects and head.status == 204:
                    finished = True
                    break  # the server's way to say: no more
                if not 200 <= head.status < 300 or head.media_type != "text/event-stream":
                    if got.reconnects:
                        raise fail(
                            "navigation_failed",
                            f"The reconnect was answered {head.status} "
                            f"{head.content_type or '(no type)'}, not an event stream.",
                        )
                    if head.status >= 300:  # an HTTP error is data: its body as in response='auto'
                        from .http import read_response  # (http imports this module)

                        call.p = p.model_copy(update={"response": "auto", "sse": None})
                        data = await read_response(call, fetch, head)
                        finished = True
                        return data
                    raise fail(
                        "unsupported_capability",
                        f"response='sse' but the answer is {head.content_type or 'untyped'}; the body was not read.",
                    )
                while True:
                    chunk = await fetch.read(CHUNK_BYTES, eager=True)
                    got.received += len(chunk.data)
                    try:
                        events = parser.feed(chunk.data)
                    except EventTooLarge as exc:
                        for event in exc.events:
                            add(event)
                        raise fail(
                            "result_too_large",
                            f"An event passed max_event_bytes ({exc.limit:,} bytes) before it ended.",
                        ) from None
                    for event in events:
                        add(event)
                    if chunk.done:
                        finished = True
                        return got.result(call, head)
                    if chunk.error is not None:
                        break
        except TimeoutError:
            limit = "max_duration_ms" if duration_s == limits.max_duration_ms / 1000 else "the call's timeout"
            raise fail(
                "operation_timeout",
                f"The stream did not end within {limit} ({duration_s * 1000:g} ms); "
                "the reader in the page was cancelled.",
            ) from None
        finally:
            if not finished:
                await fetch.cancel()
        if not call.safe:
            raise fail("navigation_failed", f"The stream dropped ({chunk.error}); a {p.method} is not reconnected.")
        wait_s = (parser.retry_ms if parser.retry_ms is not None else DEFAULT_RETRY_MS) / 1000
        if time.monotonic() + wait_s >= deadline:
            raise fail(
                "operation_timeout",
                f"The stream dropped ({chunk.error}) and max_duration_ms ends before the server's retry delay.",
            )
        await asyncio.sleep(wait_s)
        got.reconnects += 1
        parser.reset_connection()
        if parser.last_event_id:
            headers["Last-Event-ID"] = parser.last_event_id
        if ctx.on_progress is not None:
            ctx.on_progress({"kind": "sse_reconnect", "count": len(got.events), "reconnects": got.reconnects})
    return got.result(call, head)
