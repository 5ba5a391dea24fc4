"""Acting at viewport coordinates and on the focused element: what a live view needs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from ..redaction import focus_is_plain
from ..registry import tool
from .input import Text, perform
from .models import ActionData, PageParams

if TYPE_CHECKING:
    from ..context import CallContext

Coordinate = float


class ClickXYParams(PageParams):
    x: Coordinate = Field(ge=0, le=100_000, description="CSS pixels from the viewport's left edge.")
    y: Coordinate = Field(ge=0, le=100_000, description="CSS pixels from the viewport's top edge.")
    button: Literal["left", "right", "middle"] = "left"
    double: bool = False


@tool(
    name="browser_mouse_click_xy",
    title="Click at coordinates",
    description="Click at a point of the viewport (CSS pixels), as a person clicking a screenshot would. "
    "Prefer browser_click with a snapshot ref when the element is known.",
    params=ClickXYParams,
    data=ActionData,
    target="page",
)
async def mouse_click_xy(ctx: CallContext, p: ClickXYParams) -> ActionData:
    clicks = 2 if p.double else 1
    await perform(ctx, ctx.page.mouse.click(p.x, p.y, button=p.button, click_count=clicks), f"Clicking at {p.x},{p.y}")
    return ActionData(url=ctx.page.url)


class KeyboardTypeParams(PageParams):
    text: Text = Field(description="Text typed key by key into whatever has focus.")


@tool(
    name="browser_keyboard_type",
    title="Type into focus",
    description="Type text into the focused element, key by key (use browser_type to target a ref).",
    params=KeyboardTypeParams,
    data=ActionData,
    target="page",
    typed_text=("text",),
)
async def keyboard_type(ctx: CallContext, p: KeyboardTypeParams) -> ActionData:
    secret = not await focus_is_plain(ctx.page)
    (ctx.typed_secret if secret else ctx.typed_plain).add(("text",))
    await perform(ctx, ctx.page.keyboard.type(p.text), "Typing", secret=secret)
    return ActionData(url=ctx.page.url)


class ScrollParams(PageParams):
    delta_x: float = Field(0, ge=-100_000, le=100_000)
    delta_y: float = Field(ge=-100_000, le=100_000, description="Pixels to scroll down (negative: up).")


@tool(
    name="browser_scroll",
    title="Scroll",
    description="Scroll the page with the mouse wheel at the current pointer position.",
    params=ScrollParams,
    data=ActionData,
    target="page",
    idempotent=False,
)
async def scroll(ctx: CallContext, p: ScrollParams) -> ActionData:
    await perform(ctx, ctx.page.mouse.wheel(p.delta_x, p.delta_y), "Scrolling")
    return ActionData(url=ctx.page.url)
