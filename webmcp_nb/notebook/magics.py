"""``%browser`` / ``%%browser``: every registry tool as a subcommand, generated from the registry.

Arguments come from each tool's input schema: its required string fields, in declaration order,
are positional; every other field is a ``--flag`` (``full_page`` -> ``--full-page``). Booleans
are switches (``--x`` / ``--no-x``), numbers are typed, enums are choices, objects take a JSON
string and lists take the flag once per item or a JSON array. Nothing about a tool is written
here: a tool added to the registry is a subcommand with its own ``--help``.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import json
import shlex
import textwrap
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from traitlets import Bool, Float, Int, TraitError, Unicode, default, observe, validate
from traitlets.config import Configurable

from ..cli import add_grant_options
from ..client import tool_registry
from ..core.config import Limits
from ..core.live import DEFAULT_MAX_FPS
from . import session as shared
from .progress import LiveProgress

if TYPE_CHECKING:
    from ..core.envelope import Envelope
    from ..core.registry import ToolSpec
    from .session import NotebookSession

PREFIX = "browser_"
HELP_WIDTH = 100
_MISSING = object()


# -- the input schema, read as command-line arguments ---------------------------------------
@dataclass(frozen=True)
class Argument:
    """One input field of a tool, as the command line sees it."""

    name: str
    kind: str  # string | integer | number | boolean | array | object | json
    description: str = ""
    required: bool = False
    nullable: bool = False
    default: Any = _MISSING
    choices: tuple[Any, ...] | None = None
    item: Argument | None = None  # the items of an array
    by_position: bool | None = None  # the tool's own say (`ToolSpec.positional`), else the rule below

    @property
    def positional(self) -> bool:
        if self.by_position is not None:
            return self.by_position
        return self.required and self.kind == "string" and not self.nullable

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


def _resolve(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """Inline `$ref`s and unwrap `X | None` unions; the outer node's keywords win."""
    node = dict(node)
    ref = node.pop("$ref", None)
    if ref is not None:
        node = {**_resolve(defs[ref.rsplit("/", 1)[-1]], defs), **node}
    options = node.pop("anyOf", None)
    if options is not None:
        kept = [option for option in options if option.get("type") != "null"]
        if len(kept) < len(options):
            node["nullable"] = True
        if len(kept) == 1:
            node = {**_resolve(kept[0], defs), **node}
        else:
            node["type"] = "json"  # a union of several types: the value is read as JSON
    return node


def _argument(name: str, node: dict[str, Any], defs: dict[str, Any], required: bool) -> Argument:
    node = _resolve(node, defs)
    choices = (node["const"],) if "const" in node else tuple(node["enum"]) if "enum" in node else None
    kind = node.get("type")
    if kind is None and choices:
        kind = {bool: "boolean", int: "integer", float: "number"}.get(type(choices[0]), "string")
    if kind not in ("string", "integer", "number", "boolean", "array", "object"):
        kind = "json"
    item = None
    if kind == "array":
        item = _argument(name, node.get("items", {}), defs, required=False)
    return Argument(
        name=name,
        kind=kind,
        description=node.get("description", ""),
        required=required,
        nullable=bool(node.get("nullable")),
        default=node.get("default", _MISSING),
        choices=choices,
        item=item,
    )


def arguments_of(spec: ToolSpec) -> list[Argument]:
    """The tool's input fields in declaration order."""
    schema = spec.input_schema
    defs = schema.get("$defs", {})
    required = set(schema.get("required", ()))
    arguments = [_argument(name, node, defs, name in required) for name, node in schema.get("properties", {}).items()]
    if spec.magic_positional:
        arguments = [dataclasses.replace(a, by_position=a.name in spec.magic_positional) for a in arguments]
    return arguments


# -- argparse that never exits or prints ------------------------------------------------------
class _ParseError(Exception):
    pass


class _HelpRequested(Exception):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that raises instead of printing to stderr and calling sys.exit."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise _ParseError(message)

    def exit(self, status: int = 0, message: str | None = None) -> None:  # type: ignore[override]
        raise _ParseError(message or f"exit {status}")

    def print_help(self, file: Any = None) -> None:
        raise _HelpRequested(self.format_help())

    def print_usage(self, file: Any = None) -> None:
        raise _HelpRequested(self.format_usage())


