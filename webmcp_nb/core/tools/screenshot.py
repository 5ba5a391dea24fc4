"""Screenshots of the page or one element, downscaled for models by default."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import importlib
import io
import math
from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import Field, model_validator

from ..call.errors import ToolFailure
from ..call.registry import tool
from ..guard.closed_shadow import closed_secret_fields_painted
from ..guard.redaction import MASK_COLOR, secret_field_masks
from .images import image_size
from .models import Data, PageParams, Ref

if TYPE_CHECKING:
    from ..browsers.pages import PageState
    from ..call.context import CallContext

MAX_SIDE = 1568


class ScreenshotParams(PageParams):
    format: Literal["png", "jpeg"] = "png"
    quality: int | None = Field(None, ge=1, le=100, description="JPEG quality (default 80).")
    full_page: bool = False
    ref: Ref | None = Field(None, description="Only this element.")
    original: bool = Field(False, description="Not scaled down.")
    save: bool = Field(False, description="Also as an artifact.")

    @model_validator(mode="after")
    def _consistent(self) -> ScreenshotParams:
        if self.ref and self.full_page:
            raise ValueError("full_page and ref cannot be combined")
        if self.quality is not None and self.format != "jpeg":
            raise ValueError("quality applies only to format='jpeg'")
        return self


class ScreenshotData(Data):
    image: bytes = Field(description="The encoded image (base64 in JSON).")
    mime_type: Literal["image/png", "image/jpeg"]
    width: int
    height: int
    source_width: int
    source_height: int
    scaled: bool
    url: str


@tool(
    name="browser_screenshot",
    title="Screenshot",
    description=f"Screenshot the viewport, the full page or an element, scaled to at most {MAX_SIDE} px.",
    params=ScreenshotParams,
    data=ScreenshotData,
    target="page",
    read_only=True,
    too_large_hint="Use format='jpeg', a lower quality, a ref, or no full_page.",
)
async def screenshot(ctx: CallContext, p: ScreenshotParams) -> ScreenshotData:
    # The page as it is: a read-only tool neither finishes animations nor hides the caret.
    options: dict[str, Any] = {"type": p.format, "animations": "allow", "caret": "initial"}
    if p.format == "jpeg":
        options["quality"] = p.quality or 80
    timeout = ctx.capture_timeout_ms
    # Password and one-time-code fields are painted over (see webmcp_nb.core.guard.redaction).
    checking = ctx.capture(secret_field_masks(ctx.page), "the page's secret fields", timeout)
    chromium = ctx.instance is not None and ctx.instance.options.is_chromium
    viewport = not p.ref and not p.full_page and chromium
    fonts = ctx.capture(fonts_ready(ctx.require_page()), "web fonts", timeout) if viewport else asyncio.sleep(0)
    async with contextlib.AsyncExitStack() as painting:
        # What must precede the capture goes out at once, not one step after another: the budget
        # check, the secret fields, the fast capture's wait for web fonts, and the painting of
        # secret fields in closed shadow roots, which masks cannot reach (undone once the capture
        # is done, or when anything refuses it; nothing is captured then).
        answers = await asyncio.gather(
            check_budget(ctx, p),
            checking,
            fonts,
            painting.enter_async_context(closed_secret_fields_painted(ctx.page, chromium)),
            return_exceptions=True,
        )
        failure = next((answer for answer in answers if isinstance(answer, BaseException)), None)
        if failure is not None:
            raise failure
        device, masks = cast("tuple[int, int]", answers[0]), cast("list[Any]", answers[1])
        if not p.original and max(device) > MAX_SIDE:
            require_pillow(device)  # before anything is captured
        if masks:
            options.update(mask=masks, mask_color=MASK_COLOR)
        if p.ref:
            # An element first waits to be visible, like any action.
            locator, timeout = await ctx.locate(p.ref), ctx.action_timeout_ms
            image = await ctx.last_read(
                ctx.capture(
                    locator.screenshot(timeout=timeout, **options),
                    f"element {p.ref} to be visible and captured",
                    timeout,
                )
            )
        else:
            if viewport and not masks:
                capture = capture_viewport(ctx.page_state, p.format, options.get("quality"))  # type: ignore[arg-type]
            else:
                capture = ctx.page.screenshot(full_page=p.full_page, timeout=timeout, **options)
            image = await ctx.last_read(ctx.capture(capture, "the page to be captured", timeout))
    # Decoding and resizing a long page takes a while: off the event loop, which serves every instance.
    image, size, source = await asyncio.to_thread(
        downscale, image, p.format, p.quality or 80, None if p.original else MAX_SIDE
    )
    if p.save:
        path = ctx.engine.artifact_path("screenshot", f".{p.format}")
        path.write_bytes(image)
        ctx.artifacts.append(str(path))
    return ScreenshotData(
        image=image,
        mime_type=f"image/{p.format}",
        width=size[0],
        height=size[1],
        source_width=source[0],
        source_height=source[1],
        scaled=size != source,
        url=ctx.page.url,
    )


async def check_budget(ctx: CallContext, p: ScreenshotParams) -> tuple[int, int]:
    """Refuse, before anything is captured, a screenshot over the session's pixel budget (a huge
    capture can take the renderer down): measured through the browser, not the page's script.
    Returns the capture's size in device pixels."""
    limits = ctx.engine.limits
    width, height, scale = await capture_size(ctx, p)
    device = (math.ceil(width * scale), math.ceil(height * scale))
    if max(device) <= limits.max_capture_side and device[0] * device[1] <= limits.max_capture_pixels:
        return device
    what = f"element {p.ref}" if p.ref else "the full page" if p.full_page else "the viewport"
    ways = {
        "ref": "the ref of a smaller element inside it",
        "full_page": "a ref (one element), or no full_page (the viewport)",
        "viewport": "a ref (one element), or a smaller viewport (browser_create_instance viewport=...)",
    }["ref" if p.ref else "full_page" if p.full_page else "viewport"]
    raise ToolFailure(
        "invalid_params",
        f"A screenshot of {what} would be {device[0]} x {device[1]} px ({device[0] * device[1]:,} pixels), over "
        f"the capture budget of {limits.max_capture_side:,} px on the longest side and "
        f"{limits.max_capture_pixels:,} pixels; nothing was captured. Ways out: {ways}.",
        started=False,
    )


