"""Waiting for text to appear or go, or for a fixed time."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated

from pydantic import Field, StringConstraints, model_validator

from ..registry import ToolFailure, tool
from .models import Data, PageParams

if TYPE_CHECKING:
    from ..context import CallContext

Needle = Annotated[str, StringConstraints(min_length=1, max_length=10_000)]


class WaitForParams(PageParams):
    text: Needle | None = Field(None, description="Wait until this text is visible.")
    text_gone: Needle | None = Field(None, description="Wait until this text is no longer visible.")
    time_s: float | None = Field(
        None, gt=0, le=30, description="Alone: wait this long. With text/text_gone: the time limit (default 10)."
    )

    @model_validator(mode="after")
    def _one_condition(self) -> WaitForParams:
        if self.text is not None and self.text_gone is not None:
            raise ValueError("give text or text_gone, not both")
        if self.text is None and self.text_gone is None and self.time_s is None:
            raise ValueError("give text, text_gone or time_s")
        return self


class WaitForData(Data):
    url: str
    waited_ms: float
    condition: str


@tool(
    name="browser_wait_for",
    title="Wait for",
    description="Wait until text appears or disappears (fails with wait_timeout), or wait a fixed time (at most 30 s).",
    params=WaitForParams,
    data=WaitForData,
    target="page",
    read_only=True,
)
async def wait_for(ctx: CallContext, p: WaitForParams) -> WaitForData:
    from playwright.async_api import TimeoutError

    loop = asyncio.get_running_loop()
    started = loop.time()
    needle = p.text if p.text is not None else p.text_gone
    if needle is None:
        await asyncio.sleep(p.time_s or 0)
        condition = f"{p.time_s:g} s elapsed"
    else:
        limit = p.time_s or 10.0
        state = "visible" if p.text is not None else "hidden"
        condition = f"text {needle!r} {'appeared' if p.text is not None else 'is gone'}"
        # Only visible matches count: a hidden copy of the text earlier in the document must
        # neither hide a visible one ("text") nor stand for its absence ("text_gone").
        visible = ctx.page.get_by_text(needle).filter(visible=True).first
        try:
            await visible.wait_for(
                state="attached" if state == "visible" else "detached", timeout=ctx.timeout_ms(limit)
            )
        except TimeoutError:
            raise ToolFailure(
                "wait_timeout",
                f"Waited {limit:g} s but text {needle!r} is {'not visible' if state == 'visible' else 'still visible'}.",
            ) from None
    return WaitForData(url=ctx.page.url, waited_ms=round((loop.time() - started) * 1000, 1), condition=condition)
