"""The agents' URL policy, enforced by the browser: allow and block lists, and the SSRF guard.

One session serves MCP over streamable HTTP with `--block-url` naming a second local server
("the target", which counts what reaches it); the agent's side is a real MCP client. Whatever
path a request takes (a navigation, a redirect from an allowed page, a frame, a popup, an image,
a page's fetch), the target is never reached and the network evidence records the request as
blocked by the rule. The MCP server's own port is refused by default (the SSRF guard); the
notebook's own calls are not judged unless it asks (`Session(url_policy=...)`).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import html
import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from webmcp_nb.core.guard.redirect_hops import Targets, hop_patterns
from webmcp_nb.core.guard.url_patterns import parse_glob
from webmcp_nb.core.guard.url_policy import UrlPolicy
from webmcp_nb.serve_options import ServeOptions

from .conftest import CheckedSession
from .helpers import ok, wait_until

pytestmark = pytest.mark.playwright_sensitive  # see tests/test_compat_scope.py

AGENT = types.Implementation(name="policy-agent", version="1.0")


class Pages(BaseHTTPRequestHandler):
    """`/redirect?to=URL` (any URL), `/page?html=...` (a page made of the given markup),
    `/script?js=...` (a script of the given code), `/ws` (a WebSocket answering its first message
    with ``echo MESSAGE``), else a small page; every path is counted per server."""

    def do_GET(self) -> None:
        self.server.hits.append(self.path)  # type: ignore[attr-defined]
        parts = urlsplit(self.path)
        query = {key: values[0] for key, values in parse_qs(parts.query).items()}
        if parts.path == "/ws":
            self.echo_once()
            return
        if parts.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", query["to"])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = query.get("html", f"<title>{html.escape(parts.path)}</title><p>reached {html.escape(parts.path)}</p>")
        data, kind = f"<!doctype html><meta charset=utf-8>{body}".encode(), "text/html"
        if parts.path == "/script":
            data, kind = query["js"].encode(), "text/javascript"
        self.send_response(200)
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def echo_once(self) -> None:
        """A WebSocket handshake (RFC 6455), then one short masked text frame read and echoed."""
        key = self.headers["Sec-WebSocket-Key"] + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
        self.protocol_version = "HTTP/1.1"
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", base64.b64encode(hashlib.sha1(key.encode()).digest()).decode())
        self.end_headers()
        length = self.rfile.read(2)[1] & 127
        mask = self.rfile.read(4)
        message = bytes(byte ^ mask[i % 4] for i, byte in enumerate(self.rfile.read(length)))
        reply = b"echo " + message
        self.wfile.write(bytes([0x81, len(reply)]) + reply)
        self.wfile.flush()
        self.close_connection = True

    def log_message(self, *args: Any) -> None:
        pass


def start() -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Pages)
    server.hits = []  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, Any]]:
    allowed, allowed_url = start()
    target, target_url = start()
    yield {"allowed": allowed, "url": allowed_url, "target": target, "target_url": target_url}
    allowed.shutdown()
    target.shutdown()


class Agent:
    def __init__(self, session: CheckedSession, **options: Any) -> None:
        self.handle = session.serve_mcp(**options)

    def calls(self, *calls: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
        async def run() -> list[dict[str, Any]]:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {self.handle.token}"}, timeout=120)
            async with Client(streamable_http_client(self.handle.url, http_client=http), client_info=AGENT) as client:
                results = [await client.call_tool(name, args) for name, args in calls]
            return [result.structured_content for result in results]  # type: ignore[misc]

        return asyncio.run(run())

    def call(self, name: str, **args: Any) -> dict[str, Any]:
        return self.calls((name, args))[0]


@pytest.fixture(scope="module")
def agent(session: CheckedSession, servers: dict[str, Any]) -> Iterator[Agent]:
    target_host = servers["target_url"].removeprefix("http://")
    served = Agent(session, caps=["js", "http"], block_urls=[target_host])
    yield served
    served.handle.stop()


def rule(servers: dict[str, Any]) -> str:
    return f"--block-url {servers['target_url'].removeprefix('http://')}"


def blocked_entries(agent: Agent, url: str) -> list[dict[str, Any]]:
    entries = agent.call("browser_network", url=url, failed=True)["data"]["entries"]
    return [entry for entry in entries if "blocked by the URL policy" in (entry["failure"] or "")]


def test_a_blocked_navigation_names_the_rule(agent: Agent, servers: dict[str, Any]) -> None:
    result = agent.call("browser_navigate", url=servers["target_url"] + "/direct")
    assert (result["error_type"], result["operation"]["outcome"]) == ("invalid_params", "not_started"), result
    assert rule(servers) in result["message"]
    assert servers["target"].hits == []


def test_a_redirect_from_an_allowed_page_to_a_blocked_one(agent: Agent, servers: dict[str, Any]) -> None:
    start = f"{servers['url']}/redirect?to={servers['target_url']}/hop"
    result = agent.call("browser_navigate", url=start)
    assert result["error_type"] == "navigation_failed", result
    assert "a redirect to" in result["message"] and rule(servers) in result["message"], result["message"]
    assert "/redirect" in "".join(servers["allowed"].hits)
    assert servers["target"].hits == []
    # An allowed redirect chain still arrives.
    chain = f"{servers['url']}/redirect?to=/redirect%3Fto%3D/landed"
    assert ok_data(agent.call("browser_navigate", url=chain))["url"].endswith("/landed")


def ok_data(result: dict[str, Any]) -> dict[str, Any]:
    assert result["status"] == "success", result
    return result["data"]  # type: ignore[no-any-return]


def exactly(entries: list[dict[str, Any]], url: str) -> list[dict[str, Any]]:
    return [entry for entry in entries if entry["url"] == url]


def test_subresource_redirects_to_blocked_urls(agent: Agent, servers: dict[str, Any]) -> None:
    target, hop = servers["target_url"], f"{servers['url']}/redirect?to={servers['target_url']}"
    markup = f'<img src="{hop}/hop-image.png">'
    ok_data(agent.call("browser_navigate", url=f"{servers['url']}/page?html={httpx2.QueryParams({'x': markup})['x']}"))
    fetched = agent.call(
        "browser_evaluate", expression=f"fetch({hop + '/hop-fetch'!r}).then(() => 'reached', () => 'refused')"
    )
    assert ok_data(fetched)["result"] == "refused", fetched
    for path in ("/hop-image.png", "/hop-fetch"):
        (entry,) = wait_until(
            lambda path=path: exactly(blocked_entries(agent, target + path), target + path), timeout=30
        )
        assert rule(servers) in entry["failure"], entry
    # browser_http's fetch runs in the page: its hop is refused the same way.
    http = agent.call("browser_http", url=hop + "/hop-http")
    assert http["error_type"] == "navigation_failed" and "Failed to fetch" in http["message"], http
    wait_until(lambda: exactly(blocked_entries(agent, target + "/hop-http"), target + "/hop-http"), timeout=30)
    (first,) = exactly(blocked_entries(agent, hop + "/hop-fetch"), hop + "/hop-fetch")
    assert "redirected to a URL the policy refuses" in first["failure"], first
    assert servers["target"].hits == []
    # The SSRF guard too: a hop to the MCP port.
    mcp = agent.handle.url.replace("127.0.0.1", "localhost")
    fetched = agent.call(
        "browser_evaluate",
        expression=f"fetch({servers['url'] + '/redirect?to=' + mcp!r}).then(() => 'reached', () => 'refused')",
    )
    assert ok_data(fetched)["result"] == "refused", fetched
    (entry,) = wait_until(lambda: exactly(blocked_entries(agent, mcp), mcp), timeout=30)
    assert "SSRF guard" in entry["failure"], entry


def test_subresource_redirects_under_an_allow_list_of_url_patterns(
    session: CheckedSession, servers: dict[str, Any]
) -> None:
    """Hops an allow list rules out (here a full-URL pattern, as Chromium judges hops too) are refused."""
    allowed = Agent(session, caps=["js"], allow_urls=[servers["url"] + "/*"])
    try:
        target, hop = servers["target_url"], f"{servers['url']}/redirect?to={servers['target_url']}"
        markup = f'<img src="{hop}/allow-image.png">'
        page = f"{servers['url']}/page?html={httpx2.QueryParams({'x': markup})['x']}"
        ok_data(allowed.call("browser_navigate", url=page))
        fetch = "fetch(%r).then(() => 'reached', () => 'refused')"
        assert (
            ok_data(allowed.call("browser_evaluate", expression=fetch % (hop + "/allow-fetch")))["result"] == "refused"
        )
        for path in ("/allow-image.png", "/allow-fetch"):
            (entry,) = wait_until(
                lambda path=path: exactly(blocked_entries(allowed, target + path), target + path), timeout=30
            )
            assert f"matches no --allow-url rule ({servers['url']}/*)" in entry["failure"], entry
        # A chain that stays inside the list arrives.
        inside = f"{servers['url']}/redirect?to=/allow-landed"
        assert ok_data(allowed.call("browser_evaluate", expression=fetch % inside))["result"] == "reached"
        assert "/allow-landed" in servers["allowed"].hits
    finally:
        allowed.handle.stop()
    assert servers["target"].hits == []


def test_frames_images_fetches_and_popups_are_blocked_and_recorded(agent: Agent, servers: dict[str, Any]) -> None:
    target = servers["target_url"]
    markup = (
        f'<iframe src="{target}/frame"></iframe><img src="{target}/image.png">'
        f'<a id="pop" href="{target}/popup" target="_blank">pop</a>'
    )
    page = f"{servers['url']}/page?html={httpx2.QueryParams({'x': markup})['x']}"
    ok_data(agent.call("browser_navigate", url=page))
    wait_until(lambda: len(blocked_entries(agent, "/frame")) == 1 and blocked_entries(agent, "/image.png"), timeout=30)
    entry = blocked_entries(agent, "/frame")[0]
    assert entry["resource_type"] == "document" and rule(servers) in entry["failure"], entry

    fetched = agent.call(
        "browser_evaluate", expression=f"fetch({target + '/fetched'!r}).then(() => 'reached', e => 'refused: ' + e)"
    )
    assert ok_data(fetched)["result"].startswith("refused: TypeError"), fetched
    assert blocked_entries(agent, "/fetched")
    # browser_http runs its fetch in the page: refused before it starts.
    http = agent.call("browser_http", url=target + "/http")
    assert (http["error_type"], http["operation"]["outcome"]) == ("invalid_params", "not_started"), http
    assert rule(servers) in http["message"]

    agent.call("browser_evaluate", expression="document.getElementById('pop').click()")
    tabs = wait_until(lambda: len(tabs_now := agent.call("browser_tabs")["data"]["tabs"]) == 2 and tabs_now, timeout=30)
    assert tabs[1]["url"] == "chrome-error://chromewebdata/", tabs
    # Its first request is refused before Playwright reports the tab; it is recorded as the tab's.
    (popup,) = wait_until(lambda: blocked_entries(agent, "/popup"), timeout=30)
    assert (popup["page_id"], popup["resource_type"]) == (tabs[1]["page_id"], "document"), popup
    assert rule(servers) in popup["failure"]
    assert servers["target"].hits == []


def page_of(base: str, markup: str) -> str:
    return f"{base}/page?html={quote(markup, safe='')}"


def script_of(base: str, code: str) -> str:
    return f"{base}/script?js={quote(code, safe='')}"


SHARED_WORKER = (
    "onconnect = (event) => fetch(%r, {mode: 'no-cors'})"
    ".then(() => event.ports[0].postMessage('reached'), () => event.ports[0].postMessage('refused'))"
)
FETCH_AND_TELL = "fetch(%r, {mode: 'no-cors'}).then(() => postMessage('reached'), () => postMessage('refused'))"
SERVICE_WORKER = """self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(clients.claim()));
self.addEventListener('fetch', (event) => {
  if (event.request.url.endsWith('/probe')) event.respondWith(
    fetch(%r, {mode: 'no-cors'}).then(() => new Response('reached'), () => new Response('refused')));
});"""


@pytest.mark.parametrize("arming_delay_s", [0, 0.5], ids=["as-it-comes", "rules-late"])
def test_hops_in_cross_site_frames_and_workers_are_refused(
    agent: Agent, servers: dict[str, Any], arming_delay_s: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chromium runs a cross-site frame, a worker and a service worker as targets of their own; each
    is held until it has the rules, so its first requests' hops are judged too. A worker runs once
    any client lets it (Playwright does at once): its requests wait for its rules, which the
    second run makes late, as a loaded machine does (without that wait, its hop got through)."""
    arm = Targets._arm

    async def late(self: Targets, *args: Any, **kwargs: Any) -> None:
        await asyncio.sleep(arming_delay_s)
        await arm(self, *args, **kwargs)

    monkeypatch.setattr(Targets, "_arm", late)
    run = f"{arming_delay_s * 1000:.0f}"  # this run's own URLs: the instance's evidence keeps the other's
    target, allowed = servers["target_url"], servers["url"]
    hop = f"{allowed}/redirect?to={target}"
    cross_site = allowed.replace("127.0.0.1", "localhost")  # another site: another renderer
    worker = script_of(cross_site, FETCH_AND_TELL % (hop + f"/frame-worker-{run}"))  # the frame's own target
    frame = page_of(
        cross_site,
        f"<img src='{hop}/frame-image-{run}.png'><script>new Worker({json.dumps(worker)}).onmessage = "
        "(event) => parent.postMessage(event.data, '*')</script>",
    )
    listen = "<script>window.told = new Promise((resolve) => onmessage = (event) => resolve(event.data))</script>"
    ok_data(
        agent.call("browser_navigate", url=page_of(allowed, f'{listen}<iframe src="{html.escape(frame)}"></iframe>'))
    )
    told = agent.call("browser_evaluate", expression="window.told")
    assert ok_data(told)["result"] == "refused", told  # no-cors: 'reached' had it gone through
    image_url = target + f"/frame-image-{run}.png"
    (image,) = wait_until(lambda: exactly(blocked_entries(agent, image_url), image_url), timeout=30)
    assert rule(servers) in image["failure"], image
    # A service worker's fetch (here answering the page's /probe) is refused the same way.
    ok_data(agent.call("browser_navigate", url=page_of(cross_site, "<p>service worker</p>")))
    worker_script = json.dumps(script_of("", SERVICE_WORKER % (hop + f"/service-worker-{run}")))
    register = (
        f"navigator.serviceWorker.register({worker_script}).then(() => navigator.serviceWorker.ready)"
        ".then(() => new Promise((resolve) => navigator.serviceWorker.controller ? resolve('controlled')"
        " : navigator.serviceWorker.oncontrollerchange = () => resolve('controlled')))"
    )
    try:
        assert ok_data(agent.call("browser_evaluate", expression=register))["result"] == "controlled"
        probe = agent.call("browser_evaluate", expression="fetch('/probe').then((response) => response.text())")
        assert ok_data(probe)["result"] == "refused", probe
    finally:
        agent.call(
            "browser_evaluate",
            expression="navigator.serviceWorker.getRegistrations()"
            ".then((all) => Promise.all(all.map((one) => one.unregister()))).then(() => 'gone')",
        )
    # A shared worker is no tab's and Playwright does not see its requests: its script waits for
    # its rules, which judge its first requests as well as their hops.
    for fetched in (f"{target}/shared-direct-{run}", f"{hop}/shared-hop-{run}"):
        shared = json.dumps(script_of("", SHARED_WORKER % fetched))
        told = agent.call(
            "browser_evaluate",
            expression=f"new Promise((resolve) => {{ const worker = new SharedWorker({shared}); "
            "worker.port.onmessage = (event) => resolve(event.data); worker.port.start(); })",
        )
        assert ok_data(told)["result"] == "refused", (fetched, told)
    assert servers["target"].hits == []


