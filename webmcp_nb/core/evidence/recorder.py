"""Evidence: what the pages of an instance did (console messages, page errors, network requests).

Every instance records both streams from its first page on. A stream is a ring buffer of
`Record`s with monotonic sequence numbers; readers page through it with opaque cursors
(``<stream>:<instance_id>:<seq>``), so a cursor from another instance or stream is refused and
a reader that fell behind the buffer learns it (`retention_lost`). A network record is kept up
to date by request id as the request progresses (its sequence number stays that of its start).

Capture runs on the page's hot path, so a network event only notes what a reader cannot get later
(the Response, the state, the time, page and frame ids); a record's fields are read from
Playwright's objects when someone reads them (`NetworkRecord.fields`).

Headers are redacted when read (`redact_headers`), never when stored, so a caller granted
`reveal_secrets` can still see them; so are the known secrets a page repeats (a logged password or
`document.cookie`) and secret query parameters of URLs (`webmcp_nb.core.guard.known_secrets`).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, cast

from ..call.errors import ToolFailure
from ..call.listeners import Listeners
from ..call.util import utc_now
from ..guard.known_secrets import REDACTED, KnownSecrets
from ..guard.url_policy import blocked_rule

if TYPE_CHECKING:
    from playwright.async_api import ConsoleMessage, Error, Request, Response, WebSocket

    from ..browsers.pages import PageState

StreamName = Literal["console", "network"]
STREAMS: tuple[StreamName, ...] = ("console", "network")
MAX_FIELD_CHARS = 4096
_SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "www-authenticate", "proxy-authenticate"}
)
_SECRET_WORDS = re.compile(r"token|secret|password|api[-_]?key|^x-auth", re.IGNORECASE)


def is_secret_header(name: str) -> bool:
    lowered = name.lower()
    return lowered in _SECRET_HEADERS or bool(_SECRET_WORDS.search(lowered))


def redact_headers(headers: dict[str, str]) -> dict[str, str]:
    return {name: REDACTED if is_secret_header(name) else value for name, value in headers.items()}


class Record:
    """One entry of a stream; `fields` is what readers see (`key`: what it is upserted by)."""

    key: str | None = None
    secrets: KnownSecrets | None = None  # set by the stream: scrubbed from views that reveal nothing

    def __init__(self, fields: dict[str, Any]) -> None:
        self.seq = 0  # set by the stream
        self._fields = fields

    @property
    def fields(self) -> dict[str, Any]:
        return self._fields

    def view(self, reveal_secrets: bool) -> dict[str, Any]:
        view = {"seq": self.seq, **self.fields}
        if not reveal_secrets:
            for key in ("request_headers", "response_headers"):
                if view.get(key):
                    view[key] = redact_headers(view[key])
            if self.secrets is not None:
                view = self.secrets.scrub(view)
        return view


NetworkState = Literal["pending", "finished", "failed"]


class NetworkRecord(Record):
    """One request, as its events left it; `fields` are read from Playwright's Request and
    Response when first asked for after a change (bounded, then kept until the next change)."""

    def __init__(
        self, request_id: str, request: Request, redirected_from: str | None, page_id: str, frame_id: str | None
    ) -> None:
        super().__init__({})
        self.key = request_id
        self.request = request
        self.response: Response | None = None
        self.state: NetworkState = "pending"
        self.started = time.time()
        self.redirected_from = redirected_from
        self.page_id = page_id
        self.frame_id = frame_id
        self.encoded_size: int | None = None
        self._stale = True

    def responded(self, response: Response) -> None:
        self.response = response
        self._stale = True  # the fields are read again next time

    def settled(self, state: NetworkState) -> None:
        self.state = state
        self._stale = True

    def set_size(self, encoded_size: int) -> None:
        self.encoded_size = encoded_size
        if not self._stale:
            self._fields["encoded_size"] = encoded_size

    @property
    def fields(self) -> dict[str, Any]:
        if self._stale:
            self._fields = _bounded(self._read())
            self._stale = False
        return self._fields

    def _read(self) -> dict[str, Any]:
        request, response, state = self.request, self.response, self.state
        redirect_chain: list[str] = []
        previous = request.redirected_from
        while previous is not None:
            redirect_chain.insert(0, previous.url)
            previous = previous.redirected_from
        headers = response.headers if response is not None else None
        return {
            "request_id": self.key,
            "at": datetime.fromtimestamp(self.started, UTC).isoformat(timespec="milliseconds"),
            "method": request.method,
            "url": request.url,
            "resource_type": request.resource_type,
            "state": state,
            "status": response.status if response is not None else None,
            "status_text": response.status_text if response is not None else None,
            "failure": (blocked_rule(request) or request.failure or "failed") if state == "failed" else None,
            "redirected_from": self.redirected_from,
            "redirect_chain": redirect_chain,
            "request_headers": request.headers,
            "response_headers": headers,
            "mime_type": headers.get("content-type", "").split(";")[0].strip() or None if headers else None,
            "timing": None if state == "pending" else _timing(request),
            "encoded_size": self.encoded_size,
            "page_id": self.page_id,
            "frame_id": self.frame_id,
        }


class SocketRecord(Record):
    """One WebSocket of a page, in the network stream beside its requests (Playwright reports
    sockets apart from requests): opened and later closed, or refused by the URL policy before
    it reached its server. It has no headers, timing or body."""

    def __init__(self, request_id: str, url: str, page_id: str, failure: str | None = None) -> None:
        super().__init__(
            {
                "request_id": request_id,
                "at": utc_now(),
                "method": "GET",
                "url": url,
                "resource_type": "websocket",
                "state": "failed" if failure is not None else "pending",
                "status": None,
                "status_text": None,
                "failure": failure,
                "redirected_from": None,
                "redirect_chain": [],
                "request_headers": {},
                "response_headers": None,
                "mime_type": None,
                "timing": None,
                "encoded_size": None,
                "page_id": page_id,
                "frame_id": None,
            }
        )
        self.key = request_id

    @property
    def page_id(self) -> str:
        return cast(str, self._fields["page_id"])

    @page_id.setter
    def page_id(self, page_id: str) -> None:
        self._fields = {**self._fields, "page_id": page_id}

    @property
    def state(self) -> NetworkState:
        return cast(NetworkState, self._fields["state"])

    def settled(self, state: NetworkState, failure: str | None = None) -> None:
        self._fields = {**self._fields, "state": state, "failure": failure}


NetworkEntry = NetworkRecord | SocketRecord

R = TypeVar("R", bound=Record)


@dataclass(frozen=True)
class Window(Generic[R]):
    """One page of a stream, as `Stream.read` returns it."""

    records: list[R]
    next_cursor: str
    has_more: bool
    retained_count: int
    dropped_count: int
    retention_lost: bool


class Stream(Generic[R]):
    """A ring buffer of records with sequence numbers and cursors."""

    def __init__(self, name: StreamName, instance_id: str, capacity: int, secrets: KnownSecrets | None = None) -> None:
        self.name = name
        self.instance_id = instance_id
        self.secrets = secrets
        self.records: deque[R] = deque(maxlen=capacity)
        self.last_seq = 0
        self._by_key: dict[str, R] = {}

    @property
    def dropped_count(self) -> int:
        return self.last_seq - len(self.records)

    def append(self, record: R) -> R:
        if len(self.records) == self.records.maxlen:
            oldest = self.records[0]
            if oldest.key is not None:
                self._by_key.pop(oldest.key, None)
        self.last_seq += 1
        record.seq = self.last_seq
        record.secrets = self.secrets
        self.records.append(record)
        if record.key is not None:
            self._by_key[record.key] = record
        return record

    def get(self, key: str) -> R | None:
        return self._by_key.get(key)

    def cursor(self, seq: int) -> str:
        return f"{self.name}:{self.instance_id}:{seq}"

    def parse_cursor(self, cursor: str) -> int:
        name, _, rest = cursor.partition(":")
        instance_id, _, seq = rest.rpartition(":")
        if name != self.name or instance_id != self.instance_id or not seq.isdigit():
            raise ToolFailure(
                "invalid_params",
                f"Cursor {cursor[:120]!r} is not a cursor of this instance's {self.name} stream; use next_cursor "
                f"from an earlier browser_{self.name} call on the same instance, or omit `after`.",
                started=False,
            )
        return int(seq)

    def read(self, after: str | None, limit: int, keep: Callable[[R], bool]) -> Window[R]:
        start = self.parse_cursor(after) if after is not None else 0
        oldest = self.records[0].seq if self.records else self.last_seq + 1
        lost = after is not None and start < oldest - 1 and self.dropped_count > 0
        chosen: list[R] = []
        last = start
        has_more = False
        for record in self._after(start):
            if not keep(record):
                last = record.seq
                continue
            if len(chosen) == limit:
                has_more = True
                break
            chosen.append(record)
            last = record.seq
        return Window(chosen, self.cursor(max(last, start)), has_more, len(self.records), self.dropped_count, lost)

    def _after(self, seq: int) -> Iterator[R]:
        for record in list(self.records):
            if record.seq > seq:
                yield record


def _bounded(fields: dict[str, Any]) -> dict[str, Any]:
    """Strings (also header values) longer than `MAX_FIELD_CHARS` cut, listed in `truncated_fields`."""
    truncated: set[str] = set()
    result: dict[str, Any] = {}
    for key, value in fields.items():
        if isinstance(value, str) and len(value) > MAX_FIELD_CHARS:
            value = value[:MAX_FIELD_CHARS]
            truncated.add(key)
        elif isinstance(value, dict) and key.endswith("headers"):
            value = dict(value)
            for name, text in value.items():
                if isinstance(text, str) and len(text) > MAX_FIELD_CHARS:
                    value[name] = text[:MAX_FIELD_CHARS]
                    truncated.add(f"{key}.{name}")
        result[key] = value
    if truncated:
        result["truncated_fields"] = sorted(truncated)
    return result


@dataclass(frozen=True)
class EvidenceEvent:
    """A console message or network request as it is recorded or progresses, for live logs
    (`Engine.add_evidence_listener`); `entry` is what `browser_console` / `browser_network`
    show (secret headers redacted)."""

    instance: str
    stream: StreamName
    entry: dict[str, Any]

    @property
    def notable(self) -> bool:
        """A console error or uncaught page error, or a request that failed or got a 4xx/5xx."""
        if self.stream == "console":
            return bool(self.entry.get("level") == "error")
        if self.entry.get("state") == "failed":
            return True
        return self.entry.get("state") == "finished" and (self.entry.get("status") or 0) >= 400

    def summary(self) -> str:
        entry = self.entry
        if self.stream == "console":
            kind = "uncaught error" if entry.get("kind") == "pageerror" else f"console {entry.get('level')}"
            return f"{kind}: {entry.get('text', '')}"
        outcome = entry.get("failure") if entry.get("state") == "failed" else entry.get("status")
        return f"{entry.get('method')} {entry.get('url')} -> {outcome}"


class Evidence:
    """The console and network streams of one instance, fed by its pages' events."""

    def __init__(self, instance_id: str, capacity: int, secrets: KnownSecrets | None = None) -> None:
        self.console: Stream[Record] = Stream("console", instance_id, capacity, secrets)
        self.network: Stream[NetworkEntry] = Stream("network", instance_id, capacity, secrets)
        self._request_ids: dict[Request, str] = {}
        self._next_request = 0
        self._unclaimed: list[NetworkEntry] = []
        self.listeners: Listeners[[StreamName, Record]] = Listeners()

    def stream(self, name: StreamName) -> Stream[Record] | Stream[NetworkEntry]:
        return self.console if name == "console" else self.network

    def watch(self, state: PageState) -> None:
        """Record what the page of `state` does from now on. The listeners are plain one-argument
        functions: Playwright reads a listener's signature at every event, and a bound method's
        costs half as much again."""
        page = state.page
        page.on("console", lambda message: self._console(state, message))
        page.on("pageerror", lambda error: self._page_error(state, error))
        page.on("request", lambda request: self._request(state, request))
        page.on("response", lambda response: self._response(response))
        page.on("requestfinished", lambda request: self._settle(request, "finished"))
        page.on("requestfailed", lambda request: self._settle(request, "failed"))
        page.on("websocket", lambda socket: self._socket(state, socket))

    # console ----------------------------------------------------------------
    def _console(self, state: PageState, message: ConsoleMessage) -> None:
        location = message.location
        self._add_console(
            {
                "at": utc_now(),
                "kind": "console",
                "level": message.type,
                "text": message.text,
                "url": location.get("url") or None,
                "line": location.get("lineNumber"),
                "column": location.get("columnNumber"),
                "page_id": state.page_id,
                "frame_id": None,
            }
        )

    def _page_error(self, state: PageState, error: Error) -> None:
        text = f"{error.name}: {error.message}" if getattr(error, "name", "") else str(error.message)
        self._add_console(
            {
                "at": utc_now(),
                "kind": "pageerror",
                "level": "error",
                "text": text,
                "stack": getattr(error, "stack", None) or None,
                "url": state.page.url,
                "line": None,
                "column": None,
                "page_id": state.page_id,
                "frame_id": state.frame_id(state.page.main_frame),
            }
        )

    def _add_console(self, fields: dict[str, Any]) -> None:
        self.listeners.emit("console", self.console.append(Record(_bounded(fields))))

    # network ----------------------------------------------------------------
    def request_id(self, request: Request) -> str:
        known = self._request_ids.get(request)
        if known is None:
            known = self._request_ids[request] = self._new_id()
        return known

    def _new_id(self) -> str:
        self._next_request += 1
        return f"r{self._next_request}"

    def _request(self, state: PageState, request: Request) -> None:
        try:
            frame_id: str | None = state.frame_id(request.frame)
        except Exception:  # noqa: BLE001 - a service worker's request has no frame
            frame_id = None
        previous = request.redirected_from
        redirected_from = self._request_ids.get(previous) if previous is not None else None
        record = NetworkRecord(self.request_id(request), request, redirected_from, state.page_id, frame_id)
        self.listeners.emit("network", self.network.append(record))

    def _socket(self, state: PageState, socket: WebSocket) -> None:
        record = SocketRecord(self._new_id(), socket.url, state.page_id)
        self.listeners.emit("network", self.network.append(record))

        def settle(failure: str | None) -> None:
            if record.state == "pending":
                record.settled("failed" if failure is not None else "finished", failure)
                self.listeners.emit("network", record)

        socket.on("close", lambda _socket: settle(None))
        socket.on("socketerror", lambda error: settle(f"socket error: {error}"))

    def socket_refused(self, url: str, page_id: str | None, refusal: str) -> None:
        """Record a WebSocket the URL policy closed before it reached its server (`page_id` None: of
        a page not reported yet, like a request `refused_early`)."""
        record = SocketRecord(self._new_id(), url, page_id or "", f"blocked by the URL policy: {refusal}")
        if page_id is None:
            self._unclaimed.append(record)
        else:
            self.listeners.emit("network", self.network.append(record))

    def refused_early(self, request: Request) -> None:
        """Note a request refused before any page could see it (a popup's first navigation: no
        page event reports it); the page the instance tracks next is its page (`claim`)."""
        record = NetworkRecord(self.request_id(request), request, None, "", None)
        record.settled("failed")
        self._unclaimed.append(record)

    def refresh(self, request: Request) -> None:
        """Read `request`'s record again next time (its failure is now known to be the policy's)."""
        record = self._record(request)
        if record is not None:
            record.settled(record.state)

    def claim(self, page_id: str) -> None:
        """Record the requests and sockets refused early (`refused_early`, `socket_refused`) as the
        new page `page_id`'s."""
        for record in self._unclaimed:
            record.page_id = page_id
            self.listeners.emit("network", self.network.append(record))
        self._unclaimed.clear()

    def _record(self, request: Request) -> NetworkRecord | None:
        request_id = self._request_ids.get(request)
        record = self.network.get(request_id) if request_id is not None else None
        return record if isinstance(record, NetworkRecord) else None

    def _response(self, response: Response) -> None:
        record = self._record(response.request)
        if record is not None:
            record.responded(response)

    def _settle(self, request: Request, state: NetworkState) -> None:
        record = self._record(request)
        if record is not None:
            record.settled(state)
            self.listeners.emit("network", record)

    async def fill_sizes(self, records: Sequence[Record]) -> None:
        """Ask the browser for the encoded size of finished requests that lack it. Done when the
        records are read, not as requests finish: one round trip per request on the page's hot
        path would slow a busy page down (measured: 1.28x on 1,000 requests)."""
        pending = [
            record for record in records
            if isinstance(record, NetworkRecord) and record.state == "finished" and record.encoded_size is None
        ]  # fmt: skip
        if pending:
            await asyncio.gather(*(self._size(record) for record in pending))

    async def _size(self, record: NetworkRecord) -> None:
        try:
            sizes = await record.request.sizes()
        except Exception:  # noqa: BLE001 - the page or its request went away: the size stays unknown
            return
        record.set_size(sizes.get("responseBodySize", 0) + sizes.get("responseHeadersSize", 0))


def _timing(request: Request) -> dict[str, float | None]:
    """Playwright's request timing: `start` in epoch ms, the phases in ms after it (None: unknown)."""
    raw = cast(dict[str, float | None], request.timing)
    start = raw.get("startTime")

    def phase(name: str) -> float | None:
        value = raw.get(name, -1)
        return None if value is None or value < 0 else round(value, 3)

    return {
        "start": round(start, 3) if start and start > 0 else None,
        "dns_start": phase("domainLookupStart"),
        "dns_end": phase("domainLookupEnd"),
        "connect_start": phase("connectStart"),
        "ssl_start": phase("secureConnectionStart"),
        "connect_end": phase("connectEnd"),
        "request_start": phase("requestStart"),
        "response_start": phase("responseStart"),
        "response_end": phase("responseEnd"),
    }