class _HelpAction(argparse.Action):
    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> None:
        raise _HelpRequested(parser.format_help())


class _Extend(argparse.Action):
    """A list flag: each occurrence adds the items its value converted to."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, *args: Any) -> None:
        setattr(namespace, self.dest, [*getattr(namespace, self.dest, []), *values])


def _formatter(prog: str) -> argparse.HelpFormatter:
    return argparse.HelpFormatter(prog, width=HELP_WIDTH, max_help_position=32)


def _json_value(text: str, want: type | None = None, label: str = "value") -> Any:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not valid JSON ({exc.msg}, column {exc.colno}): {text!r}") from None
    if want is not None and not isinstance(value, want):
        raise argparse.ArgumentTypeError(f"expected a JSON {label}, got {type(value).__name__}: {text!r}")
    return value


def _scalar_converter(argument: Argument) -> Callable[[str], Any]:
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


def _list_converter(argument: Argument) -> Callable[[str], list[Any]]:
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


def _help_text(argument: Argument) -> str:
    parts = [argument.description.rstrip(".")] if argument.description else []
    if argument.kind == "array":
        parts.append("repeat the flag for each item, or give a JSON array")
    elif argument.kind in ("object", "json"):
        parts.append("JSON")
    if argument.default is not _MISSING and argument.default is not None and argument.kind != "boolean":
        parts.append(f"default: {argument.default}")
    return "; ".join(parts).replace("%", "%%")


@dataclass
class ToolCommand:
    """A registry tool as a ``%browser`` subcommand."""

    spec: ToolSpec
    name: str
    arguments: list[Argument]
    parser: _Parser = field(repr=False)
    flags: frozenset[str] = frozenset()

    @classmethod
    def build(cls, spec: ToolSpec) -> ToolCommand:
        name = spec.name.removeprefix(PREFIX)
        arguments = arguments_of(spec)
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
        parser = _Parser(
            prog=f"%browser {name}",
            description=f"{spec.title}: {spec.description}",
            epilog=", ".join(notes) + ". Omitted flags take the tool's defaults.",
            add_help=False,
            allow_abbrev=False,
            formatter_class=_formatter,
        )
        parser.add_argument("-h", "--help", action=_HelpAction, help="Show this help.")
        flags = {"-h", "--help"}
        for argument in arguments:
            help_text = _help_text(argument)
            if argument.positional:
                by_position: dict[str, Any] = {} if argument.required else {"nargs": "?", "default": argparse.SUPPRESS}
                if argument.choices or argument.kind != "string":
                    convert = _scalar_converter(argument)  # argparse also converts an omitted one's default:
                    by_position["type"] = convert if argument.required else _keeping_suppress(convert)
                parser.add_argument(argument.name, metavar=argument.name.upper(), help=help_text, **by_position)
                continue
            options: dict[str, Any] = {"dest": argument.name, "default": argparse.SUPPRESS, "help": help_text}
            strings = [argument.flag]
            if argument.kind == "boolean":
                if argument.default is False and not argument.required:
                    parser.add_argument(argument.flag, action="store_true", **options)
                else:  # default true, no default (required), or a null default: both switches
                    parser.add_argument(
                        argument.flag, action=argparse.BooleanOptionalAction, required=argument.required, **options
                    )
                    strings.append("--no-" + argument.flag[2:])
            elif argument.kind == "array":
                parser.add_argument(
                    argument.flag,
                    action=_Extend,
                    type=_list_converter(argument),
                    required=argument.required,
                    metavar=_metavar(argument.item),
                    **options,
                )
            else:
                parser.add_argument(
                    argument.flag,
                    type=_scalar_converter(argument),
                    required=argument.required,
                    metavar=_metavar(argument),
                    **options,
                )
            flags.update(strings)
        return cls(spec=spec, name=name, arguments=arguments, parser=parser, flags=frozenset(flags))

    @property
    def signature(self) -> str:
        words = [self.name] + [
            argument.name.upper() if argument.required else f"[{argument.name.upper()}]"
            for argument in self.arguments
            if argument.positional
        ]
        words += [
            f"{argument.flag} {_metavar(argument)}"
            for argument in self.arguments
            if argument.required and not argument.positional
        ]
        if any(not argument.required for argument in self.arguments):
            words.append("[options]")
        return " ".join(words)

    def parse(self, words: Sequence[str]) -> dict[str, Any]:
        """The tool arguments for these command-line words (UsageError if they do not fit)."""
        words = self._spell_flags(words)
        try:
            namespace, extra = self.parser.parse_known_args(words)
        except _ParseError as exc:
            raise UsageError(f"{self.parser.prog}: {exc}\n{self.parser.format_usage().rstrip()}") from None
        if extra:
            raise UsageError(self._unknown(extra))
        return vars(namespace)

    def _spell_flags(self, words: Sequence[str]) -> list[str]:
        """Accept ``--full_page`` for ``--full-page`` (the field's own spelling)."""
        spelled = []
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


def _metavar(argument: Argument | None) -> str:
    if argument is None:
        return "VALUE"
    if argument.choices is not None:
        return "{" + ",".join(map(str, argument.choices)) + "}"
    return {"integer": "N", "number": "X", "object": "JSON", "json": "JSON", "array": "JSON"}.get(
        argument.kind, argument.name.upper()
    )


# -- the subcommand table ---------------------------------------------------------------------
EXTRAS = {
    "tools": "The tool table (every registry tool with its group and annotations).",
    "panel": "The live browser panel widget of the shared session.",
    "log": "The call log widget of the shared session (every caller: magics, widgets, agents).",
    "serve": "Serve the shared session to agents over MCP (`%browser serve --help`); `--stop` ends it.",
    "webmcp": "The current page's WebMCP tools as a table (browser_webmcp_list).",
    "export": "Write the call log as a replay: `%browser export PATH.ipynb` (a notebook) or PATH.py (a script); "
    "`--callers notebook 'agent:*'` keeps only those callers.",
    "help": "This overview; `%browser help TOOL` is `%browser TOOL --help`.",
}

HELP_WORDS = ("help", "-h", "--help")
CELL_BODY = ("execute",)
"""Subcommands whose ``%%browser NAME`` cell body is their positional argument (browser_execute's code)."""

_commands: dict[str, ToolCommand] = {}
_commands_lock = threading.Lock()


def tool_specs() -> list[ToolSpec]:
    return list(tool_registry())


def command_names() -> list[str]:
    return [spec.name.removeprefix(PREFIX) for spec in tool_specs()]


def command(name: str) -> ToolCommand:
    """The subcommand `name` (or the full tool name), or UsageError naming the closest ones."""
    short = name.removeprefix(PREFIX)
    tool_name = PREFIX + short
    registry = tool_registry()
    if tool_name not in registry:
        raise UsageError(_unknown_subcommand(name))
    spec = registry.get(tool_name)
    with _commands_lock:
        built = _commands.get(short)
        if built is None or built.spec is not spec:
            built = _commands[short] = ToolCommand.build(spec)
        return built


def _unknown_subcommand(name: str) -> str:
    names = command_names() + list(EXTRAS)
    short = name.removeprefix(PREFIX)
    close = [candidate for candidate in names if candidate.startswith(short)] if len(short) >= 2 else []
    close += [c for c in difflib.get_close_matches(short, names, n=3, cutoff=0.5) if c not in close]
    hint = f" Did you mean: {', '.join(close[:4])}?" if close else ""
    return f"%browser: unknown subcommand {name!r}.{hint} (`%browser?` lists them all)"


def split_words(line: str) -> list[str]:
    """Shell-like words; a ``#`` that starts a word outside quotes begins a comment."""
    line = strip_comment(line)
    try:
        return shlex.split(line)
    except ValueError as exc:
        raise UsageError(f"%browser: cannot split {line.strip()!r} into words: {exc}") from None


def strip_comment(line: str) -> str:
    """`line` without its comment: from a ``#`` that starts a word outside quotes."""
    quote = None
    escaped = False
    for index, char in enumerate(line):
        if escaped:
            escaped = False
        elif char == "\\" and quote != "'":
            escaped = True
        elif quote is not None:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1].isspace()):
            return line[:index]
    return line


