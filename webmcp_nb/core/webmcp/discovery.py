"""WebMCP: the tools a page brings, discovered and called from the core.

Modes (``browser_create_instance(webmcp=...)``):

- ``native`` (default): Chromium's own WebMCP is switched on; every page's tools, in every
  frame, imperative and declarative (``<form toolname>``), are tracked through the DevTools
  ``WebMCP`` domain (``toolsAdded`` / ``toolsRemoved`` / ``toolInvoked`` / ``toolResponded``)
  and calls go through ``WebMCP.invokeTool``.
- ``page``: not switched on; only what the page brings itself (a polyfill). Discovery and calls
  go through the page's ``document.modelContext`` in JavaScript (see `webmcp.script`).
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
  and for each invocation: ``invoked``, then ``responded`` or ``cancelled`` (the caller went away
  or timed out, or the page cancelled it) (``tool_name``, ``invocation_id``, ``caller``: the
  session caller for calls made through the core, ``"page"`` for calls made inside the page). Every event names its ``instance`` and ``page_id``. ``Engine.webmcp_history``
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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..call.errors import ToolFailure
from ..call.listeners import Listeners
from ..call.util import utc_now

if TYPE_CHECKING:
    from ..browsers.pages import PageState

Mode = Literal["native", "page", "polyfill", "off"]
"""An instance's WebMCP mode (see the module docstring)."""
EventKind = Literal["added", "removed", "cleared", "invoked", "responded", "cancelled", "refused", "warning"]
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
    output_schema: dict[str, Any] | None = None  # what the page declared at registerTool (see webmcp_capture)

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
            "output_schema": self.output_schema,
        }


@dataclass(frozen=True)
class PageResult:
    """A page tool's answer: `value` (its JSON value, as far as known) and `raw`, the exact
    string the page's context produced (None when only the parsed value is known)."""

    value: Any
    raw: str | None = None

    @classmethod
    def from_page(cls, result: Any) -> PageResult:
        """A result read in the page (`executeTool`): a string is the raw text, JSON or not."""
        if not isinstance(result, str):
            return cls(result)
        try:
            return cls(json.loads(result), result)
        except ValueError:
            return cls(result, result)


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
        if self.kind == "cancelled":
            return f"cancelled {self.tool_name}: {self.output}"
        if self.kind == "invoked":
            return f"invoked {self.tool_name} by {self.caller} with {json.dumps(self.input, default=str)[:200]}"
        detail = self.output if isinstance(self.output, str) else json.dumps(self.output, default=str)
        return f"responded {self.tool_name}: {self.status} {detail[:200]}"


class WebMCPHub:
    """Listeners and recent history of WebMCP events, shared by every instance of a session."""

    def __init__(self) -> None:
        self.listeners: Listeners[[WebMCPEvent]] = Listeners()
        self.history: deque[WebMCPEvent] = deque(maxlen=HISTORY_SIZE)
        # Takes the known secrets out of what invocations carry (see webmcp_nb.core.guard.known_secrets).
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


# A read of the page a call makes last, with the call's closing cookie read sent right behind it.
LastRead = Callable[[Awaitable[Any]], Awaitable[Any]]


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
    async def invoke(
        self, tool: PageTool, arguments: dict[str, Any], caller: str, timeout_s: float, last_read: LastRead
    ) -> PageResult:
        """Run `tool` once with `arguments`; return the page's result (at most `timeout_s`). A read of
        the page made once the tool has answered goes through `last_read` (`CallContext.last_read`).

        Raises `PageToolError` (the tool threw) or `CutOff` (navigation, detach, close). A call
        that times out or whose caller goes away is cancelled in the page where the browser can
        (a ``cancelled`` event either way).
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
    problems = _problems(validator, arguments, lambda problem: problem.message)
    if problems:
        raise ToolFailure(
            "invalid_params",
            f"Input for page tool {tool.name!r} does not match its inputSchema: {problems}. "
            "Nothing was sent to the page.",
            started=False,
        )


def schema_problems(schema: dict[str, Any], instance: Any) -> str:
    """How `instance` misses `schema` ("'path': message; ...", "" when it matches or the schema is invalid)."""
    validator = _validator(json.dumps(schema, sort_keys=True))
    return _problems(validator, instance, lambda problem: problem.message) if validator is not None else ""


def checked_output_schema(tool: PageTool) -> dict[str, Any] | None:
    """The tool's outputSchema when it is a valid JSON Schema (None: none, or one nothing can be checked against)."""
    schema = tool.output_schema
    if schema is None or _validator(json.dumps(schema, sort_keys=True)) is None:
        return None
    return schema


