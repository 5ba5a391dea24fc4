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
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import BaseModel, ValidationError

from .errors import InvalidParams
from .listeners import Listeners

if TYPE_CHECKING:
    from ..browsers.pages import PageState
    from .approval import Consequence
    from .context import CallContext

Target = Literal["server", "instance", "page"]
Group = Literal[
    "core",
    "js",
    "code",
    "files",
    "pdf",
    "secrets",
    "http",
    "testing",
    "vision",
    "tracing",
    "storage",
    "notebook",
    "api",
]
"""Capability groups. Agents get "core" and the tools the notebook published ("notebook");
the others are granted explicitly (`serve_mcp(caps=...)`). The `Session` and the notebook
call every tool."""
Handler = Callable[["CallContext", Any], Awaitable[BaseModel]]
Check = Callable[["CallContext", Any], None]
Preview = Callable[["CallContext", Any], "dict[str, Any] | None"]
Dispatch = Callable[["CallContext", Any, "PageState | None"], Awaitable["Consequence"]]
"""The consequence of a call by what it dispatches to (`webmcp_nb.core.call.approval`), given its tab."""
"""Refuses (raises `InvalidParams`) arguments the caller's grant does not allow, before
approval and queueing: nothing has happened yet."""
RESERVED_PARAMS = frozenset({"call_timeout_s"})
"""Keywords `Session.call` takes for itself, so no tool may declare them."""


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
    recovers_page: bool = False  # runs on a crashed or unresponsive tab (which fails other tools fast)
    too_large_hint: str = ""
    # Argument paths ("text", "fields.*.value") that carry text typed into a page field: recorded
    # as [redacted] unless the handler found the field ordinary (see webmcp_nb.core.guard.redaction).
    typed_text: tuple[str, ...] = ()
    # Argument paths holding secrets ("headers.*": a grid's token), always recorded as [redacted],
    # and URL arguments recorded without userinfo and query (see webmcp_nb.core.guard.redaction).
    secret_args: tuple[str, ...] = ()
    credential_urls: tuple[str, ...] = ()
    positional: tuple[str, ...] | None = None
    """Parameters the `Session` methods take by position, in this order (default: the
    required ones, in schema order); the others are keyword-only."""
    check: Check | None = None
    # False: the tool declares no output schema to agents, and its results carry structured
    # content only on a success without an image (its data has no fixed shape: browser_execute).
    structured_output: bool = True
    # For a tool that is read-only for some calls only (browser_http: GET, HEAD, OPTIONS): says,
    # from the call's arguments, that this call changes nothing (no approval is asked for it).
    read_only_when: Callable[[dict[str, Any]], bool] | None = None
    # For a tool that dispatches to something with hints of its own (browser_webmcp_call: the
    # page tool): that target's consequence decides approval, not this tool's annotations.
    consequence: Dispatch | None = None
    # The fields the %browser command line takes by position, in declaration order (default: the
    # required text fields); browser_http's `http GET /api/items`.
    magic_positional: tuple[str, ...] = ()
    api: str | None = None  # an API operation's tool (group "api"): the API's name, for the ``api:NAME`` grant
    # What a call would send, shown with its approval prompt (`ApprovalRequest.preview`); the handler
    # then sends exactly that (an API operation: the request, secret headers redacted).
    preview: Preview | None = None

    def call_is_read_only(self, args: Any) -> bool:
        """Whether this call (its arguments, when they are an object) changes nothing."""
        return self.read_only or (
            self.read_only_when is not None and isinstance(args, dict) and self.read_only_when(args)
        )

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

    def validate(self, args: Any) -> BaseModel:
        """Parse `args`, or raise `InvalidParams` naming the offending field."""
        return validate_arguments(self.name, self.params, args)


def validate_arguments(tool: str, params: type[BaseModel], args: Any) -> BaseModel:
    """`args` parsed as tool `tool`'s `params`, or `InvalidParams` naming the offending field (every
    tool's input, a front end's own tools too, is refused in these words)."""
    if not isinstance(args, dict):
        raise InvalidParams("Arguments must be an object of named parameters.")
    try:
        return params.model_validate(args)
    except ValidationError as exc:
        raise InvalidParams(describe_validation_error(tool, params, exc)) from None


