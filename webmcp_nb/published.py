"""What a session publishes to agents beyond the browser tools: Python functions as
tools, resources and prompts (`Session.tool`, `Session.resource`, `Session.prompt`).

Published tools are ordinary `ToolSpec`s in a session registry layered over the
built-in one, so they are validated, logged and enveloped like every other tool.
Front ends (the MCP server) read this and follow its `listeners`.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic_core import to_jsonable_python

from .core.registry import Registry, ToolFailure, ToolSpec

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
    listeners: list[Callable[[Kind], None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.tools.listeners.append(lambda: self.changed("tools"))

    def changed(self, kind: Kind) -> None:
        for listener in list(self.listeners):
            listener(kind)

    def add_resource(self, resource: PublishedResource) -> PublishedHandle:
        if resource.uri in self.resources:
            raise ValueError(f"resource {resource.uri!r} is already published")
        self.resources[resource.uri] = resource
        self.changed("resources")
        return PublishedHandle(self, "resources", resource.uri, resource.read)

    def add_prompt(self, prompt: PublishedPrompt) -> PublishedHandle:
        if prompt.name in self.prompts:
            raise ValueError(f"prompt {prompt.name!r} is already published")
        self.prompts[prompt.name] = prompt
        self.changed("prompts")
        return PublishedHandle(self, "prompts", prompt.name, prompt.render)

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


def _summary(function: Callable[..., Any]) -> str:
    doc = inspect.getdoc(function) or ""
    return doc.split("\n\n")[0].replace("\n", " ").strip()


def _parameters(function: Callable[..., Any]) -> list[inspect.Parameter]:
    parameters = list(inspect.signature(function, eval_str=True).parameters.values())
    for parameter in parameters:
        if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise TypeError(f"{function.__name__}: *args and **kwargs cannot be described to an agent")
        if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise TypeError(f"{function.__name__}: positional-only parameters cannot be named by an agent")
    return parameters


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
    name = name or function.__name__
    fields: dict[str, Any] = {
        p.name: (
            Any if p.annotation is inspect.Parameter.empty else p.annotation,
            ... if p.default is inspect.Parameter.empty else p.default,
        )
        for p in _parameters(function)
    }
    params = create_model(f"{name}_params", __config__=ConfigDict(extra="forbid"), **fields)

    async def handler(_ctx: Any, arguments: BaseModel) -> FunctionResult:
        kwargs = {key: getattr(arguments, key) for key in fields}
        try:
            if inspect.iscoroutinefunction(function):
                value = await function(**kwargs)
            else:
                value = await asyncio.to_thread(function, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the caller learns what the function raised
            raise ToolFailure("evaluation_failed", f"{name} raised {type(exc).__name__}: {exc}") from None
        return FunctionResult(result=to_jsonable_python(value, fallback=repr))

    return ToolSpec(
        name=name,
        title=title or name.replace("_", " ").capitalize(),
        description=description or _summary(function) or f"The notebook function {name}.",
        params=params,
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
    arguments = tuple(PromptArgument(p.name, "", p.default is inspect.Parameter.empty) for p in _parameters(function))
    return PublishedPrompt(
        name=name or function.__name__,
        description=description or _summary(function),
        arguments=arguments,
        render=function,
    )