def overview(options: str = "") -> str:
    """The ``%browser?`` text: usage and every tool, from the registry."""
    lines = [
        "Drive the notebook's shared browser session: one subcommand per registry tool.",
        "",
        "Usage:",
        "  %browser TOOL [ARGS]          call one tool; returns its result Envelope (env = %browser snapshot)",
        "  %%browser                     one call per line (# comments and blank lines allowed); stops at",
        "                                the first error, which is displayed; the value is the list of envelopes",
        "  %%browser execute [options]   run the cell body as a browser_execute Python snippet (page, context,",
        "                                browser, state, snapshot(), ref(); top-level await); returns its envelope",
        "  %browser TOOL --help          the tool's arguments",
        "  %browser tools | panel | log  the tool table, the live browser panel, the call log",
        "  %browser webmcp               the page's own WebMCP tools (call one: %browser webmcp_call NAME --input JSON)",
        "",
        "Arguments: the tool's required text fields are positional, in order; every other field is a",
        "flag: --full-page for true (--no-x for false), --depth 3, --format jpeg, JSON text for objects",
        '(--viewport \'{"width": 800, "height": 600}\'), and for lists the flag once per item or a JSON',
        'array. Quote text with spaces: %browser type e5 "two words". {expr} and $name insert Python',
        "values as in any line magic (%browser navigate {url}). A word starting with # begins a comment",
        '(quote it to pass it: %browser press_key "#").',
        "",
        "The same session from Python: nb = webmcp_nb.session(); nb.navigate(url) or",
        'await nb.acall("browser_snapshot").',
        "",
        "Tools:",
    ]
    for spec in tool_specs():
        lines.append(f"  {command(spec.name).signature}")
        lines += textwrap.wrap(
            f"{spec.title}: {spec.description}", 96, initial_indent="      ", subsequent_indent="      "
        )
    lines += ["", "Also:"] + [f"  {name:<8} {text}" for name, text in EXTRAS.items()]
    if options:
        lines += ["", options]
    return "\n".join(lines)


