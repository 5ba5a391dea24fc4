"""The live view, call log and approval prompt as an MCP App (the MCP UI extension).

A host that renders apps (it advertises the `io.modelcontextprotocol/ui` extension) reads
`ui://webmcp-nb/live`, a static page built at build time from app/ (see app/README.md), and
shows it in a sandboxed frame beside the results of the tools that change or show the page. The
page talks to this server only through its host, with the app-only tools below (visibility
``["app"]``: hosts hide them from the model). They go through the same token, grant and call
engine as any call: a click on the view is `browser_mouse_click_xy` (the `vision` grant), and
an approval reaches the one decision the core waits for, whoever answers first.

Clients that do not advertise the extension are sent exactly what they were sent before: no
`_meta`, no app-only tools, no resource.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any

import mcp_types as types
from pydantic import BaseModel, Field

from ..core.call.approval import Approval, ApprovalRequest, approval_summary
from ..core.call.registry import validate_arguments
from ..core.tools.models import Params
from .schemas import agent_input_schema

if TYPE_CHECKING:
    from ..client import Session
    from ..core.browsers.live import LiveFrame, LiveView

APP_URI = "ui://webmcp-nb/live"
APP_MIME_TYPE = "text/html;profile=mcp-app"
UI_EXTENSION = "io.modelcontextprotocol/ui"
APP_META: dict[str, Any] = {"ui": {"resourceUri": APP_URI}}
"""What a tool that changes or shows the page carries, for hosts that render apps."""
APP_ONLY: dict[str, Any] = {"ui": {"resourceUri": APP_URI, "visibility": ["app"]}}
# No network at all: everything the page needs is inlined, and frames arrive as tool results.
RESOURCE_META: dict[str, Any] = {"ui": {"csp": {"connectDomains": [], "resourceDomains": []}, "prefersBorder": True}}

STATE_TOOL, CLICK_TOOL, DECIDE_TOOL = "webmcp_nb_app_state", "webmcp_nb_app_click", "webmcp_nb_app_decide"
APP_FPS = 5.0
"""The most frames a second the view streams (the app asks for the newest; older ones are dropped)."""
LOG_ROWS = 20
IDLE_S = 30.0
"""The view stops streaming when no app has asked for this long (the next ask starts it again)."""
APP_CALLER = "app"


def renders_apps(capabilities: types.ClientCapabilities | None) -> bool:
    """Whether a client advertised the UI extension (and its HTML profile)."""
    extensions = (capabilities.extensions if capabilities is not None else None) or {}
    settings = extensions.get(UI_EXTENSION)
    if not isinstance(settings, dict):
        return False
    mime_types = settings.get("mimeTypes")
    return mime_types is None or APP_MIME_TYPE in mime_types


def app_html() -> str:
    """The bundled app (webmcp_nb/mcp/static/live.html, built by `make app`)."""
    return (resources.files(__package__) / "static" / "live.html").read_text(encoding="utf-8")


def app_resource() -> types.Resource:
    return types.Resource(
        uri=APP_URI,
        name="live",
        title="webmcp_nb live view",
        description="The live browser view, the call log and pending approvals (an MCP App).",
        mime_type=APP_MIME_TYPE,
        meta=RESOURCE_META,
    )


def app_contents() -> types.ReadResourceResult:
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=APP_URI, mime_type=APP_MIME_TYPE, text=app_html(), meta=RESOURCE_META)]
    )


class StateParams(Params):
    after: int | None = Field(None, ge=0)  # the version the app shows: answer once there is a newer one
    frame: int | None = Field(None, ge=0)  # the frame it shows: not sent again


class ClickParams(Params):
    x: float  # bounded as browser_mouse_click_xy bounds them (the call it becomes)
    y: float


class DecideParams(Params):
    id: int = Field(ge=1)
    approve: bool


@dataclass(frozen=True)
class AppTool:
    """An app-only tool: declared by its params model, described and validated as every tool is."""

    name: str
    description: str
    params: type[Params]

    def describe(self) -> types.Tool:
        schema = agent_input_schema(self.params.model_json_schema())
        return types.Tool(name=self.name, description=self.description, input_schema=schema, meta=APP_ONLY)

    def validate(self, arguments: Any) -> BaseModel:
        """The parsed arguments, or `InvalidParams` in the words every tool's bad input gets."""
        return validate_arguments(self.name, self.params, arguments)


APP_TOOLS = {
    tool.name: tool
    for tool in (
        AppTool(STATE_TOOL, "The current tab's newest frame, the call log, pending approvals.", StateParams),
        AppTool(CLICK_TOOL, "Click at a point of the view (CSS pixels of the page).", ClickParams),
        AppTool(DECIDE_TOOL, "Approve or deny a pending call.", DecideParams),
    )
}


