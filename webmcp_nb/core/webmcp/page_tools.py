"""The reverse direction: a Python function offered to agents inside a page as a WebMCP tool.

The page's ``document.modelContext.registerTool`` gets a tool whose ``execute`` calls an
exposed binding (one per instance, ``__webmcp_nb_python_tool``) that runs the function in
the kernel: an ``async def`` on the runtime loop, a plain function on a worker thread.

A registration is bound to one document (seed 003's ``exposedTo``, failing closed):

- the binding is called with a per-registration token that only the registering document's
  ``execute`` closure holds; a call with any other token is refused;
- the calling frame's origin, as the browser reports it (not as the page says it), must be
  the page's origin at registration or one listed in ``exposed_to``; an opaque or unknown origin
  (``about:``, ``data:``, ``file:``, sandboxed) is refused. On Chromium both its URL's origin and
  its document's real origin (DevTools' execution context: a sandboxed frame at an http URL is
  opaque) must be that origin; other browsers give the URL's;
- the registering document must still be there: a navigation of the tab to another document
  ends the registration on both sides (the new document never had the tool; the Python side
  turns inactive). `PageToolRegistration.unregister()` aborts it.

A refused call rejects the page's promise with a message saying why and adds a ``refused``
WebMCP event to the log.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from pydantic import ValidationError

from ..call.errors import ToolFailure
from ..call.util import origin_of, spawn
from .discovery import WebMCPEvent
from .functions import FunctionTool

if TYPE_CHECKING:
    from playwright.async_api import Frame, JSHandle

    from ..browsers.instances import Instance
    from ..browsers.pages import PageState

BINDING = "__webmcp_nb_python_tool"

# The binding is read once, at registration: a script swapping `window[binding]` later does not
# see the token. The token lives only in this closure.
REGISTER_JS = """async ([name, description, inputSchema, annotations, binding, token]) => {
  const mc = document.modelContext;
  if (!mc || typeof mc.registerTool !== "function") throw new Error("this page has no document.modelContext");
  const call = window[binding];
  if (typeof call !== "function") throw new Error("the Python tool binding is missing from this page");
  const controller = new AbortController();
  const execute = (input) => call(token, input);
  await mc.registerTool({ name, description, inputSchema, annotations, execute }, { signal: controller.signal });
  return controller;
}"""


def parse_origins(origins: Iterable[str]) -> frozenset[str]:
    """Validate `exposed_to`: each entry must be an http(s) origin written as one."""
    parsed: set[str] = set()
    for origin in origins:
        normal = origin_of(origin) if isinstance(origin, str) else None
        parts = urlsplit(origin) if normal is not None else None
        if (
            normal is None
            or parts is None
            or parts.path not in ("", "/")
            or parts.query
            or parts.fragment
            or parts.username
        ):
            raise ToolFailure(
                "invalid_params",
                f"exposed_to: {origin!r} is not an http(s) origin; write it as scheme://host[:port], "
                "for example 'http://localhost:8000'.",
                started=False,
            )
        parsed.add(normal)
    return frozenset(parsed)


class PageToolSource(Protocol):
    """What a page tool registration needs of its tool: `PythonTool`, or an API's operation."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def input_schema(self) -> dict[str, Any]: ...
    @property
    def read_only(self) -> bool: ...
    @property
    def consequential(self) -> bool: ...
    async def run(self, arguments: Any) -> Any: ...


@dataclass(frozen=True)
class PythonTool:
    """A Python function declared as a page tool; its input schema comes from its signature."""

    built: FunctionTool
    read_only: bool = False
    consequential: bool = False  # its calls wait for approval when an agent's policy asks

    @classmethod
    def from_function(
        cls,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        read_only: bool = False,
        consequential: bool = False,
    ) -> PythonTool:
        return cls(FunctionTool.build(function, name=name, description=description), read_only, consequential)

    @property
    def name(self) -> str:
        return self.built.name

    @property
    def description(self) -> str:
        return self.built.description or self.built.name

    @property
    def function(self) -> Callable[..., Any]:
        return self.built.function

    @property
    def input_schema(self) -> dict[str, Any]:
        schema = self.built.params.model_json_schema()
        schema.pop("title", None)
        return schema

    async def run(self, arguments: Any) -> Any:
        try:
            values = self.built.params.model_validate(arguments if isinstance(arguments, dict) else {})
        except ValidationError as exc:
            raise ValueError(f"invalid input for {self.name}: {exc.errors(include_url=False)}") from None
        return await self.built.call(values)