# -- results ----------------------------------------------------------------------------------
class CallList(list):  # type: ignore[type-arg]
    """The envelopes of a ``%%browser`` cell, in order; shown as one summary line per call."""

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        if cycle:
            printer.text("[...]")
            return
        failed = bool(self) and not self[-1].ok
        head = f"{len(self)} call{'s' if len(self) != 1 else ''}" + (", stopped at an error" if failed else "")
        printer.text(head)
        for envelope in self:
            tool = envelope.operation.tool.removeprefix(PREFIX)
            detail = f"{envelope.error_type}: {envelope.message}" if not envelope.ok else ""
            line = f"{'ok' if envelope.ok else 'ERROR':<6}{tool:<18}{envelope.operation.duration_ms:>9.1f} ms  {detail}"
            printer.break_()
            printer.text("  " + line.rstrip())


def _env_limits() -> Limits:
    try:
        return Limits.from_env()
    except ValueError:
        return Limits()


# -- the magics -------------------------------------------------------------------------------
@magics_class
class BrowserMagics(Magics, Configurable):
    """``%browser`` and ``%%browser`` on the notebook's shared session (`webmcp_nb.session()`).

    Options (``%config BrowserMagics``; in a config file ``c.BrowserMagics.headless = False``).
    Limits and launch options apply to the running session at once.
    """

    headless = Bool(True, help="Launch browsers without a window (instances created from now on).").tag(config=True)
    backend = Unicode("chromium", help="The browser `%browser create_instance` launches unless given --backend.").tag(
        config=True
    )
    default_instance = Unicode(
        "default", help="The instance calls go to unless told otherwise (fixed once the session has started)."
    ).tag(config=True)
    max_result_bytes = Int(
        help="Largest result a call may return, in bytes (at least 4096; larger is result_too_large). "
        "Default: BROWSER_MCP_MAX_RESULT_BYTES or 1048576."
    ).tag(config=True)
    max_instances = Int(help="Most browser instances at once. Default: BROWSER_MCP_MAX_INSTANCES or 10.").tag(
        config=True
    )
    operation_timeout_s = Float(
        help="Time limit of one call, queue wait included, in seconds. "
        "Default: BROWSER_MCP_OPERATION_TIMEOUT_SECONDS or 60."
    ).tag(config=True)
    screenshot_width = Int(800, help="Display width of inline screenshots, in pixels.").tag(config=True)
    screenshot_after_actions = Bool(
        False, help="After a page action from %browser succeeds, also display a screenshot of the page."
    ).tag(config=True)
    live_view_fps = Float(DEFAULT_MAX_FPS, help="Frames per second of the live view in `%browser panel`.").tag(
        config=True
    )

    _attached = False

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        # Only what a config file or the command line set: defaults need no checking (and
        # checking some would import every tool, which loading must not do).
        given = self.config.get(type(self).__name__, {})
        values = {name: getattr(self, name) for name in shared.OPTIONS if name in given}
        try:
            shared.configure(**values)
        except ValueError:
            import warnings

            for name, value in values.items():  # apply what can be applied, tell about the rest
                try:
                    shared.configure(**{name: value})
                except ValueError as exc:
                    warnings.warn(f"BrowserMagics.{name} not applied: {exc}", stacklevel=2)
        self._attached = True

    def detach(self) -> None:
        """Stop pushing option changes to the shared session (on unload)."""
        self._attached = False

    @default("max_result_bytes")
    def _default_max_result_bytes(self) -> int:
        return _env_limits().max_result_bytes

    @default("max_instances")
    def _default_max_instances(self) -> int:
        return _env_limits().max_instances

    @default("operation_timeout_s")
    def _default_operation_timeout_s(self) -> float:
        return _env_limits().operation_timeout_s

    @validate(*shared.OPTIONS)
    def _check_option(self, proposal: Any) -> Any:
        name, value = proposal["trait"].name, proposal["value"]
        try:
            shared.check_options({name: value})
        except ValueError as exc:
            raise TraitError(f"BrowserMagics.{name} = {value!r} was refused, nothing changed: {exc}") from None
        return value

    @observe(*shared.OPTIONS)
    def _push_option(self, change: Any) -> None:
        if not self._attached:
            return
        try:
            shared.configure(**{change["name"]: change["new"]})
        except ValueError as exc:  # the session changed state since the value was checked
            self.set_trait(change["name"], change["old"])
            raise TraitError(f"BrowserMagics.{change['name']} = {change['new']!r} was refused: {exc}") from None

    # the magic ---------------------------------------------------------------------------
    @line_cell_magic
    def browser(self, line: str, cell: str | None = None) -> Any:
        if cell is None:
            return self._run_line(line)
        words = split_words(line)
        if words and words[0] in CELL_BODY:
            return self._run_body(words, cell)
        if words:
            raise UsageError(
                "%%browser takes no arguments on its first line (except "
                + ", ".join(f"`%%browser {name}`" for name in CELL_BODY)
                + "); write one call per line below it."
            )
        return self._run_cell(cell)

    def _run_body(self, words: list[str], cell: str) -> Envelope | None:
        """``%%browser execute [flags]``: the cell body, as written, is the positional argument."""
        tool = command(words[0])
        try:
            args = tool.parse([*words[1:], "--", cell])
        except _HelpRequested as request:
            print(request.text.rstrip())
            return None
        return self._call(tool.spec, args)

    def _run_line(self, line: str) -> Any:
        words = split_words(line)
        if not words or words[0] in HELP_WORDS:
            topic = words[1] if len(words) > 1 else None
            if topic is None or topic in HELP_WORDS:
                print(type(self).browser.__doc__)
                return None
            words = [topic, "--help"]
        planned = self._plan(words)
        if planned is None:
            return None
        kind, target, args = planned
        if kind == "extra":
            return self._extra(target, args)
        envelope = self._call(target, args)
        return envelope

    def _run_cell(self, cell: str) -> CallList:
        plans = []
        for number, raw in enumerate(cell.splitlines(), 1):
            line = strip_comment(raw).strip()
            if not line:
                continue
            line = self._expand(line)  # after the comment is gone: a comment may hold anything
            try:
                words = split_words(line)
                if not words:
                    continue
                if words[0] in HELP_WORDS:
                    raise UsageError("help is not a call; use %browser? or %browser TOOL --help")
                planned = self._plan(words)
            except UsageError as exc:
                raise UsageError(f"%%browser line {number} ({line!r}): {exc}") from None
            if planned is not None:
                plans.append(planned)
        results = CallList()
        for kind, target, args in plans:  # every line parsed before the first call
            if kind == "extra":
                _display(self._extra(target, args))
                continue
            envelope = self._call(target, args)
            results.append(envelope)
            if not envelope.ok:
                _display(envelope)
                break
        return results

    def _expand(self, line: str) -> str:
        """{expr} and $name from the user's namespace, as IPython expands a magic's line."""
        if self.shell is None:
            return line
        from IPython.utils.text import DollarFormatter

        try:
            return DollarFormatter().vformat(line, args=[], kwargs=self.shell.user_ns)
        except Exception:  # noqa: BLE001 - like IPython: a line that does not format is used as written
            return line

    def _plan(self, words: list[str]) -> tuple[str, Any, dict[str, Any]] | None:
        """What one line asks for: ("extra", name, {}) or ("tool", spec, args); None after --help."""
        name, rest = words[0], words[1:]
        if name == "serve":
            options = parse_serve(rest)
            return None if options is None else ("extra", name, options)
        if name == "export":
            options = parse_export(rest)
            return None if options is None else ("extra", name, options)
        if name in EXTRAS and PREFIX + name not in tool_registry():
            if rest in ([], ["--help"], ["-h"]):
                if rest:
                    print(f"%browser {name}: {EXTRAS[name]}")
                    return None
                return ("extra", name, {})
            raise UsageError(f"%browser {name} takes no arguments.")
        tool = command(name)
        try:
            args = tool.parse(rest)
        except _HelpRequested as request:
            print(request.text.rstrip())
            return None
        return ("tool", tool.spec, args)

    def _extra(self, name: str, options: dict[str, Any] | None = None) -> Any:
        session = shared.shared_session()
        if name == "serve":
            return serve(session, options or {})
        if name == "export":
            return export(session, **(options or {}))
        if name == "panel":
            return session.panel()
        if name == "log":
            return session.log()
        if name == "webmcp":
            return session.call("browser_webmcp_list")
        try:
            from ..core.render import ToolTable  # type: ignore[attr-defined]
        except ImportError:
            return session.tools
        return ToolTable(session.tools)

    def _call(self, spec: ToolSpec, args: dict[str, Any]) -> Envelope:
        session = shared.shared_session()
        if "backend" in spec.params.model_fields and "backend" not in args:
            field_default = spec.params.model_fields["backend"].default
            if session.backend != field_default:
                args["backend"] = session.backend
        live = LiveProgress(spec.name)  # a streaming call's events, shown as they arrive
        envelope = session.call_as(session.caller, spec.name, args, on_progress=live)
        live.finish()
        if self.screenshot_after_actions and envelope.ok and spec.target == "page" and not spec.call_is_read_only(args):
            self._show_screenshot(session, envelope)
        return envelope

    def _show_screenshot(self, session: NotebookSession, envelope: Envelope) -> None:
        args: dict[str, Any] = {}
        if envelope.instance:
            args["instance"] = envelope.instance
        if envelope.operation.page_id:
            args["page_id"] = envelope.operation.page_id
        shot = session.call("browser_screenshot", **args)
        if not shot.ok:
            print(f"(no screenshot after {envelope.operation.tool}: {shot.error_type}: {shot.message})")
            return
        from IPython.display import Image

        data = shot.data or {}
        fmt = "jpeg" if data.get("mime_type") == "image/jpeg" else "png"
        width = min(self.screenshot_width, int(data.get("width") or self.screenshot_width))
        _display(Image(data=data["image"], format=fmt, width=width))


