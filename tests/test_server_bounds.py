"""The MCP server's own bounds, attacked over real sockets.

Servers are `webmcp-nb serve` processes (HTTP: their memory is measured and their stderr
counted; stdio: raw lines written to their stdin), limits set through their environment
(`HttpLimits`), clients are raw sockets and the Python MCP client. Every request gets an
answer: arguments of any depth the documented `invalid_params` tool result, what the SDK
cannot read a JSON-RPC error carrying the request's id where it has one.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import resource
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import httpx2
import psutil
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from webmcp_nb import Session
from webmcp_nb.mcp.wire import WIRE_DEPTH, shallow
from webmcp_nb.serve_options import HttpLimits

from .helpers import wait_until

REPO = Path(__file__).resolve().parents[1]
MIB = 1 << 20
LEGACY, MODERN = "2025-11-25", "2026-07-28"


def nested(levels: int) -> str:
    """JSON text of `levels` objects inside each other (too deep for `json.dumps` to write)."""
    return '{"a":' * levels + "1" + "}" * levels


class Served:
    """A `webmcp-nb serve --transport http` process with `limits` in its environment."""

    def __init__(self, tmp_path: Path, limits: dict[str, str], nofile: int | None = None) -> None:
        self.stderr_path = tmp_path / f"serve-{len(list(tmp_path.iterdir()))}.stderr"
        env = {**os.environ, "PYTHONPATH": str(REPO), **limits}

        def lower_fd_limit() -> None:
            if nofile is not None:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

        with open(self.stderr_path, "wb") as stderr:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "webmcp_nb.cli", "serve", "--transport", "http"],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr, text=True, env=env,
                preexec_fn=lower_fd_limit,
            )  # fmt: skip
        found: dict[str, str] = {}
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [lines.put(line) for line in self.process.stdout or ()], daemon=True).start()
        deadline = time.monotonic() + 90
        while "token" not in found:
            assert time.monotonic() < deadline and self.process.poll() is None, self.stderr()
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                continue
            key, _, value = line.partition(":")
            if key in ("MCP server", "token"):
                found[key] = value.strip()
        self.url, self.token = found["MCP server"], found["token"]
        self.port = urlsplit(self.url).port or 0
        self.ps = psutil.Process(self.process.pid)

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=60)

    def head(self, **headers: str) -> bytes:
        fields = {
            "Host": f"127.0.0.1:{self.port}",
            "Authorization": f"Bearer {self.token}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **{name.replace("_", "-"): value for name, value in headers.items()},
        }
        return ("POST /mcp HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields.items()) + "\r\n").encode()

    def list_instances(self) -> Any:
        """A real MCP client's tool call (its result), or the exception it ended with."""

        async def call() -> Any:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {self.token}"}, timeout=60)
            async with Client(streamable_http_client(self.url, http_client=http)) as client:
                return await client.call_tool("browser_list_instances", {})

        try:
            return asyncio.run(asyncio.wait_for(call(), 60))
        except Exception as exc:  # noqa: BLE001 - the test looks at what it was
            return exc

    def agent_gets_in(self) -> Any:
        """The result of `list_instances`, or None if the agent could not get it."""
        result = self.list_instances()
        return None if isinstance(result, Exception) else result

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(30)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    started: list[Served] = []

    def start(nofile: int | None = None, **limits: str) -> Served:
        started.append(Served(tmp_path, {f"WEBMCP_NB_HTTP_{k.upper()}": v for k, v in limits.items()}, nofile))
        return started[-1]

    yield start
    for served in started:
        served.stop()