def test_a_popups_first_hops_are_judged(agent: Agent, servers: dict[str, Any]) -> None:
    """A popup's first subresources start before its tab is reported: they wait for its rules
    (without, some of these twelve images reach the target in most runs)."""
    target, hop = servers["target_url"], f"{servers['url']}/redirect?to={servers['target_url']}"
    ok_data(agent.call("browser_navigate", url=page_of(servers["url"], "<p>opener</p>")))
    popup = page_of(servers["url"], "".join(f"<img src='{hop}/popup-{i}.png'>" for i in range(12)))
    opened = f"window.open({json.dumps(popup)}) && 'opened'"
    assert ok_data(agent.call("browser_evaluate", expression=opened))["result"] == "opened"
    urls = [f"{target}/popup-{i}.png" for i in range(12)]
    wait_until(lambda: all(exactly(blocked_entries(agent, url), url) for url in urls), timeout=30)
    for tab in agent.call("browser_tabs")["data"]["tabs"][1:]:
        agent.call("browser_tabs", action="close", page_id=tab["page_id"])
    assert servers["target"].hits == []


SOCKET = """new Promise((resolve) => {
  const socket = new WebSocket(%r);
  socket.onopen = () => socket.send('hi');
  socket.onmessage = (event) => resolve('got ' + event.data);
  socket.onclose = (event) => resolve('closed ' + event.code);
})"""


