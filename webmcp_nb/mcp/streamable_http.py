"""Streamable HTTP for the MCP server, on the session's runtime thread.

uvicorn runs as a task on the runtime loop (never the kernel's loop, so a busy
cell does not stall agents; off the main thread, so it captures no signals).
Every request needs the bearer token (401 otherwise); the SDK checks Host (421)
and Origin (403) against loopback names. What a client can hold (body sizes, requests,
connections, time) is bounded by `HttpLimits` (see `http_bounds`).
"""

from __future__ import annotations

import asyncio
import json
import math
import secrets
import shlex
import shutil
import socket
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import uvicorn
from mcp.server.transport_security import TransportSecuritySettings

from ..core.call.engine import Approval
from ..serve_options import HttpLimits, ServeOptions
from .http_bounds import BoundedRequests, protocol, quiet_bursts
from .server import AgentServer
from .streamed import stream_when_asked

if TYPE_CHECKING:
    from ..client import Session
    from ..core.call.engine import Engine
    from ..core.call.runtime import Runtime

LOOPBACK = ("127.0.0.1", "localhost", "::1")
MCP_PATH = "/mcp"
SHUTDOWN_GRACE_S = 2
BACKLOG = 128
"""Connections the kernel queues before they are accepted (and asyncio's accepts per wake-up)."""


class BearerToken:
    """ASGI wrapper: every HTTP request must carry `Authorization: Bearer <token>`."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not secrets.compare_digest(given, self._expected):
                body = b'{"error": "unauthorized", "message": "a valid bearer token is required"}'
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b'Bearer realm="webmcp-nb"'),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


class CancelOnDisconnect:
    """ASGI wrapper: a POST whose client goes away before the answer starts is cancelled.

    The SDK watches for that only on SSE responses, and this server answers JSON; without it
    a call an agent gave up on (a 2026-07-28 client cancels by closing its request) would
    still run later. The engine then logs it as cancelled (a queued call never runs). A
    2025-era request runs in its MCP session, not in the HTTP request: its session hears a
    ``notifications/cancelled`` for it, as if the client had sent one before leaving."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks, more = [], True
        while more:  # the body first, so that afterwards `receive` can only report a disconnect
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body_bytes = b"".join(chunks)
        body: list[dict[str, Any]] = [{"type": "http.request", "body": body_bytes, "more_body": False}]
        gone = asyncio.Event()
        answering = False

        async def replay() -> dict[str, Any]:
            if body:
                return body.pop()
            await gone.wait()
            return {"type": "http.disconnect"}

        async def tracked_send(message: dict[str, Any]) -> None:
            nonlocal answering
            answering = True
            await send(message)

        handler = asyncio.ensure_future(self.app(scope, replay, tracked_send))
        watcher = asyncio.ensure_future(receive())
        dropped = False
        try:
            await asyncio.wait({handler, watcher}, return_when=asyncio.FIRST_COMPLETED)
            if watcher.done():
                gone.set()
                if not (handler.done() or answering):
                    dropped = handler.cancel()
                    await self._cancel_in_session(scope, body_bytes)
            try:
                await handler
            except asyncio.CancelledError:
                if not dropped:
                    raise
        finally:
            watcher.cancel()
            handler.cancel()

    async def _cancel_in_session(self, scope: dict[str, Any], body: bytes) -> None:
        """Tell the MCP session of a 2025-era request (``mcp-session-id``) that its client left."""
        headers = [(name, value) for name, value in scope["headers"] if name != b"content-length"]
        if b"mcp-session-id" not in {name for name, _ in headers}:
            return  # 2026-07-28: the call ran in the request, cancelled with it
        try:
            request = json.loads(body)
        except ValueError:
            return
        if not isinstance(request, dict) or "id" not in request or "method" not in request:
            return
        params = {"requestId": request["id"], "reason": "the client disconnected"}
        notice = json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}).encode()
        sent = [{"type": "http.request", "body": notice, "more_body": False}]

        async def receive() -> dict[str, Any]:
            return sent.pop() if sent else {"type": "http.disconnect"}

        async def discard(_message: dict[str, Any]) -> None:
            pass

        headers.append((b"content-length", str(len(notice)).encode()))
        await self.app({**scope, "headers": headers}, receive, discard)


def _security(host: str) -> TransportSecuritySettings:
    if host in LOOPBACK:
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        )
    # Reachable under names we cannot know: the token is the protection.
    return TransportSecuritySettings(enable_dns_rebinding_protection=False)


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on such sockets (else Nagle adds ~40 ms)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot serve MCP on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(BACKLOG)
    sock.setblocking(False)
    return sock


def stdio_command() -> list[str]:
    """How a client that only spawns processes starts the bridge (`webmcp-nb attach`)."""
    beside = Path(sys.executable).with_name("webmcp-nb")
    script = str(beside) if beside.exists() else shutil.which("webmcp-nb")
    return [script] if script else [sys.executable, "-m", "webmcp_nb.cli"]


