"""The accessibility snapshot with element refs."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from pydantic import Field

from ..browsers.aria import subtree
from ..call.errors import ToolFailure
from ..call.registry import tool
from ..guard.redaction import read_secret_fields, redact_snapshot
from .models import Data, FrameParams, Ref
from .saving import HEAD_LINES, SAVE_DESCRIPTION, SavedFile, save_text

if TYPE_CHECKING:
    from ..call.context import CallContext


class SnapshotParams(FrameParams):
    ref: Ref | None = Field(None, description="Only this element's subtree.")
    depth: int | None = Field(None, ge=1, le=1000)
    save: bool = Field(False, description=SAVE_DESCRIPTION)


class SnapshotData(Data):
    url: str
    title: str
    snapshot: str | None = Field(
        description="YAML accessibility tree; [ref=...] marks elements tools can act on. Null with save=true."
    )
    saved: SavedFile | None = Field(None, description="With save=true: the file that holds the snapshot.")


@tool(
    name="browser_snapshot",
    title="Accessibility snapshot",
    description="The page's accessibility tree as YAML, with [ref=e12] handles for the other tools (stale once "
    "the page changes).",
    params=SnapshotParams,
    data=SnapshotData,
    target="page",
    read_only=True,
    idempotent=True,
    too_large_hint="Ways out: ref= (one element's subtree), depth= (fewer levels), frame_id= (one frame), or "
    f"save=true (the whole snapshot to a file; returns its path and first {HEAD_LINES} lines).",
)
async def snapshot(ctx: CallContext, p: SnapshotParams) -> SnapshotData:
    page_state, frame = ctx.require_page(), ctx.require_frame()
    # A snapshot scoped to an element would replace Playwright's ref table for the
    # frame, so `ref` is cut out of the full snapshot instead.
    depth = None if p.ref else p.depth
    whole_page = frame is ctx.page.main_frame
    root = ctx.page if whole_page else frame.locator(":root")
    # The title travels alongside the snapshot, read from the browser process so that it
    # does not queue behind the snapshot in the renderer.
    timeout = ctx.capture_timeout_ms
    capture = ctx.capture(
        root.aria_snapshot(mode="ai", depth=depth, timeout=timeout), "the accessibility snapshot", timeout
    )
    # The secret fields' values are read beside the snapshot (see webmcp_nb.core.guard.redaction),
    # unless the last one of this document showed no filled field (a page without forms).
    no_fields = page_state.without_filled_fields == (page_state.document_generation, frame)
    secrets = read_secret_fields(frame, timeout, before=not no_fields)
    title = page_state.known_title()  # read at DOMContentLoaded, usually
    try:  # the call's cookie read goes out right behind the page's text (`CallContext.last_read`)
        if title is None:
            yaml, title = await ctx.last_read(asyncio.gather(capture, page_state.title()))
        else:
            yaml = await ctx.last_read(capture)
    except BaseException:
        secrets.release()
        raise
    # A depth-limited snapshot hides deeper refs but Playwright still resolves them,
    # so it adds to the refs of the last full snapshot instead of replacing them.
    page_state.record_snapshot(yaml, replace=whole_page and depth is None)
    yaml = await redact_snapshot(ctx.page, yaml, secrets)
    page_state.without_filled_fields = None if secrets.filled else (page_state.document_generation, frame)
    if p.ref:
        part = subtree(yaml, p.ref, p.depth)
        if part is None:
            await page_state.locate(p.ref)  # raises element_not_found or stale_ref
            raise ToolFailure("stale_ref", f"Ref {p.ref} is not in this frame's snapshot.", started=False)
        yaml = part
    if p.save:
        saved = await save_text(ctx, "snapshot", ".yaml", yaml)
        return SnapshotData(url=ctx.page.url, title=title, snapshot=None, saved=saved)
    return SnapshotData(url=ctx.page.url, title=title, snapshot=yaml)
