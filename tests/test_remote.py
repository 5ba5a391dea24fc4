"""Remote browsers (backend="remote"): real servers on loopback, in processes of their own.

A Playwright browser server (`python -m playwright launch-server`) and a Chromium with
`--remote-debugging-port` (CDP) stand in for a grid; each test kills what it started.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from webmcp_nb import Session, cli
from webmcp_nb.core.guard.grants import Grant
from webmcp_nb.demo import DemoServer

from .conftest import CheckedSession
from .helpers import Kernel, error, ok, ref_for, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.playwright_sensitive]  # the servers run Chromium

CHROMIUM = "/usr/bin/chromium"
QUIET = ["--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
TOKEN = "tok-SECRET-4711"  # a grid's token: must never be shown
QUERY_TOKEN = "QSECRET-0815"


class Server:
    """A browser server process (its own process group), killed and reaped on `stop`."""

    def __init__(self, command: list[str], **popen: Any) -> None:
        self.process = subprocess.Popen(command, start_new_session=True, **popen)
        self.url = ""

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(30)


def start_browser_server(tmp_path: Path, args: list[str] = ()) -> Server:  # type: ignore[assignment]
    config = tmp_path / f"server-{time.monotonic_ns()}.json"
    config.write_text(
        json.dumps(
            {"executablePath": CHROMIUM, "port": 0, "host": "127.0.0.1", "wsPath": "/grid", "args": [*QUIET, *args]}
        )
    )
    server = Server(
        [sys.executable, "-m", "playwright", "launch-server", "--browser", "chromium", "--config", str(config)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.process.stdout is not None
    server.url = server.process.stdout.readline().strip()
    assert server.url.startswith("ws://127.0.0.1:"), server.url
    return server


def start_cdp_browser(tmp_path: Path) -> Server:
    profile = tmp_path / f"cdp-{time.monotonic_ns()}"
    server = Server(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--remote-debugging-port=0",
            f"--user-data-dir={profile}",
            *QUIET,
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    port_file = profile / "DevToolsActivePort"
    for _ in range(600):
        if port_file.exists() and port_file.read_text().strip():
            server.url = f"http://127.0.0.1:{port_file.read_text().split()[0]}"
            return server
        time.sleep(0.05)
    server.kill()
    raise AssertionError("Chromium did not write DevToolsActivePort")


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    """Start servers (`servers("playwright")`, `servers("cdp")`); every one is killed afterwards."""
    started: list[Server] = []

    def start(kind: str, **kwargs: Any) -> Server:
        server = start_browser_server(tmp_path, **kwargs) if kind == "playwright" else start_cdp_browser(tmp_path)
        started.append(server)
        return server

    yield start
    for server in started:
        server.kill()


@pytest.fixture
def session(fresh_session: Callable[..., CheckedSession]) -> CheckedSession:
    return fresh_session()


def everything_recorded(s: Session) -> str:
    return "\n".join(repr(record) for record in s.history)


def test_a_browser_server_instance_works_as_a_local_one(
    session: CheckedSession, servers: Callable[..., Server], demo: DemoServer
) -> None:
    server = servers("playwright")
    endpoint = f"{server.url}?token={QUERY_TOKEN}"
    created = ok(
        session.call(
            "browser_create_instance", name="grid", backend="remote", endpoint=endpoint, headers={"X-Token": TOKEN}
        )
    )["instance"]
    assert (created["backend"], created["endpoint"], created["webmcp"]) == ("remote", server.url, "page")
    assert created["browser_pid"] is None and created["executable"] is None
    ok(session.navigate(demo.url))
    snapshot = ok(session.snapshot())["snapshot"]
    ok(session.click(ref_for(snapshot, 'button "Add Banana"')))
    assert "Cart: 1 item" in ok(session.snapshot())["snapshot"]
    frames: list[Any] = []
    view = session.live_view(frames.append, instance="grid", max_fps=10)
    try:
        wait_until(lambda: frames, 30, message="no live-view frame")
        assert frames[0].data[:2] == b"\xff\xd8"  # JPEG from the screencast over the same connection
        assert view._cdp is not None  # a DevTools screencast, not screenshot polling
    finally:
        view.stop()
    shot = ok(session.screenshot())
    assert shot["mime_type"] == "image/png" and shot["image"].startswith(b"\x89PNG") and shot["width"] == 1280
    # Evidence, downloads and PDF come back to this machine.
    ok(session.navigate(demo.url_for("evidence.html")))
    ok(session.click(ref_for(ok(session.snapshot())["snapshot"], 'button "Log every level"')))
    texts = [entry["text"] for entry in ok(session.call("browser_console", limit=500))["entries"]]
    assert "error message" in texts
    ok(session.navigate(demo.url_for("downloads.html")))
    ok(session.click(ref_for(ok(session.snapshot())["snapshot"], 'link "Download notes"')))
    download = ok(session.call("browser_downloads", wait_s=10))["downloads"][-1]
    assert download["state"] == "completed" and Path(download["path"]).read_text() == "Remember the bananas."
    assert Path(download["path"]).is_relative_to(session.engine.artifacts_dir)
    pdf = Path(ok(session.call("browser_pdf"))["path"])
    assert pdf.read_bytes().startswith(b"%PDF") and pdf.is_relative_to(session.engine.artifacts_dir)
    # The token is nowhere: list, health, history (headers recorded as [redacted], the endpoint stripped).
    listed = ok(session.call("browser_list_instances"))["instances"]
    assert [(i["backend"], i["endpoint"]) for i in listed] == [("remote", server.url)]
    health = session.call("browser_health")
    assert ok(health)["remote_endpoint"] is None  # remote by choice, not by the session's default
    recorded = next(r for r in session.history if r.tool == "browser_create_instance")
    assert recorded.args["headers"] == {"X-Token": "[redacted]"} and recorded.args["endpoint"] == server.url
    for text in (everything_recorded(session), health.to_json(), json.dumps(listed)):
        assert TOKEN not in text and QUERY_TOKEN not in text
    destroyed = ok(session.call("browser_destroy_instance", name="grid"))
    assert destroyed["was"] == "live" and server.process.poll() is None  # the server lives on


def test_a_cdp_instance_works_as_a_local_one_and_closes_only_what_it_opened(
    session: CheckedSession, servers: Callable[..., Server], demo: DemoServer
) -> None:
    server = servers("cdp")

    def targets() -> dict[str, str]:
        with urllib.request.urlopen(f"{server.url}/json/list", timeout=10) as answer:
            return {target["id"]: target["url"] for target in json.load(answer) if target["type"] == "page"}

    before = targets()
    ok(
        session.call(
            "browser_create_instance", name="cdp", backend="remote", cdp_endpoint=server.url, headers={"X-Token": TOKEN}
        )
    )
    ok(session.navigate(demo.url, instance="cdp"))
    ok(session.click(ref_for(ok(session.snapshot(instance="cdp"))["snapshot"], 'button "Add Apple"'), instance="cdp"))
    assert "Cart: 1 item" in ok(session.snapshot(instance="cdp"))["snapshot"]
    assert demo.url in targets().values()
    frames: list[Any] = []
    view = session.live_view(frames.append, instance="cdp", max_fps=10)
    try:
        wait_until(lambda: frames, 30, message="no live-view frame")
        assert frames[0].data[:2] == b"\xff\xd8" and view._cdp is not None  # the screencast
    finally:
        view.stop()
    assert ok(session.screenshot(instance="cdp"))["image"].startswith(b"\x89PNG")
    ok(session.navigate(demo.url_for("downloads.html"), instance="cdp"))
    ok(
        session.click(
            ref_for(ok(session.snapshot(instance="cdp"))["snapshot"], 'link "Download notes"'), instance="cdp"
        )
    )
    download = ok(session.call("browser_downloads", wait_s=10, instance="cdp"))["downloads"][-1]
    assert download["state"] == "completed" and Path(download["path"]).read_text() == "Remember the bananas."
    assert Path(download["path"]).is_relative_to(session.engine.artifacts_dir)
    pdf = Path(ok(session.call("browser_pdf", instance="cdp"))["path"])
    assert pdf.read_bytes().startswith(b"%PDF") and pdf.is_relative_to(session.engine.artifacts_dir)
    listed = ok(session.call("browser_list_instances"))["instances"]
    assert [(i["name"], i["backend"], i["endpoint"]) for i in listed] == [("cdp", "remote", server.url)]
    ok(session.call("browser_destroy_instance", name="cdp"))
    assert server.process.poll() is None and targets() == before  # its own tab is left as it was


@pytest.mark.parametrize("kind", ["playwright", "cdp"])
def test_destroying_leaves_what_another_session_opened_on_the_same_browser(
    fresh_session: Callable[..., CheckedSession], servers: Callable[..., Server], demo: DemoServer, kind: str
) -> None:
    """Two notebooks on one remote browser: destroying one's instance (two tabs) closes its tabs
    only; the other's page keeps its state and still answers."""
    endpoint = "endpoint" if kind == "playwright" else "cdp_endpoint"
    server = servers(kind)
    mine, theirs = fresh_session(), fresh_session()
    ok(theirs.call("browser_create_instance", name="theirs", backend="remote", **{endpoint: server.url}))
    ok(theirs.navigate(demo.url))
    ok(theirs.click(ref_for(ok(theirs.snapshot())["snapshot"], 'button "Add Apple"')))
    ok(mine.call("browser_create_instance", name="mine", backend="remote", **{endpoint: server.url}))
    ok(mine.navigate(demo.url_for("downloads.html")))
    ok(mine.call("browser_tabs", action="new", url=demo.url_for("evidence.html")))
    assert ok(mine.call("browser_destroy_instance", name="mine"))["was"] == "live"
    assert server.process.poll() is None
    assert "Cart: 1 item" in ok(theirs.snapshot())["snapshot"]  # the same page, not reloaded
    ok(theirs.click(ref_for(ok(theirs.snapshot())["snapshot"], 'button "Add Apple"')))
    assert "Cart: 2 items" in ok(theirs.snapshot())["snapshot"]
    if kind == "cdp":  # the browser's own list of tabs: mine are gone, theirs and the browser's first stay
        with urllib.request.urlopen(f"{server.url}/json/list", timeout=10) as answer:
            urls = sorted(target["url"] for target in json.load(answer) if target["type"] == "page")
        assert urls == sorted(["about:blank", demo.url])


