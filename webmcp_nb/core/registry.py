"""The tool registry: every tool is declared here once.

A tool is an async handler plus its metadata: name, title, description, an
input model (pydantic, strict, ``additionalProperties: false``), a data model,
annotations and a capability group. Front ends (Python, magics, MCP) are all
generated from this registry.
"""

from __future__ import annotations

import difflib
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ValidationError

if TYPE_CHECKING:
    from .context import CallContext

Target = Literal["server", "instance", "page"]
Group = Literal["core", "js", "files"]
Handler = Callable[["CallContext", Any], Awaitable[BaseModel]]


class ToolFailure(Exception):
    """Raised by a handler to end a call with an error envelope.

    `started` says whether the tool may have changed anything: False gives
    ``not_started`` / ``after_correction``; True gives ``unknown`` and
    ``inspect_state`` (or ``read_only`` for a read-only tool).
    """

    def __init__(self, error_type: str, message: str, *, started: bool = True) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message
        self.started = started


class InvalidParams(ToolFailure):
    def __init__(self, message: str) -> None:
        super().__init__("invalid_params", message, started=False)


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    params: type[BaseModel]
    data: type[BaseModel]
    handler: Handler
    target: Target
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    open_world: bool = False
    group: Group = "core"
    resolves_modal: bool = False
    too_large_hint: str = ""

    @cached_property
    def input_schema(self) -> dict[str, Any]:
        return self.params.model_json_schema()

    @cached_property
    def data_schema(self) -> dict[str, Any]:
        return self.data.model_json_schema()

    @property
    def annotations(self) -> dict[str, bool]:
        return {
            "read_only": self.read_only,
            "destructive": self.destructive,
            "idempotent": self.idempotent,
            "open_world": self.open_world,
        }

    def validate(self, args: dict[str, Any]) -> BaseModel:
        """Parse `args`, or raise `InvalidParams` naming the offending field."""
        try:
            return self.params.model_validate(args)
        except ValidationError as exc:
            raise InvalidParams(describe_validation_error(self, exc)) from None


def describe_validation_error(spec: ToolSpec, exc: ValidationError) -> str:
    allowed = ", ".join(spec.params.model_fields)
    problems = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "(arguments)"
        kind = error["type"]
        if kind == "extra_forbidden":
            problems.append(f"unknown parameter '{where}' (allowed: {allowed or 'none'})")
        elif kind == "missing":
            problems.append(f"missing required parameter '{where}'")
        else:
            shown = repr(error.get("input"))
            if len(shown) > 80:
                shown = shown[:77] + "..."
            problems.append(f"parameter '{where}': {error['msg']} (got {shown})")
    return f"Invalid arguments for {spec.name}: " + "; ".join(problems)


class Registry:
    """An ordered set of tools, looked up by name."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolSpec] = {}

    def add(self, spec: ToolSpec) -> ToolSpec:
        if spec.name in self._tools:
            raise ValueError(f"tool {spec.name!r} is already registered")
        self._tools[spec.name] = spec
        return spec

    def tool(self, **metadata: Any) -> Callable[[Handler], Handler]:
        """Decorator: register an async handler with `metadata` (see `ToolSpec`)."""

        def register(handler: Handler) -> Handler:
            self.add(ToolSpec(handler=handler, **metadata))
            return handler

        return register

    def get(self, name: str) -> ToolSpec:
        try:
            return self._tools[name]
        except KeyError:
            close = difflib.get_close_matches(name, self._tools, n=3, cutoff=0.5)
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
            raise InvalidParams(f"Unknown tool {name!r}.{hint}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[ToolSpec]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def names(self) -> list[str]:
        return list(self._tools)


REGISTRY = Registry()
tool = REGISTRY.tool