def sockets(agent: Agent, url: str) -> list[dict[str, Any]]:
    entries = agent.call("browser_network", url=url, resource_type="websocket")["data"]["entries"]
    return exactly(entries, url)


def test_websockets_to_blocked_urls_are_refused_and_recorded(agent: Agent, servers: dict[str, Any]) -> None:
    page_id = agent.call("browser_navigate", url=servers["url"] + "/sockets")["operation"]["page_id"]
    allowed = servers["url"].replace("http:", "ws:") + "/ws"
    blocked = servers["target_url"].replace("http:", "ws:") + "/ws"
    # The page was fulfilled from Python (its redirects judged); served from this machine, it may
    # still open sockets to it (Chromium's Local Network Access would refuse a public page's).
    assert ok_data(agent.call("browser_evaluate", expression=SOCKET % allowed))["result"] == "got echo hi"
    assert "/ws" in servers["allowed"].hits
    assert ok_data(agent.call("browser_evaluate", expression=SOCKET % blocked))["result"] == "closed 1008"
    assert servers["target"].hits == []
    # Both are in the network evidence, as the page's: the allowed one finished when its server
    # closed it, the refused one failed naming the rule.
    (opened,) = wait_until(lambda: [e for e in sockets(agent, allowed) if e["state"] == "finished"], timeout=30)
    assert (opened["page_id"], opened["method"], opened["failure"]) == (page_id, "GET", None), opened
    (refused,) = sockets(agent, blocked)
    assert (refused["page_id"], refused["state"]) == (page_id, "failed"), refused
    assert refused["failure"] == f"blocked by the URL policy: {blocked} is blocked by the rule {rule(servers)}.", (
        refused
    )
    assert refused["request_headers"] == {} and refused["timing"] is None
    body = agent.call("browser_network_body", request_id=refused["request_id"])
    assert (body["error_type"], body["message"]) == (
        "invalid_params",
        f"{refused['request_id']} is a WebSocket, which has no body.",
    )
    # A popup's socket opened by its opener before the popup's own route is installed is judged by
    # the context's route, and still recorded as the popup's.
    early = blocked + "?early"
    ok_data(agent.call("browser_evaluate", expression=f"window.open('about:blank').eval(`new WebSocket({early!r})`)"))
    (popup,) = wait_until(lambda: sockets(agent, early), timeout=30)
    tabs = agent.call("browser_tabs")["data"]["tabs"]
    assert popup["page_id"] == tabs[-1]["page_id"] != page_id and "blocked by the URL policy" in popup["failure"], (
        popup,
        tabs,
    )
    agent.call("browser_tabs", action="close", page_id=tabs[-1]["page_id"])
    assert servers["target"].hits == []