def test_native_webmcp_where_the_server_switched_it_on(
    session: CheckedSession, servers: Callable[..., Server], demo: DemoServer
) -> None:
    server = servers("playwright", args=["--enable-features=WebMCP"])
    ok(session.call("browser_create_instance", name="w", backend="remote", endpoint=server.url, webmcp="native"))
    ok(session.navigate(demo.url_for("webmcp.html")))
    listed = ok(session.call("browser_webmcp_list"))
    tools = {tool["name"]: tool for tool in listed["tools"]}
    assert listed["mode"] == "native"
    assert tools["search_products"]["kind"] == "declarative"  # forms are tools only in the native API
    added = ok(session.webmcp_call("add_to_cart", {"item": "Fig", "quantity": 2}))
    assert added["structured"] == {"ok": True, "cart": [{"item": "Fig", "quantity": 2}]}
    assert ok(session.webmcp_call("search_products", {"query": "fig"}))["text"] == "Results for: fig"


@pytest.mark.parametrize("kind", ["playwright", "cdp"])
def test_a_dropped_connection_is_a_crash_and_the_next_create_works(
    session: CheckedSession, servers: Callable[..., Server], demo: DemoServer, kind: str
) -> None:
    """Each kind of server killed during a call: instance_crashed within 2 s (the issue's bound;
    the call would otherwise wait for the operation timeout, 60 s)."""
    endpoint = "endpoint" if kind == "playwright" else "cdp_endpoint"
    server = servers(kind)
    ok(session.call("browser_create_instance", name="r", backend="remote", **{endpoint: server.url}))
    ok(session.navigate(demo.url, instance="r"))

    async def kill_during_a_call() -> Any:
        call = asyncio.ensure_future(
            session.acall("browser_evaluate", expression="new Promise(() => {})", instance="r")
        )
        await asyncio.sleep(1)
        killed = time.monotonic()
        server.kill()
        envelope = await call
        return envelope, time.monotonic() - killed

    envelope, seconds = asyncio.run(kill_during_a_call())
    assert "connection to the remote browser" in error(envelope, "instance_crashed")
    assert seconds < 2, seconds  # the disconnect ends the call
    message = error(session.snapshot(instance="r"), "instance_crashed", "not_started", "after_correction")
    assert server.url in message
    crashes = ok(session.call("browser_health"))["crashes"]
    assert crashes[-1]["name"] == "r" and server.url in crashes[-1]["detail"]
    again = servers(kind)
    ok(session.call("browser_create_instance", name="r", backend="remote", **{endpoint: again.url}))
    ok(session.navigate(demo.url, instance="r"))