def output_problems(tool: PageTool, result: PageResult, mapped: dict[str, Any]) -> str:
    """How the result misses the tool's outputSchema ("" when it matches or there is nothing to check).

    What is checked is its structured content: an MCP result's structuredContent, any other
    JSON value as it is. The problems name paths and the schema's rules, never the page's values."""
    schema = checked_output_schema(tool)
    if schema is None:
        return ""
    if "content" in mapped and mapped.get("structured") is None:
        return "it returned MCP content without structuredContent"
    instance = mapped["structured"] if mapped.get("structured") is not None else result.value
    return _problems(_validator(json.dumps(schema, sort_keys=True)), instance, _rule)


def _rule(problem: Any) -> str:
    if problem.validator in ("required", "additionalProperties", "dependentRequired"):
        return str(problem.message)  # names properties, not values
    rule = json.dumps(problem.validator_value, ensure_ascii=False)
    return f"does not satisfy {problem.validator} {rule if len(rule) <= 80 else rule[:77] + '...'}"


def _problems(validator: Any, instance: Any, said: Callable[[Any], str]) -> str:
    """The first five problems of `instance` ("'path': what"), "" when it is valid."""
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.path))
    found = []
    for problem in errors[:5]:
        where = ".".join(str(part) for part in problem.path) or "(root)"
        message = said(problem)
        found.append(f"'{where}': {message if len(message) <= 160 else message[:157] + '...'}")
    more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
    return "; ".join(found) + more


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


def multi_round(value: Any) -> bool:
    """Whether a result asks for more input before it completes (``{status: "input_required"}``, or
    MCP's ``resultType: "input_required"``): a multi-round result, which a call cannot continue."""
    return isinstance(value, dict) and "input_required" in (value.get("status"), value.get("resultType"))


def map_result(result: PageResult) -> dict[str, Any]:
    """The page's result as envelope data:

    - a valid MCP ``CallToolResult`` (`is_call_tool_result`): its `content` (image blocks decoded
      into `images`), `structured` (its structuredContent) and `is_error`;
    - any other JSON object: `structured`;
    - anything else: `text`, exactly as the page's context produced it (the raw string when it
      is known: a JSON string keeps its quotes, ``[1, 2 ]`` its spaces).
    """
    value = result.value
    if isinstance(value, dict):
        if not is_call_tool_result(value):
            return {"structured": value}
        content, images = _split_images(value["content"])
        mapped: dict[str, Any] = {"content": content}
        if images:
            mapped["images"] = images
        if value.get("structuredContent") is not None:
            mapped["structured"] = value["structuredContent"]
        if "isError" in value:
            mapped["is_error"] = value["isError"]
        return mapped
    if result.raw is not None:
        return {"text": result.raw}
    if isinstance(value, str):
        return {"text": value}
    return {"text": json.dumps(value, ensure_ascii=False, separators=(",", ":"))}


_BLOCK_FIELDS = {
    "text": ("text",),
    "image": ("data", "mimeType"),
    "audio": ("data", "mimeType"),
    "resource_link": ("uri", "name"),
}


def is_call_tool_result(value: dict[str, Any]) -> bool:
    """Whether `value` is a valid MCP ``CallToolResult``: a `content` list of MCP content blocks
    (text, image, audio, resource_link, resource), an object or no structuredContent, a boolean
    or no isError. A rich-text document such as ``{type: "doc", content: [...]}`` is not."""
    content, structured = value.get("content"), value.get("structuredContent")
    return (
        isinstance(content, list)
        and all(_is_block(block) for block in content)
        and (structured is None or isinstance(structured, dict))
        and isinstance(value.get("isError", False), bool)
    )


def _is_block(block: Any) -> bool:
    if not isinstance(block, dict):
        return False
    if block.get("type") == "resource":
        resource = block.get("resource")
        return (
            isinstance(resource, dict)
            and isinstance(resource.get("uri"), str)
            and (isinstance(resource.get("text"), str) or isinstance(resource.get("blob"), str))
        )
    fields = _BLOCK_FIELDS.get(block.get("type"))  # type: ignore[arg-type]
    return fields is not None and all(isinstance(block.get(name), str) for name in fields)


def _split_images(blocks: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """MCP content blocks without their image blocks, and those images decoded
    (``{data: bytes, mime_type}``): binary travels as bytes, never as base64 text."""
    content: list[dict[str, Any]] = []
    images: list[dict[str, Any]] = []
    for block in blocks:
        image = _decoded_image(block)
        if image is not None:
            images.append(image)
        else:
            content.append(block)
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