def test_the_mcp_port_is_unreachable_by_default(agent: Agent, servers: dict[str, Any]) -> None:
    mcp = agent.handle.url
    result = agent.call("browser_navigate", url=mcp)
    assert result["error_type"] == "invalid_params" and "SSRF guard" in result["message"], result
    assert "--allow-own-servers" in result["message"]
    # The page's own requests too, however the loopback address is spelled (the browser writes
    # an IPv4-mapped one as [::ffff:7f00:1]).
    mapped = mcp.replace("127.0.0.1", "[::ffff:127.0.0.1]")
    fetched = agent.call("browser_evaluate", expression=f"fetch({mapped!r}).then(() => 'reached', () => 'refused')")
    assert ok_data(fetched)["result"] == "refused", fetched
    (entry,) = blocked_entries(agent, "[::ffff:7f00:1]")
    assert "SSRF guard" in entry["failure"], entry
    localhost = mcp.replace("127.0.0.1", "localhost")
    result = agent.call("browser_navigate", url=f"{servers['url']}/redirect?to={localhost}")
    assert result["error_type"] == "navigation_failed" and "SSRF guard" in result["message"], result


def test_the_serve_flags_are_one_declaration() -> None:
    from webmcp_nb.cli import build_parser

    parsed = build_parser().parse_args(["serve", "--block-url", "*.example.com", "--allow-url", "https://ok.test/*"])
    options = ServeOptions.from_namespace(parsed)
    assert (options.block_urls, options.allow_urls) == (["*.example.com"], ["https://ok.test/*"])
    grant = options.grant("/tmp")
    assert grant.url_policy == UrlPolicy(allow=("https://ok.test/*",), block=("*.example.com",))
    assert "matches no --allow-url rule" in (grant.refusal("https://elsewhere.test/") or "")
    assert grant.refusal("https://ok.test/page") is None
    blocked = UrlPolicy(block=("*.example.com",), allow=("*.com",))
    assert "--block-url *.example.com" in (blocked.refusal("https://shop.example.com/") or "")  # block wins
    assert blocked.refusal("https://example.com/") is None  # *. needs a subdomain
    assert blocked.refusal("data:text/html,x") is None  # schemes are the grant's
    ports = UrlPolicy(block=("127.0.0.1:*",))
    assert ports.refusal("http://127.0.0.1/") and ports.refusal("ws://127.0.0.1:9/") and not ports.refusal("http://h/")
    for bad, why in (
        ("a b", "without spaces"),
        ("a(b", "not a host glob"),
        ("https://x.test/?q=1", "no query"),
        ("x.test/admin", "has no path"),
        ("https://me@x.test/", "no userinfo"),
        ("https://x.test/a b", "without spaces"),
        ("https://x.test/%zz", "not a path glob"),
        ("ht_tp://x.test/", "not a scheme glob"),
        ("127.1", "short form"),
    ):
        with pytest.raises(ValueError, match=f"--block-url {re.escape(bad)}: .*{why}"):
            UrlPolicy.build(block=[bad])


