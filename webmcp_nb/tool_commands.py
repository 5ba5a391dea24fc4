"""A registry tool as a ``%browser`` subcommand: its input schema read as an argument parser.

The tool's required string fields, in declaration order, are positional; every other field is a
``--flag`` (``full_page`` -> ``--full-page``). Booleans are switches (``--x`` / ``--no-x``),
numbers are typed, enums are choices, objects take a JSON string and lists take the flag once
per item or a JSON array. Nothing about a tool is written here: a tool added to the registry is
a subcommand with its own ``--help``.

Plain argparse, without IPython: the magics wrap it (their parser raises IPython's UsageError) and
the export writes ``%browser`` lines that this parser reads back.
"""

from __future__ import annotations

import argparse
import difflib
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn

from .core.call.schema_fields import SchemaField, read_fields

if TYPE_CHECKING:
    from .core.call.registry import ToolSpec

PREFIX = "browser_"
HELP_WIDTH = 100


# -- the input schema, read as command-line arguments ---------------------------------------
def is_positional(argument: SchemaField, named: tuple[str, ...] = ()) -> bool:
    """The fields a tool names (`ToolSpec.magic_positional`: browser_http's ``[METHOD] URL``), else
    the required, non-null text fields are positional; the others are flags."""
    if named:
        return argument.name in named
    return argument.required and argument.kind == "string" and not argument.nullable


def flag_of(argument: SchemaField) -> str:
    return "--" + argument.name.replace("_", "-")


# -- argparse that never exits or prints ------------------------------------------------------
class CommandError(ValueError):
    """Words that do not fit the command: the message says why (argparse printed nothing)."""


class HelpRequested(Exception):
    """``--help`` was given: `text` is the help to show (nothing was printed)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


class CommandParser(argparse.ArgumentParser):
    """An argument parser that never exits nor prints: errors raise `failure`, help raises
    HelpRequested. No ``-h`` unless asked for (``add_help=True``)."""

    failure: ClassVar[type[Exception]] = CommandError
    """What a bad command line raises (the magics' parser: IPython's UsageError)."""

    def __init__(self, *, add_help: bool = False, formatter_class: Any = None, **options: Any) -> None:
        self.flag_values: dict[str, tuple[str, ...] | None] = {}
        """Each ``--flag`` that takes a value, with the values it admits (None: any); for completion."""
        self.switches: set[str] = set()
        """The ``--flags`` that take no value."""
        super().__init__(add_help=add_help, formatter_class=formatter_class or formatter, **options)

    def add_argument(self, *names: Any, **options: Any) -> argparse.Action:
        action = super().add_argument(*names, **options)
        for flag in action.option_strings:
            if not flag.startswith("--"):
                continue
            if action.nargs == 0:
                self.switches.add(flag)
            else:
                self.flag_values[flag] = tuple(map(str, action.choices)) if action.choices is not None else None
        return action

    def error(self, message: str) -> NoReturn:
        raise self.failure(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise self.failure(message or f"exit {status}")

    def print_help(self, file: Any = None) -> None:
        raise HelpRequested(self.format_help())

    def print_usage(self, file: Any = None) -> None:
        raise HelpRequested(self.format_usage())


class _HelpAction(argparse.Action):
    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> None:
        raise HelpRequested(parser.format_help())


class _Extend(argparse.Action):
    """A list flag: each occurrence adds the items its value converted to."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, *args: Any) -> None:
        setattr(namespace, self.dest, [*getattr(namespace, self.dest, []), *values])


def formatter(prog: str) -> argparse.HelpFormatter:
    return argparse.HelpFormatter(prog, width=HELP_WIDTH, max_help_position=32)


def _json_value(text: str, want: type | None = None, label: str = "value") -> Any:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not valid JSON ({exc.msg}, column {exc.colno}): {text!r}") from None
    if want is not None and not isinstance(value, want):
        raise argparse.ArgumentTypeError(f"expected a JSON {label}, got {type(value).__name__}: {text!r}")
    return value


