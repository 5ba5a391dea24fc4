"""WebMCP: the tools a page brings, discovered and called from the core.

Modes (``browser_create_instance(webmcp=...)``):

- ``native`` (default): Chromium's own WebMCP is switched on; every page's tools, in every
  frame, imperative and declarative (``<form toolname>``), are tracked through the DevTools
  ``WebMCP`` domain (``toolsAdded`` / ``toolsRemoved`` / ``toolInvoked`` / ``toolResponded``)
  and calls go through ``WebMCP.invokeTool``.
- ``page``: not switched on; only what the page brings itself (a polyfill). Discovery and calls
  go through the page's ``document.modelContext`` in JavaScript (see `webmcp_script`).
- ``polyfill``: as ``page``, after our own small polyfill is injected into every document.
- ``off``: no WebMCP at all; the WebMCP tools answer ``unsupported_capability``.

Interface for front ends and mirrors (everything runs on the runtime loop):

- ``PageState.webmcp`` is a `PageTools` (None when the instance's mode is ``off``);
  ``PageState.webmcp.tools`` is the page's current list of `PageTool`, read synchronously
  (main frame first, then registration order). ``await page_tools.settle()`` waits until the
  events received so far are applied; ``await page_tools.refresh()`` also waits for what the
  page did before the call (one round trip), as ``browser_webmcp_list`` does.
- ``Engine.add_webmcp_listener(fn) -> remove`` calls ``fn(event: WebMCPEvent)`` on the runtime
  loop for each change: ``added`` / ``removed`` (``event.tools``), ``cleared`` (the tools of a
  frame or page are gone: ``reason`` is ``navigation``, ``frame_detached`` or ``page_closed``),
  and for each invocation: ``invoked`` and ``responded`` (``tool_name``, ``invocation_id``,
  ``caller``: the session caller for calls made through the core, ``"page"`` for calls made
  inside the page). Every event names its ``instance`` and ``page_id``. ``Engine.webmcp_history``
  keeps the latest events for logs opened later.
- ``browser_webmcp_call(name, input, page_id?, frame_id?, timeout_s?)`` routes to one page/frame.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import functools
import json
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .errors import ToolFailure
from .listeners import Listeners
from .util import utc_now

if TYPE_CHECKING:
    from .pages import PageState

Mode = Literal["native", "page", "polyfill", "off"]
"""An instance's WebMCP mode (see the module docstring)."""
EventKind = Literal["added", "removed", "cleared", "invoked", "responded", "refused", "warning"]
HISTORY_SIZE = 500
# CDP annotation names -> the WebMCP (getTools) names.
HINTS = {"readOnly": "readOnlyHint", "consequential": "consequentialHint", "untrustedContent": "untrustedContentHint"}


@dataclass(frozen=True)
class PageTool:
    """One tool a page offers."""

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    annotations: dict[str, Any]
    origin: str
    frame_id: str | None
    kind: Literal["imperative", "declarative"]

    @property
    def read_only(self) -> bool:
        return bool(self.annotations.get("readOnlyHint"))

    @property
    def object_input(self) -> bool:
        """Whether the input schema's root is an object (or unconstrained). WebMCP passes every
        tool an object; a schema whose root is another type cannot describe that input."""
        return bool(self.input_schema.get("type", "object") == "object")

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "input_schema": self.input_schema,
            "annotations": self.annotations,
            "origin": self.origin,
            "frame_id": self.frame_id,
            "kind": self.kind,
        }


@dataclass(frozen=True)
class WebMCPEvent:
    """A change of a page's tools, or one invocation of a tool (see the module docstring)."""

    kind: EventKind
    instance: str
    page_id: str
    at: str = field(default_factory=utc_now)
    tools: tuple[PageTool, ...] = ()
    reason: str | None = None
    tool_name: str | None = None
    frame_id: str | None = None
    invocation_id: str | None = None
    caller: str | None = None
    input: Any = None
    status: Literal["completed", "error"] | None = None
    output: Any = None

    def summary(self) -> str:
        """One line for logs."""
        if self.kind == "warning":
            return f"warning: {self.reason}"
        if self.kind in ("added", "removed", "cleared"):
            names = ", ".join(tool.name for tool in self.tools) or "no tools"
            why = f" ({self.reason})" if self.reason else ""
            return f"{self.kind}: {names}{why}"
        if self.kind == "refused":
            return f"refused {self.tool_name or 'a call'}: {self.output}"
        if self.kind == "invoked":
            return f"invoked {self.tool_name} by {self.caller} with {json.dumps(self.input, default=str)[:200]}"
        detail = self.output if isinstance(self.output, str) else json.dumps(self.output, default=str)
        return f"responded {self.tool_name}: {self.status} {detail[:200]}"