def _serve_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="%browser serve",
        description="Serve the notebook's shared session to agents over MCP (streamable HTTP on the runtime "
        "thread). Prints the URL, a fresh bearer token and client configurations; approval prompts appear "
        "below.",
        formatter_class=_formatter,
    )
    parser.add_argument("--port", type=int, default=0, help="TCP port (default: a free one)")
    parser.add_argument(
        "--caps",
        nargs="+",
        default=[],
        metavar="CAP",
        help="extra grants for agents: tool groups js, code, files, pdf, and browser (any launch "
        "option) (default: core tools only)",
    )
    add_grant_options(parser)
    parser.add_argument(
        "--approve",
        choices=["consequential", "all", "none"],
        default="consequential",
        help="which agent calls wait for your approval (default: consequential)",
    )
    parser.add_argument(
        "--allow-origin",
        dest="allowed_origins",
        nargs="+",
        default=None,
        metavar="ORIGIN",
        help="mirror the WebMCP tools of pages from these origins (default: where you navigated)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback)")
    parser.add_argument("--allow-remote", action="store_true", help="allow a non-loopback --host")
    parser.add_argument("--stop", action="store_true", help="stop the session's MCP servers")
    return parser


def parse_serve(words: Sequence[str]) -> dict[str, Any] | None:
    """The options of ``%browser serve``; None after --help."""
    parser = _serve_parser()
    if any(word in HELP_WORDS for word in words):
        print(parser.format_help().rstrip())
        return None
    try:
        return vars(parser.parse_args(list(words)))
    except _ParseError as exc:
        raise UsageError(f"%browser serve: {exc}") from None