def test_an_unreachable_endpoint_fails_at_creation(session: CheckedSession) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    refused = session.call("browser_create_instance", name="x", backend="remote", endpoint=f"ws://127.0.0.1:{port}/g")
    message = error(refused, "binary_not_found", "not_started", "after_correction")
    assert f"ws://127.0.0.1:{port}/g" in message and "ECONNREFUSED" in message
    # A server that accepts the connection and never answers: the connect timeout ends it.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        public = f"http://127.0.0.1:{silent.getsockname()[1]}/"
        url = public.replace("//", f"//user:pass-{TOKEN}@") + f"?token={QUERY_TOKEN}"
        started = time.monotonic()
        hung = session.call(
            "browser_create_instance",
            name="x",
            backend="remote",
            cdp_endpoint=url,
            connect_timeout_s=1,
            headers={"Authorization": f"Bearer {TOKEN}"},
        )
        assert time.monotonic() - started < 30
    message = error(hung, "binary_not_found", "not_started")
    assert "within 1 s" in message and public in message
    assert TOKEN not in hung.to_json() + everything_recorded(session) and QUERY_TOKEN not in hung.to_json()
    # A connect timeout longer than the call's time would end in operation_timeout: refused up front.
    longer = session.call(
        "browser_create_instance", name="x", backend="remote", endpoint=f"ws://127.0.0.1:{port}/g", connect_timeout_s=90
    )
    message = error(longer, "invalid_params", "not_started", "after_correction")
    assert "connect_timeout_s=90 does not fit" in message and "BROWSER_MCP_OPERATION_TIMEOUT_SECONDS" in message
    health = session.call("browser_health")
    failed = ok(health)["failed_launches"]
    assert [entry["error_type"] for entry in failed] == ["binary_not_found"] * 2
    assert public in failed[-1]["message"] and TOKEN not in health.to_json() and QUERY_TOKEN not in health.to_json()
    assert ok(session.call("browser_list_instances"))["instances"] == []


