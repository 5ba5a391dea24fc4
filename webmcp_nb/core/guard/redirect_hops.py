"""Redirect hops of subresources, which Playwright's routes never see (they see a request's first
URL only): Chromium's own URL blocking, CDP ``Network.setBlockedURLs``, which Blink checks on every
hop, is given the URL policy as ordered URL Patterns, the first match deciding: the SSRF guard
(the session's own ports on this machine's loopback names, and on the served address), the block
patterns, then the allow patterns (let through) and, with an allow list, every other http(s) and
ws(s) URL. Each glob has an exact URL Pattern twin (`url_patterns`) but a host glob with a
wildcard beside digits (``10.0.*``): a hop it would let through is refused (allow), one it would
refuse is followed (block); so is a hop to another 127.x address than 127.0.0.1.

Chromium only. Each tab's DevTools session has the rules, and so does every target the tab starts
(cross-site frames, dedicated and service workers, and theirs in turn): the tab's session is
auto-attached to them and gives each the rules before letting it run (`Targets`). A frame waits
for every client; a worker runs once any client lets it, and a popup's first requests reach the
context's route before the popup is reported: the route holds such requests until their target
has the rules (`HopGuard.ready_for`). Shared workers belong to no tab, and Playwright sees none
of their requests: the browser's own session attaches to each and the rules judge its first
requests as well (`HopGuard.watch_shared_workers`). Chromium records a refused hop as a request
of its own: its record names the rule.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from typing import TYPE_CHECKING, Any

from ..call.util import spawn
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


# A tab's session is auto-attached to the targets it starts, each held until it is let run.
# Not flat: Playwright's CDP sessions send no sessionId, so a target is reached through
# Target.sendMessageToTarget, nested once per level (a frame's worker: through the frame).
AUTO_ATTACH = {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": False}
Route = tuple[str, ...]  # the session ids from a tab's session down to one of its targets
SHARED_WORKERS = [{"type": "shared_worker"}, {"exclude": True}]


class Targets:
    """The targets a tab's DevTools session is attached to, given the rules before they run."""

    def __init__(self, session: CDPSession, rules: list[dict[str, Any]], tab: bool = True) -> None:
        self.session = session
        self.rules = rules
        self.tab = tab  # the session's own target is a tab, judged too (not the browser's)
        self.routes: set[Route] = set()
        self.arming: set[asyncio.Task[None]] = set()  # targets being given the rules
        self._ids = itertools.count(1)
        session.on("Target.attachedToTarget", lambda event: self._attached((), event))
        session.on("Target.detachedFromTarget", lambda event: self._detached((), event))
        session.on("Target.receivedMessageFromTarget", lambda event: self._relayed((), event))

    async def start(self) -> None:
        """Give the session's own target the rules, and be attached to the targets it starts."""
        await self.session.send("Network.enable")
        await self.session.send("Network.setBlockedURLs", {"urlPatterns": self.rules})
        await self.session.send("Target.setAutoAttach", AUTO_ATTACH)

    async def update(self, rules: list[dict[str, Any]]) -> None:
        self.rules = rules
        if self.tab:
            await self.session.send("Network.setBlockedURLs", {"urlPatterns": rules})
        for route in list(self.routes):
            await self._send(route, "Network.setBlockedURLs", {"urlPatterns": rules})

    def _relayed(self, route: Route, event: dict[str, Any]) -> None:
        """A target's message: only its own targets' comings and goings matter."""
        message = event.get("message", "")
        if '"method":"Target.' not in message:
            return
        inner = json.loads(message)
        child = (*route, event["sessionId"])
        handler = {
            "Target.attachedToTarget": self._attached,
            "Target.detachedFromTarget": self._detached,
            "Target.receivedMessageFromTarget": self._relayed,
        }.get(inner.get("method"))
        if handler is not None:
            handler(child, inner.get("params", {}))

    async def adopt(self, target_id: str) -> None:
        """Attach to a target this session is not auto-attached to (a shared worker) and arm it."""
        attached = await self.session.send("Target.attachToTarget", {"targetId": target_id, "flatten": False})
        route = (attached["sessionId"],)
        self.routes.add(route)
        await self._arm(route, False)

    def _attached(self, route: Route, event: dict[str, Any]) -> None:
        child = (*route, event["sessionId"])
        if child in self.routes:  # adopted
            return
        self.routes.add(child)
        task = spawn(self._arm(child, bool(event.get("waitingForDebugger"))))
        self.arming.add(task)
        task.add_done_callback(self.arming.discard)

    def _detached(self, route: Route, event: dict[str, Any]) -> None:
        gone = (*route, event.get("sessionId", ""))
        self.routes = {kept for kept in self.routes if kept[: len(gone)] != gone}

    async def _arm(self, route: Route, waiting: bool) -> None:
        """Give a new target the rules (and its own targets the same), then let it run."""
        from playwright.async_api import Error

        with contextlib.suppress(Error):  # the tab or the target is gone
            try:
                await self._send(route, "Network.enable")
                await self._send(route, "Network.setBlockedURLs", {"urlPatterns": self.rules})
                await self._send(route, "Target.setAutoAttach", AUTO_ATTACH)
            finally:
                if waiting:
                    await self._send(route, "Runtime.runIfWaitingForDebugger")

    async def _send(self, route: Route, method: str, params: dict[str, Any] | None = None) -> None:
        """Send one command to the target at the end of `route` (its answer is not awaited:
        a target handles its commands in order)."""
        message: dict[str, Any] = {"id": next(self._ids), "method": method, "params": params or {}}
        for session_id in reversed(route[1:]):
            wrapped = {"sessionId": session_id, "message": json.dumps(message)}
            message = {"id": next(self._ids), "method": "Target.sendMessageToTarget", "params": wrapped}
        await self.session.send("Target.sendMessageToTarget", {"sessionId": route[0], "message": json.dumps(message)})


