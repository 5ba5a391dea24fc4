"""Browser instances: launch, track pages, detect crashes, close."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .. import backends
from ..backends import LaunchOptions
from ..backends.chromium import playwright_cache_chromium
from ..call.errors import ToolFailure
from ..call.listeners import Listeners
from ..call.util import spawn, utc_now
from ..evidence.recorder import Evidence, EvidenceEvent, Record, StreamName
from ..guard.known_secrets import KnownSecrets
from ..guard.url_policy import UrlPolicy
from ..webmcp.discovery import PageTools, WebMCPHub
from ..webmcp.native import CAPTURE_JS, NativeTools
from ..webmcp.script import POLYFILL_JS, ScriptTools
from .downloads import Downloads
from .driver import Driver, start_playwright
from .pages import PageState

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Page, Playwright

    from ..call.envelope import ErrorType
    from ..config import Limits
    from ..guard.grants import Grant
    from ..guard.redirect_hops import HopGuard

InstanceState = Literal["launching", "live", "closing", "crashed", "closed"]
"""Where an instance is in its life: launching, then live, then closing and closed (or crashed)."""


@dataclass
class Instance:
    """One launched browser with its context and tabs."""

    options: LaunchOptions
    instance_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    state: InstanceState = "launching"
    browser: Browser | None = None
    context: BrowserContext | None = None
    executable: str | None = None
    browser_pid: int | None = None
    pages: dict[str, PageState] = field(default_factory=dict)
    current_page_id: str | None = None
    created_at: float = field(default_factory=time.time)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    ready: asyncio.Future[None] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    hub: WebMCPHub = field(default_factory=WebMCPHub)
    python_tools: dict[tuple[str, str], Any] = field(default_factory=dict)  # (page_id, name) -> registration
    python_binding: bool = False  # the binding Python page tools call (exposed on first use)
    downloads: Downloads = field(default_factory=Downloads)
    grant: Grant | None = None  # the latest caller's grant, judging file: loads (see file_guard)
    file_guard: bool = False  # whether the file: route is installed
    file_seen: bool = False  # whether a file: document was ever loaded (then a file: page may link to more)
    evidence: Evidence = field(init=False)
    tracing: bool = False  # a Playwright trace is recording (browser_trace)
    url_policy: UrlPolicy | None = None  # the latest caller's, judging every request (see url_policy)
    policy_routed: bool = False  # whether the URL policy's route is installed
    judged_origins: set[str] = field(default_factory=set)  # looked at for local network access (url_policy)
    hop_guard: HopGuard | None = None  # Chromium's blocking of redirect hops (see redirect_hops)
    blocked_navigation: str | None = None  # why the policy last refused a navigation (its error names the rule)
    # The session's known secrets (typed into secret fields, cookie values; see known_secrets),
    # scrubbed from its evidence and traces.
    secrets: KnownSecrets = field(default_factory=KnownSecrets)
    event_buffer_size: int = 1000

    def __post_init__(self) -> None:
        self.evidence = Evidence(self.instance_id, self.event_buffer_size, self.secrets)

    code_state: dict[str, Any] = field(default_factory=dict)  # browser_execute's `state`

    @property
    def name(self) -> str:
        return self.options.name

    def lost(self) -> bool:
        """True when the browser went away without being closed by us."""
        if self.state == "crashed":
            return True
        return self.state == "live" and self.browser is not None and not self.browser.is_connected()

    def adopt(self, page: Page) -> None:
        """Track a page the browser opened (a popup, a new tab), with the requests refused before
        it was reported (its first navigation's, see `Evidence.refused_early`)."""
        self.evidence.claim(self.track(page).page_id)

    def track(self, page: Page) -> PageState:
        """The state of `page`, tracking it (and making it current) if it is new."""
        for state in self.pages.values():
            if state.page is page:
                return state
        state = PageState(page)
        state.webmcp = self._page_tools(state)
        self.evidence.watch(state)
        self.pages[state.page_id] = state
        self.current_page_id = state.page_id
        page.on("close", lambda _page: self.forget(state))
        page.on("download", lambda download: self.downloads.add(download, state.page_id))
        page.on("framenavigated", lambda frame: self._note_document(frame.url))
        for frame in page.frames:
            self._note_document(frame.url)
        return state

    def _note_document(self, url: str) -> None:
        if url.startswith("file:"):
            self.file_seen = True

    def _page_tools(self, state: PageState) -> PageTools | None:
        mode = self.options.webmcp
        if mode == "off":
            return None
        if mode == "native" and self.options.is_chromium:
            return NativeTools(state, self.name, self.hub)
        return ScriptTools(state, self.name, self.hub, mode)

    def forget(self, state: PageState) -> None:
        state.closed = True
        if state.webmcp is not None:
            state.webmcp.close()
        if self.pages.get(state.page_id) is not state:
            return  # forgotten already (the tab that replaced it may carry its page_id now)
        for key in [key for key in self.python_tools if key[0] == state.page_id]:
            self.python_tools[key].end()
        self.pages.pop(state.page_id, None)
        if self.current_page_id == state.page_id:
            self.current_page_id = next(reversed(self.pages), None)

    async def reopen(self, state: PageState) -> PageState:
        """Replace a crashed or stuck tab by a new one under the same page_id (and place): its
        renderer is terminated (CDP `Page.crash`), the tab closed, a blank one opened. The caller
        loads the URL again."""
        assert self.context is not None
        old_id, order = state.page_id, list(self.pages)
        current = self.current_page_id
        if state.crashed_at is None:
            await _crash_renderer(state)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(state.page.close(), 10)
        self.forget(state)
        fresh = self.track(await self.context.new_page())
        del self.pages[fresh.page_id]
        fresh.page_id = old_id
        self.pages[old_id] = fresh
        self.pages = {page_id: self.pages[page_id] for page_id in order + list(self.pages) if page_id in self.pages}
        self.current_page_id = current if current in self.pages else old_id
        return fresh

    def page(self, page_id: str | None) -> PageState:
        """The page with `page_id` (strict), or the current page."""
        if page_id is not None:
            state = self.pages.get(page_id)
            if state is None:
                raise ToolFailure(
                    "page_not_found",
                    f"No page {page_id} in instance {self.name!r}; call browser_tabs to list its pages.",
                    started=False,
                )
            return state
        if self.current_page_id is None:
            raise ToolFailure(
                "page_not_found",
                f"Instance {self.name!r} has no open page; open one with browser_tabs(action='new').",
                started=False,
            )
        return self.pages[self.current_page_id]

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "instance_id": self.instance_id,
            "state": self.state,
            "backend": self.options.backend,
            "headless": self.options.headless,
            "profile_dir": self.options.profile_dir,
            "executable": self.executable,
            "browser_pid": self.browser_pid,
            "pages": len(self.pages),
            "current_page_id": self.current_page_id,
            "webmcp": self.options.webmcp,
            "endpoint": backends.get(self.options.backend).endpoint(self.options),
        }


