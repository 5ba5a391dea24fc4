"""A tiny local website for demos and tests of webmcp_nb.

Everything here is standard library only.  Start a server with::

    from webmcp_nb.demo import DemoServer

    with DemoServer() as demo:
        print(demo.url_for("form.html"))

or from a shell with ``python -m webmcp_nb.demo --port 8000``.
"""

from __future__ import annotations

import contextlib
import gzip
import html
import http.server
import importlib.resources
import json
import mimetypes
import secrets
import struct
import sys
import threading
import time
import zlib
from http import HTTPStatus
from urllib.parse import parse_qs, unquote, urljoin, urlsplit

__all__ = ["DemoServer", "serve"]

SITE = importlib.resources.files(__package__) / "site"
MAX_SLOW_MS = 60_000
MAX_LARGE_KB = 16_384
SESSIONS: dict[str, str] = {}  # /login's session cookies -> user names (every demo server of this process)


def _page(title: str, body: str) -> bytes:
    t = html.escape(title)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<link rel="icon" href="data:,"><title>{t}</title></head>\n'
        f'<body><h1>{t}</h1>\n{body}\n<p><a href="/">Back to index</a></p></body></html>\n'
    ).encode()


def _int_arg(query: dict[str, list[str]], name: str, default: int) -> int:
    try:
        return int(query.get(name, [default])[0])
    except ValueError:
        return default


