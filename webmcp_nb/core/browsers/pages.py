"""Per-page state: stable ids for pages and frames, snapshot refs, modal state."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from ..call.errors import ToolFailure
from ..call.util import spawn, utc_now
from . import aria

if TYPE_CHECKING:
    from playwright.async_api import CDPSession, Dialog, FileChooser, Frame, Locator, Page, Request

    from ..webmcp.discovery import PageTools

T = TypeVar("T")

# How long a renderer may take to answer a trivial evaluation, after a call on it timed out,
# before its tab counts as unresponsive. The question stays asked: its answer clears the mark.
PROBE_S = 2.0


@dataclass
class Modal:
    """A dialog or file chooser that blocks the page until a tool resolves it."""

    kind: str  # "dialog" | "file_chooser"
    handle: Dialog | FileChooser
    resolved_by: str

    def describe(self) -> dict[str, Any]:
        if self.kind == "dialog":
            dialog: Dialog = self.handle  # type: ignore[assignment]
            return {
                "kind": "dialog",
                "dialog_type": dialog.type,
                "message": dialog.message,
                "default_value": dialog.default_value,
                "resolved_by": self.resolved_by,
            }
        chooser: FileChooser = self.handle  # type: ignore[assignment]
        return {"kind": "file_chooser", "multiple": chooser.is_multiple(), "resolved_by": self.resolved_by}

    def summary(self) -> str:
        if self.kind == "dialog":
            dialog: Dialog = self.handle  # type: ignore[assignment]
            article = "an" if dialog.type[:1] in "aeiou" else "a"
            return f"{article} {dialog.type} dialog ({dialog.message!r})"
        return "a file chooser"


class PageState:
    """Everything the core tracks about one tab."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.page_id = str(uuid.uuid4())
        self._frame_ids: dict[Frame, str] = {}
        self._frames: dict[str, Frame] = {}
        self.modal: Modal | None = None
        self.modal_opened = asyncio.Event()
        self._modal_wakers: set[Callable[[], None]] = set()  # calls waiting in `run_until_modal`
        self.pending: set[asyncio.Future[Any]] = set()
        self.document_generation = 0
        # Main-frame navigations seen (same-document ones too), and how many had been seen at the
        # latest DOMContentLoaded: equal means the current document is parsed (`parsed`).
        self._navigations = 0
        self._parsed_at_navigation = -1
        self._snapshot_generation = -1
        self._latest_refs: set[str] = set()
        self._seen_refs: set[str] = set()
        self.snapshot_text: str | None = None  # the latest whole-page snapshot (refs to words: `ref_targets`)
        # (document generation, frame) whose latest snapshot showed no filled field (see tools.snapshot)
        self.without_filled_fields: tuple[int, Frame] | None = None
        self.closed = False
        self._cdp: asyncio.Future[CDPSession] | None = None
        # (document generation, the browser's title read, the URL then), started at DOMContentLoaded
        self._title_prefetch: tuple[int, asyncio.Future[str | None], str] | None = None
        self.webmcp: PageTools | None = None  # set by the instance (None when WebMCP is off)
        # Its renderer's health: when it crashed, or since when it has not answered (and after which call).
        self.crashed_at: str | None = None
        self.unresponsive: dict[str, str] | None = None
        self._probe: asyncio.Future[None] | None = None
        # The main frame's navigation request in flight: while it is, DevTools holds back
        # commands for the renderer, so a probe's silence means nothing.
        self._navigation: Request | None = None
        # Whether the main frame's latest navigation was preceded by a request of its own: a new
        # document, whose load follows (same-document and cached history navigations have none).
        self.loads_document = False
        page.on("crash", self._on_crash)
        # Listeners called for every request are plain functions (Playwright reads a listener's
        # signature at every event; a bound method's costs half as much again).
        page.on("request", lambda request: self._on_request(request))
        page.on("requestfinished", lambda request: self._on_request_done(request))
        page.on("requestfailed", lambda request: self._on_request_done(request))
        page.on("framenavigated", self._on_frame_navigated)
        for frame in page.frames:
            self.frame_id(frame)
        page.on("frameattached", self._on_frame_attached)
        page.on("framedetached", self._forget_frame)
        page.on("domcontentloaded", self._new_document)
        page.on("dialog", lambda dialog: self._open_modal(Modal("dialog", dialog, "browser_handle_dialog")))
        page.on("filechooser", lambda chooser: self._open_modal(Modal("file_chooser", chooser, "browser_file_upload")))

    async def cdp(self) -> CDPSession:
        """The page's own DevTools session (Chromium only), opened once and shared."""
        if self._cdp is None:
            self._cdp = asyncio.ensure_future(self.page.context.new_cdp_session(self.page))
        return await asyncio.shield(self._cdp)

    # renderer health -----------------------------------------------------------
    @property
    def condition(self) -> str:
        """`ok`, `unresponsive` (stuck in script) or `crashed`."""
        return "crashed" if self.crashed_at else "unresponsive" if self.unresponsive else "ok"

    @property
    def navigating(self) -> bool:
        """A navigation of the main frame was requested and has not finished or failed."""
        return self._navigation is not None

    def _on_crash(self, _page: Page) -> None:
        self.crashed_at = utc_now()
        self.unresponsive = None

    def _on_request(self, request: Request) -> None:
        if request.is_navigation_request() and request.frame == self.page.main_frame:
            self._navigation = request

    def _on_request_done(self, request: Request | None) -> None:
        if request is None or request is self._navigation:
            self._navigation = None

    async def _answer(self) -> None:
        """Return once the renderer has evaluated `0` (a stuck script holds it back), or cannot."""
        from playwright.async_api import Error

        with contextlib.suppress(Error):  # gone, or between documents: not stuck in script either way
            await (await self.cdp()).send("Runtime.evaluate", {"expression": "0"})

    def suspect(self, after: str) -> None:
        """A call on this tab (`after`) timed out: check in the background whether its renderer
        still answers; if not within `PROBE_S`, the tab is marked unresponsive until it does."""
        if self.condition == "ok" and (self._probe is None or self._probe.done()):
            self._probe = spawn(self._check(after))

    async def _check(self, after: str) -> None:
        answer = spawn(self._answer())
        await asyncio.wait([answer], timeout=PROBE_S)
        if not answer.done() and not (self.closed or self.crashed_at or self._navigation):
            self.unresponsive = {"since": utc_now(), "after": after}
            answer.add_done_callback(self._answered)

    def _answered(self, _answer: asyncio.Task[None]) -> None:
        self.unresponsive = None  # the stuck script ended (or the renderer went: `crashed_at` says so)

    @property
    def probing(self) -> bool:
        """A call on this tab timed out and its renderer has not answered yet (for up to `PROBE_S`)."""
        return self._probe is not None and not self._probe.done()

    async def healthy(self) -> bool:
        """False if the renderer crashed or is stuck in script, as already known: a stuck one is not
        asked again (the question left with it clears the mark when answered). Only while a
        check is under way (right after a call on this tab timed out) is it waited for."""
        if self.probing:
            assert self._probe is not None
            await asyncio.shield(self._probe)
        return self.condition == "ok"

    def unhealthy_error(self, tool: str) -> ToolFailure:
        """Why `tool` was not started on this crashed or unresponsive tab, and what to do."""
        close = f'browser_tabs(action="close", page_id="{self.page_id}")'
        if self.crashed_at:
            return ToolFailure(
                "page_crashed",
                f"{tool} was not started: the renderer of page {self.page_id} ({self.page.url}) crashed at "
                f"{self.crashed_at} (killed or out of memory). Load it again in a fresh renderer with "
                f"browser_reload (the page_id stays), or close it with {close}.",
                started=False,
            )
        assert self.unresponsive is not None
        return ToolFailure(
            "operation_timeout",
            f"{tool} was not started: page {self.page_id} ({self.page.url}) is unresponsive; its renderer has "
            f"not answered since {self.unresponsive['since']} (a script may be stuck in a loop; "
            f"{self.unresponsive['after']} timed out on it). Terminate its renderer and load the page again "
            f"with browser_reload(force=true), or close it with {close}.",
            started=False,
        )

    # title ------------------------------------------------------------------
    async def title(self) -> str:
        """The document title. On Chromium it is read from the browser process, which answers
        at once, instead of from a renderer that is still busy right after a load; the read
        starts when the document is parsed, so a navigation's load wait hides it."""
        shown = await self.shown_title()
        return shown if shown is not None else await self.page.title()

    async def shown_title(self) -> str | None:
        """The title as the browser process shows it, or None where that is not the document's own
        (the browser shows the URL when a page has no title; not Chromium): `title()` asks the page."""
        known = self.known_title()
        if known is not None:
            return known
        prefetched = self._title_prefetch
        if prefetched is not None and prefetched[0] == self.document_generation and prefetched[2] == self.page.url:
            title = await prefetched[1]
        else:
            title = await self.browser_title()
        return title if self._shows_title(title) else None

    def known_title(self) -> str | None:
        """The title without waiting, when the read started at DOMContentLoaded has answered for the
        current document (None otherwise: `title()` finds it)."""
        prefetched = self._title_prefetch
        if prefetched is None or prefetched[0] != self.document_generation or prefetched[2] != self.page.url:
            return None
        read = prefetched[1]
        if not read.done() or read.cancelled() or read.exception() is not None:
            return None
        title = read.result()
        return title if self._shows_title(title) else None

    def _shows_title(self, title: str | None) -> bool:
        """Whether the browser's title is the document's own (it shows the URL when there is none)."""
        return bool(title) and title != "about:blank" and not self.page.url.endswith(title or "")

    async def browser_title(self) -> str | None:
        from playwright.async_api import Error

        try:
            return str((await (await self.cdp()).send("Target.getTargetInfo"))["targetInfo"]["title"])
        except Error:
            return None  # not Chromium, or the session went away

    def _prefetch_title(self) -> None:
        if self._cdp is not None:  # only where the DevTools session is already open (Chromium)
            self._title_prefetch = (
                self.document_generation,
                asyncio.ensure_future(self.browser_title()),
                self.page.url,
            )

    # frames -----------------------------------------------------------------
    def frame_id(self, frame: Frame) -> str:
        known = self._frame_ids.get(frame)
        if known is None:
            known = self._frame_ids[frame] = str(uuid.uuid4())
            self._frames[known] = frame
        return known

    def _on_frame_attached(self, frame: Frame) -> None:
        self.frame_id(frame)

    def _on_frame_navigated(self, frame: Frame) -> None:
        if frame.parent_frame is None:
            self._navigations += 1
            self.loads_document = self._navigation is not None
            self._on_request_done(None)

    @property
    def parsed(self) -> bool:
        """Whether the main frame has not navigated since its latest DOMContentLoaded (so a wait for
        that state would return at once). Same-document navigations count too: cautious, never wrong."""
        return self._parsed_at_navigation == self._navigations

    def _forget_frame(self, frame: Frame) -> None:
        frame_id = self._frame_ids.pop(frame, None)
        if frame_id:
            self._frames.pop(frame_id, None)

    def frame(self, frame_id: str | None) -> Frame:
        """The frame with `frame_id` (strict), or the main frame."""
        if frame_id is None:
            return self.page.main_frame
        frame = self._frames.get(frame_id)
        if frame is None or frame.is_detached():
            raise ToolFailure(
                "frame_not_found",
                f"No frame {frame_id} in page {self.page_id}; call browser_frames to list its frames.",
                started=False,
            )
        return frame

    def frames(self) -> list[Frame]:
        return [frame for frame in self.page.frames if not frame.is_detached()]

    # modal state ------------------------------------------------------------
    def _open_modal(self, modal: Modal) -> None:
        self.modal = modal
        self.modal_opened.set()
        for wake in list(self._modal_wakers):
            wake()

    def require_modal(self, kind: str, absent: str) -> Modal:
        """The open modal of `kind` (dialog or file_chooser), or `modal_state_blocked` (nothing to resolve)."""
        modal = self.modal
        if modal is None or modal.kind != kind:
            other = f" ({modal.summary()} is open: resolve it with {modal.resolved_by})" if modal else ""
            raise ToolFailure("modal_state_blocked", f"{absent}{other}.", started=False)
        return modal

    def clear_modal(self) -> None:
        self.modal = None
        self.modal_opened.clear()

    def blocked_error(self, tool: str) -> ToolFailure:
        assert self.modal is not None
        return ToolFailure(
            "modal_state_blocked",
            f"{tool} cannot run: the page shows {self.modal.summary()}. "
            f"Resolve it first with {self.modal.resolved_by}.",
            started=False,
        )

    async def drain_pending(self, timeout: float) -> None:
        """Wait for actions left running when a modal interrupted them."""
        if self.pending:
            await asyncio.wait(list(self.pending), timeout=timeout)

    def keep_pending(self, task: asyncio.Future[Any]) -> None:
        self.pending.add(task)
        task.add_done_callback(self._pending_done)

    def _pending_done(self, task: asyncio.Future[Any]) -> None:
        self.pending.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: an interrupted action's error is not reported twice

    # snapshot refs ----------------------------------------------------------
    def _new_document(self, _page: Page) -> None:
        self.document_generation += 1
        self._parsed_at_navigation = self._navigations
        self._prefetch_title()

    def record_snapshot(self, yaml: str, *, replace: bool) -> None:
        refs = aria.refs(yaml)
        self._seen_refs |= refs
        if replace:
            self.snapshot_text = yaml
        if replace or self._snapshot_generation != self.document_generation:
            self._latest_refs = refs
        else:
            self._latest_refs |= refs
        self._snapshot_generation = self.document_generation

    def ref_targets(self, args: Any) -> dict[str, aria.RefTarget]:
        """What each ref in `args` pointed at in the latest whole-page snapshot (refs not in it are left out)."""
        if self.snapshot_text is None:
            return {}
        found = {ref: aria.target_of(self.snapshot_text, ref) for ref in aria.refs_in_args(args)}
        return {ref: target for ref, target in found.items() if target is not None}

    async def locate(self, ref: str) -> Locator:
        """A locator for `ref`, or `element_not_found` / `stale_ref` (nothing done)."""
        locator = self.ref_locator(ref)
        if await locator.count() == 0:
            raise self._stale(ref)
        return locator

    async def act(
        self, ref: str, action: Callable[[Locator], Awaitable[T]], *, probe: str | None = None
    ) -> tuple[T, int]:
        """Run `action` on the element `ref`, checking that it exists in the same round trip;
        return its result and the count of the check.

        The existence check is sent first and the action right behind it, so the page
        answers the check before the action touches anything. If the element is gone,
        the action (which would wait for it) is abandoned and `stale_ref` says nothing
        was done. `probe`, a selector relative to the element that matches at least the
        element itself, is counted instead of the element alone (one question, answered too).
        """
        locator = self.ref_locator(ref)
        check = asyncio.ensure_future((locator.locator(probe) if probe else locator).count())
        work = asyncio.ensure_future(action(locator))
        try:
            found = await check
        except BaseException:
            work.cancel()
            raise
        if found == 0:
            work.cancel()
            raise self._stale(ref)
        return await work, found

    def ref_locator(self, ref: str) -> Locator:
        """The locator for `ref`, refusing refs that cannot be current (no round trip)."""
        if ref not in self._seen_refs:
            raise ToolFailure(
                "element_not_found",
                f"Ref {ref} does not appear in any snapshot of this page. "
                "Take a browser_snapshot and use a ref from it.",
                started=False,
            )
        if ref not in self._latest_refs or self._snapshot_generation != self.document_generation:
            raise self._stale(ref)
        return self.page.locator(f"aria-ref={ref}")

    @staticmethod
    def _stale(ref: str) -> ToolFailure:
        return ToolFailure(
            "stale_ref",
            f"Ref {ref} is from an earlier snapshot and no longer matches an element on the page "
            "(the page changed or navigated). Take a new browser_snapshot and use its refs.",
            started=False,
        )

    # modals racing work -----------------------------------------------------
    async def run_until_modal(self, work: Awaitable[T]) -> tuple[asyncio.Task[T], bool]:
        """Run `work` as a task until it finishes or a modal opens, whichever comes first.

        Returns the task and whether it finished. Otherwise the modal blocks it: it is kept
        pending (it completes once the modal is resolved). One future is woken by either, by
        the task's own last step or by the modal opening: no watcher task, and no loop turn
        between the end of the work and its caller (this runs on every page call).
        """
        woken = asyncio.get_running_loop().create_future()

        def wake(_: Any = None) -> None:
            if not woken.done():
                woken.set_result(None)

        async def then_wake() -> T:
            try:
                return await work
            finally:
                wake()

        task = asyncio.ensure_future(then_wake())
        task.add_done_callback(wake)  # a task cancelled before its first step never runs `then_wake`
        if self.modal_opened.is_set():
            wake()
        self._modal_wakers.add(wake)
        try:
            await woken
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            self._modal_wakers.discard(wake)
        if task.done():
            return task, True
        self.keep_pending(task)
        return task, False


# Counted in place of a ref's own existence check (`PageState.act(..., probe=...)`): the element,
# plus its parent when a click on it opens a file chooser (an enabled file input, or a label
# wrapping one). The count is 0 (gone), 1, or 2 (opens a chooser), in the one round trip.
# (A file input at the top of a shadow root has no parent element and counts 1.)
COUNTS_FILE_CHOOSER = (
    "xpath=self::* | (self::input[@type='file' and not(@disabled)]"
    " | self::label[.//input[@type='file' and not(@disabled)]])/.."
)