class HopGuard:
    """The blocked URLs of every tab of one Chromium instance, and of the targets each starts,
    kept to its policy's."""

    def __init__(self, instance: Instance) -> None:
        self.instance = instance
        self.patterns: list[tuple[str, bool]] = []
        self.sessions: dict[Page, Targets] = {}
        self._watching: dict[Page, asyncio.Future[None]] = {}
        self.shared: Targets | None = None  # the browser's session, attached to the shared workers
        self.shared_scripts: dict[str, str] = {}  # script URL -> target id of a shared worker starting
        self.context_id: str | None = None  # the instance's browser context, as DevTools names it

    @property
    def rules(self) -> list[dict[str, Any]]:
        return [{"urlPattern": pattern, "block": block} for pattern, block in self.patterns]

    def watch(self, page: Page) -> asyncio.Future[None]:
        """Give `page` (a tab, however it opened) the rules; done once it has them."""
        watching = self._watching.get(page)
        if watching is None:
            watching = self._watching[page] = asyncio.ensure_future(self._watch(page))
        return watching

    async def ready_for(self, request: Request) -> None:
        """Hold a request until the tab it comes from has the rules (a popup's first ones reach the
        context's route before the tab is reported), and every target already started has them:
        a worker runs once any client lets it, Playwright first, so its first requests (which
        come after the attach event that started its arming) may come before its rules."""
        from playwright.async_api import Error

        with contextlib.suppress(Error):  # no frame: a popup's first navigation (judged in Python)
            await self.watch(request.frame.page)
        shared_worker = self.shared_scripts.pop(request.url, None) if request.resource_type == "script" else None
        if shared_worker is not None and self.shared is not None:
            with contextlib.suppress(Error):  # gone meanwhile
                await self.shared.adopt(shared_worker)
        arming = [task for targets in self.sessions.values() for task in targets.arming]
        if arming:
            await asyncio.wait(arming)

    async def _watch(self, page: Page) -> None:
        from playwright.async_api import Error

        if self.instance.context is None:
            return
        with contextlib.suppress(Error):  # the tab closed meanwhile
            session = await self.instance.context.new_cdp_session(page)
            targets = self.sessions[page] = Targets(session, self.rules)
            if self.context_id is None:
                self.context_id = (await session.send("Target.getTargetInfo"))["targetInfo"].get("browserContextId")
            page.on("close", self._closed)
            page.on("requestfailed", self._failed)
            await targets.start()

    def _closed(self, page: Page) -> None:
        self.sessions.pop(page, None)
        self._watching.pop(page, None)

    async def watch_shared_workers(self) -> None:
        """Shared workers belong to no tab, and Playwright neither sees their requests nor holds
        them: the browser's session learns of each as it is created, before its script is asked
        for, and the policy's route holds that script until the worker has the rules (`ready_for`);
        those already running get them now."""
        from playwright.async_api import Error

        context = self.instance.context
        browser = self.instance.browser or (context.browser if context is not None else None)
        if browser is None:
            return
        with contextlib.suppress(Error):  # a browser that cannot tell: none are judged
            session = await browser.new_browser_cdp_session()
            self.shared = Targets(session, self.rules, tab=False)
            session.on("Target.targetCreated", self._shared_worker_created)
            await session.send("Target.setDiscoverTargets", {"discover": True, "filter": SHARED_WORKERS})
            running = await session.send("Target.getTargets", {"filter": SHARED_WORKERS})
            for info in running["targetInfos"]:
                if self._ours(info):
                    self.shared_scripts.pop(info["url"], None)
                    await self.shared.adopt(info["targetId"])

    def _ours(self, info: dict[str, Any]) -> bool:
        """Whether a target is of this instance's context (on a browser of its own, any is)."""
        if self.context_id is None:
            from ..backends import get

            return not get(self.instance.options.backend).shared_browser
        return info.get("browserContextId") == self.context_id

    def _shared_worker_created(self, event: dict[str, Any]) -> None:
        info = event["targetInfo"]
        if self._ours(info):  # the discovery's filter: shared workers only
            self.shared_scripts[info["url"]] = info["targetId"]

    async def update(self) -> None:
        from playwright.async_api import Error

        patterns = hop_patterns(self.instance.url_policy)
        if patterns != self.patterns:
            self.patterns = patterns
            for targets in [*self.sessions.values(), *([self.shared] if self.shared is not None else [])]:
                with contextlib.suppress(Error):
                    await targets.update(self.rules)

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
