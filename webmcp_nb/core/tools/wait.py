"""Waiting for a text, an element's state, a URL, network idle, or a fixed time."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from ..browsers.observe import url_matches
from ..call.errors import ToolFailure
from ..call.registry import tool
from ..evidence.recorder import NetworkRecord
from .models import Data, PageParams, Ref

if TYPE_CHECKING:
    from ..call.context import CallContext

Needle = Annotated[str, StringConstraints(min_length=1, max_length=10_000)]
ElementState = Literal["visible", "hidden", "attached", "detached"]
NETWORK_QUIET_S = 0.5  # network idle: no request of the page in flight for this long


class WaitForParams(PageParams):
    text: Needle | None = None
    text_gone: Needle | None = None
    ref: Ref | None = Field(None, description="An element to reach `state`.")
    role: Annotated[str, StringConstraints(pattern=r"^[a-z]{2,40}$")] | None = Field(
        None, description="With name: an element to reach `state`."
    )
    name: Annotated[str, StringConstraints(min_length=1, max_length=1000)] | None = None
    state: ElementState = Field("visible")
    url: Annotated[str, StringConstraints(min_length=1, max_length=4096)] | None = Field(
        None, description="A URL substring, or a glob with *."
    )
    network_idle: bool = Field(False, description="No request in flight for 0.5 s.")
    time_s: float | None = Field(None, gt=0, le=30, description="Alone: wait this long; else the limit (10).")

    @model_validator(mode="after")
    def _one_condition(self) -> WaitForParams:
        if (self.role is None) != (self.name is None):
            raise ValueError("give role and name together")
        conditions = [
            name
            for name, given in (
                ("text", self.text is not None),
                ("text_gone", self.text_gone is not None),
                ("ref", self.ref is not None),
                ("role/name", self.role is not None),
                ("url", self.url is not None),
                ("network_idle", self.network_idle),
            )
            if given
        ]
        if len(conditions) > 1:
            raise ValueError(f"give one condition, not {' and '.join(conditions)}")
        if not conditions and self.time_s is None:
            raise ValueError("give text, text_gone, ref, role and name, url, network_idle or time_s")
        return self


class WaitForData(Data):
    url: str
    waited_ms: float
    condition: str


@tool(
    name="browser_wait_for",
    title="Wait for",
    description="Wait for text to appear or go, an element's state, a URL or network idle (else wait_timeout); "
    "or wait time_s.",
    params=WaitForParams,
    data=WaitForData,
    target="page",
    read_only=True,
)
async def wait_for(ctx: CallContext, p: WaitForParams) -> WaitForData:
    from playwright.async_api import TimeoutError

    loop = asyncio.get_running_loop()
    started = loop.time()
    limit = p.time_s or 10.0
    try:
        if p.text is not None or p.text_gone is not None:
            condition = await _text(ctx, p, limit)
        elif p.ref is not None or p.role is not None:
            condition = await _element(ctx, p, limit)
        elif p.url is not None:
            pattern = p.url
            await ctx.page.wait_for_url(
                lambda url: url_matches(pattern, url), timeout=ctx.timeout_ms(limit), wait_until="commit"
            )
            condition = f"the URL matches {pattern!r}"
        elif p.network_idle:
            condition = await _network_idle(ctx, limit)
        else:
            await asyncio.sleep(limit)
            condition = f"{limit:g} s elapsed"
    except TimeoutError:
        raise ToolFailure("wait_timeout", f"Waited {limit:g} s but {_pending(ctx, p)}.") from None
    return WaitForData(url=ctx.page.url, waited_ms=round((loop.time() - started) * 1000, 1), condition=condition)


async def _text(ctx: CallContext, p: WaitForParams, limit: float) -> str:
    needle = p.text if p.text is not None else p.text_gone
    assert needle is not None
    # Only visible matches count: a hidden copy of the text earlier in the document must
    # neither hide a visible one ("text") nor stand for its absence ("text_gone").
    visible = ctx.page.get_by_text(needle).filter(visible=True).first
    await visible.wait_for(state="attached" if p.text is not None else "detached", timeout=ctx.timeout_ms(limit))
    return f"text {needle!r} {'appeared' if p.text is not None else 'is gone'}"


async def _element(ctx: CallContext, p: WaitForParams, limit: float) -> str:
    if p.ref is not None:
        # A ref names an element of the latest snapshot; it may be gone already (detached, hidden).
        element = ctx.page_state.ref_locator(p.ref) if ctx.page_state is not None else None
        what = p.ref
    else:
        element = ctx.page.get_by_role(p.role, name=p.name, exact=True).first  # type: ignore[arg-type]
        what = f"{p.role} {p.name!r}"
    assert element is not None
    await element.wait_for(state=p.state, timeout=ctx.timeout_ms(limit))
    return f"{what} is {p.state}"


async def _network_idle(ctx: CallContext, limit: float) -> str:
    from playwright.async_api import TimeoutError

    instance, page_state = ctx.require_instance(), ctx.require_page()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + min(limit, ctx.remaining_s())
    quiet_since = loop.time()
    while True:
        pending = [
            record
            for record in instance.evidence.network.records
            if isinstance(record, NetworkRecord) and record.page_id == page_state.page_id and record.state == "pending"
        ]  # an open WebSocket is not traffic in flight (nor is it for Playwright's networkidle)
        now = loop.time()
        if pending:
            quiet_since = now
        elif now - quiet_since >= NETWORK_QUIET_S:
            return f"no request in flight for {NETWORK_QUIET_S:g} s"
        if now >= deadline:
            raise TimeoutError("network idle")
        await asyncio.sleep(0.05)


def _pending(ctx: CallContext, p: WaitForParams) -> str:
    """What did not happen, for the timeout message."""
    if p.text is not None:
        return f"text {p.text!r} is not visible"
    if p.text_gone is not None:
        return f"text {p.text_gone!r} is still visible"
    if p.ref is not None or p.role is not None:
        what = p.ref if p.ref is not None else f"{p.role} {p.name!r}"
        return f"{what} is not {p.state}"
    if p.url is not None:
        return f"the URL is {ctx.page.url!r}, which does not match {p.url!r}"
    instance, page_state = ctx.require_instance(), ctx.require_page()
    urls = [
        r.request.url
        for r in instance.evidence.network.records
        if isinstance(r, NetworkRecord) and r.page_id == page_state.page_id and r.state == "pending"
    ]
    return f"{len(urls)} requests are still in flight ({', '.join(urls[:3])})"