def closed(sock: socket.socket, timeout: float = 60) -> bool:
    """Whether the server closes `sock` within `timeout` (reading and dropping what it sends)."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        sock.settimeout(left)
        try:
            if not sock.recv(65536):
                return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except TimeoutError:
            return False
    return False


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def test_limits_come_from_the_environment_and_bad_values_are_named(monkeypatch):
    assert HttpLimits.from_env() == HttpLimits()
    monkeypatch.setenv("WEBMCP_NB_HTTP_IDLE_TIMEOUT_SECONDS", "2.5")
    monkeypatch.setenv("WEBMCP_NB_HTTP_MAX_CONNECTIONS", "7")
    assert (HttpLimits.from_env().idle_timeout_s, HttpLimits.from_env().max_connections) == (2.5, 7)
    monkeypatch.setenv("WEBMCP_NB_HTTP_MAX_CONNECTIONS", "many")
    with pytest.raises(
        ValueError,
        match=r"^max_connections: environment variable WEBMCP_NB_HTTP_MAX_CONNECTIONS='many' is not a valid int "
        r"\(must be positive\)$",
    ):
        HttpLimits.from_env()
    monkeypatch.setenv("WEBMCP_NB_HTTP_MAX_CONNECTIONS", "0")
    with pytest.raises(
        ValueError,
        match=r"^max_connections must be positive, got 0 \(environment variable WEBMCP_NB_HTTP_MAX_CONNECTIONS\)$",
    ):
        HttpLimits.from_env()


# --------------------------------------------------------------------------- #
# Bodies
# --------------------------------------------------------------------------- #


def complete(answer: bytes) -> bool:
    """Whether `answer` holds a whole HTTP response (its head and `Content-Length` bytes)."""
    head, found, body = answer.partition(b"\r\n\r\n")
    if not found:
        return False
    lengths = [line.split(b":")[1] for line in head.lower().split(b"\r\n") if line.startswith(b"content-length:")]
    return len(body) >= int(lengths[0]) if lengths else True


def read_answer(sock: socket.socket) -> bytes:
    """One whole HTTP response from `sock` (bounded by the socket's timeout)."""
    answer = b""
    while not complete(answer):
        data = sock.recv(65536)
        if not data:
            break
        answer += data
    return answer


def stream_body(served: Served, size: int) -> tuple[bytes, int]:
    """POST a chunked body of `size` bytes (generated as it goes) and read the answer as soon
    as it starts arriving; returns (what arrived, bytes sent by then)."""
    chunk = b"x" * (256 * 1024)
    frame = b"%x\r\n%s\r\n" % (len(chunk), chunk)
    sock = served.connect()
    sock.setblocking(False)
    pending = served.head(Transfer_Encoding="chunked")
    sent, answer = 0, b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        wants_write = [sock] if pending or sent < size else []
        readable, writable, _ = select.select([sock], wants_write, [], 5)
        if readable:
            data = sock.recv(65536)
            answer += data
            if not data or complete(answer):
                break
        elif writable:
            if not pending:
                pending = frame if sent < size else b"0\r\n\r\n"
                sent += len(chunk) if pending is frame else 0
            pending = pending[sock.send(pending) :]
    sock.close()
    return answer, sent


def test_huge_bodies_are_refused_while_read_and_memory_stays_bounded(serve):
    served = serve(max_body_bytes=str(2 * MIB))
    baseline = served.ps.memory_info().rss
    peak, sampling = [baseline], threading.Event()

    def sample() -> None:
        while not sampling.wait(0.02):
            peak.append(served.ps.memory_info().rss)

    sampler = threading.Thread(target=sample)
    sampler.start()
    answers: list[tuple[bytes, int]] = []
    try:
        clients = [threading.Thread(target=lambda: answers.append(stream_body(served, 60 * MIB))) for _ in range(4)]
        for client in clients:
            client.start()
        for client in clients:
            client.join(180)
    finally:
        sampling.set()
        sampler.join()
    assert len(answers) == 4
    for answer, _sent in answers:
        assert status_of(answer) == 413, answer[:300]
        assert b"over the limit of 2,097,152 bytes" in answer
    # Reading the bodies whole would hold 4 x 60 MiB; counting while reading holds at most the limit each.
    grown = max(peak) - baseline
    assert grown < 40 * MIB, f"the server grew by {grown / MIB:.0f} MiB"
    assert served.ps.memory_info().rss - baseline < 40 * MIB
    # a declared Content-Length over the limit is refused before any body is sent
    sock = served.connect()
    sock.sendall(served.head(Content_Length=str(60 * MIB)))
    answer = read_answer(sock)
    assert status_of(answer) == 413 and b"WEBMCP_NB_HTTP_MAX_BODY_BYTES" in answer
    sock.close()
    # ... and the server still answers an agent
    result = served.list_instances()
    assert not isinstance(result, Exception) and result.is_error is False, result


# --------------------------------------------------------------------------- #
# Connections: idle, slow, too many
# --------------------------------------------------------------------------- #


def test_idle_and_slow_connections_are_closed(serve):
    served = serve(idle_timeout_seconds="1", request_timeout_seconds="3")
    idle = served.connect()
    assert closed(idle), "an idle connection stayed open"
    # slowloris: the head trickles in, a byte at a time, each well within the idle timeout
    slow_head = served.connect()
    head = served.head()
    started = time.monotonic()
    for index in range(len(head)):  # bounded: the head is a few hundred bytes
        try:
            slow_head.send(head[index : index + 1])
        except (BrokenPipeError, ConnectionResetError):
            break
        readable, _, _ = select.select([slow_head], [], [], 0.3)
        if readable:
            break
    else:
        pytest.fail("the whole head was sent, slowly, and the connection stayed open")
    assert closed(slow_head) and time.monotonic() - started >= 3
    # a slow body: the head at once, the body a byte at a time
    slow_body = served.connect()
    slow_body.sendall(served.head(Content_Length="1000"))
    for _ in range(1000):
        try:
            slow_body.send(b" ")
        except (BrokenPipeError, ConnectionResetError):
            break
        readable, _, _ = select.select([slow_body], [], [], 0.3)
        if readable:
            break
    else:
        pytest.fail("the whole body was sent, slowly, and the connection stayed open")
    assert closed(slow_body)
    # after a request, the connection kept alive is closed once idle
    kept = served.connect()
    body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    kept.sendall(served.head(Content_Length=str(len(body))) + body)
    assert status_of(read_answer(kept)) in (200, 400)
    assert closed(kept)
    log = served.stderr().splitlines()
    assert len(log) < 20, log


def test_connections_over_the_cap_are_closed_and_agents_connect_once_freed(serve):
    served = serve(max_connections="8", idle_timeout_seconds="600", request_timeout_seconds="600")
    held = []
    for _ in range(8):
        held.append(served.connect())
        wait_until(lambda: len(served.ps.net_connections()) >= len(held) + 1, timeout=30)  # the listener too
    extra = [served.connect() for _ in range(60)]
    assert all(closed(sock, timeout=60) for sock in extra)
    readable, _, _ = select.select(held, [], [], 0.5)
    assert readable == [], "a connection within the cap was closed"
    # full: an agent cannot get in ...
    assert isinstance(served.list_instances(), Exception)
    # ... until connections are freed
    for sock in held:
        sock.close()
    assert wait_until(served.agent_gets_in, timeout=60).is_error is False
    refusals = [line for line in served.stderr().splitlines() if "closed a new connection" in line]
    assert 1 <= len(refusals) <= 3, refusals  # one line per burst, however many were refused
    assert len(served.stderr().splitlines()) < 20, served.stderr()[-3000:]


def test_running_out_of_descriptors_logs_one_line_per_burst_and_heals(serve):
    """With the cap above what the process may open, accept() fails (EMFILE) for every queued
    connection: asyncio logs each with its traceback (the flood the attack printed)."""
    served = serve(nofile=160, max_connections="5000", idle_timeout_seconds="600", request_timeout_seconds="600")
    held = []
    for _ in range(250):
        try:
            held.append(socket.create_connection(("127.0.0.1", served.port), timeout=5))
        except OSError:
            break
    wait_until(lambda: "out of system resource" in served.stderr(), timeout=60)
    time.sleep(3)  # asyncio retries each second: let a few bursts happen
    log = served.stderr().splitlines()
    assert len(log) < 30, f"{len(log)} lines: {log[:40]}"
    for sock in held:
        sock.close()
    assert wait_until(served.agent_gets_in, timeout=60).is_error is False


def test_requests_over_the_cap_get_503(serve):
    served = serve(max_requests="2", idle_timeout_seconds="600", request_timeout_seconds="600")
    # two requests whose bodies never finish hold both places
    holders = [served.connect() for _ in range(2)]
    for sock in holders:
        sock.sendall(served.head(Content_Length="100") + b"{")
    third = served.connect()

    def answer() -> bytes | None:
        body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
        third.sendall(served.head(Content_Length=str(len(body))) + body)
        got = read_answer(third)
        return got if status_of(got) == 503 else None

    got = wait_until(answer, timeout=60)
    assert b"retry-after: 1" in got.lower()
    for sock in holders:
        sock.close()
    assert wait_until(served.agent_gets_in, timeout=60).is_error is False


def test_a_listen_stream_holds_no_request_place(monkeypatch):
    """A 2026-07-28 client's `subscriptions/listen` answer stays open: it must not hold one of
    the WEBMCP_NB_HTTP_MAX_REQUESTS places (here the only one) while the client calls tools."""
    monkeypatch.setenv("WEBMCP_NB_HTTP_MAX_REQUESTS", "1")

    async def scenario(handle: Any) -> list[bool]:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {handle.token}"}, timeout=60)
        async with Client(streamable_http_client(handle.url, http_client=http)) as client:
            async with client.listen(tools_list_changed=True):
                return [(await client.call_tool("browser_list_instances", {})).is_error for _ in range(3)]

    with Session() as session:
        handle = session.serve_mcp()
        assert asyncio.run(asyncio.wait_for(scenario(handle), 60)) == [False, False, False]


# --------------------------------------------------------------------------- #
# Every request gets an answer: HTTP
# --------------------------------------------------------------------------- #


def test_shallow_cuts_only_what_is_too_deep():
    assert shallow(nested(WIRE_DEPTH)) == nested(WIRE_DEPTH)
    assert json.loads(shallow(nested(WIRE_DEPTH + 1))) == json.loads(nested(WIRE_DEPTH).replace("1", "null"))
    text = '{"s":"' + "[{" * 300 + '","v":' + "[" * 150 + "]" * 150 + "}"  # brackets inside a string stay
    cut = json.loads(shallow(text))
    assert cut["s"] == "[{" * 300
    assert json.dumps(cut["v"]).count("[") == WIRE_DEPTH - 1
    assert shallow("garbage{" * 200) == "garbage{" * 200


def raw_call(served: Served, protocol: str, params: str, request_id: int = 7, name: str = "browser_navigate") -> Any:
    headers = {"Authorization": f"Bearer {served.token}", "Accept": "application/json, text/event-stream"}
    headers["Content-Type"] = "application/json"
    http = httpx.Client(timeout=60)
    if protocol == LEGACY:
        init = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
        message = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}
        response = http.post(served.url, json=message, headers=headers)
        headers |= {"mcp-session-id": response.headers["mcp-session-id"], "mcp-protocol-version": LEGACY}
        http.post(served.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    else:
        headers |= {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": name}
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        }
        params = '{"_meta":' + json.dumps(meta) + "," + params[1:]
    body = '{"jsonrpc":"2.0","id":' + str(request_id) + ',"method":"tools/call","params":' + params + "}"
    return http.post(served.url, content=body.encode(), headers=headers)


def too_deep(result: dict[str, Any]) -> None:
    assert result["isError"] is True
    envelope = result["structuredContent"]
    assert (envelope["error_type"], envelope["operation"]["outcome"]) == ("invalid_params", "not_started")
    assert "The arguments nest deeper than 64 levels" in envelope["message"]


@pytest.mark.parametrize("protocol", [LEGACY, MODERN])
def test_arguments_of_any_depth_get_the_invalid_params_result_over_http(serve, protocol):
    served = serve()
    for levels in (150, 200, 1000, 100_000):
        params = '{"name":"browser_navigate","arguments":{"url":' + nested(levels) + "}}"
        response = raw_call(served, protocol, params, request_id=levels)
        assert response.status_code == 200, (levels, response.text[:300])
        answer = response.json()
        assert answer["id"] == levels
        too_deep(answer["result"])


def test_what_the_sdk_cannot_read_is_answered_with_the_id_over_http(serve):
    served = serve()
    # 2025-era: the SDK's parser refuses a lone surrogate escape; the answer names the request
    response = raw_call(served, LEGACY, '{"name":"browser_navigate","arguments":{"url":"\\ud800"}}', request_id=41)
    assert response.status_code == 400
    assert (response.json()["id"], response.json()["error"]["code"]) == (41, -32700)
    # not JSON at all: no id to give
    headers = {"Authorization": f"Bearer {served.token}", "Content-Type": "application/json"}
    headers["Accept"] = "application/json, text/event-stream"
    response = httpx.post(served.url, content=b"{garbage", headers=headers, timeout=60)
    assert response.status_code == 400 and response.json()["error"]["code"] == -32700
    assert response.json()["id"] is None


# --------------------------------------------------------------------------- #
# Every request gets an answer: stdio
# --------------------------------------------------------------------------- #


class StdioServer:
    """`webmcp-nb serve --transport stdio` (or `attach`) with raw lines on its stdin."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "webmcp_nb.cli", *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )  # fmt: skip
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(
            target=lambda: [self.lines.put(line) for line in self.process.stdout or ()], daemon=True
        ).start()
        init = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
        self.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}))
        assert self.answer(timeout=90)["id"] == 0
        self.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode("utf-8", "surrogatepass") + b"\n")
        self.process.stdin.flush()

    def answer(self, timeout: float = 30) -> dict[str, Any]:
        """The next message (waiting for it is bounded: silence fails the test)."""
        try:
            return json.loads(self.lines.get(timeout=timeout))
        except queue.Empty:
            raise AssertionError(f"no answer within {timeout} s") from None

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(30)


def check_every_line_answered(server: StdioServer) -> None:
    def call(request_id: int, arguments: str) -> str:
        params = '{"name":"browser_navigate","arguments":' + arguments + "}"
        return '{"jsonrpc":"2.0","id":' + str(request_id) + ',"method":"tools/call","params":' + params + "}"

    for request_id, levels in ((1, 200), (2, 100_000)):
        server.send(call(request_id, '{"url":' + nested(levels) + "}"))
        answer = server.answer()
        assert answer["id"] == request_id
        too_deep(answer["result"])
    server.send(call(3, '{"url":"\\ud800"}'))  # a lone surrogate escape: pydantic's parser refuses it
    answer = server.answer()
    assert (answer["id"], answer["error"]["code"]) == (3, -32700)
    server.send("garbage, not JSON")
    answer = server.answer()
    assert (answer["id"], answer["error"]["code"]) == (None, -32700)
    server.send('{"jsonrpc":"2.0","id":5,"method":5}')  # JSON, not a JSON-RPC message
    answer = server.answer()
    assert (answer["id"], answer["error"]["code"]) == (5, -32600)
    server.send('{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"browser_list_instances"}}')
    answer = server.answer(timeout=60)
    assert answer["id"] == 6 and answer["result"]["isError"] is False  # and the server still serves


def test_every_stdio_line_gets_an_answer():
    server = StdioServer("serve", "--transport", "stdio")
    try:
        check_every_line_answered(server)
    finally:
        server.close()


def test_every_line_to_the_stdio_bridge_gets_an_answer(serve):
    served = serve()
    bridge = StdioServer("attach", "--url", served.url, "--token", served.token)
    try:
        check_every_line_answered(bridge)
    finally:
        bridge.close()
