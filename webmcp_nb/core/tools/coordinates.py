"""Acting at viewport coordinates and on the focused element: what a live view needs (the notebook's
panel), and agents that work from screenshots (tool group ``vision``, granted with ``--caps vision``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from ..call.registry import tool
from ..guard.redaction import focus_is_plain
from .input import Text, perform
from .models import ActionData, PageParams

if TYPE_CHECKING:
    from ..call.context import CallContext

Coordinate = float


class ClickXYParams(PageParams):
    x: Coordinate = Field(ge=0, le=100_000)
    y: Coordinate = Field(ge=0, le=100_000)
    button: Literal["left", "right", "middle"] = "left"
    double: bool = False


@tool(
    name="browser_mouse_click_xy",
    title="Click at coordinates",
    description="Click at a viewport point (CSS pixels), as on a screenshot; prefer browser_click with a ref.",
    params=ClickXYParams,
    data=ActionData,
    target="page",
    group="vision",
)
async def mouse_click_xy(ctx: CallContext, p: ClickXYParams) -> ActionData:
    clicks = 2 if p.double else 1
    await perform(ctx, ctx.page.mouse.click(p.x, p.y, button=p.button, click_count=clicks), f"Clicking at {p.x},{p.y}")
    return ActionData(url=ctx.page.url)


class KeyboardTypeParams(PageParams):
    text: Text


@tool(
    name="browser_keyboard_type",
    title="Type into focus",
    description="Type key by key into the focused element (browser_type: into a ref).",
    params=KeyboardTypeParams,
    data=ActionData,
    target="page",
    group="vision",
    typed_text=("text",),
)
async def keyboard_type(ctx: CallContext, p: KeyboardTypeParams) -> ActionData:
    secret = not await focus_is_plain(ctx.page)
    (ctx.typed_secret if secret else ctx.typed_plain).add(("text",))
    await perform(ctx, ctx.page.keyboard.type(p.text), "Typing", secret=secret)
    return ActionData(url=ctx.page.url)


class ScrollParams(PageParams):
    delta_x: float = Field(0, ge=-100_000, le=100_000)
    delta_y: float = Field(ge=-100_000, le=100_000, description="Pixels down (negative: up).")


@tool(
    name="browser_scroll",
    title="Scroll",
    description="Scroll with the mouse wheel where the pointer is.",
    params=ScrollParams,
    data=ActionData,
    target="page",
    group="vision",
    idempotent=False,
)
async def scroll(ctx: CallContext, p: ScrollParams) -> ActionData:
    await perform(ctx, ctx.page.mouse.wheel(p.delta_x, p.delta_y), "Scrolling")
    return ActionData(url=ctx.page.url)
