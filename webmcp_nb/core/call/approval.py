"""Approval: which calls wait for a person, decided once, by what the call will do.

A front end passes its policy (``none``, ``consequential``, ``all``) and an approver as its terms
(`webmcp_nb.core.call.hub.Caller`, which refuses a policy without an approver); the engine
judges every call's consequence here, whatever tool name reached it:

- a tool's own annotations, by its arguments: read-only (``browser_http`` GET/HEAD/OPTIONS),
  consequential (destructive tools, a ``browser_http`` POST, launch options beyond a grant
  without ``browser``), or ordinary;
- a tool that dispatches to something with hints of its own (`ToolSpec.consequence`:
  ``browser_webmcp_call`` and the page tool it calls, mirrored or not, Python ones included)
  takes that target's.

A dispatching handler confirms what it actually reached (`CallContext.confirm`): a target that
appeared or changed after approval was judged, and needs more, is refused, not run.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..guard.grants import widens_grant

if TYPE_CHECKING:
    from ..webmcp.discovery import PageTool
    from .registry import ToolSpec

Policy = Literal["consequential", "all", "none"]
"""Which calls wait: consequential ones, every one that is not read-only, or none."""
Consequence = Literal["read_only", "ordinary", "consequential"]
_RANK: dict[Consequence, int] = {"read_only": 0, "ordinary": 1, "consequential": 2}


@dataclass(frozen=True)
class ApprovalRequest:
    """A call that waits for a person's approval before it runs."""

    tool: str
    args: dict[str, Any]
    caller: str
    instance: str | None
    page_id: str | None
    url: str | None
    preview: dict[str, Any] | None = None
    """What the call would send, from its tool's `ToolSpec.preview` (an API operation: method, url,
    headers with secret ones redacted, body): exactly what runs if it is approved."""


def approval_summary(request: ApprovalRequest) -> str:
    """Who wants to do what, where: the text of an approval prompt."""
    where = f" on {request.url}" if request.url else ""
    args = ", ".join(f"{key}={value!r}" for key, value in request.args.items())
    return f"{request.caller} wants {request.tool}({args}){where}"


def preview_text(request: ApprovalRequest) -> str:
    """The request's preview as an HTTP request's text ("" without one): request line, headers, body."""
    preview = request.preview
    if not preview:
        return ""
    lines = [f"{preview.get('method', '')} {preview.get('url', '')}".strip()]
    lines += [f"{name}: {value}" for name, value in (preview.get("headers") or {}).items()]
    if preview.get("body") is not None:
        lines += ["", json.dumps(preview["body"], indent=2, ensure_ascii=False)]
    return "\n".join(lines)


Approval = Callable[[ApprovalRequest], Awaitable[str | None]]
"""Decides an `ApprovalRequest`: None approves; a string denies, saying why."""


def asks(policy: Policy, consequence: Consequence) -> bool:
    """Whether `policy` asks before a call of `consequence` (read-only calls never wait)."""
    if consequence == "read_only" or policy == "none":
        return False
    return policy == "all" or consequence == "consequential"


def exceeds(consequence: Consequence, judged: Consequence) -> bool:
    return _RANK[consequence] > _RANK[judged]


def of_tool(spec: ToolSpec, args: Any, default_headless: bool) -> Consequence:
    """A call's consequence by its tool's annotations and arguments."""
    if spec.call_is_read_only(args):
        return "read_only"
    if spec.destructive or widens_grant(spec.name, args, default_headless):
        return "consequential"
    return "ordinary"


def of_page_tool(tool: PageTool) -> Consequence:
    """A page tool's consequence by its WebMCP hints."""
    if tool.annotations.get("consequentialHint"):
        return "consequential"
    return "read_only" if tool.read_only else "ordinary"