def test_a_glob_matches_inside_each_part_of_the_url() -> None:
    shop = UrlPolicy(allow=("https://*.example.com/*",))
    assert shop.refusal("https://a.b.example.com/x?y=1") is None
    # A host glob never reaches into the path, nor is userinfo the host.
    for way_around in (
        "https://evil.test/?.example.com/",
        "https://evil.test/.example.com/",
        "https://shop.example.com@evil.test/",
    ):
        assert "matches no --allow-url rule" in (shop.refusal(way_around) or ""), way_around
    # No port: the scheme's default; no path: any path; the query never counts; the path's case does.
    origin = UrlPolicy(block=("https://shop.example", "http://api.test:8080/v1/*", "*://a.test:443/Admin"))
    assert origin.refusal("https://shop.example/any/path?q") and not origin.refusal("https://shop.example:8443/")
    assert origin.refusal("http://api.test:8080/v1/x?y") and not origin.refusal("http://api.test/v1/x")
    assert origin.refusal("https://a.test/Admin?x") and origin.refusal("http://a.test:443/Admin")
    assert not origin.refusal("https://a.test/admin") and not origin.refusal("https://A.test/Admin/")


POLICIES = [
    UrlPolicy(block=("*.Example.com", "https://x.test/a*/b", "10.0.0.1:80", "[::1]:*", "*://y.test:443/")),
    UrlPolicy(allow=("https://*.ok.test/*", "ok.test:8080", "http://plain.test"), block=("https://bad.ok.test/*",)),
    UrlPolicy(allow=("ws*://sock.test/live*",), own=(("h", 9),)),
    UrlPolicy(own=(("h", 9), ("::", 8), ("0.0.0.0", 80))),  # the SSRF guard alone
]
URLS = [
    *(f"{scheme}://{host}{port}{path}" for scheme in ("http", "https", "ws", "wss")
      for host in ("shop.example.com", "example.com", "x.test", "10.0.0.1", "[::1]", "y.test", "bad.ok.test",
                   "a.ok.test", "ok.test", "plain.test", "sock.test", "h", "127.0.0.1", "[::ffff:7f00:1]", "localhost", "a.localhost.")
      for port in ("", ":80", ":443", ":8080", ":9", ":8")
      for path in ("/", "/a1/b", "/ab/b?q", "/live/x", "/A1/b")),
]  # fmt: skip


