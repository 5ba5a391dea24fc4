"""A tiny local website for demos and tests of webmcp_nb.

Everything here is standard library only.  Start a server with::

    from webmcp_nb.demo import DemoServer

    with DemoServer() as demo:
        print(demo.url_for("form.html"))

or from a shell with ``python -m webmcp_nb.demo --port 8000``.
"""

from __future__ import annotations

import html
import http.server
import importlib.resources
import json
import mimetypes
import threading
import time
from http import HTTPStatus
from urllib.parse import parse_qs, unquote, urljoin, urlsplit

__all__ = ["DemoServer", "serve"]

SITE = importlib.resources.files(__package__) / "site"
MAX_SLOW_MS = 60_000
MAX_LARGE_KB = 16_384


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
