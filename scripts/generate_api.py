"""Generate `webmcp_nb/_generated.py`: a typed method pair on `Session` for every registry tool.

For a tool ``browser_X`` it writes ``X`` (blocking) and ``aX`` (awaitable), both calling the
tool with exactly the arguments their caller passed. Parameters come from the tool's pydantic
params model: the tool's required parameters (or its declared `ToolSpec.positional` ones) by
position in schema order, every other one keyword-only; annotations with `Literal` for enums
and a `TypedDict` for each nested model; the blocking method's docstring from the tool's and the
fields' descriptions, the awaitable twin's one line naming it.

    python scripts/generate_api.py          # write the module (what `make generate` runs)
    python scripts/generate_api.py --check  # exit 1 if the committed module is stale

The output depends only on the registry (tools sorted by name), so it is the same on every run.
"""

from __future__ import annotations

import argparse
import json
import keyword
import sys
import textwrap
import types
import typing
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "webmcp_nb" / "_generated.py"
TOOL_PREFIX = "browser_"
ASYNC_PREFIX = "a"
WIDTH = 120
STALE_HINT = "webmcp_nb/_generated.py is stale: run `make generate` and commit the result."

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from webmcp_nb.client import tool_registry  # noqa: E402
from webmcp_nb.core.call.registry import ToolSpec  # noqa: E402


def method_name(tool_name: str) -> str:
    """The blocking method of a tool: its name without ``browser_``."""
    if not tool_name.startswith(TOOL_PREFIX):
        raise ValueError(f"tool {tool_name!r} does not start with {TOOL_PREFIX!r}")
    name = tool_name.removeprefix(TOOL_PREFIX)
    if not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"tool {tool_name!r} gives no usable method name ({name!r})")
    return name


def async_method_name(tool_name: str) -> str:
    return ASYNC_PREFIX + method_name(tool_name)


@dataclass(frozen=True)
class Parameter:
    name: str
    annotation: str
    required: bool
    positional: bool
    default: Any
    description: str


def field_default(field: FieldInfo) -> Any:
    if field.default_factory is not None:
        return field.default_factory()  # type: ignore[call-arg]
    return field.default


def positional_names(spec: ToolSpec) -> tuple[str, ...]:
    """The parameters taken by position: `spec.positional`, else the required ones in schema order."""
    fields = spec.params.model_fields
    if spec.positional is None:
        return tuple(name for name, field in fields.items() if field.is_required())
    unknown = [name for name in spec.positional if name not in fields]
    if unknown:
        raise ValueError(f"{spec.name}: positional names unknown parameters {unknown}")
    missing = [name for name, field in fields.items() if field.is_required() and name not in spec.positional]
    if missing:
        raise ValueError(f"{spec.name}: required parameters {missing} must be positional too")
    return spec.positional


def parameters(spec: ToolSpec, typed_dicts: dict[str, type[BaseModel]]) -> list[Parameter]:
    """The method's parameters (after `self`): positional ones first, in their order, then the rest."""
    fields = spec.params.model_fields
    for name, field in fields.items():
        if not name.isidentifier() or keyword.iskeyword(name) or name == "self":
            raise ValueError(f"{spec.name}: parameter {name!r} cannot be a Python parameter")
        if field.alias not in (None, name):
            raise ValueError(f"{spec.name}: parameter {name!r} has an alias; the generator does not support it")
    positional = positional_names(spec)
    order = [*positional, *(name for name in fields if name not in positional)]
    result = []
    seen_default = False
    for name in order:
        field = fields[name]
        required = field.is_required()
        if name in positional:
            if required and seen_default:
                raise ValueError(f"{spec.name}: required parameter {name!r} follows one with a default")
            seen_default = seen_default or not required
        result.append(
            Parameter(
                name=name,
                annotation=annotation_source(field.annotation, typed_dicts),
                required=required,
                positional=name in positional,
                default=None if required else field_default(field),
                description=" ".join(
                    part for part in (field.description or "", bounds(spec.input_schema["properties"][name])) if part
                ),
            )
        )
    return result