class _Handler(http.server.BaseHTTPRequestHandler):
    server_version = "WebmcpDemo/1.0"

    def log_message(self, format: str, *args: object) -> None:
        pass  # keep test output and notebooks quiet

    def do_HEAD(self) -> None:
        self._dispatch(head=True)

    def do_GET(self) -> None:
        self._dispatch(head=False)

    def do_POST(self) -> None:
        if urlsplit(self.path).path == "/login":
            self._login()
        else:
            self._mutation()

    do_PUT = do_PATCH = do_DELETE = do_POST

    def do_OPTIONS(self) -> None:
        self._send(204, headers={"Allow": "GET, HEAD, OPTIONS, POST, PUT, PATCH, DELETE"})

    # -- helpers -----------------------------------------------------------

    def _send(
        self,
        status: int,
        body: bytes = b"",
        ctype: str = "text/html; charset=utf-8",
        headers: dict[str, str] | None = None,
        head: bool = False,
    ) -> None:
        self.send_response(status)
        self.send_header("Cache-Control", "no-store")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        no_body = status < 200 or status in (204, 304)
        if not no_body:
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head and not no_body:
            self.wfile.write(body)

    def _not_found(self, head: bool) -> None:
        body = _page("Not found", f"<p>No page at <code>{html.escape(self.path)}</code>.</p>")
        self._send(404, body, head=head)

    def _dispatch(self, head: bool) -> None:
        parts = urlsplit(self.path)
        path, query = unquote(parts.path), parse_qs(parts.query)
        if path == "/slow":
            ms = max(0, min(_int_arg(query, "ms", 1000), MAX_SLOW_MS))
            time.sleep(ms / 1000)
            self._send(200, _page("Slow page", f"<p>Answered after {ms} ms.</p>"), head=head)
        elif path == "/status":
            code = _int_arg(query, "code", 200)
            if not 200 <= code <= 599:
                self._send(400, _page("Bad status", "<p>code must be 200-599.</p>"), head=head)
                return
            try:
                phrase = HTTPStatus(code).phrase
            except ValueError:
                phrase = "Custom status"
            body = _page(f"Status {code}", f"<p>{code} {html.escape(phrase)}</p>")
            self._send(code, body, head=head)
        elif path == "/api/large":
            kb = max(1, min(_int_arg(query, "kb", 64), MAX_LARGE_KB))
            items = [{"id": i, "name": f"Item {i}", "note": "x" * 80} for i in range(kb * 1024 // 110 + 1)]
            self._send(200, json.dumps({"items": items}).encode(), ctype="application/json", head=head)
        elif path.startswith("/api/") and path in API:
            API[path](self, query, head)
        elif path == "/account":
            user = SESSIONS.get(self._cookie("demo_session"))
            said = f"Signed in as {html.escape(user)}" if user else 'Not signed in (<a href="/login.html">sign in</a>)'
            self._send(200, _page("Account", f'<p id="who">{said}</p>'), head=head)
        elif path == "/redirect":
            target = query.get("to", ["/"])[0]
            split = urlsplit(target)
            if split.scheme or split.netloc or target.startswith("//"):
                self._send(400, _page("Bad redirect", "<p>Only local paths are allowed.</p>"), head=head)
                return
            location = urljoin("/", target)
            body = _page("Redirect", f'<p>Moved to <a href="{html.escape(location)}">{html.escape(location)}</a>.</p>')
            self._send(302, body, headers={"Location": location}, head=head)
        else:
            self._static(path, head)

    def _cookie(self, name: str) -> str:
        for part in (self.headers.get("Cookie") or "").split(";"):
            key, _, value = part.strip().partition("=")
            if key == name:
                return value
        return ""

    def _login(self) -> None:
        """POST /login (user, password as a form): an HttpOnly session cookie, then /account."""
        length = min(int(self.headers.get("Content-Length") or 0), 4096)
        form = parse_qs(self.rfile.read(length).decode(errors="replace"))
        user, password = form.get("user", [""])[0], form.get("password", [""])[0]
        if not user or not password:
            self._send(303, headers={"Location": "/login.html?failed=1"})
            return
        token = secrets.token_hex(16)
        SESSIONS[token] = user
        cookie = f"demo_session={token}; HttpOnly; Path=/; SameSite=Lax"
        self._send(303, headers={"Location": "/account", "Set-Cookie": cookie})

    def _static(self, path: str, head: bool) -> None:
        names = [p for p in path.split("/") if p not in ("", ".")]
        if path.endswith("/") or not names:
            names.append("index.html")
        if any(n == ".." or "\\" in n or n.startswith(".") for n in names):
            self._not_found(head)
            return
        resource = SITE.joinpath(*names)
        if not resource.is_file():
            self._not_found(head)
            return
        ctype = mimetypes.guess_type(names[-1])[0] or "application/octet-stream"
        if ctype.startswith("text/") or ctype in ("application/javascript", "application/json"):
            ctype += "; charset=utf-8"
        self._send(200, resource.read_bytes(), ctype=ctype, head=head)

    # -- the HTTP API (see API below) ---------------------------------------

    def _json(self, value: object, head: bool, status: int = 200, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(value).encode(), ctype="application/json", headers=headers, head=head)

    def _mutation(self) -> None:
        """POST/PUT/PATCH/DELETE /api/counter?key=K[&delay_ms=N]: count the call, then answer
        (after the delay); anything else: 405."""
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode("utf-8", "replace") if length else ""
        if unquote(parts.path) == "/api/keys" and self.command == "POST":
            label = json.loads(body or "{}").get("label")
            key_id = f"k{_count('api-keys', 1)}"
            value = {
                "id": key_id,
                "label": label,
                "key": f"sk-{key_id}-once",
                "idempotency_key": self.headers.get("Idempotency-Key"),
            }
            self._json(value, head=False, status=201)
            return
        if unquote(parts.path) != "/api/counter":
            self._send(405, json.dumps({"error": "method not allowed"}).encode(), ctype="application/json")
            return
        key = query.get("key", ["default"])[0]
        count = _count(key, 1)
        time.sleep(max(0, min(_int_arg(query, "delay_ms", 0), MAX_SLOW_MS)) / 1000)
        self._json({"key": key, "count": count, "method": self.command, "body": body}, head=False)

    def _api_counter(self, query: dict[str, list[str]], head: bool) -> None:
        key = query.get("key", ["default"])[0]
        with _COUNTS_LOCK:
            self._json({"key": key, "count": _COUNTS.get(key, 0)}, head)

    def _api_items(self, query: dict[str, list[str]], head: bool) -> None:
        self._json([{"id": i, "name": name, "price": price} for i, (name, price) in enumerate(ITEMS, 1)], head)

    def _api_echo(self, query: dict[str, list[str]], head: bool) -> None:
        self._json(
            {
                "method": self.command,
                "path": self.path,
                "cookie": self.headers.get("Cookie"),
                "origin": self.headers.get("Origin"),
                "headers": dict(self.headers),
            },
            head,
        )

    def _api_secrets(self, query: dict[str, list[str]], head: bool) -> None:
        self._json(
            {
                "user": "ada",
                "password": "hunter2",
                "Access-Token": "tok-123",
                "profile": {"apiKey": "key-456", "theme": "dark"},
                "sessions": [{"id": 1, "refresh_token": "ref-789"}],
                "password_hint": "a pet",
            },
            head,
            headers={"X-Auth-Token": "header-secret"},
        )

    def _api_ndjson(self, query: dict[str, list[str]], head: bool) -> None:
        lines = [json.dumps({"id": i, "name": name}) for i, (name, _) in enumerate(ITEMS, 1)]
        if query.get("malformed"):
            lines.insert(2, "{not json")
        lines.insert(1, json.dumps({"id": 0, "token": "ndjson-secret"}))
        self._send(200, ("\n".join(lines) + "\n").encode(), ctype="application/x-ndjson", head=head)

    def _api_png(self, query: dict[str, list[str]], head: bool) -> None:
        self._send(200, PNG, ctype="image/png", head=head)

    def _api_bytes(self, query: dict[str, list[str]], head: bool) -> None:
        kb = max(1, min(_int_arg(query, "kb", 4), MAX_LARGE_KB))
        self._send(200, bytes(range(256)) * (kb * 4), ctype="application/octet-stream", head=head)

    def _api_zipped(self, query: dict[str, list[str]], head: bool) -> None:
        """A gzip body: its Content-Length is the small compressed size, the body the page reads is large."""
        kb = max(1, min(_int_arg(query, "kb", 256), MAX_LARGE_KB))
        body = gzip.compress(json.dumps({"text": "a" * kb * 1024}).encode())
        self._send(200, body, ctype="application/json", headers={"Content-Encoding": "gzip"}, head=head)

    def _api_lying_length(self, query: dict[str, list[str]], head: bool) -> None:
        """Declares a Content-Length larger than what it sends, then closes the connection."""
        self._stream_start("application/json", {"Content-Length": "100000"})
        if not head:
            self.wfile.write(b'{"partial": "only this much')
            self.wfile.flush()
            time.sleep(0.2)  # let the page read what came before the connection drops
        self.close_connection = True

    def _stream_start(self, ctype: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Cache-Control", "no-store")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()

    def _event(self, data: object, event_id: int | None = None, event: str | None = None) -> None:
        lines = ([f"id: {event_id}"] if event_id is not None else []) + ([f"event: {event}"] if event else [])
        self.wfile.write(("\n".join([*lines, f"data: {json.dumps(data)}"]) + "\n\n").encode())
        self.wfile.flush()

    def _api_sse(self, query: dict[str, list[str]], head: bool) -> None:
        """A finite stream of `n` events (every `interval_ms`), then the end."""
        n = max(0, min(_int_arg(query, "n", 3), 10_000))
        interval = max(0, min(_int_arg(query, "interval_ms", 0), 10_000)) / 1000
        self._stream_start("text/event-stream")
        if head:
            return
        self.wfile.write(b": a comment, ignored\n\n")
        for i in range(1, n + 1):
            self._event({"n": i, "token": "sse-secret"} if i == 1 else {"n": i}, i, "tick")
            time.sleep(interval)

    def _api_sse_endless(self, query: dict[str, list[str]], head: bool) -> None:
        """An event every `interval_ms` (default 50) until the client goes away; the counter
        `sse-open` (GET /api/counter?key=sse-open) says how many such streams are open."""
        interval = max(1, min(_int_arg(query, "interval_ms", 50), 10_000)) / 1000
        self._stream_start("text/event-stream")
        if head:
            return
        i = 0
        _count("sse-open", 1)
        try:
            with contextlib.suppress(OSError):
                while True:
                    i += 1
                    self._event({"n": i}, i)
                    time.sleep(interval)
        finally:
            _count("sse-open", -1)

    def _api_sse_drop(self, query: dict[str, list[str]], head: bool) -> None:
        """Events 1-3 with `retry: 100` (or `retry_ms`), then the connection drops; a reconnect that
        sends `Last-Event-ID: 3` gets events 4-5 and a clean end (with `end=204`: a 204, no more
        events; with `end=500`: a server error)."""
        last = self.headers.get("Last-Event-ID")
        if last is not None and query.get("end") == ["204"]:
            self._send(204, head=head)
            return
        if last is not None and query.get("end") == ["500"]:
            self._json({"error": "the stream is gone"}, head, status=500)
            return
        self._stream_start("text/event-stream", {} if last else {"Content-Length": "100000"})
        if head:
            return
        if last is None:
            self.wfile.write(f"retry: {max(0, _int_arg(query, 'retry_ms', 100))}\n\n".encode())
            for i in range(1, 4):
                self._event({"n": i}, i)
            time.sleep(0.2)  # let the page read the events before the connection drops
            self.close_connection = True
            return
        for i in range(int(last) + 1 if last.isdigit() else 1, 6):
            self._event({"n": i, "after": last}, i)


def _png(width: int = 4, height: int = 4) -> bytes:
    """A small red PNG, made with the standard library."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


PNG = _png()
ITEMS = (("Apple", 1.25), ("Banana", 0.5), ("Cherry", 3.0), ("Date", 2.75))
_COUNTS: dict[str, int] = {}
_COUNTS_LOCK = threading.Lock()


def _count(key: str, change: int) -> int:
    with _COUNTS_LOCK:
        _COUNTS[key] = _COUNTS.get(key, 0) + change
        return _COUNTS[key]


API = {
    "/api/items": _Handler._api_items,
    "/api/echo": _Handler._api_echo,
    "/api/secrets": _Handler._api_secrets,
    "/api/counter": _Handler._api_counter,
    "/api/items.ndjson": _Handler._api_ndjson,
    "/api/image.png": _Handler._api_png,
    "/api/bytes": _Handler._api_bytes,
    "/api/zipped": _Handler._api_zipped,
    "/api/lying-length": _Handler._api_lying_length,
    "/api/sse": _Handler._api_sse,
    "/api/sse/endless": _Handler._api_sse_endless,
    "/api/sse/drop": _Handler._api_sse_drop,
}
"""GET/HEAD endpoints of the demo API (/api/large is above; mutations: `_Handler._mutation`)."""


class DemoServer(http.server.ThreadingHTTPServer):
    """Threaded HTTP server for the demo site on 127.0.0.1.

    The socket is bound in the constructor (so ``url`` is known at once);
    ``start()`` runs it in a daemon thread and ``stop()`` shuts it down.
    Used as a context manager it starts on enter and stops on exit.
    """

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self._thread: threading.Thread | None = None

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that went away mid-answer (a cancelled stream, a page that navigated) is no error."""
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]

    @property
    def port(self) -> int:
        return self.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def url_for(self, path: str) -> str:
        return self.url + path.lstrip("/")

    def start(self) -> DemoServer:
        if self._thread is None:
            self._thread = threading.Thread(target=self.serve_forever, name=f"webmcp-demo-{self.port}", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self.shutdown()
            self._thread.join()
            self._thread = None
        self.server_close()

    def __enter__(self) -> DemoServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self._thread else "stopped"
        return f"<DemoServer {self.url} {state}>"


def serve(port: int = 0) -> DemoServer:
    """Start a demo server in the background and return it."""
    return DemoServer(port).start()
