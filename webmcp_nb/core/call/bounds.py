"""Bounds every call meets before its arguments are validated.

The tool name must be a short string, and the arguments of bounded depth and size, so
that lookup, validation, the call log and serialisation never recurse without end, copy
megabytes or echo them back. A call out of bounds is refused as ``invalid_params``
(nothing was done); its envelope names the tool only if the name is a short string.
"""

from __future__ import annotations

from typing import Any

from .errors import InvalidParams

MAX_TOOL_NAME_CHARS = 128
"""Longest tool name (MCP's own bound); longer names are refused and not echoed."""
MAX_ARGUMENT_DEPTH = 64
"""Deepest nesting of objects and arrays, the arguments object itself being level 1.
Built-in tools need 3 (`browser_fill_form`); the rest is room for page tools' input."""
MAX_ARGUMENT_BYTES = 1_048_576
"""Largest arguments, counted as their JSON would be: strings and keys in UTF-8, numbers
and punctuation."""
MAX_INTEGER_BITS = 1024
"""Largest integer magnitude (below 2**1024, about 1.8e308): beyond it no browser reads the
number (JavaScript's largest is about 1.8e308) and Python would not print it."""
INVALID_TOOL_NAME = "(invalid tool name)"
"""`operation.tool` of a call whose tool name is not a string or is too long."""

_WHERE_CHARS = 80


def tool_label(tool: object) -> str:
    """The name an envelope gives the call of `tool`: itself if a short string."""
    if isinstance(tool, str) and len(tool) <= MAX_TOOL_NAME_CHARS:
        return tool
    return INVALID_TOOL_NAME


def screen(tool: object, args: object) -> InvalidParams | None:
    """Why the call of `tool` with `args` is refused before validation, or None."""
    if not isinstance(tool, str):
        return InvalidParams(f"The tool name must be a string, not {type(tool).__name__}.")
    if len(tool) > MAX_TOOL_NAME_CHARS:
        return InvalidParams(
            f"The tool name is {len(tool):,} characters long, over the limit of {MAX_TOOL_NAME_CHARS} "
            f"(it starts {tool[:40]!r}); no tool has such a name."
        )
    return _measure(args)


def _measure(args: object) -> InvalidParams | None:
    """Walk `args` without recursion, stopping at the first bound crossed."""
    budget = MAX_ARGUMENT_BYTES
    stack: list[tuple[Any, int, tuple[Any, ...]]] = [(args, 1, ())]
    while stack:
        value, depth, path = stack.pop()
        if isinstance(value, (dict, list, tuple)):
            if depth > MAX_ARGUMENT_DEPTH:
                return InvalidParams(
                    f"The arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels of objects and arrays "
                    f"(at '{_where(path)}'); no tool takes input that deep."
                )
            budget -= 2 + 2 * len(value)  # brackets, separators, at least one byte an item
            if budget < 0:
                return _too_large(path)
            if isinstance(value, dict):
                for key, item in value.items():
                    budget -= _scalar_size(key, budget)
                    stack.append((item, depth + 1, (*path, key)))
            else:
                stack.extend((item, depth + 1, (*path, index)) for index, item in enumerate(value))
        elif isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INTEGER_BITS:
            return InvalidParams(
                f"The integer at '{_where(path)}' has about {value.bit_length() * 30103 // 100000:,} digits, "
                f"beyond what a JSON number can hold (magnitude below 2**{MAX_INTEGER_BITS})."
            )
        else:
            budget -= _scalar_size(value, budget)
        if budget < 0:
            return _too_large(path)
    return None


def _scalar_size(value: Any, budget: int) -> int:
    """About the bytes of `value` as JSON; more than `budget` once it is known to exceed it."""
    if isinstance(value, str):
        if value.isascii() or len(value) > budget:
            return len(value) + 2
        return len(value.encode("utf-8", "surrogatepass")) + 2
    if isinstance(value, bool) or value is None:
        return 5
    if isinstance(value, int):
        return value.bit_length() * 30103 // 100000 + 2  # decimal digits, without printing them
    if isinstance(value, float):
        return len(repr(value))
    if isinstance(value, (bytes, bytearray)):
        return len(value)
    return 8  # anything else is refused by validation


def _too_large(path: tuple[Any, ...]) -> InvalidParams:
    return InvalidParams(
        f"The arguments are larger than {MAX_ARGUMENT_BYTES:,} bytes (the limit was crossed at "
        f"'{_where(path)}'); nothing was done. Send less at once."
    )


def _where(path: tuple[Any, ...]) -> str:
    where = ".".join(str(part)[:_WHERE_CHARS] for part in path) or "(arguments)"
    return where if len(where) <= _WHERE_CHARS else f"{where[: _WHERE_CHARS - 3]}..."
