"""Session options declared once: name, type, default, bound, environment variable and help.

Each is a field of `core.config.Limits` made with `option`; `Session(...)` keywords,
`Session.reconfigure`, the notebook's traits (``%config BrowserMagics``), the ``webmcp-nb serve``
flags and the docs' configuration table are derived from those fields. A value remembers
where it came from (`Source`), and every message about it names that source.

`BROWSER_MCP_MAX_RESULT_BYTES`, `BROWSER_MCP_MAX_INSTANCES` and
`BROWSER_MCP_OPERATION_TIMEOUT_SECONDS` are the envelope contract's (its result, instance and
time limits keep their names); every other variable is ``WEBMCP_NB_*``.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import os
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

# Where a value came from, as messages name it.
DEFAULT = "default"


@dataclass(frozen=True)
class Option:
    """One option: `minimum` is excluded when `exclusive` (a timeout must be above 0)."""

    name: str
    default: int | float
    minimum: int | float
    env: str
    label: str
    help: str
    exclusive: bool = False
    deprecated_env: str | None = None

    @property
    def type(self) -> type[int] | type[float]:
        return type(self.default)

    @property
    def bound(self) -> str:
        if self.exclusive and self.minimum == 0:
            return "must be positive"
        return f"must be {'above' if self.exclusive else 'at least'} {self.minimum:g}"

    def check(self, value: Any, source: str) -> None:
        """ValueError naming the option, the value, its bound and `source` when the value is out."""
        wrong_type = isinstance(value, bool) or not isinstance(value, int if self.type is int else (int, float))
        if wrong_type:
            raise ValueError(f"{self.name} must be {'an int' if self.type is int else 'a number'}, got {value!r} "
                             f"({source})")  # fmt: skip
        if value < self.minimum or (self.exclusive and value == self.minimum):
            raise ValueError(f"{self.name} {self.bound}, got {value!r} ({source})")

    def from_env(self) -> tuple[int | float, str] | None:
        """The environment's value and its source (None when unset); ValueError when it is not a number.
        The deprecated name is still read, with a DeprecationWarning, when the new one is unset."""
        for env in (self.env, self.deprecated_env):
            raw = os.environ.get(env, "").strip() if env else ""
            if not raw:
                continue
            if env == self.deprecated_env:
                warnings.warn(f"{env} is deprecated: set {self.env} instead", DeprecationWarning, stacklevel=4)
            source = f"environment variable {env}"
            try:
                return self.type(raw), source
            except ValueError:
                raise ValueError(
                    f"{self.name}: {source}={raw!r} is not a valid {self.type.__name__} ({self.bound})"
                ) from None
        return None

    def describe(self, source: str) -> str:
        """Where a value came from, for messages: its source, or how to change the default."""
        return f"the default; {self.env} or {self.name}= sets it" if source == DEFAULT else source


def option(
    default: int | float,
    *,
    minimum: int | float,
    env: str,
    label: str,
    help: str,
    exclusive: bool = False,
    deprecated_env: str | None = None,
) -> Any:
    """A dataclass field declaring an option (its name is the field's)."""
    spec: dict[str, Any] = {"minimum": minimum, "env": env, "label": label, "help": help}
    spec |= {"exclusive": exclusive, "deprecated_env": deprecated_env}
    return field(default=default, metadata={"option": spec})


def options_of(cls: type) -> dict[str, Option]:
    """The options a dataclass declares with `option`, in declaration order."""
    return {
        f.name: Option(f.name, f.default, **f.metadata["option"])  # type: ignore[arg-type]
        for f in dataclasses.fields(cls)
        if "option" in f.metadata
    }


def resolve(
    declared: Mapping[str, Option], given: Mapping[str, Any], source: str | Mapping[str, str]
) -> tuple[dict[str, Any], dict[str, str]]:
    """Values and sources: `given` (non-None, from `source`: e.g. ``Session(NAME=...)``, NAME
    replaced by each name, or each name's own), else the environment, else the default. TypeError
    for a name that is no option."""
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise TypeError(
            f"unknown option{'s' * (len(unknown) > 1)} {', '.join(unknown)} (options: {', '.join(declared)})"
        )
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for name, spec in declared.items():
        if given.get(name) is not None:
            where = source.replace("NAME", name) if isinstance(source, str) else source[name]
            values[name], sources[name] = given[name], where
        elif (found := spec.from_env()) is not None:
            values[name], sources[name] = found
        else:
            values[name], sources[name] = spec.default, DEFAULT
    return values, sources


def markdown_table(declared: Iterable[Option]) -> str:
    """The docs' configuration table (generated: `scripts/generate_options.py`)."""
    header = "| option | environment | `Session(...)`, `reconfigure`, `%config BrowserMagics.` | `webmcp-nb serve` |"
    rows = [header + " default | bound |", "|---|---|---|---|---|---|"]
    for spec in declared:
        env = f"`{spec.env}`" + (f" (was `{spec.deprecated_env}`)" if spec.deprecated_env else "")
        rows.append(
            f"| {spec.label} | {env} | `{spec.name}` | `{flag(spec)}` | {_number(spec.default)} | {spec.bound} |"
        )
    return "\n".join(rows) + "\n"


def _number(value: int | float) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def flag(spec: Option) -> str:
    return "--" + spec.name.replace("_", "-")


def keyword_parameters(declared: Mapping[str, Option]) -> list[inspect.Parameter]:
    """The options as keyword-only parameters, None (not given) by default."""
    return [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=f"{spec.type.__name__} | None")
        for name, spec in declared.items()
    ]


def spell_out(function: Callable[..., Any], parameters: Iterable[inspect.Parameter]) -> None:
    """Show `function`'s ``**keywords`` as the named `parameters` (help, completion, `inspect`)."""
    signature = inspect.signature(function)
    kept = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    function.__signature__ = signature.replace(parameters=[*kept, *parameters])  # type: ignore[attr-defined]


def add_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """A flag for each limit (None when not given: the environment's value, else the default)."""
    from .config import LIMIT_OPTIONS

    for spec in LIMIT_OPTIONS.values():
        parser.add_argument(
            flag(spec), dest=spec.name, type=spec.type, metavar=spec.type.__name__.upper(),
            help=f"{spec.help} (default: ${spec.env}, else {_number(spec.default)})".replace("%", "%%"),
        )  # fmt: skip
