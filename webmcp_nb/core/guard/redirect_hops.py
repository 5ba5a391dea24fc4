"""Redirect hops of subresources, which Playwright's routes never see (they see a request's first
URL only): Chromium's own URL blocking, CDP ``Network.setBlockedURLs``, which Blink checks on every
hop, carries the rules of the URL policy it can express.

Those are the SSRF guard (the session's own ports on this machine's loopback names and the served
address) and the host block patterns (``host``, ``*.host``, either with ``:port``). Full-URL
patterns and allow lists stay the route's alone: a hop they would refuse is followed. Chromium
only, in each tab's renderer (a cross-site frame's and a worker's hops are not judged). Chromium
records a refused hop as a request of its own: its record names the rule.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from typing import TYPE_CHECKING

from .url_policy import UrlPolicy, blocked_rule, mark_blocked

if TYPE_CHECKING:
    from playwright.async_api import CDPSession, Page, Request

    from ..browsers.instances import Instance

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "*.localhost", "0.0.0.0", "[::1]", "[::]", "[::ffff:7f00:1]")
PLAIN_HOST = re.compile(r"(\*\.)?[a-z0-9.\-]+|\[[0-9a-f:.]+\]")


def hop_patterns(policy: UrlPolicy | None) -> list[str]:
    """The URL patterns (URL Pattern syntax) Chromium refuses hops to for `policy`."""
    if policy is None:
        return []
    pairs = [(_bracketed(host), str(port)) for own, port in policy.own for host in (*LOOPBACK_NAMES, own.lower())]
    for pattern in policy.block:
        if "://" in pattern:
            continue
        host, port = pattern.lower(), "*"
        if re.search(r":(\d+|\*)$", host):
            host, _, port = host.rpartition(":")
        pairs.append((host, port))
    patterns = [
        f"*://{host.replace(':', chr(92) + ':')}:{port}/*" for host, port in pairs if PLAIN_HOST.fullmatch(host)
    ]
    return list(dict.fromkeys(patterns))  # one malformed pattern would void them all: none gets in


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


class HopGuard:
    """The blocked URLs of every tab of one Chromium instance, kept to its policy's."""

    def __init__(self, instance: Instance) -> None:
        self.instance = instance
        self.patterns: list[str] = []
        self.sessions: dict[Page, CDPSession] = {}
        self._pending: set[asyncio.Task[None]] = set()

    def watch_soon(self, page: Page) -> None:
        """`watch` a tab the browser just opened (a popup's first hops may come before)."""
        task = asyncio.ensure_future(self.watch(page))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def watch(self, page: Page) -> None:
        from playwright.async_api import Error

        if page in self.sessions or self.instance.context is None:
            return
        with contextlib.suppress(Error):  # the tab closed meanwhile
            session = await self.instance.context.new_cdp_session(page)
            self.sessions[page] = session
            page.on("close", self._closed)
            page.on("requestfailed", self._failed)
            await session.send("Network.enable")
            await self._apply(session)

    def _closed(self, page: Page) -> None:
        self.sessions.pop(page, None)

    async def update(self) -> None:
        patterns = hop_patterns(self.instance.url_policy)
        if patterns != self.patterns:
            self.patterns = patterns
            for session in list(self.sessions.values()):
                await self._apply(session)

    async def _apply(self, session: CDPSession) -> None:
        from playwright.async_api import Error

        blocked = [{"urlPattern": pattern, "block": True} for pattern in self.patterns]
        with contextlib.suppress(Error):
            await session.send("Network.setBlockedURLs", {"urlPatterns": blocked})

    def _failed(self, request: Request) -> None:
        """Name the rule in the records of what Chromium refused: the hop (a request of its own,
        linked to nothing) and the request whose redirect led there (failed as ``inspector``)."""
        policy = self.instance.url_policy
        if policy is None or blocked_rule(request) is not None:
            return
        refusal = policy.refusal(request.url)
        if refusal is None and request.failure == "inspector":
            refusal = "it redirected to a URL the policy refuses"
        if refusal is not None:
            mark_blocked(self.instance, request, refusal)