@dataclass(frozen=True)
class Crash:
    name: str
    instance_id: str
    at: str
    detail: str


class InstanceManager:
    """Owns every instance of a session and the Playwright driver."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.instances: dict[str, Instance] = {}
        self.crashes: dict[str, Crash] = {}
        self.crash_log: deque[Crash] = deque(maxlen=20)
        self.failed_launches: deque[dict[str, Any]] = deque(maxlen=20)
        self.webmcp = WebMCPHub()
        self.evidence_listeners: Listeners[[EvidenceEvent]] = Listeners()
        self.secrets = KnownSecrets()  # of every instance: scrubbed from what leaves the core
        self.webmcp.scrub = self.secrets.scrub
        self._driver: Driver | None = None
        self._driver_lock = asyncio.Lock()
        self.driver_restarts = 0
        self.driver_exit: dict[str, Any] | None = None  # the latest unexpected exit of the driver
        self.driver_lost = False  # it exited, and no new one has started yet

    async def playwright(self) -> Playwright:
        """The running Playwright; a driver that died is replaced by a new one here."""
        async with self._driver_lock:
            self.check_driver()
            if self._driver is None:
                self._driver = await start_playwright(on_exit=self.check_driver)
                if self.driver_lost:
                    self.driver_lost = False
                    self.driver_restarts += 1
            return self._driver.playwright

    def check_driver(self) -> None:
        """If the driver died under us: its instances are lost (each reported as crashed),
        and the next call that needs a browser starts a new driver. Cheap; idempotent."""
        driver = self._driver
        if driver is None or not driver.exited():
            return
        self._driver = None
        detail = driver.describe_exit()
        self.driver_exit = {"pid": driver.pid, "at": utc_now(), "detail": detail}
        self.driver_lost = True
        for instance in list(self.instances.values()):
            if instance.state == "live":
                self._on_disconnected(instance, detail)
        spawn(driver.stop())

    def driver_status(self) -> dict[str, Any]:
        """For health: `running`, `not_started` or `exited` (lost, replaced on the next call)."""
        self.check_driver()
        driver = self._driver
        state = "running" if driver is not None else "exited" if self.driver_lost else "not_started"
        return {
            "state": state,
            "pid": driver.pid if driver is not None else None,
            "restarts": self.driver_restarts,
            "last_exit": self.driver_exit,
        }

    def playwright_managed_chromium(self) -> str | None:
        """The Chromium `playwright install chromium` put in place, if any."""
        if self._driver is not None:
            path = self._driver.playwright.chromium.executable_path
            if Path(path).exists():
                return path
        return playwright_cache_chromium()

    # lookup -----------------------------------------------------------------
    def get(self, name: str) -> Instance:
        instance = self.instances.get(name)
        if instance is None:
            raise self.missing(name)
        return instance

    def missing(self, name: str) -> ToolFailure:
        """The failure for a name with no live instance: crashed, or never created."""
        crash = self.crashes.get(name)
        if crash is not None:
            return ToolFailure(
                "instance_crashed",
                f"Instance {name!r} ({crash.instance_id}) crashed at {crash.at}: {crash.detail}. "
                f"Its resources were cleaned up; create it again with browser_create_instance.",
                started=False,
            )
        known = ", ".join(sorted(self.instances)) or "none"
        return ToolFailure(
            "instance_not_found",
            f"No instance named {name!r} (live instances: {known}); create it with browser_create_instance.",
            started=False,
        )

    def unavailable(self, instance: Instance) -> ToolFailure:
        """The failure for a call that reached an instance no longer live."""
        if instance.state == "crashed":
            return self.missing(instance.name)
        return ToolFailure(
            "instance_not_found",
            f"Instance {instance.name!r} is {instance.state}; create it again with browser_create_instance.",
            started=False,
        )

    def _evidence_event(self, instance: str, stream: StreamName, record: Record) -> None:
        if len(self.evidence_listeners):  # nobody follows live: no entry is copied
            self.evidence_listeners.emit(EvidenceEvent(instance, stream, record.view(reveal_secrets=False)))

    # launch -----------------------------------------------------------------
    def reserve(self, options: LaunchOptions) -> Instance:
        """Claim the name, profile dir and a slot; raise if any is taken."""
        if options.name in self.instances:
            raise ToolFailure(
                "instance_already_exists",
                f"An instance named {options.name!r} already exists "
                f"({self.instances[options.name].state}); destroy it first or choose another name.",
                started=False,
            )
        if len(self.instances) >= self.limits.max_instances:
            raise ToolFailure(
                "instance_limit_exceeded",
                f"{len(self.instances)} instances are live, launching or closing; the limit is "
                f"{self.limits.max_instances} ({self.limits.source('max_instances')}). Destroy one first.",
                started=False,
            )
        if options.profile_dir:
            self._check_profile_free(options.profile_dir)
        instance = Instance(
            options, hub=self.webmcp, secrets=self.secrets, event_buffer_size=self.limits.event_buffer_size
        )
        instance.evidence.listeners.add(lambda stream, record: self._evidence_event(instance.name, stream, record))
        self.instances[options.name] = instance
        self.crashes.pop(options.name, None)
        return instance

    def _check_profile_free(self, profile_dir: str) -> None:
        wanted = Path(profile_dir).resolve()
        for other in self.instances.values():
            if other.options.profile_dir and Path(other.options.profile_dir).resolve() == wanted:
                raise ToolFailure(
                    "profile_dir_in_use",
                    f"Profile directory {profile_dir} is used by instance {other.name!r} ({other.state}).",
                    started=False,
                )
        holder = _lock_holder(wanted)
        if holder is not None:
            raise ToolFailure(
                "profile_dir_in_use",
                f"Profile directory {profile_dir} is locked by another running browser (pid {holder}).",
                started=False,
            )

    async def launch(self, options: LaunchOptions, time_left_s: float | None = None) -> Instance:
        """Launch an instance, for a call with `time_left_s` left (its backend may give up in time
        to say why). A caller that stops waiting (a timeout) does not abort the launch half-way: it
        runs to the end, so no browser is left behind untracked."""
        instance = self.reserve(options)
        deadline = time.monotonic() + time_left_s if time_left_s is not None else None
        await asyncio.shield(asyncio.ensure_future(self._launch(instance, deadline)))
        return instance

    async def _launch(self, instance: Instance, deadline: float | None) -> None:
        options = instance.options
        try:
            backend = backends.get(options.backend)
            await self._open_context(instance, await backend.start(self, instance, deadline))
        except BaseException as exc:
            self.instances.pop(options.name, None)
            if instance.browser is not None or instance.context is not None:  # launched, then failed
                with contextlib.suppress(Exception):  # the launch error is the one to report
                    await (instance.browser or instance.context).close()  # type: ignore[union-attr]
            if not instance.ready.done():
                instance.ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError("cancelled"))
                instance.ready.exception()
            if isinstance(exc, ToolFailure):
                self._record_failed_launch(options, exc.error_type, exc.message)
            raise
        instance.state = "live"
        instance.ready.set_result(None)

    async def _open_context(self, instance: Instance, context: BrowserContext) -> None:
        """Follow the instance's context (and browser): its pages, its end; open a first tab."""
        from playwright.async_api import Error as PlaywrightError

        options = instance.options
        backend = backends.get(options.backend)
        browser = instance.browser
        instance.context = context
        if options.webmcp == "polyfill":
            await context.add_init_script(script=POLYFILL_JS)
        elif options.webmcp == "native" and options.is_chromium:
            await context.add_init_script(script=CAPTURE_JS)
        context.on("page", instance.adopt)
        lost = backend.lost_detail(options)
        context.on("close", lambda _ctx: self._on_disconnected(instance, lost))
        if browser is not None:
            browser.on("disconnected", lambda _b: self._on_disconnected(instance, lost))
        for page in context.pages:
            instance.track(page)
        if not context.pages:
            try:
                await context.new_page()
            except PlaywrightError as exc:
                raise backend.refusal(options, exc) or exc from None

    def _record_failed_launch(self, options: LaunchOptions, error_type: ErrorType, message: str) -> None:
        self.failed_launches.append(
            {"name": options.name, "at": utc_now(), "error_type": error_type, "message": message}
        )

    # crash and close ----------------------------------------------------------
    def _on_disconnected(self, instance: Instance, detail: str = "the browser process exited unexpectedly") -> None:
        if instance.state in ("closing", "closed", "crashed"):
            return
        instance.state = "crashed"
        crash = Crash(instance.name, instance.instance_id, utc_now(), detail)
        self.crashes[instance.name] = crash
        self.crash_log.append(crash)
        if self.instances.get(instance.name) is instance:
            del self.instances[instance.name]
        for state in instance.pages.values():
            state.closed = True
            if state.webmcp is not None:
                state.webmcp.close()
        spawn(self._cleanup_crashed(instance))

    async def _cleanup_crashed(self, instance: Instance) -> None:
        try:
            if instance.browser is not None:
                await asyncio.wait_for(instance.browser.close(), 5)
            elif instance.context is not None:
                await asyncio.wait_for(instance.context.close(), 5)
        except Exception:  # noqa: BLE001 - the browser is already gone
            pass

    async def close(self, name: str) -> Instance:
        instance = self.get(name)
        if instance.state == "launching":
            await asyncio.shield(instance.ready)
        instance.state = "closing"
        try:
            if backends.get(instance.options.backend).shared_browser and instance.context is not None:
                # Our context only (a CDP browser's own contexts stay); then the connection.
                await asyncio.wait_for(instance.context.close(), 10)
            if instance.browser is not None:
                await asyncio.wait_for(instance.browser.close(), 10)
            elif instance.context is not None:
                await asyncio.wait_for(instance.context.close(), 10)
        finally:
            instance.state = "closed"
            self.instances.pop(name, None)
            for state in list(instance.pages.values()):
                instance.forget(state)
        return instance

    async def close_all(self) -> None:
        for name in list(self.instances):
            try:
                await self.close(name)
            except Exception:  # noqa: BLE001 - shutting down: keep closing the rest
                pass
        driver, self._driver = self._driver, None
        if driver is not None:
            await driver.stop()


