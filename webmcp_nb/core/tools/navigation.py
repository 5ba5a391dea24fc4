"""Navigation: go to a URL, back, forward, reload."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from ..browsers.observe import Observe, ObserveField
from ..call.errors import ToolFailure
from ..call.registry import tool
from .models import AbsoluteUrl, ActionData, PageParams

if TYPE_CHECKING:
    from playwright.async_api import Response

    from ..call.context import CallContext

WaitUntil = Literal["commit", "domcontentloaded", "load", "networkidle"]


class NavigateParams(PageParams):
    url: AbsoluteUrl = Field(description="Absolute: https://, http://, about:blank (others if granted).")
    wait_until: WaitUntil = Field("load")
    observe: Observe | None = ObserveField


class WaitParams(PageParams):
    wait_until: WaitUntil = "load"


class ReloadParams(WaitParams):
    force: bool = Field(
        False,
        description="In a fresh renderer: the way out for a tab stuck in script (same page_id).",
    )


class PageData(ActionData):
    title: str | None = None
    status: int | None = Field(None, description="HTTP status of the main document, if any.")
    moved: bool | None = Field(None, description="For back/forward: whether there was history to move through.")


def check_url(ctx: CallContext, url: str | None) -> None:
    """Refuse a URL the caller's grant does not allow (before anything is done)."""
    if url is not None and ctx.grant is not None:
        ctx.grant.check_url(url)


async def _page_data(ctx: CallContext, response: Response | None, moved: bool | None = None) -> PageData:
    url, state = ctx.page.url, ctx.require_page()
    title = await ctx.last_read(state.shown_title())
    if title is None:  # asked of the page after the cookie read went out: the engine reads them again
        ctx.cookie_read = None
        title = await ctx.page.title()
    return PageData(url=url, title=title, status=response.status if response is not None else None, moved=moved)


async def _navigation(
    ctx: CallContext, action: str, method: Callable[..., Awaitable[Response | None]], *args: str, wait_until: WaitUntil
) -> Response | None:
    """Run a Playwright navigation method, mapping its failures to navigation errors."""
    from playwright.async_api import Error, TimeoutError

    timeout_ms = ctx.navigation_timeout_ms
    try:
        return await method(*args, wait_until=wait_until, timeout=timeout_ms)
    except TimeoutError:
        raise ToolFailure(
            "navigation_timeout",
            f"{action} did not reach '{wait_until}' within {timeout_ms / 1000:g} s; the page may be partly loaded.",
        ) from None
    except Error as exc:
        blocked = ctx.instance.blocked_navigation if ctx.instance is not None else None
        if blocked and "ERR_BLOCKED_BY_CLIENT" in exc.message:
            await _error_page_shown(ctx)
            raise ToolFailure("navigation_failed", f"{action} failed: {blocked}") from None
        if "net::" in exc.message or "NS_ERROR" in exc.message or "Cannot navigate" in exc.message:
            raise ToolFailure("navigation_failed", f"{action} failed: {exc.message.splitlines()[0]}") from None
        raise


ERROR_PAGE_WAIT_MS = 2_000


async def _error_page_shown(ctx: CallContext) -> None:
    """Chromium shows a refused navigation's error page a moment after the navigation failed:
    wait for it (at most ERROR_PAGE_WAIT_MS), so that it cannot interrupt the next navigation."""
    from playwright.async_api import Error

    page = ctx.page
    if ctx.instance is None or not ctx.instance.options.is_chromium or page.url.startswith("chrome-error:"):
        return
    with contextlib.suppress(Error):  # not shown in time (or the tab closed): nothing more to wait for
        await page.wait_for_event(
            "framenavigated",
            predicate=lambda frame: frame == page.main_frame and frame.url.startswith("chrome-error:"),
            timeout=ERROR_PAGE_WAIT_MS,
        )


@tool(
    name="browser_navigate",
    title="Navigate",
    description="Load a URL; returns the final URL, title and HTTP status.",
    params=NavigateParams,
    data=PageData,
    target="page",
    open_world=True,
    check=lambda ctx, p: check_url(ctx, p.url),
)
async def navigate(ctx: CallContext, p: NavigateParams) -> PageData:
    response = await _navigation(ctx, f"Navigation to {p.url}", ctx.page.goto, p.url, wait_until=p.wait_until)
    return await _page_data(ctx, response)


@tool(
    name="browser_navigate_back",
    title="Go back",
    description="Go back in the tab's history (`moved`: false if it could not).",
    params=WaitParams,
    data=PageData,
    target="page",
)
async def navigate_back(ctx: CallContext, p: WaitParams) -> PageData:
    return await _through_history(ctx, "Going back", ctx.page.go_back, p.wait_until)


@tool(
    name="browser_navigate_forward",
    title="Go forward",
    description="Go forward in the tab's history (`moved`: false if it could not).",
    params=WaitParams,
    data=PageData,
    target="page",
)
async def navigate_forward(ctx: CallContext, p: WaitParams) -> PageData:
    return await _through_history(ctx, "Going forward", ctx.page.go_forward, p.wait_until)


async def _through_history(
    ctx: CallContext, action: str, move: Callable[..., Awaitable[Response | None]], wait_until: WaitUntil
) -> PageData:
    before = _position(ctx)
    response = await _navigation(ctx, action, move, wait_until=wait_until)
    return await _page_data(ctx, response, moved=response is not None or _position(ctx) != before)


def _position(ctx: CallContext) -> tuple[str, int]:
    """Where the tab is in its history, as far as can be seen without a round trip."""
    return ctx.page.url, ctx.page_state.document_generation  # type: ignore[union-attr]


@tool(
    name="browser_reload",
    title="Reload",
    description="Reload the tab.",
    params=ReloadParams,
    data=PageData,
    target="page",
    open_world=True,
    recovers_page=True,
)
async def reload(ctx: CallContext, p: ReloadParams) -> PageData:
    state, instance = ctx.require_page(), ctx.require_instance()
    if not (p.force or state.crashed_at):
        if state.unresponsive:
            raise state.unhealthy_error("browser_reload without force=true")
        response = await _navigation(ctx, "Reload", ctx.page.reload, wait_until=p.wait_until)
        return await _page_data(ctx, response)
    url = state.page.url
    ctx.page_state = await instance.reopen(state)
    ctx.frame = ctx.page.main_frame
    response = None
    if url and url != "about:blank":
        response = await _navigation(ctx, f"Loading {url} again", ctx.page.goto, url, wait_until=p.wait_until)
    return await _page_data(ctx, response)