@dataclass
class PageToolRegistration:
    """A Python tool registered in one document; `unregister()` aborts the registration."""

    tool: PageToolSource
    instance: Instance
    state: PageState
    controller: JSHandle
    origins: frozenset[str]  # who may call: the page's origin at registration, and `exposed_to`
    token: str = field(repr=False)  # held only by the registering document's execute closure
    calls: int = 0
    active: bool = True

    @property
    def page_id(self) -> str:
        return self.state.page_id

    async def unregister(self) -> None:
        from playwright.async_api import Error

        if not self.end():
            return
        try:
            await self.controller.evaluate("(controller) => controller.abort()")
        except Error:
            pass  # the document is gone, and its tools with it

    def end(self) -> bool:
        """Mark the registration inactive (the page is not touched); False if it already was."""
        if not self.active:
            return False
        self.active = False
        self.state.page.remove_listener("framenavigated", self._navigated)
        if self.instance.python_tools.get((self.page_id, self.tool.name)) is self:
            del self.instance.python_tools[(self.page_id, self.tool.name)]
        return True

    async def document_alive(self) -> bool:
        """Whether the registering document is still loaded (and the registration not aborted).

        The controller handle belongs to that document's script context: once the tab has
        navigated to another document, any use of it fails."""
        from playwright.async_api import Error

        try:
            return not await self.controller.evaluate("(controller) => controller.signal.aborted")
        except Error:
            return False

    def _navigated(self, frame: Frame) -> None:
        if frame is self.state.page.main_frame:
            spawn(self._check_document())

    async def _check_document(self) -> None:
        if self.active and not await self.document_alive():
            self.end()


async def register(
    instance: Instance, state: PageState, tool: PageToolSource, exposed_to: Iterable[str] = ()
) -> PageToolRegistration:
    from playwright.async_api import Error

    if instance.options.webmcp == "off":
        raise ToolFailure("unsupported_capability", f"WebMCP is off for instance {instance.name!r}.", started=False)
    extra = parse_origins(exposed_to)
    origin = origin_of(state.page.main_frame.url)
    if origin is None:
        raise ToolFailure(
            "unsupported_capability",
            f"Page {state.page_id} ({state.page.main_frame.url}) has no http(s) origin to bind "
            f"{tool.name!r} to; navigate it to a web page first.",
            started=False,
        )
    earlier = instance.python_tools.get((state.page_id, tool.name))
    if earlier is not None and await earlier.document_alive():
        raise ToolFailure(
            "invalid_params",
            f"A Python page tool named {tool.name!r} is already registered in page {state.page_id}; "
            "unregister it first (its handle's .unregister()) or give this one another name.",
            started=False,
        )
    if earlier is not None:  # its document is gone (a navigation the tab has not reported yet)
        earlier.end()
    if not instance.python_binding:
        assert instance.context is not None
        await instance.context.expose_binding(
            BINDING, lambda source, token, arguments: _dispatch(instance, source, token, arguments)
        )
        instance.python_binding = True
    annotations = {"readOnlyHint": True} if tool.read_only else {}
    if tool.consequential:
        annotations["consequentialHint"] = True
    token = secrets.token_urlsafe(32)
    try:
        controller = await state.page.evaluate_handle(
            REGISTER_JS, [tool.name, tool.description, tool.input_schema, annotations, BINDING, token]
        )
    except Error as exc:
        said = exc.message.splitlines()[0]
        if "Duplicate tool name" in said or "already registered" in said:
            raise ToolFailure(
                "invalid_params",
                f"Page {state.page_id} already has a tool named {tool.name!r} (the page's own); give this one "
                "another name.",
                started=False,
            ) from None
        raise ToolFailure(
            "unsupported_capability", f"Could not register {tool.name!r} in page {state.page_id}: {said}"
        ) from None
    registration = PageToolRegistration(tool, instance, state, controller, frozenset({origin}) | extra, token)
    instance.python_tools[(state.page_id, tool.name)] = registration
    state.page.on("framenavigated", registration._navigated)
    return registration