async def _crash_renderer(state: PageState) -> None:
    """Terminate the tab's renderer (even one stuck in script) and wait for the crash."""
    crashed = asyncio.get_running_loop().create_future()

    def mark_crashed(_page: Page) -> None:
        if not crashed.done():
            crashed.set_result(None)

    state.page.once("crash", mark_crashed)
    with contextlib.suppress(Exception):  # closing the tab ends the renderer anyway
        cdp = await asyncio.wait_for(state.cdp(), 5)
        # The renderer dies before it can answer: the command itself fails.
        request = asyncio.ensure_future(cdp.send("Page.crash"))
        request.add_done_callback(lambda done: done.cancelled() or done.exception())
        await asyncio.wait_for(crashed, 5)


# A browser's profile lock: a symlink whose target ends in the holder's pid after a separator.
PROFILE_LOCKS = (
    ("SingletonLock", "-"),  # Chromium: <host>-<pid>
    ("lock", "+"),  # Firefox (Camoufox): <address>:+<pid>
)


def _lock_holder(profile_dir: Path) -> int | None:
    """The pid of a live process holding a browser's profile lock in `profile_dir`, or None."""
    for name, separator in PROFILE_LOCKS:
        try:
            target = os.readlink(profile_dir / name)
        except OSError:
            continue
        pid = _live_pid(target.rpartition(separator)[2])
        if pid is not None:
            return pid
    return None


def _live_pid(text: str) -> int | None:
    """`text` as the pid of a live process, or None."""
    try:
        pid = int(text)
        if pid <= 0:
            return None
        os.kill(pid, 0)
    except (ValueError, ProcessLookupError, OverflowError):
        return None
    except PermissionError:
        return pid
    return pid
