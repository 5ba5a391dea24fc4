"""The ``%browser`` subcommands' parser for the magics: `webmcp_nb.tool_commands`, whose errors are
IPython's UsageError (shown as a usage message, without a traceback)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from IPython.core.error import UsageError

from .. import tool_commands as plain
from ..tool_commands import PREFIX, HelpRequested, ToolCommand, flag_of, formatter, is_positional

if TYPE_CHECKING:
    from ..core.call.registry import ToolSpec

__all__ = ["PREFIX", "CommandParser", "HelpRequested", "ToolCommand", "flag_of", "formatter", "is_positional"]


class CommandParser(plain.CommandParser):
    """The command parser whose errors raise UsageError."""

    failure: ClassVar[type[Exception]] = UsageError


def tool_command(spec: ToolSpec) -> ToolCommand:
    """The tool's subcommand, parsed with UsageError for its errors."""
    return plain.tool_command(spec, CommandParser)