class WebMCPHub:
    """Listeners and recent history of WebMCP events, shared by every instance of a session."""

    def __init__(self) -> None:
        self.listeners: Listeners[[WebMCPEvent]] = Listeners()
        self.history: deque[WebMCPEvent] = deque(maxlen=HISTORY_SIZE)
        # Takes the known secrets out of what invocations carry (see webmcp_nb.core.known_secrets).
        self.scrub: Callable[[Any], Any] | None = None

    def add_listener(self, listener: Callable[[WebMCPEvent], None]) -> Callable[[], None]:
        return self.listeners.add(listener)

    def emit(self, event: WebMCPEvent) -> None:
        if self.scrub is not None and event.kind not in ("added", "removed", "cleared"):
            scrub = self.scrub
            event = dataclasses.replace(
                event, input=scrub(event.input), output=scrub(event.output), reason=scrub(event.reason)
            )
        self.history.append(event)
        self.listeners.emit(event)


class CutOff(Exception):
    """A call's frame navigated, was detached or closed before the tool answered."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class PageToolError(Exception):
    """The page's tool threw (or the page refused the call)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class PageTools:
    """The tools of one page, kept current, and the calls to them.

    Subclasses supply discovery and invocation (`NativeTools`, `ScriptTools`); this base
    keeps the list, emits events and resolves a tool by name.
    """

    mode: Mode = "native"

    def __init__(self, state: PageState, instance: str, hub: WebMCPHub) -> None:
        self.state = state
        self.instance = instance
        self.hub = hub
        self._tools: dict[tuple[str, str], PageTool] = {}  # (frame key, name) -> tool
        self.closed = False

    # the view ------------------------------------------------------------------
    @property
    def tools(self) -> list[PageTool]:
        main = self.state.frame_id(self.state.page.main_frame)
        tools = list(self._tools.values())
        return [tool for tool in tools if tool.frame_id == main] + [tool for tool in tools if tool.frame_id != main]

    async def ready(self) -> None:
        """Return once tracking is in place (awaited before each page tool runs; instant after)."""

    async def settle(self) -> None:
        """Return once the tool list reflects what the page has reported so far."""

    async def refresh(self) -> None:
        """Return once the tool list reflects everything the page did before this call."""
        await self.settle()

    def find(self, name: str, frame_id: str | None) -> PageTool:
        """The tool `name` (in `frame_id` if given; the main frame's first), or `element_not_found`."""
        tools = self.tools
        matches = [tool for tool in tools if tool.name == name and (frame_id is None or tool.frame_id == frame_id)]
        main = self.state.frame_id(self.state.page.main_frame)
        if len(matches) > 1 and frame_id is None and not any(tool.frame_id == main for tool in matches):
            frames = ", ".join(str(tool.frame_id) for tool in matches)
            raise ToolFailure(
                "invalid_params",
                f"Page tool {name!r} is offered by several frames ({frames}); give frame_id.",
                started=False,
            )
        if matches:
            return next((tool for tool in matches if tool.frame_id == main), matches[0])
        where = f" in frame {frame_id}" if frame_id else ""
        offered = ", ".join(sorted({tool.name for tool in tools})) or "none"
        raise ToolFailure(
            "element_not_found",
            f"The page has no WebMCP tool {name!r}{where} (mode {self.mode}). Its tools: {offered}. "
            "Call browser_webmcp_list to see them with their input schemas.",
            started=False,
        )

    def key_of(self, tool: PageTool) -> str:
        """The frame key `tool` is stored under; `element_not_found` if it is gone meanwhile."""
        for (key, _name), known in self._tools.items():
            if known == tool:
                return key
        raise ToolFailure(
            "element_not_found",
            f"Page tool {tool.name!r} was unregistered before the call reached it; nothing ran.",
            started=False,
        )

    # changes ---------------------------------------------------------------------
    def emit(self, kind: EventKind, **fields: Any) -> None:
        self.hub.emit(WebMCPEvent(kind, self.instance, self.state.page_id, **fields))

    def _add(self, key: str, tools: list[PageTool]) -> None:
        changed = []
        for tool in tools:
            if self._tools.get((key, tool.name)) != tool:
                self._tools[(key, tool.name)] = tool
                changed.append(tool)
        if changed:
            self.emit("added", tools=tuple(changed))

    def _remove(self, key: str, names: list[str]) -> None:
        gone = [self._tools.pop((key, name)) for name in names if (key, name) in self._tools]
        if gone:
            self.emit("removed", tools=tuple(gone))

    def _clear(self, keys: set[str] | None, reason: str) -> None:
        """Forget the tools of the frames `keys` (None: every frame)."""
        gone = [tool for (key, _), tool in self._tools.items() if keys is None or key in keys]
        self._tools = {k: t for k, t in self._tools.items() if keys is not None and k[0] not in keys}
        if gone:
            self.emit("cleared", tools=tuple(gone), reason=reason)

    def close(self) -> None:
        """The page is gone: clear its tools and stop tracking."""
        if not self.closed:
            self.closed = True
            self._clear(None, "page_closed")

    # calls -------------------------------------------------------------------------
    async def invoke(self, tool: PageTool, arguments: dict[str, Any], caller: str, timeout_s: float) -> Any:
        """Run `tool` once with `arguments`; return the page's raw result (at most `timeout_s`).

        Raises `PageToolError` (the tool threw) or `CutOff` (navigation, detach, close).
        """
        raise NotImplementedError