def test_every_glob_has_an_exact_url_pattern_twin_for_chromium(session: CheckedSession) -> None:
    """What Chromium refuses redirect hops by (ordered URL Patterns, the first match deciding) refuses
    exactly what the policy refuses, judged by Chromium's own URLPattern; and Chromium's URL
    blocking takes every rule (one malformed pattern would void them all)."""
    ok(session.navigate("about:blank"))
    for policy in POLICIES:
        rules = hop_patterns(policy)
        judged = f"""(([rules, urls]) => urls.map((url) => {{
          const rule = rules.find(([pattern]) => new URLPattern(pattern).test(url));
          return rule !== undefined && rule[1] ? "1" : "0";
        }}).join(""))({json.dumps([rules, URLS])})"""
        verdicts = list(zip(URLS, [flag == "1" for flag in ok(session.evaluate(judged))["result"]], strict=True))
        wrong = [(url, blocked) for url, blocked in verdicts if blocked != (policy.refusal(url) is not None)]
        assert not wrong, (policy, rules, wrong[:10])
        assert any(blocked for _, blocked in verdicts) and not all(blocked for _, blocked in verdicts)

        async def accepted(rules: list[tuple[str, bool]] = rules) -> None:
            instance = session._engine.manager.instances["default"]
            cdp = await instance.context.new_cdp_session(instance.context.pages[0])
            patterns = [{"urlPattern": pattern, "block": block} for pattern, block in rules]
            await cdp.send("Network.setBlockedURLs", {"urlPatterns": patterns})  # raises for a malformed one
            await cdp.detach()

        session._runtime.submit(accepted()).result(30)
    # Where Chromium's URL Pattern cannot say what a glob says (it reads `10.0.` as an address), it
    # has no twin: its hops are refused when it allows (a catch-all follows) and followed when it blocks.
    assert parse_glob("10.0.*").url_patterns() is None and parse_glob("*.10.0.0.1").url_patterns() is None
    assert hop_patterns(UrlPolicy(allow=("10.0.*",)))[-4:] == [
        (f"{s}://*:*/*", True) for s in ("http", "https", "ws", "wss")
    ]
    assert hop_patterns(UrlPolicy(block=("10.0.*",))) == []


