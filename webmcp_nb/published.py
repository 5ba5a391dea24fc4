"""What a session publishes to agents beyond the browser tools: Python functions as
tools, resources and prompts (`Session.tool`, `Session.resource`, `Session.prompt`).

Published tools are ordinary `ToolSpec`s in a session registry layered over the
built-in one, so they are validated, logged and enveloped like every other tool.
Front ends (the MCP server) read this and follow its `listeners`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field
from pydantic_core import to_jsonable_python

from .core.errors import ToolFailure
from .core.function_tools import FunctionTool, parameters, summary
from .core.listeners import Listeners
from .core.registry import Registry, ToolSpec

Kind = Literal["tools", "resources", "prompts"]


class FunctionResult(BaseModel):
    result: Any = Field(description="What the function returned, as JSON (other objects as their repr).")


@dataclass(frozen=True)
class PublishedResource:
    uri: str
    name: str
    description: str
    mime_type: str
    read: Callable[[], str | bytes]


@dataclass(frozen=True)
class PromptArgument:
    name: str
    description: str
    required: bool


@dataclass(frozen=True)
class PublishedPrompt:
    name: str
    description: str
    arguments: tuple[PromptArgument, ...]
    render: Callable[..., str | list[tuple[str, str]]]
    """Returns the prompt text, or (role, text) messages with role "user" or "assistant"."""


@dataclass
class Published:
    """The tools, resources and prompts a session publishes, with change listeners."""

    tools: Registry
    resources: dict[str, PublishedResource] = field(default_factory=dict)
    prompts: dict[str, PublishedPrompt] = field(default_factory=dict)
    listeners: Listeners[[Kind]] = field(default_factory=Listeners)

    def __post_init__(self) -> None:
        self.tools.listeners.add(lambda: self.changed("tools"))

    def changed(self, kind: Kind) -> None:
        self.listeners.emit(kind)

    def add_resource(self, resource: PublishedResource) -> PublishedHandle:
        return self._add("resources", self.resources, resource.uri, resource, resource.read)

    def add_prompt(self, prompt: PublishedPrompt) -> PublishedHandle:
        return self._add("prompts", self.prompts, prompt.name, prompt, prompt.render)

    def _add(self, kind: Kind, table: dict[str, Any], key: str, item: Any, use: Callable[..., Any]) -> PublishedHandle:
        if key in table:
            raise ValueError(f"{kind.removesuffix('s')} {key!r} is already published")
        table[key] = item
        self.changed(kind)
        return PublishedHandle(self, kind, key, use)

    def add_tool(self, spec: ToolSpec, function: Callable[..., Any]) -> PublishedHandle:
        self.tools.add(spec)
        return PublishedHandle(self, "tools", spec.name, function)

    def remove(self, kind: Kind, key: str) -> None:
        if kind == "tools":
            self.tools.remove(key)
            return
        table: dict[str, Any] = self.resources if kind == "resources" else self.prompts
        if table.pop(key, None) is not None:
            self.changed(kind)


class PublishedHandle:
    """A published tool, resource or prompt. Calling it calls the function;
    `.unregister()` withdraws it from agents."""

    def __init__(self, published: Published, kind: Kind, key: str, function: Callable[..., Any]) -> None:
        self._published = published
        self.kind = kind
        self.name = key
        self.function = function
        self.__doc__ = function.__doc__
        self.__wrapped__ = function

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.function(*args, **kwargs)

    def unregister(self) -> None:
        """Withdraw it; agents are told the list changed. Idempotent."""
        self._published.remove(self.kind, self.name)

    def __repr__(self) -> str:
        return f"<published {self.kind[:-1]} {self.name!r}>"


# --------------------------------------------------------------------------- #
# Functions -> specs
# --------------------------------------------------------------------------- #


def tool_spec(
    function: Callable[..., Any],
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    destructive: bool = False,
    idempotent: bool = False,
) -> ToolSpec:
    """A server-level tool that calls `function` (type hints -> input schema).

    Synchronous functions run on a worker thread, so a busy notebook does not stall
    the caller; coroutine functions run on the runtime loop.
    """
    built = FunctionTool.build(function, name=name, description=description)

    async def handler(_ctx: Any, arguments: BaseModel) -> FunctionResult:
        try:
            value = await built.call(arguments)
        except Exception as exc:  # noqa: BLE001 - the caller learns what the function raised
            raise ToolFailure("evaluation_failed", f"{built.name} raised {type(exc).__name__}: {exc}") from None
        return FunctionResult(result=to_jsonable_python(value, fallback=repr))

    return ToolSpec(
        name=built.name,
        title=title or built.name.replace("_", " ").capitalize(),
        description=built.description or f"The notebook function {built.name}.",
        params=built.params,
        data=FunctionResult,
        handler=handler,
        target="server",
        read_only=read_only,
        destructive=destructive,
        idempotent=idempotent,
        group="notebook",
    )


def prompt_spec(
    function: Callable[..., str | list[tuple[str, str]]], *, name: str | None = None, description: str | None = None
) -> PublishedPrompt:
    arguments = tuple(PromptArgument(p.name, "", p.default is inspect.Parameter.empty) for p in parameters(function))
    return PublishedPrompt(
        name=name or function.__name__,
        description=description or summary(function),
        arguments=arguments,
        render=function,
    )
