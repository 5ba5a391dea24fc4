"""Native WebMCP (Chromium), through the DevTools ``WebMCP`` domain.

Events arrive on the page's CDP session and are applied one at a time, in order, by one
task: tool lists (``toolsAdded`` / ``toolsRemoved``, cleared when a frame navigates or is
detached) and invocations (``toolInvoked`` / ``toolResponded``), whoever made them. A call is
``WebMCP.invokeTool``; its answer is the matching ``toolResponded``, unless the frame navigates
first (then it is cut off: the browser answers such calls late with an empty result, or never).
A call that times out or whose caller goes away is cancelled (``WebMCP.cancelInvocation``: the
tool's ``AbortSignal`` fires, and the browser answers ``Canceled``, a ``cancelled`` event).

What the protocol drops is captured in the page by `CAPTURE_JS`, an init script in every
document: it wraps ``registerTool`` and so sees each descriptor before the browser does. It
keeps the tool's ``outputSchema`` (Chromium 156 accepts and drops it: neither ``getTools()`` nor
``toolsAdded`` carries it) and the exact text of each non-object result (the protocol's
``output`` is that text parsed as JSON: the string ``"quoted"`` arrives as ``quoted``). A call
asks for its text as it is sent (`NEXT_RAW_JS`), so the text comes back as the tool ends, beside
the answer, not one round trip after it. Both are the page's own claims about its own tools,
read in the tool's own frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..call.errors import ToolFailure
from ..call.util import origin_label, spawn
from .discovery import HINTS, CutOff, LastRead, PageResult, PageTool, PageToolError, PageTools, WebMCPHub, wait_answer

if TYPE_CHECKING:
    from playwright.async_api import CDPSession, Frame

    from ..browsers.pages import PageState

EVENTS = (
    "WebMCP.toolsAdded",
    "WebMCP.toolsRemoved",
    "WebMCP.toolInvoked",
    "WebMCP.toolResponded",
    "Page.frameNavigated",
    "Page.frameDetached",
)
DESCRIBE_TIMEOUT_S = 2.0
SYNC_TIMEOUT_S = 1.0
EARLY_ANSWERS = 64  # answers that arrive before invokeTool returns (or for in-page calls)

CAPTURE_KEY = "webmcp_nb.capture"
# Runs before the page's scripts (an init script). A page can still replace registerTool or call
# `next()`, `raw()` or `drop()` itself: it then withholds or changes what is known of its own
# tools, nothing else (a text is kept only when it reads back as the protocol's output).
CAPTURE_JS = """(() => {
  const mc = document.modelContext;
  const proto = mc && Object.getPrototypeOf(mc);
  const KEY = Symbol.for("@KEY@");
  if (!proto || typeof proto.registerTool !== "function" || window[KEY]) return;
  const register = proto.registerTool;
  const schemas = new Map();  // tool name -> the JSON of its outputSchema
  const raws = new Map();  // tool name -> [[input JSON, result text], ...], latest last
  const waiting = new Map();  // tool name + input JSON -> [[token, resolve], ...], first first
  const json = (value) => { try { return JSON.stringify(value); } catch (e) { return undefined; } };
  const textOf = (value) => {  // null for an object (it parses back) or what has no JSON text
    if (value !== null && typeof value === "object" && !Array.isArray(value)) return null;
    const raw = typeof value === "string" ? value : json(value);
    return typeof raw === "string" ? raw : null;
  };
  const settle = (name, input, raw) => {  // a call ended: its text goes to whoever waits for it
    const key = name + "\\n" + input;
    const waiters = waiting.get(key);
    if (waiters) {
      const [, resolve] = waiters.shift();
      if (!waiters.length) waiting.delete(key);
      return resolve(raw);
    }
    if (raw === null) return;
    const list = raws.get(name) || [];
    list.push([input, raw]);
    if (list.length > 16) list.shift();
    raws.set(name, list);
  };
  const take = (name, input) => {
    const list = raws.get(name) || [];
    for (let i = list.length - 1; i >= 0; i--) if (list[i][0] === input) return list.splice(i, 1)[0][1];
    return undefined;
  };
  const drop = (token) => {
    for (const [key, waiters] of waiting) {
      const i = waiters.findIndex((w) => w[0] === token);
      if (i >= 0) { waiters.splice(i, 1)[0][1](null); if (!waiters.length) waiting.delete(key); return; }
    }
  };
  Object.defineProperty(proto, "registerTool", { configurable: true, writable: true, value: function registerTool(descriptor, options) {
    if (!descriptor || typeof descriptor !== "object" || typeof descriptor.execute !== "function") {
      return register.call(this, descriptor, options);
    }
    const name = String(descriptor.name);
    const execute = descriptor.execute;
    const wrapped = Object.create(descriptor, { execute: { value(input, client) {
      const key = json(input);
      let out;
      try { out = execute.call(descriptor, input, client); } catch (e) { settle(name, key, null); throw e; }
      if (!out || typeof out.then !== "function") { settle(name, key, textOf(out)); return out; }
      return Promise.resolve(out).then(
        (value) => { settle(name, key, textOf(value)); return value; },
        (e) => { settle(name, key, null); throw e; },
      );
    } } });
    const schema = descriptor.outputSchema == null ? undefined : json(descriptor.outputSchema);
    const result = register.call(this, wrapped, options);
    const done = () => { if (schema) schemas.set(name, schema); else schemas.delete(name); };
    if (result && typeof result.then === "function") result.then(done, () => {}); else done();
    return result;
  } });
  Object.defineProperty(window, KEY, { value: Object.freeze({
    schemas: () => Object.fromEntries(schemas),
    // The text of the next call of `name` with `input` to end (null: none, an object, a throw),
    // waited for at most `ms`; `token` names the wait for `drop`.
    next(name, input, ms, token) {
      const found = take(name, input);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve) => {
        const key = name + "\\n" + input;
        const timer = setTimeout(() => drop(token), ms);
        const waiters = waiting.get(key) || [];
        waiters.push([token, (raw) => { clearTimeout(timer); resolve(raw); }]);
        waiting.set(key, waiters);
      });
    },
    drop,
    raw: (name, input) => take(name, input) ?? null,  // the latest call's text, after it ended
  }) });
})();""".replace("@KEY@", CAPTURE_KEY)

# Title and origin are not in the protocol's events; getTools() has them (the output schema: CAPTURE_JS).
DESCRIBE_JS = """async () => {
  const tools = await document.modelContext.getTools();
  const capture = window[Symbol.for("@KEY@")];
  const schemas = capture ? capture.schemas() : {};
  return Object.fromEntries(tools.map((t) => [t.name, [t.title || "", t.origin || "", schemas[t.name] || null]]));
}""".replace("@KEY@", CAPTURE_KEY)

RAW_JS = """([name, input]) => {
  const capture = window[Symbol.for("@KEY@")];
  return capture ? capture.raw(name, JSON.stringify(input)) : null;
}""".replace("@KEY@", CAPTURE_KEY)
# Sent with the call, so that the text comes back as the tool ends, not one round trip after.
NEXT_RAW_JS = """([name, input, ms, token]) => {
  const capture = window[Symbol.for("@KEY@")];
  return capture ? capture.next(name, JSON.stringify(input), ms, token) : null;
}""".replace("@KEY@", CAPTURE_KEY)
DROP_RAW_JS = (
    """(token) => { const capture = window[Symbol.for("@KEY@")]; if (capture) capture.drop(token); }""".replace(
        "@KEY@", CAPTURE_KEY
    )
)


@dataclass(frozen=True)
class _Text:
    """A call's early read of its result's text (`NEXT_RAW_JS`), and how to drop it in the page."""

    read: asyncio.Future[Any]
    token: str
    frame: Frame


@dataclass(eq=False)
class _Call:
    cdp_frame: str
    tool: str
    answer: asyncio.Future[dict[str, Any]] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class NativeTools(PageTools):
    mode = "native"

    def __init__(self, state: PageState, instance: str, hub: WebMCPHub) -> None:
        super().__init__(state, instance, hub)
        self._cdp: CDPSession | None = None
        self._main = ""
        self._frames: dict[str, Frame] = {}  # CDP frame id -> Playwright frame
        self._events: deque[tuple[str, dict[str, Any]]] = deque()
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._calls: set[_Call] = set()
        self._by_invocation: dict[str, _Call] = {}
        self._early: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._expected: list[tuple[str, str, str]] = []  # (cdp frame, tool, caller) of calls being sent
        self._invocations: OrderedDict[str, tuple[str, str]] = OrderedDict()  # id -> (caller, tool)
        self._texts = 0  # early text reads sent (their tokens)
        self._started = asyncio.ensure_future(self._start())
        self._started.add_done_callback(lambda task: task.cancelled() or task.exception())  # read in settle()
        self._consumer = asyncio.ensure_future(self._consume())

    async def _start(self) -> None:
        cdp = await self.state.cdp()
        self._main = (await cdp.send("Target.getTargetInfo"))["targetInfo"]["targetId"]
        for name in EVENTS:
            cdp.on(name, lambda params, name=name: self._receive(name, params))
        await cdp.send("Page.enable")
        await cdp.send("WebMCP.enable")
        self._cdp = cdp

    async def ready(self) -> None:
        # Tools a page registers before WebMCP.enable are not all replayed (a child frame's
        # can be missed), so nothing may load in the page before tracking is on.
        with contextlib.suppress(Exception):
            await asyncio.shield(self._started)

    async def settle(self) -> None:
        try:
            await asyncio.shield(self._started)
        except Exception as exc:  # noqa: BLE001 - reported as a capability the browser lacks
            if self.state.closed or self.state.page.is_closed():
                raise ToolFailure("page_not_found", f"Page {self.state.page_id} was closed.", started=False) from None
            raise ToolFailure(
                "unsupported_capability",
                f"This browser does not offer the DevTools WebMCP domain ({exc}); create the instance "
                "with webmcp='page' or 'polyfill' to use the page's document.modelContext instead.",
                started=False,
            ) from None
        await self._idle.wait()

    async def refresh(self) -> None:
        """Settle after a round trip to the page: events it sent before the answer are in."""
        await self.settle()
        assert self._cdp is not None
        try:
            await asyncio.wait_for(self._cdp.send("Runtime.evaluate", {"expression": "0"}), SYNC_TIMEOUT_S)
        except Exception:  # noqa: BLE001 - a busy page: what has arrived is what is known
            pass
        await self._idle.wait()

    # events, applied in order ---------------------------------------------------------
    def _receive(self, name: str, params: dict[str, Any]) -> None:
        self._events.append((name, params))
        self._idle.clear()
        self._wake.set()

    async def _consume(self) -> None:
        self._idle.set()
        while not self.closed:
            await self._wake.wait()
            self._wake.clear()
            while self._events and not self.closed:
                name, params = self._events.popleft()
                try:
                    if name == "WebMCP.toolsAdded":
                        tools = list(params.get("tools", []))
                        while self._events and self._events[0][0] == name:
                            tools += self._events.popleft()[1].get("tools", [])
                        await self._added(tools)
                    else:
                        self._apply(name, params)
                except Exception:  # noqa: BLE001 - one bad event must not stop tracking
                    pass
            if not self._events:
                self._idle.set()

    def _apply(self, name: str, params: dict[str, Any]) -> None:
        if name == "WebMCP.toolsRemoved":
            for tool in params.get("tools", []):
                self._remove(tool["frameId"], [tool["name"]])
        elif name == "Page.frameNavigated":
            frame = params["frame"]
            main = not frame.get("parentId")
            self._clear(None if main else {frame["id"]}, "navigation")
            self._cut(None if main else frame["id"], f"the page navigated to {frame.get('url', '?')}")
        elif name == "Page.frameDetached":
            self._frames.pop(params["frameId"], None)
            self._clear({params["frameId"]}, "frame_detached")
            self._cut(params["frameId"], "its frame was detached")
        elif name == "WebMCP.toolInvoked":
            self._invoked(params)
        elif name == "WebMCP.toolResponded":
            self._responded(params)

    async def _added(self, raw: list[dict[str, Any]]) -> None:
        by_frame: dict[str, list[dict[str, Any]]] = {}
        for tool in raw:
            by_frame.setdefault(tool["frameId"], []).append(tool)
        for cdp_frame, tools in by_frame.items():
            frame = await self._frame(cdp_frame)
            described = await self._describe(frame) if frame is not None else {}
            frame_id = self.state.frame_id(frame) if frame is not None else None
            fallback_origin = origin_label(frame.url) if frame is not None else ""
            self._add(
                cdp_frame,
                [
                    PageTool(
                        name=tool["name"],
                        title=described.get(tool["name"], ("", "", None))[0],
                        description=tool.get("description", ""),
                        input_schema=tool.get("inputSchema") or {"type": "object", "properties": {}},
                        annotations={
                            HINTS.get(key, key): value for key, value in (tool.get("annotations") or {}).items()
                        },
                        origin=described.get(tool["name"], ("", "", None))[1] or fallback_origin,
                        frame_id=frame_id,
                        kind="declarative" if "backendNodeId" in tool else "imperative",
                        output_schema=described.get(tool["name"], ("", "", None))[2],
                    )
                    for tool in tools
                ],
            )

    async def _describe(self, frame: Frame) -> dict[str, tuple[str, str, dict[str, Any] | None]]:
        try:
            found = await asyncio.wait_for(frame.evaluate(DESCRIBE_JS), DESCRIBE_TIMEOUT_S)
        except Exception:  # noqa: BLE001 - a busy or navigating frame: no titles this time
            return {}
        return {name: (str(value[0]), str(value[1]), _schema(value[2])) for name, value in found.items()}

    async def _frame(self, cdp_frame: str) -> Frame | None:
        """The Playwright frame of a CDP frame id (matched through the frame tree once)."""
        frame = self._frames.get(cdp_frame)
        if frame is not None and not frame.is_detached():
            return frame
        if cdp_frame == self._main:
            return self.state.page.main_frame
        assert self._cdp is not None
        tree = (await self._cdp.send("Page.getFrameTree"))["frameTree"]
        self._match(tree, self.state.page.main_frame)
        return self._frames.get(cdp_frame)

    def _match(self, node: dict[str, Any], frame: Frame) -> None:
        self._frames[node["frame"]["id"]] = frame
        free = list(frame.child_frames)
        for child in node.get("childFrames", []):
            info = child["frame"]
            same = [f for f in free if f.name == info.get("name", "") and f.url == info.get("url")]
            same = same or [f for f in free if f.url == info.get("url")] or free
            pick = same[0] if same else None
            if pick is not None:
                free.remove(pick)
                self._match(child, pick)

    # invocations ---------------------------------------------------------------------
    def _frame_id_of(self, cdp_frame: str) -> str | None:
        frame = self.state.page.main_frame if cdp_frame == self._main else self._frames.get(cdp_frame)
        return self.state.frame_id(frame) if frame is not None else None

    def _invoked(self, params: dict[str, Any]) -> None:
        key = (params["frameId"], params["toolName"])
        caller = next((c for f, t, c in self._expected if (f, t) == key), None)
        if caller is not None:
            self._expected.remove((*key, caller))
        caller = caller or "page"
        self._invocations[params["invocationId"]] = (caller, params["toolName"])
        while len(self._invocations) > EARLY_ANSWERS:
            self._invocations.popitem(last=False)
        try:
            arguments = json.loads(params.get("input") or "{}")
        except ValueError:
            arguments = params.get("input")
        self.emit(
            "invoked",
            tool_name=params["toolName"],
            frame_id=self._frame_id_of(params["frameId"]),
            invocation_id=params["invocationId"],
            caller=caller,
            input=arguments,
        )

    def _responded(self, params: dict[str, Any]) -> None:
        invocation = params["invocationId"]
        call = self._by_invocation.get(invocation)
        if call is not None:
            if not call.answer.done():
                call.answer.set_result(params)
        else:
            self._early[invocation] = params
            while len(self._early) > EARLY_ANSWERS:
                self._early.popitem(last=False)
        ok = params.get("status") == "Completed"
        caller, tool = self._invocations.pop(invocation, (None, call.tool if call else None))
        if params.get("status") == "Canceled":
            self.emit("cancelled", tool_name=tool, invocation_id=invocation, caller=caller, output="cancelled")
            return
        self.emit(
            "responded",
            tool_name=tool,
            invocation_id=invocation,
            caller=caller,
            status="completed" if ok else "error",
            output=params.get("output") if ok else error_text(params),
        )

    def _cut(self, cdp_frame: str | None, why: str) -> None:
        for call in list(self._calls):
            if (cdp_frame is None or call.cdp_frame == cdp_frame) and not call.answer.done():
                call.answer.set_exception(CutOff(why))

    async def invoke(
        self, tool: PageTool, arguments: dict[str, Any], caller: str, timeout_s: float, last_read: LastRead
    ) -> PageResult:
        from playwright.async_api import Error

        cdp_frame = self.key_of(tool)
        assert self._cdp is not None
        call = _Call(cdp_frame, tool.name)
        self._calls.add(call)
        expected = (cdp_frame, tool.name, caller)
        self._expected.append(expected)
        invocation = None
        text = self._next_text(tool, arguments, timeout_s)
        try:
            try:
                sent = await send_keeping_nulls(
                    self._cdp, "WebMCP.invokeTool", {"frameId": cdp_frame, "toolName": tool.name, "input": arguments}
                )
            except Error as exc:
                if expected in self._expected:
                    self._expected.remove(expected)
                if "not found" in exc.message.lower():
                    raise ToolFailure(
                        "element_not_found",
                        f"Page tool {tool.name!r} was unregistered before the call reached it; nothing ran. "
                        "Call browser_webmcp_list to see the current tools.",
                        started=False,
                    ) from None
                raise
            invocation = sent["invocationId"]
            if invocation in self._early:
                call.answer.set_result(self._early.pop(invocation))
            else:
                self._by_invocation[invocation] = call
            try:
                answer = await wait_answer(call.answer, timeout_s, f"Page tool {tool.name!r}")
            except (ToolFailure, asyncio.CancelledError):  # timed out, or the caller went away
                spawn(self._cancel(invocation))
                raise
            if answer.get("status") == "Completed":
                return await self._result(tool, arguments, answer.get("output"), text, last_read)
        finally:
            self._calls.discard(call)
            if invocation is not None:
                self._by_invocation.pop(invocation, None)
            if text is not None and not text.read.done():
                text.read.cancel()
                if invocation is None or not call.answer.done():  # no answer: the page may still wait
                    spawn(self._drop_text(text))
        if answer.get("status") == "Canceled":
            raise PageToolError("the page cancelled the call")
        raise PageToolError(error_text(answer))

    async def _cancel(self, invocation: str) -> None:
        """Cancel an invocation nobody waits for (its tool's AbortSignal fires); gone ones are left."""
        with contextlib.suppress(Exception):
            assert self._cdp is not None
            await asyncio.wait_for(
                self._cdp.send("WebMCP.cancelInvocation", {"invocationId": invocation}), SYNC_TIMEOUT_S
            )

    def _next_text(self, tool: PageTool, arguments: dict[str, Any], timeout_s: float) -> _Text | None:
        """The read of the exact text `CAPTURE_JS` keeps of the call's result (a non-object one),
        sent with the call: it answers as the tool ends. None for tools it does not wrap."""
        if tool.kind != "imperative" or tool.frame_id is None:
            return None
        try:
            frame = self.state.frame(tool.frame_id)
        except Exception:  # noqa: BLE001 - gone: the call reports it
            return None
        self._texts += 1
        token = f"{id(self):x}.{self._texts}"
        wait_ms = round(timeout_s * 1000) + 1000
        read = asyncio.ensure_future(frame.evaluate(NEXT_RAW_JS, [tool.name, arguments, wait_ms, token]))
        read.add_done_callback(lambda done: done.cancelled() or done.exception())  # an unread failure is fine
        return _Text(read, token, frame)

    @staticmethod
    async def _drop_text(text: _Text) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(text.frame.evaluate(DROP_RAW_JS, text.token), SYNC_TIMEOUT_S)

    async def _result(
        self, tool: PageTool, arguments: dict[str, Any], output: Any, text: _Text | None, last_read: LastRead
    ) -> PageResult:
        """The answer with the exact text the page produced for a non-object result (from
        `CAPTURE_JS`; kept only when it reads back as the protocol's parsed `output`)."""
        if isinstance(output, dict) or text is None:
            return PageResult(output)
        try:
            raw = await last_read(asyncio.wait_for(asyncio.shield(text.read), DESCRIBE_TIMEOUT_S))
            if not self._reads_as(raw, output):  # an earlier in-page call's text, taken before this call's
                raw = await asyncio.wait_for(text.frame.evaluate(RAW_JS, [tool.name, arguments]), DESCRIBE_TIMEOUT_S)
        except Exception:  # noqa: BLE001 - navigated or busy: the parsed output is what is known
            return PageResult(output)
        return PageResult(output, raw) if self._reads_as(raw, output) else PageResult(output)

    @staticmethod
    def _reads_as(raw: Any, output: Any) -> bool:
        return isinstance(raw, str) and PageResult.from_page(raw).value == output

    def close(self) -> None:
        self._cut(None, "the page was closed")
        super().close()
        self._wake.set()
        self._idle.set()


def _schema(text: Any) -> dict[str, Any] | None:
    """A captured outputSchema (JSON text) as an object; None when there is none or it is not one."""
    try:
        schema = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None
    return schema if isinstance(schema, dict) else None


def error_text(answer: dict[str, Any]) -> str:
    """The page's message for a failed invocation (the exception's first line)."""
    exception = answer.get("exception") or {}
    described = (exception.get("description") or "").strip().splitlines()
    return (
        answer.get("errorText")
        or (described[0] if described else "")
        or str(exception.get("value", ""))
        or ("the tool failed without a message")
    )


# Playwright 1.62's client drops every null inside a nested object of a message's parameters
# (`_filter_none`, and `locals_to_params` in `CDPSession.send`): a page tool called with
# {"note": null} would get {}. 1.65 sends them as given. (1.62 names its modules `_cdp_session`...)
_DROPS_NESTED_NULLS = importlib.util.find_spec("playwright._impl._cdp_session") is not None


async def send_keeping_nulls(cdp: CDPSession, method: str, params: dict[str, Any]) -> Any:
    """`cdp.send(method, params)`, with the nulls inside `params` delivered as given."""
    if not _DROPS_NESTED_NULLS:
        return await cdp.send(method, params)
    # 1.62: its public send, minus the filters (private API, checked by tests on 1.62 in CI).
    session: Any = cdp._impl_obj
    connection = session._connection

    async def send() -> Any:
        callback = connection._send_message_to_server(session, "send", {"method": method, "params": params}, 0)
        return (await callback.future)["result"]

    return await connection.wrap_api_call(send, True)
