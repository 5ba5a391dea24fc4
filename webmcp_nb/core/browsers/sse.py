"""An incremental `text/event-stream` parser (the HTML standard's rules, without the reconnection,
which `webmcp_nb.core.tools.http` drives)."""

from __future__ import annotations

import codecs
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ServerEvent:
    data: str
    event: str
    id: str | None
    retry: int | None

    def to_dict(self, clean: Callable[[Any], Any] = lambda data: data) -> dict[str, Any]:
        """The event as collected: `data` parsed as JSON where it parses (then passed through
        `clean`), and its metadata (receive time in epoch ms, and `bytes`: the size of this UTF-8
        JSON object itself)."""
        try:
            data: Any = clean(json.loads(self.data))
        except ValueError:
            data = self.data
        result: dict[str, Any] = {
            "data": data,
            "event": self.event,
            "id": self.id,
            "retry": self.retry,
            "received_at": int(time.time() * 1000),
            "bytes": 0,
        }
        result["bytes"] = _sized(result)
        return result


def _sized(event: dict[str, Any]) -> int:
    """The UTF-8 JSON size of `event` once its own `bytes` field holds that size."""
    size = 0
    while True:
        event["bytes"] = size
        measured = len(json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode())
        if measured == size:
            return size
        size = measured


class EventTooLarge(ValueError):
    """An event's lines passed `max_event_bytes` before it ended; `events` are those the same chunk completed first."""

    def __init__(self, limit: int, events: list[ServerEvent]) -> None:
        super().__init__(f"an event passed {limit:,} bytes")
        self.limit, self.events = limit, events


@dataclass
class EventStreamParser:
    """Feed bytes in any split; get the events they complete. Remembers the last event id
    and the server's `retry` advice across events (and reconnections). With `max_event_bytes`,
    one event's lines (as received, line endings included) may not pass that many bytes: the
    parser raises EventTooLarge as soon as they do, so an endless event is not held in memory."""

    last_event_id: str = ""
    retry_ms: int | None = None
    max_event_bytes: int | None = None
    _decoder: Any = field(default_factory=lambda: codecs.getincrementaldecoder("utf-8")("replace"))
    _buffer: str = ""
    _data: list[str] = field(default_factory=list)
    _event: str = ""
    _retry: int | None = None
    _bom_checked: bool = False
    _pending: int = 0  # bytes of the complete lines of the event being read

    def feed(self, chunk: bytes) -> list[ServerEvent]:
        text = self._decoder.decode(chunk)
        if not self._bom_checked and text:
            text = text.removeprefix("\ufeff")
            self._bom_checked = True
        self._buffer += text
        events: list[ServerEvent] = []
        while True:
            line, ending, rest = _split_line(self._buffer)
            if ending is None:
                break
            self._buffer = rest
            self._pending += len(line.encode()) + len(ending)
            self._bound(events)
            event = self._line(line)
            if event is not None:
                events.append(event)
        self._bound(events, len(self._buffer.encode()) if self.max_event_bytes is not None else 0)
        return events

    def _bound(self, events: list[ServerEvent], unfinished: int = 0) -> None:
        if self.max_event_bytes is not None and self._pending + unfinished > self.max_event_bytes:
            raise EventTooLarge(self.max_event_bytes, events)

    def reset_connection(self) -> None:
        """A new connection: an incomplete event of the old one is dropped (as EventSource does)."""
        self._decoder.reset()
        self._buffer, self._data, self._event, self._retry = "", [], "", None
        self._bom_checked, self._pending = False, 0

    def _line(self, line: str) -> ServerEvent | None:
        if line == "":
            self._pending = 0
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self.last_event_id = value
        elif name == "retry" and value.isdigit():
            self.retry_ms = self._retry = int(value)
        return None

    def _dispatch(self) -> ServerEvent | None:
        data, event, retry = self._data, self._event, self._retry
        self._data, self._event, self._retry = [], "", None
        if not data:
            return None
        return ServerEvent(data="\n".join(data), event=event or "message", id=self.last_event_id or None, retry=retry)


_LINE_END = re.compile(r"\r\n|\n|\r")


def _split_line(buffer: str) -> tuple[str, str | None, str]:
    """The first line of `buffer`, its ending (CRLF, LF or CR; None if incomplete) and the rest.
    A CR at the very end may be the start of a CRLF: wait for more."""
    found = _LINE_END.search(buffer)
    if found is None or (found.group() == "\r" and found.end() == len(buffer)):
        return buffer, None, ""
    return buffer[: found.start()], found.group(), buffer[found.end() :]
