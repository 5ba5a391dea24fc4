"""WebMCP without native support: through the page's own ``document.modelContext`` in JavaScript.

Used in the ``page`` and ``polyfill`` modes (and by browsers without the DevTools WebMCP
domain). The tool list is read with ``getTools()`` in every frame: on each list and call,
after each page load, and after each navigation but the main frame's to a new document (whose
tools go at once; its load reads the new ones). A frame whose document changed (its
``performance.timeOrigin``) has its old tools cleared first.

Calling conventions differ: the native API takes an input *object*, some polyfills a JSON
*string* (``JSON.parse(input)``). The input is passed once, as an object whose string form is
its JSON, which both read correctly, so a tool is never run twice to find out which one the
page wanted.

A tool's ``outputSchema`` is read from the polyfill's own tool list (MCP-B's ``listTools()`` and
our polyfill keep it). A call that times out or whose caller goes away cannot be cancelled in
the page through ``executeTool``; it is reported as ``cancelled`` all the same.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ..call.errors import ToolFailure
from ..call.util import origin_label, spawn
from .discovery import CutOff, LastRead, PageResult, PageTool, PageToolError, PageTools, WebMCPHub, wait_answer

if TYPE_CHECKING:
    from playwright.async_api import Frame

    from ..browsers.pages import PageState
    from .discovery import Mode

LIST_TIMEOUT_S = 5.0

LIST_JS = """async () => {
  const mc = document.modelContext;
  const list = mc && (mc.getTools || mc.listTools);
  if (typeof list !== "function") return null;
  const tools = await list.call(mc);
  const form = (name) => document.querySelector(`form[toolname="${CSS.escape(name)}"]`);
  return {
    document: performance.timeOrigin,
    tools: tools.map((t) => ({
      name: String(t.name),
      title: t.title || "",
      description: t.description || "",
      inputSchema: typeof t.inputSchema === "string" ? JSON.parse(t.inputSchema) : t.inputSchema || null,
      outputSchema: typeof t.outputSchema === "string" ? JSON.parse(t.outputSchema) : t.outputSchema || null,
      annotations: t.annotations || {},
      origin: t.origin || location.origin,
      declarative: !!form(String(t.name)),
    })),
  };
}"""

CALL_JS = """async ([name, input]) => {
  const mc = document.modelContext;
  const list = mc && (mc.getTools || mc.listTools);
  if (typeof list !== "function" || typeof mc.executeTool !== "function") return { missing: true };
  const tool = (await list.call(mc)).find((t) => t.name === name);
  if (!tool) return { missing: true };
  const json = JSON.stringify(input);
  const both = Object.assign({}, input);
  for (const key of ["toString", Symbol.toPrimitive]) Object.defineProperty(both, key, { value: () => json });
  try {
    return { result: await mc.executeTool(tool, both) };
  } catch (e) {
    return { error: (e && e.message) || String(e) };
  }
}"""

# Our own polyfill (mode "polyfill"): the native API's shape; accepts an object or a JSON string.
POLYFILL_JS = """(() => {
  if ("modelContext" in document) return;
  const tools = new Map();
  class ModelContext extends EventTarget {
    registerTool(descriptor, options = {}) {
      const { name, title = "", description = "", inputSchema, outputSchema, annotations, execute } = descriptor || {};
      if (typeof name !== "string" || !name) throw new TypeError("registerTool: the tool needs a name");
      if (typeof execute !== "function") throw new TypeError("registerTool: the tool needs an execute function");
      if (tools.has(name)) throw new DOMException(`Tool ${name} is already registered`, "InvalidStateError");
      const signal = options.signal;
      if (signal && signal.aborted) return;
      tools.set(name, { name, title, description, inputSchema: inputSchema || { type: "object", properties: {} },
                        outputSchema, annotations, execute });
      if (signal) signal.addEventListener("abort", () => {
        if (tools.delete(name)) this.dispatchEvent(new Event("toolchange"));
      }, { once: true });
      this.dispatchEvent(new Event("toolchange"));
    }
    async getTools() {
      return [...tools.values()].map(({ execute, ...tool }) => ({ ...tool, origin: location.origin }));
    }
    async executeTool(tool, input) {
      const entry = tools.get(tool && typeof tool === "object" ? tool.name : tool);
      if (!entry) throw new DOMException("Tool not found", "NotFoundError");
      const args = typeof input === "string" ? JSON.parse(input) : input || {};
      const result = await entry.execute(args);
      return typeof result === "string" ? result : JSON.stringify(result);
    }
  }
  Object.defineProperty(document, "modelContext", { value: new ModelContext(), configurable: true });
})();"""

CUT_OFF = ("Execution context was destroyed", "Frame was detached", "has been closed", "Target closed")


class ScriptTools(PageTools):
    def __init__(self, state: PageState, instance: str, hub: WebMCPHub, mode: Mode) -> None:
        super().__init__(state, instance, hub)
        self.mode = mode
        self._documents: dict[str, float | None] = {}  # frame id -> performance.timeOrigin of the document read
        self._lock = asyncio.Lock()
        self._documents_loaded = 0  # new main-frame documents seen: a read begun before one is dropped
        state.page.on("load", lambda _page: self._refresh_soon())
        state.page.on("framenavigated", self._navigated)  # after the PageState's own listener

    def _navigated(self, frame: Frame) -> None:
        """A frame navigated. When the main frame has a new document, the old one's tools are gone
        and the new one's are read at its load (one read per page load instead of two)."""
        if frame is not self.state.page.main_frame or not self.state.loads_document:
            self._refresh_soon()
            return
        self._documents_loaded += 1
        key = self.state.frame_id(frame)
        self._documents.pop(key, None)
        self._clear({key}, "navigation")

    def _refresh_soon(self) -> None:
        if not self.closed:
            spawn(self.settle()).add_done_callback(lambda task: task.exception())

    async def settle(self) -> None:
        """Read every frame's tools now."""
        async with self._lock:
            frames = self.state.frames()
            keys = {self.state.frame_id(frame) for frame in frames}
            self._clear(set(self._documents) - keys, "frame_detached")
            for key in set(self._documents) - keys:
                del self._documents[key]
            for frame in frames:
                await self._read(frame)

    async def _read(self, frame: Frame) -> None:
        key = self.state.frame_id(frame)
        documents = self._documents_loaded
        try:
            found = await asyncio.wait_for(frame.evaluate(LIST_JS), LIST_TIMEOUT_S)
        except Exception:  # noqa: BLE001 - navigating, detached or busy: read again later
            return
        if documents != self._documents_loaded:
            return  # it may have read the document the tab has left; the new one's load reads again
        document = found["document"] if found else None
        if key in self._documents and self._documents[key] != document:
            self._clear({key}, "navigation")
        self._documents[key] = document
        tools = [
            PageTool(
                name=tool["name"],
                title=tool["title"],
                description=tool["description"],
                input_schema=tool["inputSchema"] or {"type": "object", "properties": {}},
                annotations=tool["annotations"],
                origin=tool["origin"] or origin_label(frame.url),
                frame_id=key,
                kind="declarative" if tool["declarative"] else "imperative",
                output_schema=tool["outputSchema"] if isinstance(tool["outputSchema"], dict) else None,
            )
            for tool in (found["tools"] if found else [])
        ]
        names = {tool.name for tool in tools}
        self._remove(key, [name for (k, name) in list(self._tools) if k == key and name not in names])
        self._add(key, tools)

    async def invoke(
        self, tool: PageTool, arguments: dict[str, Any], caller: str, timeout_s: float, last_read: LastRead
    ) -> PageResult:
        from playwright.async_api import Error

        frame = self.state.frame(tool.frame_id)
        self.emit("invoked", tool_name=tool.name, frame_id=tool.frame_id, caller=caller, input=arguments)
        try:
            answer = await wait_answer(
                asyncio.ensure_future(frame.evaluate(CALL_JS, [tool.name, arguments])),
                timeout_s,
                f"Page tool {tool.name!r}",
            )
        except (ToolFailure, asyncio.CancelledError) as exc:  # timed out, or the caller went away
            why = "timed out" if isinstance(exc, ToolFailure) else "the caller went away"
            self.emit("cancelled", tool_name=tool.name, caller=caller, output=f"{why}; it may still run in the page")
            raise
        except Error as exc:
            if any(marker in exc.message for marker in CUT_OFF):
                self.emit("responded", tool_name=tool.name, caller=caller, status="error", output=exc.message)
                raise CutOff("the page navigated or closed") from None
            raise
        if answer.get("missing"):
            self.emit("responded", tool_name=tool.name, caller=caller, status="error", output="not found")
            raise ToolFailure(
                "element_not_found",
                f"Page tool {tool.name!r} is no longer offered by the page; nothing ran. "
                "Call browser_webmcp_list to see the current tools.",
                started=False,
            )
        if "error" in answer:
            self.emit("responded", tool_name=tool.name, caller=caller, status="error", output=answer["error"])
            raise PageToolError(str(answer["error"]))
        self.emit("responded", tool_name=tool.name, caller=caller, status="completed", output=answer.get("result"))
        self._refresh_soon()  # a tool may register or remove tools
        return PageResult.from_page(answer.get("result"))
