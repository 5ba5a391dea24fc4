"""The reverse direction: a Python function offered to agents inside a page as a WebMCP tool.

The page's ``document.modelContext.registerTool`` gets a tool whose ``execute`` calls an
exposed binding (one per instance, ``__webmcp_nb_python_tool``) that runs the function in
the kernel: an ``async def`` on the runtime loop, a plain function on a worker thread. The
registration belongs to the page's current document (a navigation ends it, as for any
page tool); `PageToolRegistration.unregister()` aborts it.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from .registry import ToolFailure

if TYPE_CHECKING:
    from playwright.async_api import JSHandle

    from .instances import Instance
    from .pages import PageState

BINDING = "__webmcp_nb_python_tool"

REGISTER_JS = """async ([name, description, inputSchema, annotations, binding]) => {
  const mc = document.modelContext;
  if (!mc || typeof mc.registerTool !== "function") throw new Error("this page has no document.modelContext");
  const controller = new AbortController();
  const execute = (input) => window[binding](name, input);
  await mc.registerTool({ name, description, inputSchema, annotations, execute }, { signal: controller.signal });
  return controller;
}"""


@dataclass(frozen=True)
class PythonTool:
    """A Python function declared as a page tool; its input schema comes from its signature."""

    name: str
    description: str
    function: Callable[..., Any]
    model: type[BaseModel]
    read_only: bool = False

    @classmethod
    def from_function(
        cls, function: Callable[..., Any], *, name: str | None = None, description: str | None = None,
        read_only: bool = False,
    ) -> PythonTool:
        hints = get_type_hints(function)
        fields: dict[str, Any] = {}
        for parameter in inspect.signature(function).parameters.values():
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD, parameter.POSITIONAL_ONLY):
                raise TypeError(f"page tool parameters must be named (not *args, **kwargs or /): {parameter}")
            default = ... if parameter.default is parameter.empty else parameter.default
            fields[parameter.name] = (hints.get(parameter.name, Any), default)
        name = name or function.__name__
        model = create_model(f"{name}_input", __config__=ConfigDict(extra="forbid"), **fields)
        doc = inspect.getdoc(function) or ""
        return cls(name, description or doc.split("\n\n")[0] or name, function, model, read_only)

    @property
    def input_schema(self) -> dict[str, Any]:
        schema = self.model.model_json_schema()
        schema.pop("title", None)
        return schema

    async def run(self, arguments: Any) -> Any:
        try:
            values = self.model.model_validate(arguments if isinstance(arguments, dict) else {})
        except ValidationError as exc:
            raise ValueError(f"invalid input for {self.name}: {exc.errors(include_url=False)}") from None
        kwargs = {name: getattr(values, name) for name in type(values).model_fields}
        if inspect.iscoroutinefunction(self.function):
            return await self.function(**kwargs)
        return await asyncio.to_thread(self.function, **kwargs)


@dataclass
class PageToolRegistration:
    """A Python tool registered in one page; `unregister()` aborts the registration."""

    tool: PythonTool
    instance: Instance
    page_id: str
    controller: JSHandle
    calls: int = 0
    active: bool = field(default=True)

    async def unregister(self) -> None:
        from playwright.async_api import Error

        if not self.active:
            return
        self.active = False
        if self.instance.python_tools.get((self.page_id, self.tool.name)) is self:
            del self.instance.python_tools[(self.page_id, self.tool.name)]
        try:
            await self.controller.evaluate("(controller) => controller.abort()")
        except Error:
            pass  # the document is gone, and its tools with it


async def register(instance: Instance, state: PageState, tool: PythonTool) -> PageToolRegistration:
    from playwright.async_api import Error

    if instance.options.webmcp == "off":
        raise ToolFailure(
            "unsupported_capability", f"WebMCP is off for instance {instance.name!r}.", started=False
        )
    earlier = instance.python_tools.get((state.page_id, tool.name))
    if earlier is not None:  # registered again (after a navigation ended it, or to replace it)
        await earlier.unregister()
    if not instance.python_binding:
        assert instance.context is not None
        await instance.context.expose_binding(BINDING, lambda source, name, arguments: _dispatch(
            instance, source, name, arguments))
        instance.python_binding = True
    annotations = {"readOnlyHint": True} if tool.read_only else {}
    try:
        controller = await state.page.evaluate_handle(
            REGISTER_JS, [tool.name, tool.description, tool.input_schema, annotations, BINDING]
        )
    except Error as exc:
        raise ToolFailure(
            "unsupported_capability",
            f"Could not register {tool.name!r} in page {state.page_id}: {exc.message.splitlines()[0]}",
        ) from None
    registration = PageToolRegistration(tool, instance, state.page_id, controller)
    instance.python_tools[(state.page_id, tool.name)] = registration
    return registration


async def _dispatch(instance: Instance, source: dict[str, Any], name: str, arguments: Any) -> Any:
    state = next((s for s in instance.pages.values() if s.page is source.get("page")), None)
    registration = instance.python_tools.get((state.page_id, name)) if state else None
    if registration is None:
        raise RuntimeError(f"the Python tool {name!r} is no longer registered in this page")
    registration.calls += 1
    return await registration.tool.run(arguments)