def bounds(schema: dict[str, Any]) -> str:
    """The numeric range and item counts a parameter's schema allows, for its docstring ("1 to 1000.")."""
    branch = next((b for b in schema.get("anyOf", []) if b.get("type") != "null"), schema)
    low = [f">= {branch['minimum']}"] if "minimum" in branch else []
    low += [f"> {branch['exclusiveMinimum']}"] if "exclusiveMinimum" in branch else []
    high = [f"<= {branch['maximum']}"] if "maximum" in branch else []
    high += [f"< {branch['exclusiveMaximum']}"] if "exclusiveMaximum" in branch else []
    if "minimum" in branch and "maximum" in branch:
        values = f"{branch['minimum']} to {branch['maximum']}"
    else:
        values = ", ".join(low + high)
    items = ""
    if "maxItems" in branch:
        fewest = branch.get("minItems", 0)
        items = f"{fewest} to {branch['maxItems']} items" if fewest else f"at most {branch['maxItems']} items"
    elif "minItems" in branch:
        items = f"at least {branch['minItems']} items"
    note = "; ".join(part for part in (values, items) if part)
    return f"({note})" if note else ""


def annotation_source(annotation: Any, typed_dicts: dict[str, type[BaseModel]]) -> str:
    """Python source for a pydantic field annotation (constraints dropped, nested models as TypedDicts)."""
    if annotation is None or annotation is type(None):
        return "None"
    if annotation is Any:
        return "Any"
    origin = get_origin(annotation)
    if origin is typing.Annotated:
        return annotation_source(get_args(annotation)[0], typed_dicts)
    if origin in (Union, types.UnionType):
        parts: list[str] = []
        for argument in get_args(annotation):
            source = annotation_source(argument, typed_dicts)
            if source not in parts:
                parts.append(source)
        return " | ".join(parts)
    if origin is Literal:
        return f"Literal[{', '.join(value_source(value) for value in get_args(annotation))}]"
    if origin in (list, dict):
        inner = ", ".join(annotation_source(argument, typed_dicts) for argument in get_args(annotation))
        return f"{origin.__name__}[{inner}]"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        known = typed_dicts.setdefault(annotation.__name__, annotation)
        if known is not annotation:
            raise ValueError(f"two nested models are named {annotation.__name__!r}; rename one")
        return annotation.__name__
    if annotation in (str, int, float, bool):
        return annotation.__name__
    raise ValueError(f"no Python annotation for {annotation!r}; teach scripts/generate_api.py")


def value_source(value: Any) -> str:
    """Python source for a default or a Literal value (double-quoted strings, as ruff formats them)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    if isinstance(value, list):
        return f"[{', '.join(value_source(item) for item in value)}]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{value_source(k)}: {value_source(v)}" for k, v in value.items()) + "}"
    raise ValueError(f"no Python source for the default {value!r}")


# Rendering ---------------------------------------------------------------------------------------

HEADER = '''\
"""Typed methods for every registry tool, mixed into `Session`. GENERATED: do not edit.