def test_the_notebook_is_not_judged_unless_it_asks(session: CheckedSession, servers: dict[str, Any]) -> None:
    target = servers["target_url"] + "/notebook"
    ok(session.navigate(target))
    assert "/notebook" in servers["target"].hits
    socket = servers["target_url"].replace("http:", "ws:") + "/ws?notebook"
    assert ok(session.evaluate(SOCKET % socket))["result"] == "got echo hi"

    # Its sockets are recorded all the same, with no policy installed.
    def finished() -> list[dict[str, Any]]:
        entries = ok(session.network(url=socket, resource_type="websocket"))["entries"]
        return [entry for entry in entries if entry["state"] == "finished"]

    assert wait_until(finished, timeout=30)[0]["url"] == socket
    # A socket left open (its server waits for a message) is `pending`, and no traffic in flight.
    held = socket.replace("?notebook", "?held")
    ok(
        session.evaluate(
            f"new Promise(resolve => {{ window.held = new WebSocket({held!r}); window.held.onopen = resolve; }})"
        )
    )
    ok(session.wait_for(network_idle=True, time_s=10))
    (entry,) = ok(session.network(url=held, resource_type="websocket"))["entries"]
    assert entry["state"] == "pending", entry
    ok(session.evaluate("window.held.close()"))
    session.url_policy = UrlPolicy.build(block=[servers["target_url"].removeprefix("http://")])
    session.engine.url_policy = session.url_policy
    try:
        ok(session.navigate(servers["url"] + "/fine"))
        envelope = session.navigate(f"{servers['url']}/redirect?to={servers['target_url']}/asked")
        assert envelope.error_type == "navigation_failed" and "--block-url" in (envelope.message or "")
        assert "/asked" not in servers["target"].hits
    finally:
        session.engine.url_policy = session.url_policy = None
