"""Arguments of the generated tool methods (`_generated.py`): which ones the caller gave.

An optional parameter's default is a `Default` marker that shows as its value in
`help()` and `inspect.signature`, so a method sends exactly the arguments its caller
passed, and the tool's own model fills in the rest (the call log and the approval
prompt see the call as written).
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

T = TypeVar("T")


class Default:
    """The default of an optional parameter: the tool's own default value, not sent."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value

    def __repr__(self) -> str:
        return repr(self.value)


def default(value: T) -> T:
    """Mark `value` as a parameter's default (typed as the value, for type checkers)."""
    return cast(T, Default(value))


def given(arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments a method's caller passed: `locals()` at its start, minus `self` and defaults."""
    return {name: value for name, value in arguments.items() if name != "self" and not isinstance(value, Default)}
