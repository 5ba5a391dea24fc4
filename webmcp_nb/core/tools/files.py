"""Files on the server's disk: downloads and PDF export (capability groups `files` and `pdf`)."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints

from ..call.errors import ToolFailure
from ..call.registry import tool
from .models import Data, Identifier, InstanceParams, PageParams

if TYPE_CHECKING:
    from ..browsers.downloads import DownloadRecord
    from ..call.context import CallContext

MAX_WAIT_S = 30
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


# downloads --------------------------------------------------------------------------
class DownloadsParams(InstanceParams):
    download_id: Identifier | None = Field(None, description="Only this one.")
    wait_s: float = Field(
        0,
        ge=0,
        le=MAX_WAIT_S,
        description="Wait this long for a new download to start and finish.",
    )


class DownloadInfo(BaseModel):
    download_id: str
    page_id: str
    url: str
    suggested_filename: str
    started_at: str
    state: Literal["in_progress", "completed", "failed"]
    path: str | None = Field(description="The saved copy (finished downloads only).")
    size_bytes: int | None
    error: str | None


class DownloadsData(Data):
    downloads: list[DownloadInfo]


@tool(
    name="browser_downloads",
    title="Downloads",
    description="List this instance's downloads, oldest first; each finished one is saved as an artifact (`path`).",
    params=DownloadsParams,
    data=DownloadsData,
    target="instance",
    group="files",
    read_only=True,
)
async def downloads(ctx: CallContext, p: DownloadsParams) -> DownloadsData:
    instance = ctx.require_instance()
    tracked = instance.downloads
    deadline = time.monotonic() + p.wait_s
    if p.download_id is not None:
        if p.download_id not in tracked.records:
            raise ToolFailure(
                "download_not_found",
                f"No download {p.download_id} in instance {instance.name!r}; call browser_downloads to list them.",
                started=False,
            )
        chosen = [tracked.records[p.download_id]]
    else:
        if p.wait_s > 0 and not tracked.unreported() and not await tracked.next_arrival(p.wait_s):
            raise ToolFailure(
                "download_not_found",
                f"No new download started in instance {instance.name!r} within {p.wait_s:g} s.",
            )
        chosen = list(tracked.records.values())
    unfinished = [asyncio.ensure_future(record.finished.wait()) for record in chosen if not record.finished.is_set()]
    if unfinished:
        remaining = max(0.0, deadline - time.monotonic())
        _, waiting = await asyncio.wait(unfinished, timeout=remaining) if remaining else (set(), set(unfinished))
        for waiter in waiting:
            waiter.cancel()
    infos = [await _saved(ctx, record) for record in chosen]
    if p.download_id is not None and chosen[0].state == "failed":
        raise ToolFailure(
            "download_failed", f"The download of {chosen[0].download.url} failed: {chosen[0].error}.", read_only=True
        )
    return DownloadsData(downloads=infos)


async def _saved(ctx: CallContext, record: DownloadRecord) -> DownloadInfo:
    """Describe `record`, copying a newly finished download into the artifacts first."""
    download = record.download
    if record.state == "completed" and record.path is None:
        name = _UNSAFE_NAME.sub("_", Path(download.suggested_filename).name).strip("._") or "download"
        path = ctx.engine.artifact_path("download", f"-{name}")
        await download.save_as(path)
        record.path = str(path)
        ctx.artifacts.append(record.path)
    record.reported = True
    return DownloadInfo(
        download_id=record.download_id,
        page_id=record.page_id,
        url=download.url,
        suggested_filename=download.suggested_filename,
        started_at=record.started_at,
        state=record.state,
        path=record.path,
        size_bytes=Path(record.path).stat().st_size if record.path else None,
        error=record.error,
    )


# PDF ----------------------------------------------------------------------------------
PageRanges = Annotated[
    str,
    StringConstraints(pattern=r"^\s*\d+(\s*-\s*\d+)?(\s*,\s*\d+(\s*-\s*\d+)?)*\s*$", max_length=200),
    Field(description="Pages to include, such as '1-3, 5' (default: all)."),
]


class PdfParams(PageParams):
    paper: Literal["A4", "Letter", "Legal", "A3", "Tabloid"] = "A4"
    landscape: bool = False
    print_background: bool = Field(True, description="Background colours and images.")
    page_ranges: PageRanges | None = None


class PdfData(Data):
    path: str = Field(description="The PDF, under the session's artifacts directory.")
    size_bytes: int
    url: str


@tool(
    name="browser_pdf",
    title="Save as PDF",
    description="Print the tab to a PDF artifact file; returns its path. Headless Chromium only.",
    params=PdfParams,
    data=PdfData,
    target="page",
    group="pdf",
    read_only=True,
)
async def pdf(ctx: CallContext, p: PdfParams) -> PdfData:
    from playwright.async_api import Error

    instance = ctx.require_instance()
    if not instance.options.headless or not instance.options.is_chromium:
        raise ToolFailure(
            "unsupported_capability",
            f"PDF export needs a headless Chromium; instance {instance.name!r} is not one "
            "(create one with browser_create_instance(headless=true)).",
            started=False,
        )
    try:
        document = await ctx.capture(
            ctx.page.pdf(
                format=p.paper,
                landscape=p.landscape,
                print_background=p.print_background,
                page_ranges=p.page_ranges or "",
            ),
            "the PDF to be printed",
            ctx.capture_timeout_ms,
        )
    except Error as exc:
        if "page range" in exc.message.lower():
            raise ToolFailure(
                "invalid_params",
                f"page_ranges {p.page_ranges!r} asks for pages the document does not have.",
                started=False,
            ) from None
        raise
    path = ctx.engine.artifact_path("page", ".pdf")
    path.write_bytes(document)
    ctx.artifacts.append(str(path))
    return PdfData(path=str(path), size_bytes=len(document), url=ctx.page.url)