def describe_validation_error(tool: str, params: type[BaseModel], exc: ValidationError) -> str:
    problems = []
    for error in exc.errors(include_url=False):
        where = _clip(".".join(str(part) for part in error["loc"]) or "(arguments)")
        kind = error["type"]
        if kind == "extra_forbidden":
            allowed = _fields_at(params, error["loc"][:-1])
            hint = f" (allowed: {', '.join(allowed) or 'none'})" if allowed is not None else ""
            problems.append(f"unknown parameter '{where}'{hint}")
        elif kind == "missing":
            problems.append(f"missing required parameter '{where}'")
        else:
            problems.append(f"parameter '{where}': {error['msg']} (got {_clip(repr(error.get('input')))})")
    return f"Invalid arguments for {tool}: " + "; ".join(problems)


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def _fields_at(model: type[BaseModel], path: tuple[Any, ...]) -> list[str] | None:
    """The field names of the (nested) model at `path`, or None if it cannot be told."""
    current: Any = model
    for part in path:
        if isinstance(part, int):
            continue  # a list index: same item model
        field = current.model_fields.get(part) if isinstance(current, type) and issubclass(current, BaseModel) else None
        if field is None:
            return None
        current = _model_in(field.annotation)
        if current is None:
            return None
    return list(current.model_fields)


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside an annotation such as `list[Model] | None`."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for argument in get_args(annotation):
        found = _model_in(argument)
        if found is not None:
            return found
    return None


class Registry:
    """An ordered set of tools, looked up by name.

    A registry with a `parent` adds its own tools after the parent's (a session's
    published tools on top of the built-in ones) and tells `listeners` when its
    own tools change.
    """

    def __init__(self, parent: Registry | None = None) -> None:
        self._tools: dict[str, ToolSpec] = {}
        self.parent = parent
        self.listeners: Listeners[[]] = Listeners()

    def add(self, spec: ToolSpec) -> ToolSpec:
        self._insert(spec)
        self.listeners.emit()
        return spec

    def add_all(self, specs: list[ToolSpec]) -> None:
        """Add several tools, telling `listeners` once (an API's operations)."""
        for spec in specs:
            self._insert(spec)
        if specs:
            self.listeners.emit()

    def remove_all(self, names: list[str]) -> None:
        """Remove several of this registry's own tools, telling `listeners` once."""
        removed = [self._tools.pop(name, None) for name in names]
        if any(spec is not None for spec in removed):
            self.listeners.emit()

    def _insert(self, spec: ToolSpec) -> None:
        if spec.name in self:
            raise ValueError(f"tool {spec.name!r} is already registered")
        reserved = RESERVED_PARAMS & set(spec.params.model_fields)
        if reserved:
            raise ValueError(f"{spec.name}: parameter {', '.join(sorted(reserved))} is reserved (Session.call's own)")
        if spec.target == "page" and not spec.read_only and "modal_state" not in spec.data.model_fields:
            raise ValueError(f"{spec.name}: a page action's data must report modal_state (see ActionData)")
        self._tools[spec.name] = spec

    def remove(self, name: str) -> None:
        """Remove one of this registry's own tools (not a parent's); unknown names are ignored."""
        if self._tools.pop(name, None) is not None:
            self.listeners.emit()

    def tool(self, **metadata: Any) -> Callable[[Handler], Handler]:
        """Decorator: register an async handler with `metadata` (see `ToolSpec`)."""

        def register(handler: Handler) -> Handler:
            self.add(ToolSpec(handler=handler, **metadata))
            return handler

        return register

    def get(self, name: str) -> ToolSpec:
        spec = self._tools.get(name)
        if spec is not None:
            return spec
        if self.parent is not None and name in self.parent:
            return self.parent.get(name)
        close = difflib.get_close_matches(name, self.names(), n=3, cutoff=0.6)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        raise InvalidParams(f"Unknown tool {name!r}.{hint}")

    def __contains__(self, name: object) -> bool:
        return name in self._tools or (self.parent is not None and name in self.parent)

    def __iter__(self) -> Iterator[ToolSpec]:
        if self.parent is not None:
            yield from self.parent
        yield from list(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools) + (len(self.parent) if self.parent is not None else 0)

    def names(self) -> list[str]:
        return [spec.name for spec in self]


REGISTRY = Registry()
tool = REGISTRY.tool
