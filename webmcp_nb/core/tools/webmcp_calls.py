"""The page's own WebMCP tools: list them, call one."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, StringConstraints, field_validator

from ..browsers.observe import Observe, ObserveField
from ..call.approval import Consequence, of_page_tool
from ..call.errors import ToolFailure
from ..call.registry import tool
from ..guard.secret_fields import block_in_json_text, block_secrets
from ..webmcp.discovery import (
    CutOff,
    Mode,
    PageToolError,
    content_text,
    map_result,
    multi_round,
    output_problems,
    validate_input,
)
from .models import ActionData, Data, FrameParams

if TYPE_CHECKING:
    from ..browsers.pages import PageState
    from ..call.context import CallContext
    from ..webmcp.discovery import PageTools

MAX_INPUT_BYTES = 262_144
LOOKUP_S = 2.0  # how long judging a call waits for a page tool it does not know yet


class PageToolInfo(Data):
    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    annotations: dict[str, Any] = Field(
        description="WebMCP hints: readOnlyHint, consequentialHint, untrustedContentHint, ..."
    )
    origin: str
    frame_id: str | None
    kind: Literal["imperative", "declarative"]
    output_schema: dict[str, Any] | None = Field(
        None, description="The outputSchema the page declared (checked on each call; see the README)."
    )


class WebMCPListData(Data):
    url: str
    mode: Mode
    tools: list[PageToolInfo]


class WebMCPListParams(FrameParams):
    frame_id: Annotated[str, StringConstraints(min_length=1, max_length=64)] | None = Field(
        None, description="Only this frame's; default: all."
    )


def page_tools(ctx: CallContext) -> PageTools:
    page_state, instance = ctx.require_page(), ctx.require_instance()
    tools = page_state.webmcp
    if tools is None:
        raise ToolFailure(
            "unsupported_capability",
            f"WebMCP is off for instance {instance.name!r}; create an instance with webmcp='native', "
            "'page' or 'polyfill'.",
            started=False,
        )
    return tools


@tool(
    name="browser_webmcp_list",
    title="List page tools (WebMCP)",
    description="List the page's WebMCP tools (every frame) with their schemas and annotations.",
    params=WebMCPListParams,
    data=WebMCPListData,
    target="page",
    read_only=True,
    idempotent=True,
    too_large_hint="Ask for one frame with frame_id.",
)
async def webmcp_list(ctx: CallContext, p: WebMCPListParams) -> WebMCPListData:
    tools = page_tools(ctx)
    await tools.refresh()
    found = [info for info in tools.tools if p.frame_id is None or info.frame_id == p.frame_id]
    return WebMCPListData(
        url=ctx.page.url,
        mode=tools.mode,
        tools=[PageToolInfo(**info.to_dict()) for info in found],
    )


class WebMCPCallParams(FrameParams):
    name: Annotated[str, StringConstraints(min_length=1, max_length=256)] = Field(
        description="From browser_webmcp_list."
    )
    input: dict[str, Any] = Field(default_factory=dict, description="As its inputSchema says.")
    timeout_s: float | None = Field(None, gt=0, le=600, description="Default: the operation timeout.")
    frame_id: Annotated[str, StringConstraints(min_length=1, max_length=64)] | None = Field(
        None,
        description="Default: the main frame's tool, else the only one.",
    )
    observe: Observe | None = ObserveField

    @field_validator("input")
    @classmethod
    def _bounded(cls, value: dict[str, Any]) -> dict[str, Any]:
        try:
            size = len(json.dumps(value))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"the input must be JSON ({exc})") from None
        if size > MAX_INPUT_BYTES:
            raise ValueError(f"the input is {size} bytes of JSON, over {MAX_INPUT_BYTES}")
        return value


class PageImage(Data):
    data: bytes = Field(description="The image (base64 in JSON; an image block over MCP).")
    mime_type: str


class WebMCPCallData(ActionData):
    tool: str | None = None
    frame_id: str | None = None
    structured: dict[str, Any] | None = Field(None, description="The tool's result when it is a JSON object.")
    content: list[dict[str, Any]] | None = Field(
        None, description="An MCP-style result's content blocks, passed through except its images."
    )
    images: list[PageImage] | None = Field(None, description="The image blocks of an MCP-style result, decoded.")
    is_error: bool | None = Field(
        None,
        description="An MCP-style result's isError (always false here: isError true gives an evaluation_failed error).",
    )
    text: str | None = Field(None, description="The tool's result when it is not a JSON object.")
    blocked_fields: list[str] | None = Field(
        None,
        description="Secret JSON fields of the result (password, token, ...) whose values were replaced by [blocked].",
    )
    warnings: list[str] | None = Field(
        None, description="What is wrong with the result (it does not match the tool's outputSchema)."
    )


async def called_tool_consequence(ctx: CallContext, p: WebMCPCallParams, page: PageState | None) -> Consequence:
    """A call is as consequential as the page tool it reaches, by that tool's hints. A tool not
    found is judged read-only: the call then fails, or `confirm` refuses a tool that came later."""
    tools = page.webmcp if page is not None else None
    if tools is None:
        return "read_only"
    for catch_up in (None, tools.refresh):
        if catch_up is not None:  # a tool registered a moment ago (a busy page: what is known)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(catch_up(), LOOKUP_S)
        with contextlib.suppress(ToolFailure):
            return of_page_tool(tools.find(p.name, p.frame_id))
    return "read_only"


@tool(
    name="browser_webmcp_call",
    title="Call a page tool (WebMCP)",
    description="Call a page's WebMCP tool; returns `structured` (a JSON object), `content` and `images` (an MCP "
    "result) or `text`. isError, a multi-round result and, for agents, a result off its outputSchema: "
    "evaluation_failed.",
    params=WebMCPCallParams,
    data=WebMCPCallData,
    target="page",
    open_world=True,
    too_large_hint="Ask the tool for less.",
    positional=("name", "input"),
    consequence=called_tool_consequence,
)
async def webmcp_call(ctx: CallContext, p: WebMCPCallParams) -> WebMCPCallData:
    page_state = ctx.require_page()
    tools = page_tools(ctx)
    # A call judged for approval sees the page's tools as they are now (hints the page changed
    # after the judging included), not as they were last reported.
    await (tools.refresh() if ctx.judged is not None else tools.settle())
    try:
        found = tools.find(p.name, p.frame_id)
    except ToolFailure:  # perhaps registered a moment ago: look again, after a round trip
        await tools.refresh()
        found = tools.find(p.name, p.frame_id)
    validate_input(found, p.input)
    ctx.confirm(of_page_tool(found), f"Page tool {found.name!r}")
    if found.frame_id is not None:
        ctx.frame = page_state.frame(found.frame_id)
    timeout_s = min(p.timeout_s or math.inf, ctx.remaining_s())
    try:
        result = await tools.invoke(found, p.input, ctx.caller, timeout_s, ctx.last_read)
    except PageToolError as exc:
        raise ToolFailure(
            "evaluation_failed", f"Page tool {p.name!r} failed: {exc.message}", read_only=found.read_only
        ) from None
    except CutOff as exc:
        raise ToolFailure(
            "evaluation_failed",
            f"Page tool {p.name!r} was cut off: {exc.why} before it answered. Its result is lost; it may or "
            "may not have taken effect.",
            read_only=found.read_only,
        ) from None
    if multi_round(result.value):
        raise ToolFailure(
            "evaluation_failed",
            f"Page tool {p.name!r} answered with a multi-round result (input_required): it asks for more input "
            "before it completes, which a call cannot give. Its partial result is not returned.",
            read_only=found.read_only,
        )
    mapped = map_result(result)
    if mapped.get("is_error"):
        said = content_text(mapped["content"]) or "(no text)"
        raise ToolFailure(
            "evaluation_failed", f"Page tool {p.name!r} reported an error: {said}", read_only=found.read_only
        )
    problems = output_problems(found, result, mapped)
    if problems and ctx.from_agent:
        raise ToolFailure(
            "evaluation_failed",
            f"Page tool {p.name!r} ran, but its result does not match its outputSchema: {problems}. "
            "The result is not returned.",
            completed=True,
            read_only=found.read_only,
        )
    warnings = [f"the result does not match the tool's outputSchema: {problems}"] if problems else None
    blocked = block_result_secrets(mapped)
    return WebMCPCallData(
        url=ctx.page.url, tool=found.name, frame_id=found.frame_id, blocked_fields=blocked, warnings=warnings, **mapped
    )


def block_result_secrets(mapped: dict[str, Any]) -> list[str] | None:
    """Block secret JSON fields in a mapped result, in place: `structured`, JSON `text`, and JSON
    text content blocks. Returns the blocked paths (None: nothing was blocked)."""
    blocked: list[str] = []
    if isinstance(mapped.get("structured"), dict):
        mapped["structured"], found = block_secrets(mapped["structured"], path="structured")
        blocked += found
    if isinstance(mapped.get("text"), str):
        mapped["text"], found = block_in_json_text(mapped["text"], "text")
        blocked += found
    for index, block in enumerate(mapped.get("content") or []):
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            block["text"], found = block_in_json_text(block["text"], f"content[{index}].text")
            blocked += found
    return blocked or None