Written by scripts/generate_api.py from the tool registry (`make generate`); tests/test_api.py
fails when it is stale. ``s.X(...)`` blocks; ``await s.aX(...)`` is its awaitable form. Both send
exactly the arguments given (optional parameters default to `Default` markers, which show the
tool's own default), so a call equals ``s.call("browser_X", ...)`` with the same arguments.
"""

# ruff: noqa: B008 - a `default(...)` marker is made once, only shown, and never sent or changed.

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict

from ._arguments import default, given
from .core.call.envelope import Envelope


'''


def docstring(text: str, indent: int) -> list[str]:
    """A docstring's lines at `indent` spaces, each paragraph wrapped to the line width."""
    escaped = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    body: list[str] = []
    for number, paragraph in enumerate(escaped.split("\n\n")):
        if number:
            body.append("")
        for line in paragraph.split("\n"):
            hanging = " " * (len(line) - len(line.lstrip()))
            body.extend(
                textwrap.wrap(
                    line.strip(),
                    WIDTH - indent - 3,  # room for the opening quotes
                    initial_indent=hanging,
                    subsequent_indent=hanging + ("    " if hanging else ""),
                    break_on_hyphens=False,
                    break_long_words=False,
                )
            )
    body[0] = '"""' + body[0]
    pad = " " * indent
    return [pad + line if line else "" for line in body] + [pad + '"""']


def method_doc(spec: ToolSpec, params: list[Parameter], awaitable: bool) -> str:
    """The blocking method's full docstring; the awaitable twin's one line points to it."""
    name = method_name(spec.name)
    if awaitable:
        return f"Awaitable twin of `{name}` (the ``{spec.name}`` tool)."
    text = (
        f"{spec.description.strip()}\n\nCalls the ``{spec.name}`` tool and returns its `Envelope`; "
        f"the awaitable twin is ``{ASYNC_PREFIX}{name}``."
    )
    described = [p for p in params if p.description]
    if described:
        text += "\n\nArgs:\n" + "\n".join(f"    {p.name}: {p.description.strip()}" for p in described)
    return text


def render_method(spec: ToolSpec, params: list[Parameter], awaitable: bool) -> list[str]:
    name = async_method_name(spec.name) if awaitable else method_name(spec.name)
    prefix = "async def" if awaitable else "def"
    if params:
        lines = [f"    {prefix} {name}(", "        self,"]
        keyword_only = False
        for p in params:
            if not p.positional and not keyword_only:
                lines.append("        *,")
                keyword_only = True
            value = "" if p.required else f" = default({value_source(p.default)})"
            lines.append(f"        {p.name}: {p.annotation}{value},")
        lines.append("    ) -> Envelope:")
    else:
        lines = [f"    {prefix} {name}(self) -> Envelope:"]
    doc = method_doc(spec, params, awaitable)
    lines.extend([f'        """{doc}"""'] if awaitable else docstring(doc, 8))
    call = f'await self.acall("{spec.name}"' if awaitable else f'self.call("{spec.name}"'
    lines.append(f"        return {call}, **given(locals()))")
    return lines


def render_typed_dict(model: type[BaseModel], typed_dicts: dict[str, type[BaseModel]]) -> list[str]:
    lines = [f"class {model.__name__}(TypedDict):"]
    about = (model.__doc__ or "").strip()
    if about and about != (BaseModel.__doc__ or "").strip():
        lines.extend(docstring(about, 4))
        lines.append("")
    for name, field in model.model_fields.items():
        source = annotation_source(field.annotation, typed_dicts)
        if not field.is_required():
            source = f"NotRequired[{source}]"
        comment = f"  # {field.description.strip()}" if field.description else ""
        line = f"    {name}: {source}{comment}"
        lines.append(line if len(line) <= WIDTH else f"    {name}: {source}")
    return lines


def render(specs: Iterable[ToolSpec] | None = None) -> str:
    """The module's source for `specs` (default: every tool of the registry), sorted by name."""
    typed_dicts: dict[str, type[BaseModel]] = {}
    methods: list[str] = []
    names: set[str] = set()
    for spec in sorted(tool_registry() if specs is None else specs, key=lambda spec: spec.name):
        params = parameters(spec, typed_dicts)
        for awaitable in (False, True):
            name = async_method_name(spec.name) if awaitable else method_name(spec.name)
            if name in names:
                raise ValueError(f"two tools give the method name {name!r}")
            names.add(name)
            methods.append("")
            methods.extend(render_method(spec, params, awaitable))
    out = [HEADER]
    rendered: set[str] = set()
    while len(rendered) < len(typed_dicts):  # rendering one may find nested ones
        for name in sorted(set(typed_dicts) - rendered):
            out.append("\n".join(render_typed_dict(typed_dicts[name], typed_dicts)) + "\n\n\n")
            rendered.add(name)
    out.append(
        "class ToolMethods:\n"
        '    """One blocking and one awaitable method per registry tool (`Session` inherits them)."""\n'
        "\n"
        "    if TYPE_CHECKING:\n"
        "\n"
        "        def call(self, tool: str, /, **args: Any) -> Envelope: ...\n"
        "\n"
        "        async def acall(self, tool: str, /, **args: Any) -> Envelope: ...\n"
    )
    out.append("\n".join(methods) + "\n")
    return "".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed module is stale")
    options = parser.parse_args(argv)
    source = render()
    current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
    if options.check:
        if current != source:
            print(STALE_HINT, file=sys.stderr)
            return 1
        return 0
    if current != source:
        TARGET.write_text(source, encoding="utf-8")
        print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