def _scalar_converter(argument: SchemaField) -> Callable[[str], Any]:
    """How one command-line word becomes a value of this argument's type."""
    kind = argument.kind
    if kind == "integer":
        convert: Callable[[str], Any] = int
    elif kind == "number":
        convert = float
    elif kind == "object":

        def convert(text: str) -> Any:
            return _json_value(text, dict, "object")

    elif kind == "json":

        def convert(text: str) -> Any:
            try:
                return json.loads(text)
            except json.JSONDecodeError:
                return text  # a union that admits text: a bare word is that text

    elif kind == "boolean":

        def convert(text: str) -> Any:
            lowered = text.lower()
            if lowered not in ("true", "false"):
                raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")
            return lowered == "true"

    else:

        def convert(text: str) -> Any:
            return text

    if argument.choices is None:
        return convert

    def checked(text: str) -> Any:
        value = convert(text)
        if value not in argument.choices:  # type: ignore[operator]
            offered = ", ".join(map(str, argument.choices))  # type: ignore[arg-type]
            raise argparse.ArgumentTypeError(f"invalid choice {text!r} (choose from {offered})")
        return value

    return checked


def _keeping_suppress(convert: Callable[[str], Any]) -> Callable[[str], Any]:
    return lambda text: text if text is argparse.SUPPRESS else convert(text)


def _list_converter(argument: SchemaField) -> Callable[[str], list[Any]]:
    assert argument.item is not None
    one = _scalar_converter(argument.item)
    text_items = argument.item.kind == "string"

    def convert(text: str) -> list[Any]:
        if text.lstrip().startswith("["):
            try:
                values = json.loads(text)
            except json.JSONDecodeError:
                if not text_items:
                    raise argparse.ArgumentTypeError(f"not a valid JSON array: {text!r}") from None
                values = None  # a text item that happens to start with '['
            if isinstance(values, list):
                for value in values:
                    if argument.item.choices is not None and value not in argument.item.choices:  # type: ignore[union-attr]
                        offered = ", ".join(map(str, argument.item.choices))  # type: ignore[union-attr]
                        raise argparse.ArgumentTypeError(f"invalid choice {value!r} (choose from {offered})")
                return values
        return [one(text)]

    return convert


def _help_text(argument: SchemaField) -> str:
    parts = [argument.description.rstrip(".")] if argument.description else []
    if argument.kind == "array":
        parts.append("repeat the flag for each item, or give a JSON array")
    elif argument.kind in ("object", "json"):
        parts.append("JSON")
    if argument.has_default and argument.default is not None and argument.kind != "boolean":
        parts.append(f"default: {argument.default}")
    return "; ".join(parts).replace("%", "%%")