async def capture_size(ctx: CallContext, p: ScreenshotParams) -> tuple[float, float, float]:
    """(width, height) in CSS px of what the screenshot would capture, and the device pixel ratio."""
    page_state, instance = ctx.require_page(), ctx.require_instance()
    scale = 1.0
    if instance.options.is_chromium:
        cdp = await page_state.cdp()
        metrics = await ctx.capture(cdp.send("Page.getLayoutMetrics"), "the page's size", ctx.capture_timeout_ms)
        css, content = metrics["cssContentSize"], metrics["contentSize"]
        scale = max(1.0, content["width"] / css["width"]) if css["width"] else 1.0
        viewport = metrics["cssVisualViewport"]
        page = (css["width"], css["height"])
        view = (viewport["clientWidth"], viewport["clientHeight"])
    else:
        measured = await ctx.capture(ctx.page.evaluate(PAGE_SIZE_JS), "the page's size", ctx.capture_timeout_ms)
        scale = max(1.0, float(measured["scale"]))
        page, view = (measured["width"], measured["height"]), (measured["viewWidth"], measured["viewHeight"])
    if p.ref:
        locator, timeout = await ctx.locate(p.ref), ctx.action_timeout_ms
        await ctx.capture(locator.wait_for(state="visible", timeout=timeout), f"element {p.ref} to be visible", timeout)
        box = await ctx.capture(locator.bounding_box(timeout=timeout), f"element {p.ref}'s size", timeout)
        return (box["width"], box["height"], scale) if box else (0.0, 0.0, scale)
    width, height = page if p.full_page else view
    return float(width), float(height), scale


# Outside Chromium: the page's own report (its script could understate it; Chromium measures itself).
PAGE_SIZE_JS = """() => {
  const root = document.documentElement, body = document.body || root;
  return { width: Math.max(root.scrollWidth, body.scrollWidth), height: Math.max(root.scrollHeight, body.scrollHeight),
           viewWidth: innerWidth, viewHeight: innerHeight, scale: devicePixelRatio };
}"""


async def fonts_ready(page_state: PageState) -> None:
    """Return once the page's web fonts have loaded (Chromium: through its DevTools session)."""
    cdp = await page_state.cdp()
    await cdp.send("Runtime.evaluate", {"expression": "document.fonts.ready.then(() => 0)", "awaitPromise": True})


async def capture_viewport(page_state: PageState, fmt: str, quality: int | None) -> bytes:
    """The viewport as Chromium draws it (after `fonts_ready`).

    Straight through the page's DevTools session, with the encoder set for speed: a
    1280x720 PNG takes about half as long as through `page.screenshot`, for a file
    about 40% larger. Full pages keep the smaller encoding.
    """
    cdp = await page_state.cdp()
    params: dict[str, Any] = {"format": fmt, "optimizeForSpeed": True}
    if quality is not None:
        params["quality"] = quality
    return base64.b64decode((await cdp.send("Page.captureScreenshot", params))["data"])


def downscale(
    image: bytes, fmt: str, quality: int, max_side: int | None
) -> tuple[bytes, tuple[int, int], tuple[int, int]]:
    """Return (image, size, source size), shrinking so the longest side is at most `max_side`."""
    source = image_size(image)
    if source is None:
        raise ToolFailure("internal_error", f"The browser's capture is not a {fmt.upper()} image.")
    if max_side is None or max(source) <= max_side:
        return image, source, source
    require_pillow(source)
    from PIL import Image

    with Image.open(io.BytesIO(image)) as picture:
        ratio = max_side / max(source)
        size = (max(1, round(source[0] * ratio)), max(1, round(source[1] * ratio)))
        rgb = picture if picture.mode == "RGB" else picture.convert("RGB")
        # reducing_gap: shrink by whole factors first, then Lanczos; ten times faster on long pages.
        resized = rgb.resize(size, Image.Resampling.LANCZOS, reducing_gap=3.0)
    out = io.BytesIO()
    if fmt == "jpeg":
        resized.save(out, "JPEG", quality=quality)
    else:
        resized.save(out, "PNG", optimize=False)
    return out.getvalue(), size, source


def require_pillow(size: tuple[int, int]) -> None:
    """Scaling down takes Pillow, which the notebook extra leaves out (the mcp extra brings it)."""
    try:
        importlib.import_module("PIL.Image")
    except ImportError:
        raise ToolFailure(
            "unsupported_capability",
            f"This screenshot is {size[0]} x {size[1]} px, and scaling it down to {MAX_SIDE} px takes Pillow, "
            "which is not installed. Install it (pip install pillow), or pass original=true for the unscaled image.",
            started=False,
        ) from None