@dataclass
class ServerHandle:
    """A running MCP server: where it is, its token, and how to stop it."""

    url: str
    token: str
    caps: tuple[str, ...]
    approve: str
    grants: str  # what else agents may reach (URLs, uploads): `Grant.describe`
    _server: AgentServer = field(repr=False)
    _uvicorn: uvicorn.Server = field(repr=False)
    _task: asyncio.Task[None] = field(repr=False)
    _runtime: Runtime = field(repr=False)
    _engine: Engine = field(repr=False)
    approvals: Any = None  # where a notebook shows approval prompts (`ApprovalPanel`)

    @property
    def running(self) -> bool:
        return not self._task.done()

    def stop(self) -> None:
        """Stop serving (idempotent); open client connections are closed."""
        if self._task.done():
            return
        if self._runtime.in_runtime_thread():
            self._request_stop()
        else:
            self._runtime.run(self.astop())

    def _request_stop(self) -> None:
        self._server.close()
        self._uvicorn.should_exit = True

    async def astop(self) -> None:
        self._request_stop()
        try:
            await asyncio.wait_for(asyncio.shield(self._task), SHUTDOWN_GRACE_S + 3)
        except (TimeoutError, asyncio.CancelledError):
            self._uvicorn.force_exit = True
            self._task.cancel()

    def pin(self, page_id: str | None = None, instance: str | None = None) -> None:
        """Also mirror the WebMCP tools of this page (default: the current one) to agents,
        wherever the notebook goes next."""
        self._runtime.run(self._pin(page_id, instance, True))

    def unpin(self, page_id: str | None = None, instance: str | None = None) -> None:
        self._runtime.run(self._pin(page_id, instance, False))

    async def _pin(self, page_id: str | None, instance: str | None, pin: bool) -> None:
        name, page = self._engine.locate_page(instance, page_id)
        (self._server.mirrors.pin if pin else self._server.mirrors.unpin)(name, page)

    @property
    def mirrored(self) -> list[str]:
        """The names agents see for the pages' WebMCP tools right now."""
        return list(self._server.mirrors.current)

    def client_configs(self) -> dict[str, Any]:
        """Ready-to-paste client configurations."""
        header = f"Authorization: Bearer {self.token}"
        stdio = [*stdio_command(), "attach", "--url", self.url, "--token", self.token]
        return {
            "http": {"type": "http", "url": self.url, "headers": {"Authorization": f"Bearer {self.token}"}},
            "stdio": {"type": "stdio", "command": stdio[0], "args": stdio[1:]},
            "claude_code": f"claude mcp add --transport http webmcp-nb {self.url} --header {shlex.quote(header)}",
            "inspector": f"npx @modelcontextprotocol/inspector  (Transport: Streamable HTTP, URL: {self.url}, "
            f"header {header})",
        }

    def describe(self) -> str:
        configs = self.client_configs()
        grant = ", ".join(self.caps) or "core tools only"
        return "\n".join(
            [
                f"MCP server: {self.url}",
                f"token:      {self.token}",
                f"caps:       {grant}; approval: {self.approve}",
                f"grants:     {self.grants}",
                "",
                "Claude Code (to replace an entry added for another URL or token: `claude mcp remove webmcp-nb` first):",
                f"  {configs['claude_code']}",
                "MCP client configuration (HTTP):",
                "  " + json.dumps({"mcpServers": {"webmcp-nb": configs["http"]}}),
                "MCP client configuration (stdio bridge, for clients that only spawn processes):",
                "  " + json.dumps({"mcpServers": {"webmcp-nb": configs["stdio"]}}),
                "MCP Inspector:",
                f"  {configs['inspector']}",
            ]
        )

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other

    def __str__(self) -> str:
        return self.describe()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.describe())


async def serve_http(session: Session, options: ServeOptions, *, approver: Approval | None = None) -> ServerHandle:
    """Start serving `session` over streamable HTTP; runs on the runtime loop."""
    host, port = options.host, options.port
    if host not in LOOPBACK:
        if not options.allow_remote:
            raise ValueError(
                f"refusing to serve on {host!r}: only loopback by default; pass allow_remote=True "
                "(--allow-remote) to serve beyond this machine"
            )
        warnings.warn(
            f"The MCP server on {host}:{port} is reachable from other machines; anyone with the token "
            "drives this browser.",
            stacklevel=2,
        )
    limits = HttpLimits.from_env()
    agent_server = AgentServer(session, options, approver=approver)
    token = options.token or secrets.token_urlsafe(32)
    app = agent_server.server.streamable_http_app(
        streamable_http_path=MCP_PATH, json_response=True, transport_security=_security(host), host=host,
        max_request_body_size=limits.max_body_bytes,
    )  # fmt: skip
    stream_when_asked(agent_server.server.session_manager)  # progress needs a stream: only then
    sock = bind(host, port)
    quiet_bursts()
    config = uvicorn.Config(
        BearerToken(BoundedRequests(CancelOnDisconnect(app), limits), token),
        http=protocol(limits),
        ws="none",
        backlog=BACKLOG,
        h11_max_incomplete_event_size=limits.max_body_bytes,
        timeout_keep_alive=math.ceil(limits.idle_timeout_s),  # ours closes idle connections first, exactly
        log_config=None,
        log_level="warning",
        access_log=False,
        proxy_headers=False,  # no proxy in front: X-Forwarded-* from a client is not to be trusted
        lifespan="on",
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
    )
    server = uvicorn.Server(config)
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            sock.close()
            error = task.exception()
            raise RuntimeError(f"the MCP server did not start: {error!r}")
        await asyncio.sleep(0.01)
    bound_host, bound_port = sock.getsockname()[:2]
    agent_server.regrant(options.guarded(agent_server.grant, (bound_host, bound_port)))  # its own port too
    shown_host = f"[{bound_host}]" if ":" in bound_host else bound_host
    handle = ServerHandle(
        url=f"http://{shown_host}:{bound_port}{MCP_PATH}",
        token=token,
        caps=agent_server.grant.caps,
        approve=agent_server.terms.approve,
        grants=agent_server.grant.describe(),
        _server=agent_server,
        _uvicorn=server,
        _task=task,
        _runtime=session.runtime,
        _engine=session.engine,
    )
    return handle
