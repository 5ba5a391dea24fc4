"""A live view: frames of an instance's current page as the browser paints them.

On Chromium the frames come from the DevTools screencast (`Page.startScreencast`,
JPEG, every frame acknowledged); elsewhere the page is polled with screenshots.
Frames are delivered at most `max_fps` times a second: a frame that arrives
sooner waits, and is replaced by any newer one (stale frames are dropped).
The view follows the instance's current tab.
"""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..call.util import spawn

if TYPE_CHECKING:
    from playwright.async_api import CDPSession

    from ..call.engine import Engine
    from .pages import PageState

FOLLOW_INTERVAL_S = 0.25
DEFAULT_MAX_FPS = 15.0


@dataclass(frozen=True)
class LiveFrame:
    """One painted frame (JPEG) and how it maps onto the page."""

    data: bytes
    viewport_width: int  # CSS pixels the image spans
    viewport_height: int
    painted_at: float  # browser clock, seconds since the epoch
    received_at: float  # time.time() when the runtime received it
    page_id: str
    url: str


class LiveView:
    """Stream frames of one instance's current page to `on_frame` (called on the runtime thread)."""

    def __init__(
        self,
        engine: Engine,
        on_frame: Callable[[LiveFrame], None],
        *,
        instance: str | None = None,
        max_fps: float = DEFAULT_MAX_FPS,
        quality: int = 70,
        max_width: int = 1280,
        max_height: int = 800,
    ) -> None:
        if not 0 < max_fps <= 60:
            raise ValueError(f"max_fps must be in (0, 60], got {max_fps}")
        self._engine = engine
        self._on_frame = on_frame
        self._instance = instance
        self._interval = 1 / max_fps
        self._screencast: dict[str, Any] = {
            "format": "jpeg",
            "quality": quality,
            "maxWidth": max_width,
            "maxHeight": max_height,
        }
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._cdp: CDPSession | None = None
        self._page: PageState | None = None
        self._pending: LiveFrame | None = None
        self._flush: asyncio.TimerHandle | None = None
        self._last_sent = 0.0
        self._stopped = False
        self.frames_received = 0
        self.frames_delivered = 0

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.ensure_future(self._follow())

    def stop(self) -> None:
        """Stop streaming; safe from any thread, and more than once."""
        if self._loop is None or self._loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            spawn(self._stop())
        else:
            asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(10)

    async def _stop(self) -> None:
        self._stopped = True  # frames still in flight are dropped
        if self._task is not None:
            self._task.cancel()
        await self._detach()

    # following the current tab -----------------------------------------------
    async def _follow(self) -> None:
        while True:
            page = self._current_page()
            if page is not self._page:
                await self._detach()
                self._page = page
                if page is not None:
                    await self._attach(page)
            elif page is not None and self._cdp is None:
                await self._poll(page)
                continue
            await asyncio.sleep(FOLLOW_INTERVAL_S)

    def _current_page(self) -> PageState | None:
        name = self._instance or self._engine.current_instance
        instance = self._engine.manager.instances.get(name)
        if instance is None or instance.state != "live" or instance.current_page_id is None:
            return None
        return instance.pages.get(instance.current_page_id)

    async def _attach(self, page: PageState) -> None:
        from playwright.async_api import Error

        try:
            cdp = await page.page.context.new_cdp_session(page.page)
            cdp.on("Page.screencastFrame", lambda event: self._on_screencast_frame(page, event))
            await cdp.send("Page.startScreencast", self._screencast)
        except Error:
            self._cdp = None  # not Chromium: poll with screenshots instead
            return
        self._cdp = cdp

    async def _detach(self) -> None:
        from playwright.async_api import Error

        cdp, self._cdp = self._cdp, None
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        if cdp is not None:
            try:
                await cdp.send("Page.stopScreencast")
                await cdp.detach()
            except Error:
                pass  # the page went away first

    async def _poll(self, page: PageState) -> None:
        from playwright.async_api import Error

        started = time.monotonic()
        try:
            image = await page.page.screenshot(type="jpeg", quality=self._screencast["quality"], timeout=5000)
        except Error:
            image = None
        if image is not None:
            viewport = page.page.viewport_size or {"width": 0, "height": 0}
            now = time.time()
            self._offer(LiveFrame(image, viewport["width"], viewport["height"], now, now, page.page_id, page.page.url))
        await asyncio.sleep(max(0.0, self._interval - (time.monotonic() - started)))

    # frames -------------------------------------------------------------------
    def _on_screencast_frame(self, page: PageState, event: dict[str, Any]) -> None:
        cdp = self._cdp
        if cdp is not None:
            spawn(_ack(cdp, event["sessionId"]))
        metadata = event["metadata"]
        self._offer(
            LiveFrame(
                data=base64.b64decode(event["data"]),
                viewport_width=round(metadata["deviceWidth"]),
                viewport_height=round(metadata["deviceHeight"]),
                painted_at=metadata.get("timestamp", time.time()),
                received_at=time.time(),
                page_id=page.page_id,
                url=page.page.url,
            )
        )

    def _offer(self, frame: LiveFrame) -> None:
        if self._stopped:
            return
        self.frames_received += 1
        self._pending = frame
        wait = self._last_sent + self._interval - time.monotonic()
        if wait <= 0:
            self._deliver()
        elif self._flush is None:
            assert self._loop is not None
            self._flush = self._loop.call_later(wait, self._deliver)

    def _deliver(self) -> None:
        self._flush = None
        frame, self._pending = self._pending, None
        if frame is None or self._stopped:
            return
        self._last_sent = time.monotonic()
        self.frames_delivered += 1
        try:
            self._on_frame(frame)
        except Exception:  # noqa: BLE001 - a broken consumer must not stop the stream
            pass


async def _ack(cdp: CDPSession, session_id: int) -> None:
    from playwright.async_api import Error

    try:
        await cdp.send("Page.screencastFrameAck", {"sessionId": session_id})
    except Error:
        pass