@pytest.mark.parametrize("launch", ["browser_create_instance", "a call on the default instance"])
def test_a_silent_endpoint_is_binary_not_found_within_a_short_call(
    fresh_session: Callable[..., CheckedSession], launch: str
) -> None:
    """Without a connect timeout of its own, a call with less time than the default 10 s tries to
    connect for four fifths of it: a server that never answers is `binary_not_found`, not the
    call's `operation_timeout` (an explicit create, and the implicit launch of a remote default)."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"ws://127.0.0.1:{silent.getsockname()[1]}/grid"
        if launch == "browser_create_instance":
            hung = fresh_session().call(
                "browser_create_instance", name="x", backend="remote", endpoint=url, call_timeout_s=6
            )
        else:
            hung = fresh_session(remote_endpoint=url).call("browser_tabs", call_timeout_s=6)
    message = error(hung, "binary_not_found", "not_started", "after_correction")
    tried = re.search(r"ws://127\.0\.0\.1:\d+/grid within ([\d.]+) s: ", message)
    assert tried is not None and tried.group(0).startswith(url), message
    # four fifths of 6 s, less the driver's start; 6 s leaves a loaded machine 1.2 s to report it
    assert 0 < float(tried.group(1)) <= 4.8


@pytest.mark.parametrize("endpoint", ["endpoint", "cdp_endpoint"])
@pytest.mark.parametrize("given", ["in the call", "as the session's default"])
def test_headers_reach_the_endpoint(fresh_session: Callable[..., CheckedSession], endpoint: str, given: str) -> None:
    """A grid's token travels in the connect request's headers (a loopback listener records the
    request, then hangs up): over the browser-server protocol's WebSocket upgrade and CDP's
    /json/version, given in the call or as the session's remote default (serve --remote, %config)."""
    requests: list[bytes] = []
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(60)
        port = listener.getsockname()[1]

        def record() -> None:
            connection, _ = listener.accept()
            with connection:
                received = b""
                while b"\r\n\r\n" not in received:
                    chunk = connection.recv(65536)
                    if not chunk:
                        break
                    received += chunk
                requests.append(received)

        recorder = threading.Thread(target=record)
        recorder.start()
        url = f"ws://127.0.0.1:{port}/grid" if endpoint == "endpoint" else f"http://127.0.0.1:{port}"
        if given == "in the call":
            refused = fresh_session().call(
                "browser_create_instance", name="h", backend="remote", headers={"X-Token": TOKEN}, **{endpoint: url}
            )
        else:
            refused = fresh_session(remote_endpoint=url, remote_headers={"X-Token": TOKEN}).call(
                "browser_create_instance", name="h"
            )
        recorder.join(60)
    error(refused, "binary_not_found", "not_started")
    assert TOKEN not in refused.to_json()
    head = requests[0].decode("latin-1").lower()
    assert f"x-token: {TOKEN.lower()}\r\n" in head
    assert head.startswith("get /grid ") if endpoint == "endpoint" else head.startswith("get /json/version")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"backend": "remote"}, "needs endpoint="),
        ({"backend": "remote", "endpoint": "ws://h/x", "cdp_endpoint": "http://h:9222"}, "exactly one"),
        ({"backend": "remote", "endpoint": "http://h:1/x"}, "endpoint must be a ws:// or wss:// URL"),
        ({"backend": "remote", "cdp_endpoint": "ftp://h/"}, "cdp_endpoint must be a http://"),
        ({"backend": "remote", "endpoint": "ws:///nohost"}, "with a host"),
        ({"backend": "remote", "endpoint": "ws://h/x", "executable_path": CHROMIUM}, "executable_path configure"),
        ({"backend": "remote", "endpoint": "ws://h/x", "args": ["--x"]}, "args configure"),
        ({"backend": "remote", "endpoint": "ws://h/x", "profile_dir": "p"}, "profile_dir configure"),
        ({"backend": "remote", "endpoint": "ws://h/x", "headless": False}, "headless configure"),
        ({"endpoint": "ws://h/x"}, "need backend='remote'"),
        ({"headers": {"A": "b"}}, "need backend='remote'"),
        ({"backend": "remote", "endpoint": "ws://h/x", "headers": {"A": "b" * 9000}}, "'headers.A' is too long"),
        ({"backend": "remote", "endpoint": "ws://h/x", "headers": {"bad name": "b"}}, "headers.bad name"),
        ({"backend": "remote", "endpoint": "ws://h/x", "connect_timeout_s": 0}, "connect_timeout_s"),
    ],
)
def test_remote_options_are_checked_before_connecting(
    session: CheckedSession, args: dict[str, Any], expected: str
) -> None:
    message = error(session.call("browser_create_instance", name="bad", **args), "invalid_params", "not_started")
    assert expected in message
    assert session.engine.manager.driver_status()["state"] == "not_started"  # nothing was launched