def app_tools() -> list[types.Tool]:
    return [tool.describe() for tool in APP_TOOLS.values()]


@dataclass
class Pending:
    id: int
    request: ApprovalRequest
    summary: str
    decision: asyncio.Future[bool]
    decided_by: str | None = None


@dataclass
class AppHub:
    """What the app shows and answers, one per server: the newest frame (the view starts on the
    first ask and keeps only the newest frame), and the approvals waiting now."""

    session: Session
    approver: Approval | None = None  # the one the app races (the notebook's panel): it times out
    pending: dict[int, Pending] = field(default_factory=dict)
    decided: list[dict[str, Any]] = field(default_factory=list)
    _frame: LiveFrame | None = None
    _seq: int = 0
    _version: int = 0  # counts every change the app shows: frames, requests, decisions
    _view: LiveView | None = None
    _unlisten: Callable[[], None] | None = None
    _asked: float = 0.0
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    # frames -------------------------------------------------------------------
    def _on_frame(self, frame: LiveFrame) -> None:
        self._frame, self._seq = frame, self._seq + 1  # the older frame, if unread, is dropped
        self._version += 1
        if self._view is not None and time.monotonic() - self._asked > IDLE_S:  # nobody watches
            self._view.stop()
            self._view = None

    async def _ensure_view(self) -> None:
        if self._view is None:
            from ..core.browsers.live import LiveView

            self._view = LiveView(self.session.engine, self._on_frame, max_fps=APP_FPS, quality=60, max_width=960)
            await self._view.start()
        if self._unlisten is None:
            self._unlisten = self.session.add_listener(self._on_call)

    def _on_call(self, record: object) -> None:  # a call finished: the log changed
        self._version += 1

    def close(self) -> None:
        if self._view is not None:
            self._view.stop()
        if self._unlisten is not None:
            self._unlisten()

    async def state(self, after: int | None, seen: int | None = None, timeout_s: float = 2.0) -> types.CallToolResult:
        """The newest frame (left out if it is frame `seen`), the log and the prompts, once something
        changed since version `after` (or `timeout_s` passed): the app asks again when answered."""
        self._asked = time.monotonic()
        await self._ensure_view()
        deadline = time.monotonic() + timeout_s
        while (self._frame is None or (after is not None and self._version <= after)) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        scrub = self.session.engine.manager.secrets.scrub
        calls = [
            {"caller": record.caller, "tool": record.tool, "status": record.envelope.status}
            for record in list(self.session.engine.history)[-LOG_ROWS:]
        ]
        state: dict[str, Any] = {
            "seq": self._seq,
            "version": self._version,
            "calls": calls,
            "pending": [{"id": p.id, "summary": scrub(p.summary)} for p in self.pending.values()],
            "decided": self.decided[-5:],
        }
        content: list[Any] = []
        frame = self._frame
        if frame is not None and self._seq != seen:
            state["frame"] = {"width": frame.viewport_width, "height": frame.viewport_height, "url": scrub(frame.url)}
            content.append(
                types.ImageContent(
                    type="image", data=base64.b64encode(frame.data).decode("ascii"), mime_type="image/jpeg"
                )
            )
        return types.CallToolResult(content=[*content, types.TextContent(type="text", text="state")],
                                    structured_content=state)  # fmt: skip

    # approvals ----------------------------------------------------------------
    def approval(self) -> Approval:
        """The one decision: the app's buttons and `approver` (the notebook panel, if any) race, the first wins."""

        async def decide(request: ApprovalRequest) -> str | None:
            loop = asyncio.get_running_loop()
            pending = Pending(next(self._ids), request, approval_summary(request), loop.create_future())
            self.pending[pending.id] = pending
            self._version += 1
            other = asyncio.ensure_future(self.approver(request)) if self.approver is not None else None
            try:
                waits: set[asyncio.Future[Any]] = {pending.decision, *([other] if other else [])}
                done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                if pending.decision in done:
                    approved = pending.decision.result()
                    verdict = None if approved else f"The user denied {request.tool} in the app; it was not run."
                    by = APP_CALLER
                else:
                    assert other is not None
                    verdict, by = other.result(), "notebook"
            finally:
                self.pending.pop(pending.id, None)
                if other is not None and not other.done():  # the panel's row goes, saying who decided what
                    settled = pending.decision.done() and not pending.decision.cancelled()
                    other.cancel(
                        f"{'approved' if pending.decision.result() else 'denied'} in the app" if settled else None
                    )
            self.decided.append({"id": pending.id, "approved": verdict is None, "by": by})
            self._version += 1
            return verdict

        return decide

    def answer(self, id: int, approve: bool) -> bool:
        """Settle pending request `id` (False if it is not pending: answered already, or never asked)."""
        pending = self.pending.get(id)
        if pending is None or pending.decision.done():
            return False
        pending.decision.set_result(approve)
        return True
