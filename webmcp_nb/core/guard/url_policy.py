"""Where the browser may go for an agent: the operator's allow and block lists, and the SSRF guard.

A `UrlPolicy` judges http(s) and ws(s) URLs (other schemes are the grant's, see `grants`) by
globs, ``*`` matching any run of characters inside one component of the URL (see `url_patterns`):

- with ``://``, scheme, host, port and path: ``https://shop.example/*`` (no port: the default one;
  no path: any);
- without, the URL's host, or its ``host:port`` when the pattern names a port: ``*.example.com``,
  ``intranet``, ``127.0.0.1:8888``, ``[::1]:*``.

Globs rather than URL Pattern: the lists are read by people on a command line, close to
Playwright's own URL globs, with no dependency (Python has no URL Pattern); each glob still has an
exact URL Pattern twin, which Chromium judges redirect hops by. A URL is refused when a block
pattern matches it, or when there is an allow list and no allow pattern matches it. The SSRF guard
comes first: the session's own servers (`own`: its MCP port, the Jupyter server's port) on a
loopback or the served address are refused unless the operator lifts the guard
(``--allow-own-servers``).

`enforce` installs the policy on an instance's browser context: every request of its pages (the
documents of tabs, popups and frames, subresources, the page's fetches, WebSockets) passes
through one route. A navigation's redirects are followed here, hop by hop, each judged before the
browser is let go on (Playwright's routes do not see redirect hops); a subresource's hops are
judged by Chromium itself where the rule allows (`redirect_hops`). Refused requests are aborted
and recorded: `blocked_rule` names the rule (a popup's first request, refused before its page
exists, is recorded as the popup's); a refused WebSocket is closed (1008) and recorded as its
page's.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import os
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from ..call.util import spawn
from .url_patterns import DEFAULT_PORTS, JUDGED_SCHEMES, parse_glob

if TYPE_CHECKING:
    from playwright.async_api import APIResponse, BrowserContext, Page, Request, Route, WebSocketRoute

    from ..browsers.instances import Instance

MAX_REDIRECTS = 20
SOCKET_CLOSE_S = 5  # a refused WebSocket's close, which may never be answered (see _route_sockets)
_BLOCKED: weakref.WeakKeyDictionary[Request, str] = weakref.WeakKeyDictionary()


def blocked_rule(request: Request) -> str | None:
    """Why the policy refused `request` (the network evidence's failure), or None."""
    return _BLOCKED.get(request)


def is_local(host: str) -> bool:
    """Whether `host` (bracketed if IPv6) names this machine: localhost names, loopback and
    unspecified addresses, IPv4 ones mapped into IPv6 (browsers write ``[::ffff:7f00:1]``)."""
    host = host.strip("[]").rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return any(a is not None and (a.is_loopback or a.is_unspecified) for a in (address, mapped))


def mark_blocked(instance: Instance, request: Request, refusal: str) -> None:
    """Record that the policy refused `request` (its network record names `refusal`)."""
    _BLOCKED[request] = f"blocked by the URL policy: {refusal}"
    instance.evidence.refresh(request)


def check_patterns(patterns: Iterable[str], flag: str) -> tuple[str, ...]:
    """`patterns` as given, or ValueError naming the flag and what is wrong with a malformed one."""
    kept = []
    for pattern in patterns:
        if not isinstance(pattern, str):
            raise ValueError(f"{flag} {pattern!r}: a pattern is a URL or host glob")
        try:
            parse_glob(pattern)
        except ValueError as exc:
            raise ValueError(f"{flag} {pattern}: {exc}") from None
        kept.append(pattern)
    return tuple(kept)


@dataclass(frozen=True)
class UrlPolicy:
    """Allow and block patterns (see `url_patterns`), and the session's own servers (`host:port`,
    see `own_servers`)."""

    allow: tuple[str, ...] = ()
    block: tuple[str, ...] = ()
    own: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        check_patterns(self.allow, "--allow-url")
        check_patterns(self.block, "--block-url")

    @classmethod
    def build(cls, allow: Iterable[str] = (), block: Iterable[str] = ()) -> UrlPolicy:
        return cls(tuple(allow), tuple(block))  # checked by __post_init__

    def with_own(self, servers: Iterable[tuple[str, int]]) -> UrlPolicy:
        return UrlPolicy(self.allow, self.block, (*self.own, *servers))

    def refusal(self, url: str) -> str | None:
        """Why `url` may not be loaded, naming the rule, or None."""
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in JUDGED_SCHEMES:
            return None
        try:
            port = parts.port or DEFAULT_PORTS[scheme]
        except ValueError:
            return f"{url[:80]}: not a valid port"
        host = (parts.hostname or "").lower()
        host = f"[{host}]" if ":" in host else host
        for own_host, own_port in self.own:
            if port == own_port and (is_local(host) or host == own_host.lower()):
                return (
                    f"{url[:120]} is one of this session's own servers (port {own_port}), which the SSRF guard "
                    "keeps agents from; the operator can lift it with --allow-own-servers."
                )
        path = parts.path or "/"
        for pattern in self.block:
            if parse_glob(pattern).matches(scheme, host, port, path):
                return f"{url[:120]} is blocked by the rule --block-url {pattern}."
        if self.allow and not any(parse_glob(pattern).matches(scheme, host, port, path) for pattern in self.allow):
            return f"{url[:120]} matches no --allow-url rule ({', '.join(self.allow)})."
        return None


def own_servers(mcp: tuple[str, int] | None = None) -> list[tuple[str, int]]:
    """The session's own servers: the MCP server (`mcp`), and the Jupyter servers running on this
    machine (their runtime files, jpserver-PID.json, name their ports; the kernel's own server is
    one of them). The live view has no server: it reaches the notebook through the kernel's comms."""
    servers = [mcp] if mcp is not None else []
    with contextlib.suppress(Exception):  # no jupyter_core, no runtime directory: nothing more to guard
        from jupyter_core.paths import jupyter_runtime_dir

        for path in Path(jupyter_runtime_dir()).glob("jpserver-*.json"):
            with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
                info = json.loads(path.read_text())
                os.kill(int(info["pid"]), 0)  # a live server only
                servers.append((str(info.get("hostname") or "localhost"), int(info["port"])))
    return servers


async def enforce(instance: Instance) -> None:
    """Judge every request of `instance` by its driver's policy (`Instance.url_policy`) from now on."""
    context = instance.context
    if context is None:
        return
    if not instance.policy_routed:
        instance.policy_routed = True
        await _route(instance, context)
    if instance.hop_guard is not None:
        await instance.hop_guard.update()


async def _route(instance: Instance, context: BrowserContext) -> None:
    if instance.options.is_chromium:
        from .redirect_hops import HopGuard

        guard = instance.hop_guard = HopGuard(instance)
        context.on("page", guard.watch)
        for page in context.pages:
            await guard.watch(page)
        await guard.watch_shared_workers()

    async def judge(route: Route) -> None:
        from playwright.async_api import Error

        request, policy = route.request, instance.url_policy
        with contextlib.suppress(Error):  # the page may be gone already
            refusal = policy.refusal(request.url) if policy is not None else None
            navigation = request.is_navigation_request() and urlsplit(request.url).scheme.lower() in ("http", "https")
            if refusal is None and policy is not None and navigation:  # file: and the rest go on to their own routes
                response = await route.fetch(max_redirects=0)
                refusal = await _redirect_refusal(route, response, policy)
                if refusal is None:
                    await _keep_address_space(instance, route.request.url)
                    await route.fulfill(response=response)
                    return
            if refusal is None:
                if instance.hop_guard is not None:
                    await instance.hop_guard.ready_for(request)
                await route.fallback()
            else:
                mark_blocked(instance, request, refusal)
                if request.is_navigation_request():
                    instance.blocked_navigation = _BLOCKED[request]
                    if not _has_frame(request):  # a popup's first request: no page has heard of it
                        instance.evidence.refused_early(request)
                await route.abort("blockedbyclient")

    await context.route("**/*", judge)
    await _route_sockets(instance, context)


async def _route_sockets(instance: Instance, context: BrowserContext) -> None:
    """Judge the WebSockets of `instance`'s pages. Each page has a route of its own, so a refused
    socket is recorded as its page's; the context's route judges a new page's sockets until its own
    is installed: recorded as that page's when it is the only one waiting, as the next page's when
    none has been reported yet (a popup its opener scripts at once), else with no page."""
    from playwright.async_api import Error

    waiting: set[Page] = set()  # new pages whose own route is being installed

    async def judge(socket: WebSocketRoute, page: Page | None) -> None:
        policy = instance.url_policy
        refusal = policy.refusal(socket.url) if policy is not None else None
        if refusal is None:
            socket.connect_to_server()
            return
        if page is None and len(waiting) == 1:
            (page,) = waiting
        page_id: str | None = None  # a page not reported yet: the next one (`Evidence.claim`)
        if page is not None or waiting:  # "": one of several new pages, which cannot be told
            page_id = next((state.page_id for state in instance.pages.values() if state.page is page), "")
        # Recorded before it is closed: Playwright 1.62 never answers the close of a socket its
        # context's route caught in a popup (the socket never reaches its server either way).
        instance.evidence.socket_refused(socket.url, page_id, refusal)
        with contextlib.suppress(Error, TimeoutError):  # the page may be gone already
            async with asyncio.timeout(SOCKET_CLOSE_S):
                await socket.close(code=1008, reason="blocked by the URL policy")

    async def route_page(page: Page) -> None:
        try:
            with contextlib.suppress(Error):  # closed meanwhile
                await page.route_web_socket("**/*", lambda socket: judge(socket, page))
        finally:
            waiting.discard(page)

    def opened(page: Page) -> None:
        waiting.add(page)
        spawn(route_page(page))

    await context.route_web_socket("**/*", lambda socket: judge(socket, None))
    context.on("page", opened)
    for page in context.pages:
        await route_page(page)


async def _keep_address_space(instance: Instance, url: str) -> None:
    """A document fulfilled from Python has no server address, so Chromium counts it as public and
    refuses its connections to local ones (Local Network Access: a local app's WebSockets). One
    served from this machine or a private network keeps that right: its origin is granted
    ``local-network-access`` (each origin is looked at once)."""
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}".lower()
    if origin in instance.judged_origins or instance.context is None or not instance.options.is_chromium:
        return
    instance.judged_origins.add(origin)
    host = parts.hostname or ""
    if not is_local(host):
        try:
            addresses = [ipaddress.ip_address(host)]
        except ValueError:
            try:
                infos = await asyncio.get_running_loop().getaddrinfo(host, None)
            except OSError:
                return
            addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
        if not any(address.is_private for address in addresses):
            return
    from playwright.async_api import Error

    with contextlib.suppress(Error):  # a Chromium without the permission has no such checks either
        await instance.context.grant_permissions(["local-network-access"], origin=origin)


def _has_frame(request: Request) -> bool:
    from playwright.async_api import Error

    try:
        request.frame  # noqa: B018 - raises for a navigation issued before its frame exists
    except Error:
        return False
    return True


async def _redirect_refusal(route: Route, response: APIResponse, policy: UrlPolicy) -> str | None:
    """The refusal of the redirect chain a navigation's first answer (`response`, fetched here
    without following) starts: each hop's target is judged before it is asked for (GET hops are
    fetched here too, to learn where they lead). None lets the browser follow the same chain."""
    url = route.request.url
    for _ in range(MAX_REDIRECTS):
        location = response.headers.get("location")
        if not (300 <= response.status < 400 and location):
            return None
        url = urljoin(url, location)
        refusal = policy.refusal(url)
        if refusal is not None:
            return f"a redirect to {refusal}"
        if response.status in (307, 308):
            return None  # its method and body go on: not sent twice (the next hop is not judged)
        response = await route.fetch(url=url, method="GET", post_data=None, max_redirects=0)
        await response.dispose()
    return None