def test_a_bad_endpoint_is_refused_without_echoing_its_credentials(session: CheckedSession) -> None:
    url = f"ftp://user:{TOKEN}@grid.example/?token={QUERY_TOKEN}"
    envelope = session.call("browser_create_instance", name="bad", backend="remote", cdp_endpoint=url)
    assert "'ftp://grid.example/'" in error(envelope, "invalid_params", "not_started")
    assert TOKEN not in envelope.to_json() + everything_recorded(session)
    assert QUERY_TOKEN not in envelope.to_json() + everything_recorded(session)


def test_agents_need_the_browser_cap_for_a_remote_endpoint(
    session: CheckedSession, servers: Callable[..., Server]
) -> None:
    server = servers("playwright")
    args = {"name": "a", "backend": "remote", "endpoint": server.url}
    refused = asyncio.run(session.acall_as("agent", "browser_create_instance", args, grant=Grant()))
    message = error(refused, "invalid_params", "not_started", "after_correction")
    assert "endpoint need the `browser` capability" in message
    with_headers = {"name": "a", "backend": "remote", "cdp_endpoint": "http://h:1", "headers": {"A": TOKEN}}
    refused = asyncio.run(session.acall_as("agent", "browser_create_instance", with_headers, grant=Grant()))
    assert "cdp_endpoint, headers need" in error(refused, "invalid_params", "not_started")
    granted = Grant.build(["browser"])
    created = asyncio.run(session.acall_as("agent", "browser_create_instance", args, grant=granted))
    assert ok(created)["instance"]["backend"] == "remote"