def serve(session: NotebookSession, options: dict[str, Any]) -> None:
    if options.pop("stop", False):
        servers = session.servers
        for server in servers:
            server.stop()
        print(f"stopped {len(servers)} MCP server{'s' if len(servers) != 1 else ''}")
        return
    try:
        handle = session.serve_mcp(**options)
    except (ValueError, OSError) as exc:
        raise UsageError(f"%browser serve: {exc}") from None
    print(handle.describe())


def parse_export(words: Sequence[str]) -> dict[str, Any] | None:
    """The options of ``%browser export``; None after --help."""
    parser = _Parser(prog="%browser export", description=EXTRAS["export"], formatter_class=_formatter)
    parser.add_argument("path", help="where to write: .ipynb (a notebook) or .py (a script)")
    parser.add_argument(
        "--callers",
        nargs="+",
        default=None,
        metavar="PATTERN",
        help="keep only these callers (fnmatch patterns, such as 'agent:*'; default: every caller)",
    )
    if any(word in HELP_WORDS for word in words):
        print(parser.format_help().rstrip())
        return None
    try:
        options = vars(parser.parse_args(list(words)))
    except _ParseError as exc:
        raise UsageError(f"%browser export: {exc}") from None
    if not options["path"].endswith((".ipynb", ".py")):
        raise UsageError(f"%browser export: {options['path']!r} must end in .ipynb (a notebook) or .py (a script)")
    return options