async def _dispatch(instance: Instance, source: dict[str, Any], token: Any, arguments: Any) -> Any:
    """Run the registration `token` names, if the calling frame may call it; else refuse."""
    frame: Frame | None = source.get("frame")
    state = next((s for s in instance.pages.values() if s.page is source.get("page")), None)
    registration = _by_token(instance, token)
    caller_url = frame.url if frame is not None else ""
    origin = origin_of(caller_url)
    if origin is not None and frame is not None and state is not None and instance.options.is_chromium:
        origin = origin if await _document_origin(state, frame) == origin else None
    if registration is None:
        why = (
            "no Python tool is registered under this token in this browser (it was unregistered, or the "
            "page that registered it navigated away)"
        )
    elif state is not registration.state:
        why = f"{registration.tool.name!r} is registered in another tab"
    elif origin is None or origin not in registration.origins:
        allowed = ", ".join(sorted(registration.origins))
        why = (
            f"{registration.tool.name!r} is exposed to {allowed}, not to the calling frame "
            f"({origin or 'opaque origin: ' + caller_url[:200]})"
        )
    elif not await registration.document_alive():
        registration.end()
        why = f"{registration.tool.name!r} belonged to a document this tab has left"
    else:
        registration.calls += 1
        return await registration.tool.run(arguments)
    if state is not None:
        instance.hub.emit(
            WebMCPEvent(
                "refused",
                instance.name,
                state.page_id,
                tool_name=registration.tool.name if registration else None,
                frame_id=state.frame_id(frame) if frame is not None else None,
                caller="page",
                status="error",
                output=f"{why}.",
            )
        )
    raise PermissionError(f"Python page tool call refused: {why}.")


async def _document_origin(state: PageState, frame: Frame) -> str | None:
    """The origin of `frame`'s document as Chromium holds it (that of its default execution
    context, which page script cannot change), or None: opaque, or not known for sure.

    A frame in a process of its own has its own DevTools target; a frame in its page's process
    is found in the page's frame tree by its URL, and every frame there with that URL must agree."""
    from playwright.async_api import Error

    context = state.page.context
    url = frame.url.split("#", 1)[0]
    try:
        try:
            session = await context.new_cdp_session(frame)
            own_target = True
        except Error:  # in its page's process (or the main frame itself)
            session = await context.new_cdp_session(state.page)
            own_target = False
    except Error:
        return None
    origins: dict[str, str] = {}
    session.on(
        "Runtime.executionContextCreated",
        lambda event: origins.update(
            {event["context"]["auxData"]["frameId"]: event["context"]["origin"]}
            if event["context"].get("auxData", {}).get("isDefault")
            else {}
        ),
    )
    try:
        tree = (await session.send("Page.getFrameTree"))["frameTree"]
        if own_target or frame is state.page.main_frame:
            candidates = [tree["frame"]["id"]]
        else:
            candidates = [node["id"] for node in _frames_of(tree) if node["url"] == url]
        await session.send("Runtime.enable")  # reports the existing contexts before it answers
    except Error:
        return None
    finally:
        with contextlib.suppress(Error):
            await session.detach()
    found = {origin_of(origins.get(frame_id, "")) for frame_id in candidates}
    return found.pop() if len(found) == 1 else None


def _frames_of(tree: dict[str, Any]) -> Iterable[dict[str, Any]]:
    yield tree["frame"]
    for child in tree.get("childFrames", []):
        yield from _frames_of(child)


def _by_token(instance: Instance, token: Any) -> PageToolRegistration | None:
    if not isinstance(token, str):
        return None
    given = token.encode("utf-8", "replace")
    return next(
        (r for r in list(instance.python_tools.values()) if secrets.compare_digest(r.token.encode(), given)), None
    )
