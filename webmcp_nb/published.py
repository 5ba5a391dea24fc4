"""What a session publishes to agents beyond the browser tools: Python functions as
tools, resources and prompts (`Session.tool`, `Session.resource`, `Session.prompt`).

Published tools are ordinary `ToolSpec`s in a session registry layered over the
built-in one, so they are validated, logged and enveloped like every other tool.
Front ends (the MCP server) read this and follow its `listeners`.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import unquote

from pydantic import BaseModel, Field
from pydantic_core import to_jsonable_python

from .core.call.errors import ToolFailure
from .core.call.listeners import Listeners
from .core.call.registry import Registry, ToolSpec
from .core.webmcp.discovery import schema_problems
from .core.webmcp.functions import FunctionTool, parameters, summary

Kind = Literal["tools", "resources", "prompts"]


class FunctionResult(BaseModel):
    result: Any = Field(description="What the function returned, as JSON (other objects as their repr).")


_VARIABLE = re.compile(r"\{([^{}]*)\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class PublishedResource:
    uri: str
    """A URI, or a URI template with ``{variables}`` (RFC 6570's simple expansion)."""
    name: str
    description: str
    mime_type: str
    read: Callable[..., str | bytes]
    """Called without arguments, or for a template with its variables as keyword arguments."""
    pattern: re.Pattern[str] | None = field(default=None, compare=False)  # a template's URIs

    @classmethod
    def build(
        cls, uri: str, name: str, description: str, mime_type: str, read: Callable[..., str | bytes]
    ) -> PublishedResource:
        """A resource, or a template when `uri` has ``{variables}`` (ValueError for one that is not
        a simple ``{name}``, or that `read` does not take)."""
        names = _VARIABLE.findall(uri)
        if not names:
            if "{" in uri or "}" in uri:
                raise ValueError(f"resource {uri!r}: unbalanced braces")
            return cls(uri, name, description, mime_type, read)
        bad = [variable for variable in names if not _NAME.fullmatch(variable)]
        if bad or "{" in _VARIABLE.sub("", uri) or "}" in _VARIABLE.sub("", uri):
            raise ValueError(
                f"resource template {uri!r}: write each variable as {{name}} (not {bad[0] if bad else uri!r})"
            )
        try:
            accepted = {parameter.name for parameter in parameters(read)}
        except TypeError as exc:
            raise ValueError(f"resource template {uri!r}: {exc}") from None
        missing = [variable for variable in names if variable not in accepted]
        if missing:
            raise ValueError(f"resource template {uri!r}: the reader takes no parameter {missing[0]!r}")
        pattern, last = "", 0
        for match in _VARIABLE.finditer(uri):
            pattern += re.escape(uri[last : match.start()]) + f"(?P<{match.group(1)}>[^/?#]+)"
            last = match.end()
        return cls(uri, name, description, mime_type, read, re.compile(pattern + re.escape(uri[last:])))

    @property
    def is_template(self) -> bool:
        return self.pattern is not None

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables of `uri` when this template names it (None otherwise)."""
        found = self.pattern.fullmatch(uri) if self.pattern is not None else None
        return {key: unquote(value) for key, value in found.groupdict().items()} if found else None


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
    args_schema: dict[str, Any] = field(default_factory=dict)
    """The arguments as a JSON Schema object (types, enums, descriptions)."""

    def bind(self, given: dict[str, Any]) -> dict[str, Any]:
        """The arguments a client sent (text, as MCP sends them), converted to the types of
        `args_schema` and checked against it; ValueError naming each problem."""
        properties = self.args_schema.get("properties", {})
        unknown = sorted(set(given) - set(properties))
        if unknown:
            raise ValueError("; ".join(f"unknown argument '{name}'" for name in unknown))
        values = {name: _typed(value, properties[name]) for name, value in given.items()}
        problems = schema_problems(self.args_schema, values)
        if problems:
            raise ValueError(f"the arguments do not match its argsSchema: {problems}")
        return values


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
    function: Callable[..., str | list[tuple[str, str]]],
    *,
    name: str | None = None,
    description: str | None = None,
    args_schema: dict[str, Any] | None = None,
) -> PublishedPrompt:
    """A prompt whose arguments are `args_schema`'s properties (default: the signature's, typed by
    its hints); each must be a parameter of `function`, and each parameter without a default required."""
    label = name or function.__name__
    accepted = {p.name: p.default is inspect.Parameter.empty for p in parameters(function)}
    if args_schema is None:
        args_schema = _untitled(FunctionTool.build(function, name=label).params.model_json_schema())
    properties = args_schema.get("properties", {}) if isinstance(args_schema, dict) else None
    if not isinstance(properties, dict) or args_schema.get("type", "object") != "object":
        raise ValueError(f"prompt {label!r}: args_schema must be a JSON Schema object with properties")
    required = set(args_schema.get("required", []))
    for argument, needed in accepted.items():
        if needed and argument not in required:
            raise ValueError(f"prompt {label!r}: parameter {argument!r} has no default, so args_schema must require it")
    unknown = sorted(set(properties) - set(accepted))
    if unknown:
        raise ValueError(f"prompt {label!r}: args_schema names {unknown[0]!r}, which the function does not take")
    arguments = tuple(
        PromptArgument(key, _argument_text(schema), key in required) for key, schema in properties.items()
    )
    return PublishedPrompt(label, description or summary(function), arguments, function, args_schema)


def _untitled(schema: dict[str, Any]) -> dict[str, Any]:
    """A schema pydantic made, without its generated titles."""
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return schema


def _types(schema: dict[str, Any]) -> list[str]:
    kinds = schema.get("type")
    if isinstance(kinds, str):
        return [kinds]
    if isinstance(kinds, list):
        return [kind for kind in kinds if isinstance(kind, str)]
    return [kind for branch in schema.get("anyOf", []) if isinstance(branch, dict) for kind in _types(branch)]


def _argument_text(schema: dict[str, Any]) -> str:
    """An argument's description for MCP (which has no types): its description, type and choices."""
    said = []
    kinds = [kind for kind in _types(schema) if kind != "null"]
    if kinds and kinds != ["string"]:
        said.append(" or ".join(kinds))
    if isinstance(schema.get("enum"), list):
        said.append("one of: " + ", ".join(json.dumps(v) if not isinstance(v, str) else v for v in schema["enum"]))
    description = str(schema.get("description", "")).strip()
    return " ".join(filter(None, [description, f"({'; '.join(said)})" if said else ""]))


def _typed(value: Any, schema: dict[str, Any]) -> Any:
    """A text argument as the schema's type (integer, number, boolean, array, object); as sent otherwise."""
    if not isinstance(value, str) or "string" in _types(schema):
        return value
    for kind in _types(schema):
        try:
            if kind == "integer":
                return int(value)
            if kind == "number":
                return float(value) if any(c in value for c in ".eE") else int(value)
            if kind == "boolean" and value in ("true", "false"):
                return value == "true"
            if kind in ("array", "object", "null"):
                return json.loads(value)
        except ValueError:
            continue
    return value
