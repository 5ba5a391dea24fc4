"""Running JavaScript in the page."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field, StringConstraints

from ..call.errors import ToolFailure
from ..call.registry import tool
from ..call.util import first_lines
from ..guard.secret_fields import block_secrets
from .models import ActionData, FrameParams, Ref
from .saving import HEAD_LINES, SAVE_DESCRIPTION, SavedFile, save_text

if TYPE_CHECKING:
    from ..call.context import CallContext


class EvaluateParams(FrameParams):
    expression: Annotated[str, StringConstraints(min_length=1, max_length=100_000)] = Field(
        description="An expression or a function ('() => document.title'; with ref: 'el => el.textContent')."
    )
    ref: Ref | None = None
    save: bool = Field(False, description=SAVE_DESCRIPTION)


class EvaluateData(ActionData):
    result: Any = Field(
        None,
        description="The JSON-serialisable result (functions and DOM nodes become null or {}). Null with save=true.",
    )
    saved: SavedFile | None = Field(None, description="With save=true: the file that holds the result.")
    blocked_fields: list[str] | None = Field(
        None,
        description="Secret fields of a JSON result (password, token, ...) whose values were replaced by [blocked].",
    )


@tool(
    name="browser_evaluate",
    title="Evaluate JavaScript",
    description="Evaluate JavaScript in the page (or on an element); returns its JSON result.",
    params=EvaluateParams,
    data=EvaluateData,
    target="page",
    group="js",
    destructive=True,  # arbitrary script can do anything the page can
    open_world=True,
    too_large_hint="Ways out: return less from the expression (one element with ref=), or save=true (the whole "
    f"result to a file; returns its path and first {HEAD_LINES} lines).",
)
async def evaluate(ctx: CallContext, p: EvaluateParams) -> EvaluateData:
    from playwright.async_api import Error

    frame = ctx.require_frame()
    target = await ctx.locate(p.ref) if p.ref else frame
    try:
        result = await target.evaluate(p.expression)
    except Error as exc:
        if ctx.page.is_closed():
            raise
        raise ToolFailure("evaluation_failed", f"The page raised: {first_lines(exc.message, 12)}") from None
    result, blocked = block_secrets(result)
    if p.save:
        text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, indent=2)
        saved = await save_text(ctx, "evaluate", ".txt" if isinstance(result, str) else ".json", text)
        return EvaluateData(url=ctx.page.url, result=None, saved=saved, blocked_fields=blocked or None)
    return EvaluateData(url=ctx.page.url, result=result, blocked_fields=blocked or None)
