"""``%browser`` / ``%%browser``: every registry tool as a subcommand, generated from the registry
(the arguments of each: `tool_commands`), plus the session's extras (tools, panel, log, serve).
"""

from __future__ import annotations

import difflib
import shlex
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from traitlets import observe

from ..client import tool_registry
from ..core.call.envelope import Envelope
from ..core.render.renderer import mimebundle
from ..serve_options import add_arguments
from . import session as shared
from .options import NotebookOptions
from .progress import LiveProgress
from .tool_commands import PREFIX, CommandParser, HelpRequested, ToolCommand, formatter, tool_command

if TYPE_CHECKING:
    from ..core.call.registry import ToolSpec
    from .session import NotebookSession


# -- the subcommand table ---------------------------------------------------------------------
EXTRAS = {
    "tools": "The tool table (every registry tool with its group and annotations).",
    "panel": "The live browser panel widget of the shared session.",
    "log": "The call log widget of the shared session (every caller: magics, widgets, agents).",
    "serve": "Serve the shared session to agents over MCP (`%browser serve --help`); `--stop` ends it.",
    "webmcp": "The current page's WebMCP tools as a table (browser_webmcp_list).",
    "export": "Write the call log as a replay: `%browser export PATH.ipynb` (a notebook) or PATH.py (a script); "
    "`--callers notebook 'agent:*'` keeps only those callers.",
    "api": "APIs as tools: `%browser api load SPEC --name NAME [--base-url URL]`, `%browser api NAME` (its "
    "operations), `%browser api NAME OPERATION --param value ...` (a call; values are JSON or text).",
    "help": "This overview; `%browser help TOOL` is `%browser TOOL --help`.",
}
ALIASES = {"state": "storage_state"}
"""Short subcommands for tools: `%browser state save shop-login` is browser_storage_state's."""

HELP_WORDS = ("help", "-h", "--help")
CELL_BODY = ("execute",)
"""Subcommands whose ``%%browser NAME`` cell body is their positional argument (browser_execute's code)."""
PLOT_FLAG = "--plot"
DF_FLAG = "--df"
"""A listing's items as a pandas DataFrame (`Envelope.to_pandas()`) instead of its envelope."""


def tool_specs() -> list[ToolSpec]:
    return list(tool_registry())


def command_names() -> list[str]:
    return [spec.name.removeprefix(PREFIX) for spec in tool_specs()]


def command(name: str) -> ToolCommand:
    """The subcommand `name` (or the full tool name), or UsageError naming the closest ones."""
    short = name.removeprefix(PREFIX)
    short = ALIASES.get(short, short)
    tool_name = PREFIX + short
    registry = tool_registry()
    if tool_name not in registry:
        raise UsageError(_unknown_subcommand(name))
    return tool_command(registry.get(tool_name))


def output_flags(name: str) -> tuple[str, ...]:
    """The magic's own flags of subcommand `name`, beyond its tool's: `--df` for a tool that lists
    items (its data has one of `LIST_KEYS`), `--plot` for network."""
    from ..core.call.envelope import LIST_KEYS

    spec = tool_registry().get(PREFIX + name) if PREFIX + name in tool_registry() else None
    if spec is None:
        return ()
    lists = any(key in spec.data.model_fields for key in LIST_KEYS)
    return (DF_FLAG,) * lists + (PLOT_FLAG,) * (name == "network")


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
        "  %browser network --plot       the requests as a table, then as a waterfall (static SVG)",
        "  %browser network --df         a listing's items as a pandas DataFrame (Envelope.to_pandas())",
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


