"""Tabs (pages) and frames, each with a stable id."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Literal

from pydantic import Field, model_validator

from ..browsers.pages import PROBE_S
from ..call.registry import tool
from .models import AbsoluteUrl, Data, Identifier, InstanceParams, PageParams
from .navigation import check_url

if TYPE_CHECKING:
    from ..browsers.instances import Instance
    from ..browsers.pages import PageState
    from ..call.context import CallContext


class TabsParams(InstanceParams):
    action: Literal["list", "new", "select", "close"] = "list"
    page_id: Identifier | None = Field(None, description="select, close (default: current).")
    url: AbsoluteUrl | None = Field(None, description="new: a URL to open.")

    @model_validator(mode="after")
    def _fits_action(self) -> TabsParams:
        if self.action == "select" and self.page_id is None:
            raise ValueError("action 'select' needs page_id")
        if self.url is not None and self.action != "new":
            raise ValueError("url applies only to action 'new'")
        if self.page_id is not None and self.action in ("list", "new"):
            raise ValueError(f"page_id does not apply to action {self.action!r}")
        return self


class Tab(Data):
    page_id: str
    url: str
    title: str
    current: bool
    status: Literal["ok", "unresponsive", "crashed"] = Field(
        "ok",
        description="unresponsive: its renderer stopped answering (a script stuck in a loop); crashed: its "
        "renderer died. Other tools fail fast on such a tab; browser_reload(force=true) or close it.",
    )


class TabsData(Data):
    tabs: list[Tab]
    current_page_id: str | None


async def _tabs(instance: Instance) -> TabsData:
    from playwright.async_api import Error

    # Tabs open (popups) and close while titles are read: work on a copy, and
    # decide what is current once every await is done.
    titles: list[tuple[PageState, str]] = []
    for state in list(instance.pages.values()):
        try:
            titles.append((state, await _title(state)))
        except Error:
            if not (state.closed or state.page.is_closed()):
                raise
    current = instance.current_page_id
    tabs = [
        Tab(
            page_id=state.page_id,
            url=state.page.url,
            title=title,
            current=state.page_id == current,
            status=state.condition,
        )
        for state, title in titles
        if not state.closed
    ]
    return TabsData(tabs=tabs, current_page_id=current)


async def _title(state: PageState) -> str:
    """The tab's title. A renderer that crashed, is stuck or under check (a call on it just timed
    out) is not asked, nor waited for: the browser process tells the title. One that does not
    answer in time is checked."""
    if state.condition == "ok" and not state.probing:
        try:
            return await asyncio.wait_for(state.page.title(), PROBE_S)
        except TimeoutError:
            state.suspect("browser_tabs")
    return await state.browser_title() or state.known_title() or ""


@tool(
    name="browser_tabs",
    title="Tabs",
    description="List, open, select or close tabs (each has a stable page_id).",
    params=TabsParams,
    data=TabsData,
    target="instance",
    positional=("action",),
    check=lambda ctx, p: check_url(ctx, p.url),
)
async def tabs(ctx: CallContext, p: TabsParams) -> TabsData:
    instance = ctx.require_instance()
    assert instance.context is not None
    if p.action == "new":
        state = instance.track(await instance.context.new_page())
        instance.current_page_id = state.page_id
        ctx.page_state = state
        if p.url:
            from .navigation import NavigateParams, navigate

            await navigate(ctx, NavigateParams(url=p.url))
    elif p.action == "select":
        state = instance.page(p.page_id)
        instance.current_page_id = state.page_id
        ctx.page_state = state
        await state.page.bring_to_front()
    elif p.action == "close":
        state = instance.page(p.page_id)
        ctx.page_state = state
        await state.page.close()
    return await _tabs(instance)


class FrameInfo(Data):
    frame_id: str
    parent_frame_id: str | None
    name: str
    url: str
    is_main: bool


class FramesData(Data):
    frames: list[FrameInfo]


@tool(
    name="browser_frames",
    title="Frames",
    description="List the tab's frames (main first) with stable frame ids.",
    params=PageParams,
    data=FramesData,
    target="page",
    read_only=True,
    idempotent=True,
)
async def frames(ctx: CallContext, p: PageParams) -> FramesData:
    page_state = ctx.require_page()
    infos = [
        FrameInfo(
            frame_id=page_state.frame_id(frame),
            parent_frame_id=page_state.frame_id(frame.parent_frame) if frame.parent_frame else None,
            name=frame.name,
            url=frame.url,
            is_main=frame.parent_frame is None,
        )
        for frame in page_state.frames()
    ]
    return FramesData(frames=infos)
