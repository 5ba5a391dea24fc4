"""Tab completion for ``%browser`` and ``%%browser``: subcommands, their flags and enum values.

Everything offered is read from the parsers that run the line (the registry's tools as
`ToolCommand`; the parsers of ``serve`` and ``export``), so a new tool or option completes with
no line written here. `complete` is text in, words out; `browser_matcher` is the IPython matcher
(API v2) that loading the extension adds to the shell's completer.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from IPython.core.completer import CompletionContext, SimpleMatcherResult

    from .tool_commands import CommandParser

LINE_MAGIC, CELL_MAGIC = "%browser", "%%browser"


@dataclass(frozen=True)
class Flag:
    """A flag of a subcommand: whether a value follows it, and the values it admits (None: any)."""

    takes_value: bool
    choices: tuple[str, ...] | None = None


def complete(text_until_cursor: str) -> tuple[list[str], str] | None:
    """The completions of the word under the cursor, and that word, when the cursor is in a
    ``%browser`` line or a call line of a ``%%browser`` cell; None anywhere else."""
    words, word = _call_words(text_until_cursor)
    if words is None:
        return None
    if not words:
        return sorted(name for name in _subcommands() if name.startswith(word)), word
    name = words[0]
    if name in ("help", "-h", "--help") and len(words) == 1:
        return sorted(n for n in _subcommands() if n.startswith(word) and n != "help"), word
    flags = _flags(name)
    if flags is None:
        return [], word
    previous = flags.get(words[-1]) if len(words) > 1 else None
    if previous is not None and previous.takes_value:
        return [value for value in previous.choices or () if value.startswith(word)], word
    if word.startswith("-") or not word:
        return sorted(flag for flag in flags if flag.startswith(word or "--")), word
    return [], word


def _call_words(text: str) -> tuple[list[str] | None, str]:
    """The words of the call before the cursor (after the magic's name) and the word under it;
    (None, "") when the cursor is not in a call."""
    lines = text.split("\n")
    current = lines[-1]
    first = lines[0].split()
    if len(lines) > 1:  # in a cell: its later lines are calls only under a bare %%browser
        if first != [CELL_MAGIC]:
            return None, ""
    elif current.lstrip().startswith((LINE_MAGIC + " ", CELL_MAGIC + " ")):
        current = current.lstrip().split(None, 1)[1] if len(current.split()) > 1 else ""
    else:
        return None, ""
    lexer = shlex.shlex(current, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        words = list(lexer)
    except ValueError:  # inside an open quote: nothing sensible to offer
        return None, ""
    if current and not current[-1].isspace() and words:
        return words[:-1], words[-1]
    return words, ""


def _subcommands() -> list[str]:
    from .magics import EXTRAS, command_names

    names = command_names()
    return [*names, *(name for name in EXTRAS if name not in names)]


def _flags(name: str) -> dict[str, Flag] | None:
    """Every flag of subcommand `name`; None if there is no such subcommand."""
    from .magics import EXTRAS, command, command_names, export_parser, output_flags, serve_parser
    from .tool_commands import flag_of

    if name == "serve":
        return _parser_flags(serve_parser())
    if name == "export":
        return _parser_flags(export_parser())
    if name in EXTRAS and name not in command_names():
        return {"--help": Flag(False)}
    if name not in command_names():
        return None
    tool = command(name)
    flags = {"--help": Flag(False)} | {flag: Flag(False) for flag in output_flags(name)}
    for argument in tool.arguments:
        flag = flag_of(argument)
        if flag not in tool.flags:
            continue  # a positional argument
        if argument.kind == "boolean":
            flags[flag] = Flag(False)
            if "--no-" + flag[2:] in tool.flags:
                flags["--no-" + flag[2:]] = Flag(False)
            continue
        field = argument.item if argument.kind == "array" and argument.item is not None else argument
        choices = tuple(map(str, field.choices)) if field.choices is not None else None
        flags[flag] = Flag(True, choices)
    return flags


def _parser_flags(parser: CommandParser) -> dict[str, Flag]:
    flags = {flag: Flag(False) for flag in parser.switches}
    flags.update({flag: Flag(True, choices) for flag, choices in parser.flag_values.items()})
    return flags


def browser_matcher(context: CompletionContext) -> SimpleMatcherResult:
    """The IPython matcher: in a ``%browser`` call, our completions and no other matcher's."""
    from IPython.core.completer import SimpleCompletion

    lines = context.full_text.split("\n")
    before = "\n".join([*lines[: context.cursor_line], context.text_until_cursor])
    found = complete(before)
    if found is None:
        return {"completions": [], "suppress": False}
    names, word = found
    result: SimpleMatcherResult = {
        "completions": [SimpleCompletion(text=name, type="magic argument") for name in names],
        "suppress": True,
    }
    if word and context.token.endswith(word):
        result["matched_fragment"] = word
    return result


browser_matcher.matcher_api_version = 2  # type: ignore[attr-defined]


def install(shell: Any) -> None:
    """Add `browser_matcher` to `shell`'s completer (once)."""
    if browser_matcher not in shell.Completer.custom_matchers:
        shell.Completer.custom_matchers.append(browser_matcher)


def uninstall(shell: Any) -> None:
    if browser_matcher in shell.Completer.custom_matchers:
        shell.Completer.custom_matchers.remove(browser_matcher)