# -- the magics -------------------------------------------------------------------------------
@magics_class
class BrowserMagics(Magics, NotebookOptions):
    """``%browser`` and ``%%browser`` on the notebook's shared session (`webmcp_nb.session()`).

    Options (``%config BrowserMagics``; in a config file ``c.BrowserMagics.headless = False``):
    the traits of `NotebookOptions`. Limits and launch options apply to the running session at once.
    """

    # how envelopes display -----------------------------------------------------------------
    def show_envelopes(self, *, full: bool | None = None) -> None:
        """Display envelopes as `cell_output` says (`full` if given): lean through
        `Envelope._repr_mimebundle_`, full through a printer given to IPython's mime-bundle
        formatter (the core stays IPython-free)."""
        shell: Any = self.shell
        if shell is None:
            return
        formatter = shell.display_formatter.mimebundle_formatter
        formatter.pop(Envelope, None)
        if full if full is not None else self.cell_output == "full":
            formatter.for_type(Envelope, _full_bundle)

    @observe("cell_output")
    def _cell_output_changed(self, change: Any) -> None:
        self.show_envelopes()

    def detach(self) -> None:
        """On unload: envelopes display lean again, later sessions take the default options."""
        self.show_envelopes(full=False)
        super().detach()

    # the magic ---------------------------------------------------------------------------
    @line_cell_magic
    def browser(self, line: str, cell: str | None = None) -> Any:
        """Drive the notebook's shared browser session (``%browser help`` lists every tool)."""
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
        except HelpRequested as request:
            print(request.text.rstrip())
            return None
        return self._call(tool.spec, args)

    def _run_line(self, line: str) -> Any:
        words = split_words(line)
        if not words or words[0] in HELP_WORDS:
            topic = words[1] if len(words) > 1 else None
            if topic is None or topic in HELP_WORDS:
                print(_help())
                return None
            words = [topic, "--help"]
        own = [word for word in words[1:] if word in output_flags(words[0])]
        planned = self._plan([word for word in words if word not in own])
        if planned is None:
            return None
        kind, target, args = planned
        if kind == "extra":
            return self._extra(target, args)
        envelope = self._call(target, args)
        if PLOT_FLAG in own and envelope.ok:
            _display(envelope.plot())  # the waterfall below the table
        if DF_FLAG in own and envelope.ok:
            return envelope.to_pandas()
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
        if name == "api":
            return ("extra", name, {"words": rest})
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
        except HelpRequested as request:
            print(request.text.rstrip())
            return None
        return ("tool", tool.spec, args)

    def _extra(self, name: str, options: dict[str, Any] | None = None) -> Any:
        session = shared.shared_session()
        if name == "serve":
            return serve(session, options or {})
        if name == "export":
            return export(session, **(options or {}))
        if name == "api":
            from .api_command import run_api

            return run_api(session, (options or {}).get("words", []))
        if name == "panel":
            return session.panel()
        if name == "log":
            return session.log()
        if name == "webmcp":
            return session.call("browser_webmcp_list")
        from ..core.render.renderer import ToolTable

        return ToolTable(session.tools)

    def _call(self, spec: ToolSpec, args: dict[str, Any]) -> Envelope:
        session = shared.shared_session()
        if (
            "backend" in spec.params.model_fields
            and "backend" not in args
            and session.backend != shared.DEFAULT_BACKEND
        ):
            args["backend"] = session.backend  # configured: else the session decides (its remote default)
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


def serve_parser() -> CommandParser:
    parser = CommandParser(
        prog="%browser serve",
        description="Serve the notebook's shared session to agents over MCP (streamable HTTP on the runtime "
        "thread). Prints the URL, the bearer token and client configurations; approval prompts appear below. "
        "Serving again in this kernel keeps the last URL and token, so configured clients keep working.",
        formatter_class=formatter,
        add_help=True,
    )
    add_arguments(parser, defaults={"approve": "consequential", "token": None})
    parser.add_argument("--new", action="store_true", help="a fresh port and token instead of the last ones")
    parser.add_argument("--stop", action="store_true", help="stop the session's MCP servers")
    return parser


def parse_serve(words: Sequence[str]) -> dict[str, Any] | None:
    """The options of ``%browser serve``; None after --help."""
    parser = serve_parser()
    if any(word in HELP_WORDS for word in words):
        print(parser.format_help().rstrip())
        return None
    try:
        return vars(parser.parse_args(list(words)))
    except UsageError as exc:
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
    except OSError as exc:
        raise UsageError(f"%browser serve: {exc}; `%browser serve --new` serves on a fresh port and token") from None
    except ValueError as exc:
        raise UsageError(f"%browser serve: {exc}") from None
    print(handle.describe())


def parse_export(words: Sequence[str]) -> dict[str, Any] | None:
    """The options of ``%browser export``; None after --help."""
    parser = export_parser()
    if any(word in HELP_WORDS for word in words):
        print(parser.format_help().rstrip())
        return None
    try:
        options = vars(parser.parse_args(list(words)))
    except UsageError as exc:
        raise UsageError(f"%browser export: {exc}") from None
    if not options["path"].endswith((".ipynb", ".py")):
        raise UsageError(f"%browser export: {options['path']!r} must end in .ipynb (a notebook) or .py (a script)")
    return options


def export_parser() -> CommandParser:
    parser = CommandParser(prog="%browser export", description=EXTRAS["export"], formatter_class=formatter)
    parser.add_argument("path", help="where to write: .ipynb (a notebook) or .py (a script)")
    parser.add_argument(
        "--callers",
        nargs="+",
        default=None,
        metavar="PATTERN",
        help="keep only these callers (fnmatch patterns, such as 'agent:*'; default: every caller)",
    )
    return parser


def export(session: NotebookSession, path: str, callers: list[str] | None) -> None:
    write = session.export_script if path.endswith(".py") else session.export_notebook
    written = write(path, callers=callers)
    print(f"wrote {written}: a replay of the call log")


def _full_bundle(envelope: Envelope) -> tuple[dict[str, Any], dict[str, Any]]:
    return mimebundle(envelope, full=True)


def _display(value: Any) -> None:
    from IPython.display import display

    display(value)


def _options_doc() -> str:
    lines = ["Options (%config BrowserMagics; c.BrowserMagics.NAME = value in a config file):"]
    for name, trait in BrowserMagics.class_traits(config=True).items():
        lines.append(f"  {name} ({type(trait).__name__}): {trait.help}")
    return "\n".join(lines)


def _help() -> str:
    """What ``%browser?`` and ``%browser help`` show: the overview and the options."""
    return overview(_options_doc())


# IPython's `?` asks an object for its getdoc() first: the overview is generated from the registry
# when it is read, so loading the extension does not import every tool.
BrowserMagics.browser.getdoc = _help  # type: ignore[union-attr]