def test_a_session_with_a_remote_default(
    fresh_session: Callable[..., CheckedSession], servers: Callable[..., Server], demo: DemoServer
) -> None:
    server = servers("playwright")
    s = fresh_session(remote_endpoint=server.url, remote_headers={"X-Token": TOKEN})
    ok(s.navigate(demo.url))  # the implicit instance connects to the server
    listed = ok(s.call("browser_list_instances"))["instances"]
    assert [(i["name"], i["backend"], i["endpoint"]) for i in listed] == [("default", "remote", server.url)]
    created = ok(s.call("browser_create_instance", name="second"))["instance"]  # no options: remote too
    assert created["backend"] == "remote"
    # An agent without `browser` uses the operator's endpoint; choosing one needs the cap.
    agent = asyncio.run(s.acall_as("agent", "browser_create_instance", {"name": "third"}, grant=Grant()))
    assert ok(agent)["instance"]["endpoint"] == server.url
    local = ok(s.call("browser_create_instance", name="local", backend="chromium"))["instance"]
    assert (local["backend"], local["endpoint"]) == ("chromium", None)
    assert ok(s.call("browser_health"))["remote_endpoint"] == server.url
    assert TOKEN not in everything_recorded(s) + repr(s.launch_defaults) + repr(s.engine.manager.instances)


def test_a_bad_remote_default_is_refused() -> None:
    with pytest.raises(ValueError, match="remote_endpoint: cdp_endpoint must be"):
        Session(remote_endpoint="ftp://grid.example/")
    assert cli.main(["serve", "--remote", "ftp://grid.example/"]) == 2
    assert cli.main(["serve", "--remote", "ws://grid.example/x", "--remote-header", "no colon"]) == 2


def test_a_person_approving_a_remote_create_never_sees_the_token(session: CheckedSession) -> None:
    asked: list[Any] = []

    async def deny(request: Any) -> str:
        asked.append(request)
        return "not now"

    args = {
        "name": "a",
        "backend": "remote",
        "endpoint": f"ws://user:{TOKEN}@127.0.0.1:9/x?token={QUERY_TOKEN}",
        "headers": {"Authorization": f"Bearer {TOKEN}"},
    }
    denied = asyncio.run(session.acall_as("agent", "browser_create_instance", args, approval=deny))
    assert "not now" in error(denied, "approval_denied", "not_started")
    assert asked[0].args["headers"] == {"Authorization": "[redacted]"}
    assert asked[0].args["endpoint"] == "ws://127.0.0.1:9/x"
    assert TOKEN not in repr(asked) + everything_recorded(session) and QUERY_TOKEN not in repr(asked)


def test_serve_reads_remote_headers_from_the_environment_and_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cli.REMOTE_HEADERS_ENV, json.dumps({"Authorization": f"Bearer {TOKEN}"}))
    assert cli._remote_headers(["X-Grid: a: b"]) == {"Authorization": f"Bearer {TOKEN}", "X-Grid": "a: b"}
    monkeypatch.setenv(cli.REMOTE_HEADERS_ENV, "[1]")
    with pytest.raises(ValueError, match="JSON object of strings"):
        cli._remote_headers([])