def export(session: NotebookSession, path: str, callers: list[str] | None) -> None:
    write = session.export_script if path.endswith(".py") else session.export_notebook
    written = write(path, callers=callers)
    print(f"wrote {written}: a replay of the call log")


def _display(value: Any) -> None:
    from IPython.display import display

    display(value)


def _options_doc() -> str:
    lines = ["Options (%config BrowserMagics; c.BrowserMagics.NAME = value in a config file):"]
    for name, trait in BrowserMagics.class_traits(config=True).items():
        lines.append(f"  {name} ({type(trait).__name__}): {trait.help}")
    return "\n".join(lines)


class _DocumentedLater:
    """A magic method whose docstring (what ``%browser?`` shows) is generated from the registry
    when first read, so that loading the extension does not import every tool."""

    def __init__(self, function: Callable[..., Any], make_doc: Callable[[], str]) -> None:
        self.function, self._make_doc, self._doc = function, make_doc, None
        self.__name__ = function.__name__

    @property  # type: ignore[misc]
    def __doc__(self) -> str:  # type: ignore[override]
        if self._doc is None:
            self._doc = self._make_doc()
        return self._doc

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        return self if instance is None else _BoundDocumentedLater(self, instance)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.function(*args, **kwargs)


class _BoundDocumentedLater:
    def __init__(self, method: _DocumentedLater, instance: Any) -> None:
        self._method, self.__self__, self.__func__ = method, instance, method.function
        self.__name__ = method.__name__

    @property  # type: ignore[misc]
    def __doc__(self) -> str:  # type: ignore[override]
        return self._method.__doc__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__func__(self.__self__, *args, **kwargs)


BrowserMagics.browser = _DocumentedLater(BrowserMagics.browser, lambda: overview(_options_doc()))  # type: ignore[method-assign]
