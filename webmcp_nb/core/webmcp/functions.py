"""A Python function described as a tool: its signature and type hints give the input model
(and so the JSON Schema), its docstring's first paragraph the description.

One builder for both directions: functions the notebook publishes to agents
(`webmcp_nb.published`) and functions offered to a page as WebMCP tools (`core.webmcp.page_tools`).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, create_model


def summary(function: Callable[..., Any]) -> str:
    """The first paragraph of `function`'s docstring, on one line ("" without a docstring)."""
    doc = inspect.getdoc(function) or ""
    return " ".join(doc.split("\n\n")[0].split())


def parameters(function: Callable[..., Any]) -> list[inspect.Parameter]:
    """`function`'s parameters with their type hints resolved; TypeError for any an agent cannot
    name (``*args``, ``**kwargs``, positional-only) or a hint that does not resolve."""
    label = getattr(function, "__name__", repr(function))
    try:
        found = list(inspect.signature(function, eval_str=True).parameters.values())
    except NameError as exc:
        raise TypeError(f"{label}: a type hint does not resolve ({exc})") from None
    for parameter in found:
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise TypeError(f"{label}: *args and **kwargs cannot be described to an agent")
        if parameter.kind is parameter.POSITIONAL_ONLY:
            raise TypeError(f"{label}: positional-only parameters cannot be named by an agent")
    return found


@dataclass(frozen=True)
class FunctionTool:
    """`function` with a name, a description and a strict input model (unknown arguments refused)."""

    name: str
    description: str
    """The given description, else the docstring's summary; "" when there is neither."""
    function: Callable[..., Any]
    params: type[BaseModel]

    @classmethod
    def build(
        cls, function: Callable[..., Any], *, name: str | None = None, description: str | None = None
    ) -> FunctionTool:
        name = name or function.__name__
        fields: dict[str, Any] = {
            p.name: (
                Any if p.annotation is p.empty else p.annotation,
                ... if p.default is p.empty else p.default,
            )
            for p in parameters(function)
        }
        params = create_model(f"{name}_params", __config__=ConfigDict(extra="forbid"), **fields)
        return cls(name, description or summary(function), function, params)

    async def call(self, arguments: BaseModel) -> Any:
        """Call the function with validated `arguments`: a coroutine function on the running loop,
        a plain one on a worker thread (so that a slow function does not stall the loop)."""
        kwargs = {name: getattr(arguments, name) for name in type(arguments).model_fields}
        if inspect.iscoroutinefunction(self.function):
            return await self.function(**kwargs)
        return await asyncio.to_thread(self.function, **kwargs)