def validate_input(tool: PageTool, arguments: dict[str, Any]) -> None:
    """Check `arguments` against the tool's inputSchema; `invalid_params` naming each problem.

    A schema that is itself invalid, or whose root is not an object (`PageTool.object_input`),
    cannot judge an input object: the page then decides.
    """
    if not tool.object_input:
        return
    validator = _validator(json.dumps(tool.input_schema, sort_keys=True))
    if validator is None:
        return
    errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
    if not errors:
        return
    problems = []
    for problem in errors[:5]:
        where = ".".join(str(part) for part in problem.path) or "(input)"
        message = problem.message if len(problem.message) <= 160 else problem.message[:157] + "..."
        problems.append(f"'{where}': {message}")
    more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
    raise ToolFailure(
        "invalid_params",
        f"Input for page tool {tool.name!r} does not match its inputSchema: "
        + "; ".join(problems)
        + more
        + ". Nothing was sent to the page.",
        started=False,
    )


@functools.lru_cache(maxsize=256)
def _validator(schema_json: str) -> Any:
    """A validator for a schema (checked once: checking a schema costs more than using it)."""
    jsonschema = _jsonschema()
    schema = json.loads(schema_json)
    validator_class = jsonschema.validators.validator_for(schema)
    try:
        validator_class.check_schema(schema)
    except jsonschema.SchemaError:
        return None
    return validator_class(schema)


def _jsonschema() -> Any:
    """`jsonschema`, imported without `rfc3987_syntax` when that is not loaded yet.

    jsonschema imports it (when installed, as Jupyter's format extras do) only for its opt-in
    ``iri`` format check, which is never used here, and importing it builds a grammar for
    ~2.5 s; the first page tool call would stall for that long.
    """
    import sys

    if "jsonschema" in sys.modules or "rfc3987_syntax" in sys.modules:
        import jsonschema

        return jsonschema
    sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]  # makes its import fail
    try:
        import jsonschema
    finally:
        del sys.modules["rfc3987_syntax"]
    return jsonschema


def map_result(result: Any) -> dict[str, Any]:
    """The page's result as envelope data: `structured`, MCP `content` (its image blocks
    decoded into `images`), or `text`.

    The native API returns a string (JSON for objects); a polyfill may return the object.
    """
    value = result
    if isinstance(result, str):
        try:
            value = json.loads(result)
        except ValueError:
            return {"text": result}
    if isinstance(value, dict):
        if isinstance(value.get("content"), list):
            content, images = _split_images(value["content"])
            mapped: dict[str, Any] = {"content": content}
            if images:
                mapped["images"] = images
            if isinstance(value.get("structuredContent"), dict):
                mapped["structured"] = value["structuredContent"]
            if isinstance(value.get("isError"), bool):
                mapped["is_error"] = value["isError"]
            return mapped
        return {"structured": value}
    if isinstance(result, str):
        return {"text": result}
    return {"text": json.dumps(value)}


def _split_images(blocks: list[Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """MCP content blocks without their image blocks, and those images decoded
    (``{data: bytes, mime_type}``): binary travels as bytes, never as base64 text."""
    content: list[dict[str, Any]] = []
    images: list[dict[str, Any]] = []
    for block in blocks:
        image = _decoded_image(block)
        if image is not None:
            images.append(image)
        elif isinstance(block, dict):
            content.append(block)
        else:  # not a block at all: kept, as the JSON text it is
            content.append({"type": "text", "text": json.dumps(block)})
    return content, images


def _decoded_image(block: Any) -> dict[str, Any] | None:
    if not (isinstance(block, dict) and block.get("type") == "image"):
        return None
    data, mime = block.get("data"), block.get("mimeType")
    if not (isinstance(data, str) and isinstance(mime, str) and mime.startswith("image/")):
        return None
    try:
        return {"data": base64.b64decode(data, validate=True), "mime_type": mime}
    except ValueError:
        return None


def content_text(blocks: list[Any]) -> str:
    """The text of an MCP result's text blocks, one per line."""
    return "\n".join(
        block["text"] for block in blocks if isinstance(block, dict) and isinstance(block.get("text"), str)
    )


async def wait_answer(future: asyncio.Future[Any], timeout_s: float, what: str) -> Any:
    """Await a tool's answer for at most `timeout_s` (`operation_timeout`, outcome unknown)."""
    try:
        return await asyncio.wait_for(asyncio.shield(future), timeout_s)
    except TimeoutError:
        raise ToolFailure(
            "operation_timeout",
            f"{what} did not answer within {timeout_s:g} s (timeout_s); it may still be running.",
        ) from None
