"""Running JavaScript in the page."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field, StringConstraints

from ..registry import ToolFailure, tool
from ..util import first_lines
from .models import ActionData, FrameParams, Ref

if TYPE_CHECKING:
    from ..context import CallContext


class EvaluateParams(FrameParams):
    expression: Annotated[str, StringConstraints(min_length=1, max_length=100_000)] = Field(
        description="A JavaScript expression, or a function such as '() => document.title'. With `ref`, "
        "a function that receives the element: 'el => el.textContent'."
    )
    ref: Ref | None = None


class EvaluateData(ActionData):
    result: Any = Field(None, description="The JSON-serialisable result (functions and DOM nodes become null or {}).")


@tool(
    name="browser_evaluate",
    title="Evaluate JavaScript",
    description="Evaluate JavaScript in the page (or on one element) and return its JSON result.",
    params=EvaluateParams,
    data=EvaluateData,
    target="page",
    group="js",
    destructive=True,  # arbitrary script can do anything the page can
    open_world=True,
    too_large_hint="Return less from the expression.",
)
async def evaluate(ctx: CallContext, p: EvaluateParams) -> EvaluateData:
    from playwright.async_api import Error

    assert ctx.frame is not None
    target = await ctx.locate(p.ref) if p.ref else ctx.frame
    try:
        result = await target.evaluate(p.expression)
    except Error as exc:
        if ctx.page.is_closed():
            raise
        raise ToolFailure("evaluation_failed", f"The page raised: {first_lines(exc.message, 12)}") from None
    return EvaluateData(url=ctx.page.url, result=result)
