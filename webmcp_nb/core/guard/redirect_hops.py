"""Redirect hops of subresources, which Playwright's routes never see (they see a request's first
URL only): Chromium's own URL blocking, CDP ``Network.setBlockedURLs``, which Blink checks on every
hop, is given the URL policy as ordered URL Patterns, the first match deciding: the SSRF guard
(the session's own ports on this machine's loopback names, and on the served address), the block
patterns, then the allow patterns (let through) and, with an allow list, every other http(s) and
ws(s) URL. Each glob has an exact URL Pattern twin (`url_patterns`) but a host glob with a
wildcard beside digits (``10.0.*``): a hop it would let through is refused (allow), one it would
refuse is followed (block); so is a hop to another 127.x address than 127.0.0.1.

Chromium only, in each tab's renderer (a cross-site frame's and a worker's hops are not judged).
Chromium records a refused hop as a request of its own: its record names the rule.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from .url_patterns import JUDGED_SCHEMES, parse_glob
from .url_policy import UrlPolicy, blocked_rule, mark_blocked

if TYPE_CHECKING:
    from playwright.async_api import CDPSession, Page, Request

    from ..browsers.instances import Instance

# This machine, as Chromium writes a URL's host: loopback (IPv4 mapped into IPv6 too: Chromium
# writes [::ffff:127.0.0.1] as [::ffff:7f00:1]), the unspecified addresses and localhost names.
LOOPBACK_NAMES = (
    "127.0.0.1", "localhost", "*.localhost", "localhost.", "*.localhost.", "0.0.0.0", "[::1]", "[::]", "[::ffff:7f*]",
    "[::ffff:0:0]",
)  # fmt: skip


def hop_patterns(policy: UrlPolicy | None) -> list[tuple[str, bool]]:
    """The URL Patterns Chromium judges hops by for `policy`, in order (True: block, False: let
    through); the first match decides, and a URL none matches is let through."""
    if policy is None:
        return []

    def rules(pattern: str, block: bool) -> list[tuple[str, bool]]:
        try:
            twins = parse_glob(pattern).url_patterns()
        except ValueError:  # a served address that is no host glob: the names cover this machine
            return []
        return [(twin, block) for twin in twins or ()]

    ordered = [rule for own, port in policy.own for host in (*LOOPBACK_NAMES, _bracketed(own.lower()))
               for rule in rules(f"{host}:{port}", True)]  # fmt: skip
    ordered += [rule for pattern in policy.block for rule in rules(pattern, True)]
    if policy.allow:
        ordered += [rule for pattern in policy.allow for rule in rules(pattern, False)]
        ordered += [(f"{scheme}://*:*/*", True) for scheme in JUDGED_SCHEMES]
    return list(dict.fromkeys(ordered))


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


class HopGuard:
    """The blocked URLs of every tab of one Chromium instance, kept to its policy's."""

    def __init__(self, instance: Instance) -> None:
        self.instance = instance
        self.patterns: list[tuple[str, bool]] = []
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

        rules = [{"urlPattern": pattern, "block": block} for pattern, block in self.patterns]
        with contextlib.suppress(Error):
            await session.send("Network.setBlockedURLs", {"urlPatterns": rules})

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