def test_serve_remote_makes_an_agents_instances_remote(
    servers: Callable[..., Server], demo: DemoServer, tmp_path: Path
) -> None:
    """A grid token given in $WEBMCP_NB_REMOTE_HEADERS shows neither in the agent's results
    (health included) nor in the server's log (its stderr)."""
    import mcp_types as types
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    server = servers("playwright")
    env = {**os.environ, cli.REMOTE_HEADERS_ENV: json.dumps({"X-Token": TOKEN})}
    serve = StdioServerParameters(
        command=sys.executable,
        args=["-m", "webmcp_nb.cli", "serve", "--transport", "stdio", "--remote", server.url],
        env=env,
    )

    log = tmp_path / "serve-stderr.log"

    async def scenario() -> list[dict[str, Any]]:
        with log.open("w") as errlog:
            transport = stdio_client(serve, errlog=errlog)
            async with Client(transport, client_info=types.Implementation(name="remote-agent", version="1")) as client:
                results = [await client.call_tool("browser_navigate", {"url": demo.url})]
                results.append(await client.call_tool("browser_list_instances", {}))
                chosen = {"name": "mine", "backend": "remote", "endpoint": server.url}
                results.append(await client.call_tool("browser_create_instance", chosen))
                results.append(await client.call_tool("browser_health", {}))
                return [result.structured_content or {} for result in results]

    navigated, listed, refused, health = asyncio.run(scenario())
    assert navigated["status"] == "success"
    assert health["data"]["remote_endpoint"] == server.url
    assert TOKEN not in json.dumps([navigated, listed, refused, health]) + log.read_text()
    instances = listed["data"]["instances"]
    assert [(i["name"], i["backend"], i["endpoint"]) for i in instances] == [("default", "remote", server.url)]
    assert (refused["error_type"], refused["operation"]["outcome"]) == ("invalid_params", "not_started")
    assert "`browser` capability" in refused["message"]


def test_config_makes_a_notebooks_instances_remote(servers: Callable[..., Server], demo: DemoServer) -> None:
    """In a real kernel, `%config BrowserMagics.remote_endpoint` (and `remote_headers`) make the session's
    default instance and `%browser create_instance` connect to a real browser server: no Chromium starts
    under the kernel, and no output shows the token. Set back to '', instances launch here again."""
    from jupyter_client.manager import start_new_kernel

    server = servers("playwright")
    kernel = Kernel(*start_new_kernel(kernel_name="python3"))
    listing = (
        "import json, webmcp_nb\n"
        "print(json.dumps([[i['name'], i['backend'], i['endpoint']] for i in "
        "webmcp_nb.session().call('browser_list_instances').data['instances']]))"
    )
    try:
        outputs = kernel.run("%load_ext webmcp_nb")
        outputs += kernel.run(
            f"%config BrowserMagics.remote_endpoint = '{server.url}?token={QUERY_TOKEN}'\n"
            f"%config BrowserMagics.remote_headers = {{'X-Token': '{TOKEN}'}}"
        )
        outputs += kernel.run(f"env = %browser navigate {demo.url}\nassert env.ok, env\nenv")
        outputs += kernel.run("%browser create_instance second")
        assert kernel.value(listing) == [["default", "remote", server.url], ["second", "remote", server.url]]
        assert kernel.browser_pids() == []  # both live in the server's browser
        outputs += kernel.run("%config BrowserMagics")
        outputs += kernel.run("%config BrowserMagics.remote_endpoint")
        outputs += kernel.run("%config BrowserMagics.remote_headers")
        outputs += kernel.run("%browser health")
        assert not [output for output in outputs if output["type"] == "error"], outputs
        shown = json.dumps(outputs)
        assert f"Current: '{server.url}'" in shown and "'X-Token': '[redacted]'" in shown
        assert TOKEN not in shown and QUERY_TOKEN not in shown
        kernel.run("%config BrowserMagics.remote_endpoint = ''\n%browser create_instance local")
        assert kernel.value(listing)[2] == ["local", "chromium", None]
        assert kernel.browser_pids()  # launched under the kernel
    finally:
        kernel.client.stop_channels()
        kernel.manager.shutdown_kernel(now=True)