@dataclass
class ToolCommand:
    """A registry tool as a ``%browser`` subcommand."""

    spec: ToolSpec
    name: str
    arguments: list[SchemaField]
    parser: CommandParser = field(repr=False)
    flags: frozenset[str] = frozenset()

    @classmethod
    def build(cls, spec: ToolSpec, parser_class: type[CommandParser] = CommandParser) -> ToolCommand:
        name = spec.name.removeprefix(PREFIX)
        arguments = read_fields(spec.input_schema)
        notes = [f"Tool {spec.name}"]
        notes += [
            label
            for label, on in (
                ("read-only", spec.read_only),
                ("destructive", spec.destructive),
                ("idempotent", spec.idempotent),
            )
            if on
        ]
        if spec.group != "core":
            notes.append(f"group {spec.group!r}")
        parser = parser_class(
            prog=f"%browser {name}",
            description=f"{spec.title}: {spec.description}",
            epilog=", ".join(notes) + ". Omitted flags take the tool's defaults.",
            add_help=False,
            allow_abbrev=False,
            formatter_class=formatter,
        )
        parser.add_argument("-h", "--help", action=_HelpAction, help="Show this help.")
        flags = {"-h", "--help"}
        for argument in arguments:
            help_text = _help_text(argument)
            if is_positional(argument, spec.magic_positional):
                checked: dict[str, Any] = {} if argument.required else {"nargs": "?", "default": argparse.SUPPRESS}
                if argument.choices or argument.kind != "string":
                    convert = _scalar_converter(argument)  # argparse also converts an omitted one's default:
                    checked["type"] = convert if argument.required else _keeping_suppress(convert)
                parser.add_argument(argument.name, metavar=argument.name.upper(), help=help_text, **checked)
                continue
            options: dict[str, Any] = {"dest": argument.name, "default": argparse.SUPPRESS, "help": help_text}
            strings = [flag_of(argument)]
            if argument.kind == "boolean":
                if argument.default is False and not argument.required:
                    parser.add_argument(flag_of(argument), action="store_true", **options)
                else:  # default true, no default (required), or a null default: both switches
                    parser.add_argument(
                        flag_of(argument), action=argparse.BooleanOptionalAction, required=argument.required, **options
                    )
                    strings.append("--no-" + flag_of(argument)[2:])
            elif argument.kind == "array":
                parser.add_argument(
                    flag_of(argument),
                    action=_Extend,
                    type=_list_converter(argument),
                    required=argument.required,
                    metavar=_metavar(argument.item),
                    **options,
                )
            else:
                parser.add_argument(
                    flag_of(argument),
                    type=_scalar_converter(argument),
                    required=argument.required,
                    metavar=_metavar(argument),
                    **options,
                )
            flags.update(strings)
        return cls(spec=spec, name=name, arguments=arguments, parser=parser, flags=frozenset(flags))

    @property
    def signature(self) -> str:
        named = self.spec.magic_positional
        words = [self.name] + [
            argument.name.upper() if argument.required else f"[{argument.name.upper()}]"
            for argument in self.arguments
            if is_positional(argument, named)
        ]
        words += [
            f"{flag_of(argument)} {_metavar(argument)}"
            for argument in self.arguments
            if argument.required and not is_positional(argument, named)
        ]
        if any(not argument.required for argument in self.arguments):
            words.append("[options]")
        return " ".join(words)

    def parse(self, words: Sequence[str]) -> dict[str, Any]:
        """The tool arguments for these command-line words (the parser's `failure` if they do not fit)."""
        words = self._spell_flags(words)
        failure = self.parser.failure
        try:
            namespace, extra = self.parser.parse_known_args(words)
        except failure as exc:
            raise failure(f"{self.parser.prog}: {exc}\n{self.parser.format_usage().rstrip()}") from None
        if extra:
            raise failure(self._unknown(extra))
        return vars(namespace)

    def _spell_flags(self, words: Sequence[str]) -> list[str]:
        """Accept ``--full_page`` for ``--full-page`` (the field's own spelling)."""
        spelled: list[str] = []
        for index, word in enumerate(words):
            if word == "--":
                return spelled + list(words[index:])
            name, equals, value = word.partition("=")
            if name.startswith("--") and "_" in name and name.replace("_", "-") in self.flags:
                word = name.replace("_", "-") + equals + value
            spelled.append(word)
        return spelled

    def _unknown(self, extra: list[str]) -> str:
        flags = [word for word in extra if word.startswith("-") and len(word) > 1]
        if flags:
            word = flags[0].partition("=")[0]
            close = difflib.get_close_matches(word, sorted(self.flags - {"-h"}), n=3, cutoff=0.5)
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
            message = f"{self.parser.prog}: unknown flag {word!r}.{hint}"
        else:
            message = f"{self.parser.prog}: unexpected argument(s) {' '.join(map(repr, extra))}"
        return f"{message}\n{self.parser.format_usage().rstrip()}\n(see %browser {self.name} --help)"


_built: dict[tuple[str, type[CommandParser]], ToolCommand] = {}
_built_lock = threading.Lock()


def tool_command(spec: ToolSpec, parser_class: type[CommandParser] = CommandParser) -> ToolCommand:
    """The subcommand of this tool, built once per tool (again if the registry replaced it)."""
    with _built_lock:
        built = _built.get((spec.name, parser_class))
        if built is None or built.spec is not spec:
            built = _built[spec.name, parser_class] = ToolCommand.build(spec, parser_class)
        return built


def _metavar(argument: SchemaField | None) -> str:
    if argument is None:
        return "VALUE"
    if argument.choices is not None:
        return "{" + ",".join(map(str, argument.choices)) + "}"
    return {"integer": "N", "number": "X", "object": "JSON", "json": "JSON", "array": "JSON"}.get(
        argument.kind, argument.name.upper()
    )
