"""A session's call log as a notebook or a script that replays it (`Session.export_notebook`,
`Session.export_script`, ``%browser export PATH``).

- One step per call, in order, from every front end (or those `callers` match); a markdown cell
  (a comment in scripts) says who acted whenever the caller changes.
- A call that was not started (refused, denied, bad input) is not replayed: a note says why.
- Refs are written as the role and accessible name they pointed at when the call was made
  (`CallRecord.targets`) and found again at replay (`webmcp_nb.replay.Replay.ref`).
- Notebook cells are ``%browser`` lines when the arguments parse back exactly (checked with the
  parser the magics wrap, `webmcp_nb.tool_commands`, and safe from IPython's ``{expr}``/``$name``
  expansion); otherwise a Python call. The recorded result is kept as the cell's output.
- Secrets never appear: the core recorded typed secrets as ``[redacted]``; each becomes a
  variable the replay asks for (`Replay.secret`). Other redacted values stay redacted.
- Page and frame ids are per run: a call that named one is replayed on the current page.
- Loopback sites (a demo server, a local app) live on a port of that run: each origin becomes a
  parameter (``BASE_URL``, ``BASE_URL_2``, ...) that the replay checks and asks for when it is
  unreachable (`Replay.base_url`), so the export replays on another machine or port.
"""

from __future__ import annotations

import fnmatch
import json
import shlex
import string
import uuid
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .core.browsers.aria import RefTarget
from .core.call.engine import HISTORY_SIZE
from .core.guard.redaction import REDACTED, typed_paths

if TYPE_CHECKING:
    from .client import Session
    from .core.call.engine import CallRecord
    from .core.call.registry import ToolSpec

RUN_IDS = ("page_id", "frame_id")  # argument values that only mean something in the recorded run
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")  # a site there is gone, or elsewhere, at replay time


class Code(str):
    """Python source to write as is (a ref lookup, a secret's variable) inside an argument value."""


@dataclass
class Step:
    """One recorded call, ready to be written."""

    record: CallRecord
    spec: ToolSpec | None
    args: dict[str, Any]  # with refs and secrets replaced by `Code`
    refs: dict[str, Code] = field(default_factory=dict)  # top-level ref arguments -> their lookup
    urls: dict[str, tuple[str, str]] = field(default_factory=dict)  # top-level URL arguments -> (variable, rest)
    notes: list[str] = field(default_factory=list)

    @property
    def replayed(self) -> bool:
        return self.spec is not None and self.record.envelope.operation.outcome != "not_started"

    @property
    def expect(self) -> str:
        envelope = self.record.envelope
        return "success" if envelope.ok else str(envelope.error_type)


@dataclass
class Secret:
    variable: str
    about: str


@dataclass
class Site:
    """A loopback origin the recording visited, written as a parameter of the replay."""

    variable: str
    origin: str


@dataclass
class Plan:
    steps: list[Step]
    secrets: list[Secret]
    forgotten: int = 0  # calls made before the oldest one the call log still holds
    sites: list[Site] = field(default_factory=list)

    @property
    def warning(self) -> str:
        if not self.forgotten:
            return ""
        return (
            f"Incomplete: the session's first {self.forgotten} calls are no longer in the call log (it keeps the "
            f"latest {HISTORY_SIZE}), so this replay starts in the middle and may not reproduce the session."
        )


def plan(session: Session, callers: Sequence[str] | None = None) -> Plan:
    """The steps for `session.history`, keeping the callers matching `callers` (fnmatch patterns)."""
    history = session.history
    forgotten = session.engine.calls_recorded - len(history)
    records = [
        record for record in history if callers is None or any(fnmatch.fnmatchcase(record.caller, p) for p in callers)
    ]
    registry = session.published.tools
    secrets: list[Secret] = []
    steps = []
    sites: list[Site] = []
    for record in records:
        spec = registry.get(record.tool) if record.tool in registry else None
        step = _step(record, spec, secrets)
        if step.replayed:
            step.args = _with_sites(step, step.args, sites, top=True)
        steps.append(step)
    return Plan(steps, secrets, forgotten, sites)


def _loopback_origin(value: str) -> str | None:
    try:
        parts = urlsplit(value)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or parts.hostname not in LOOPBACK_HOSTS:
        return None
    return f"{parts.scheme}://{parts.netloc}"


def _with_sites(step: Step, value: Any, sites: list[Site], top: bool = False) -> Any:
    """`value` with each string that starts with a loopback origin written as that site's variable
    plus the rest (top-level arguments are also noted for the ``%browser`` line)."""
    if isinstance(value, list):
        return [_with_sites(step, item, sites) for item in value]
    if isinstance(value, dict):
        result = {}
        for key, item in value.items():
            result[key] = _with_sites(step, item, sites)
            origin = _loopback_origin(item) if top and isinstance(result[key], Code) and isinstance(item, str) else None
            if origin and not isinstance(item, Code):
                step.urls[key] = (_site(sites, origin).variable, item[len(origin) :])
        return result
    if isinstance(value, str) and not isinstance(value, Code) and (origin := _loopback_origin(value)):
        site = _site(sites, origin)
        rest = value[len(origin) :]
        return Code(f"{site.variable} + {rest!r}" if rest else site.variable)
    return value


def _site(sites: list[Site], origin: str) -> Site:
    for site in sites:
        if site.origin == origin:
            return site
    site = Site("BASE_URL" if not sites else f"BASE_URL_{len(sites) + 1}", origin)
    sites.append(site)
    return site


def _step(record: CallRecord, spec: ToolSpec | None, secrets: list[Secret]) -> Step:
    args = {key: value for key, value in record.args.items() if key not in RUN_IDS}
    dropped = [f"{key} {str(record.args[key])[:8]}" for key in RUN_IDS if record.args.get(key)]
    notes = [f"recorded with {', '.join(dropped)} (ids of that run): replayed on the current page"] if dropped else []
    step = Step(record, spec, args, notes=notes)
    if spec is None or not step.replayed:
        return step  # written as a note: no secret to ask for, no ref to find
    if spec.group == "notebook":
        step.notes.append(f"{spec.name} is a function the recorded session published: publish it again first")
    for path in typed_paths(spec.typed_text, args):
        if _get(args, path) != REDACTED:
            continue
        container = _get(args, path[:-1])
        target = record.targets.get(str(container.get("ref"))) if isinstance(container, dict) else None
        field_words = f" into {target.describe()}" if target else ""
        variable = f"secret_{len(secrets) + 1}"
        secrets.append(Secret(variable, f"text {record.caller} typed{field_words} with {record.tool}"))
        step.args = _set(step.args, path, Code(variable))
    instance = args.get("instance")
    step.args = _with_refs(step, step.args, record.targets, instance, top=True)
    return step


def _with_refs(step: Step, value: Any, targets: dict[str, RefTarget], instance: Any, top: bool = False) -> Any:
    if isinstance(value, list):
        return [_with_refs(step, item, targets, instance) for item in value]
    if not isinstance(value, dict):
        return value
    result: dict[str, Any] = {}
    for key, item in value.items():
        if (key == "ref" or key.endswith("_ref")) and isinstance(item, str) and item in targets:
            lookup = Code(_lookup(targets[item], instance))
            if top:
                step.refs[key] = lookup
            result[key] = lookup
        elif (key == "ref" or key.endswith("_ref")) and isinstance(item, str) and not isinstance(item, Code):
            step.notes.append(f"{key} {item} was not in a whole-page snapshot when recorded: replayed as is")
            result[key] = item
        else:
            result[key] = _with_refs(step, item, targets, instance)
    return result


def _lookup(target: RefTarget, instance: Any) -> str:
    args = [repr(target.role), repr(target.name)] + ([str(target.nth)] if target.nth else [])
    if isinstance(instance, str):
        args.append(f"instance={instance!r}")
    return f"replay.ref({', '.join(args)})"


# Python source -------------------------------------------------------------------------------
def python_value(value: Any) -> str:
    """`value` as Python source; `Code` parts are written as they are."""
    if isinstance(value, Code):
        return str(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{python_value(k)}: {python_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(python_value(item) for item in value) + "]"
    return repr(value)


def python_call(step: Step) -> str:
    return f"replay.call({step.record.tool!r}, {python_value(step.args)}, expect={step.expect!r})"


# %browser lines ------------------------------------------------------------------------------
_EXPANDING = set("{}$")


def magic_cell(step: Step) -> str | None:
    """The step as ``name = replay.ref(...)`` lines and one ``%browser`` line, or None when the
    arguments cannot be written as a line that parses back to exactly them."""
    from .client import tool_registry
    from .tool_commands import is_positional, tool_command

    assert step.spec is not None
    written_in_line = {**step.refs, **{key: Code(variable) for key, (variable, _) in step.urls.items()}}
    if step.spec.name not in tool_registry() or _has_code(step.args, skip=written_in_line):
        return None  # a function the notebook published; a secret, a ref or a site inside a JSON value
    if any(_quote(rest) != rest or _EXPANDING & set(rest) for _, rest in step.urls.values()):
        return None  # the rest of a site's URL would need quoting after its {variable}
    tool = tool_command(tool_registry().get(step.spec.name))
    words, placeholders = [tool.name], {}
    plain_args = {key: value for key, value in step.args.items() if key not in written_in_line}
    given = {**plain_args, **{key: f"@{key}@" for key in written_in_line}}
    named = tool.spec.magic_positional
    for argument in sorted(
        tool.arguments, key=lambda argument: not is_positional(argument, named)
    ):  # positionals first
        if argument.name not in given:
            continue
        value = given[argument.name]
        if argument.kind == "boolean" and value is False and argument.default is False and not argument.required:
            del given[argument.name]  # a switch that is off unless given: leaving it out says the same
            continue
        written = _words(argument, value, named)
        if written is None:
            return None
        if argument.name in step.refs:
            placeholders[written[-1]] = "{" + argument.name + "}"
        elif argument.name in step.urls:
            variable, rest = step.urls[argument.name]
            placeholders[written[-1]] = "{" + variable + "}" + rest
        words += written
    if set(given) - {argument.name for argument in tool.arguments}:
        return None
    try:
        if tool.parse(words[1:]) != given:
            return None
    except Exception:  # noqa: BLE001 - anything that does not parse back is written as Python
        return None
    quoted = [placeholders.get(word) or _quote(word) for word in words]
    line = " ".join(quoted)
    if "\n" in line or "\r" in line or not _survives_expansion(quoted, set(placeholders.values())):
        return None
    lookups = [f"{key} = {lookup}  # {step.record.args[key]} when recorded" for key, lookup in step.refs.items()]
    return "\n".join([*lookups, f"%browser {line}"])


def _quote(word: str) -> str:
    """Shell quoting that reads well: `it's` becomes "it's" rather than 'it'"'"'s'."""
    quoted = shlex.quote(word)
    if quoted != word and "'" in word and not set(word) & set('"\\$`'):
        return f'"{word}"'
    return quoted


def _words(argument: Any, value: Any, named: tuple[str, ...] = ()) -> list[str] | None:
    from .tool_commands import flag_of, is_positional

    if is_positional(argument, named):
        return [value] if isinstance(value, str) else None
    if argument.kind == "boolean":
        if not isinstance(value, bool):
            return None
        return [flag_of(argument) if value else "--no-" + flag_of(argument)[2:]]
    if value is None:
        return None
    if argument.kind in ("integer", "number"):
        return [flag_of(argument), json.dumps(value)]
    if argument.kind == "string":
        return [flag_of(argument), value] if isinstance(value, str) else None
    return [flag_of(argument), json.dumps(value, ensure_ascii=False)]


def _survives_expansion(quoted: list[str], placeholders: set[str]) -> bool:
    """Whether IPython's ``{expr}``/``$name`` expansion of the line gives back the words written:
    no expanding character outside the ref placeholders, or (without placeholders) a first field
    that can never evaluate, so IPython keeps the whole line as written (a JSON object)."""
    rest = [word for word in quoted if word not in placeholders]
    if not any(_EXPANDING & set(word) for word in rest):
        return True
    if placeholders:
        return False
    line = " ".join(quoted)
    first = min(line.index(char) for char in _EXPANDING if char in line)
    if line[first] != "{":
        return False
    try:
        literal, field_name, spec, _ = next(iter(string.Formatter().parse(line[first:])))
    except ValueError:
        return True  # the formatter itself refuses the line
    expression = field_name if not spec else f"{field_name}:{spec}"
    try:
        compile(expression or "", "<field>", "eval")
    except SyntaxError:
        return not literal
    return False


def _has_code(value: Any, skip: dict[str, Code]) -> bool:
    if isinstance(value, Code):
        return True
    if isinstance(value, dict):
        return any(_has_code(item, {}) for key, item in value.items() if key not in skip)
    if isinstance(value, list):
        return any(_has_code(item, {}) for item in value)
    return False


# writing -------------------------------------------------------------------------------------
def _intro(steps: list[Step]) -> str:
    callers = sorted({step.record.caller.replace('"', "'").replace("\\", "/") for step in steps})
    first = steps[0].record.envelope.operation.started_at if steps else "-"
    return (
        f"{len(steps)} calls recorded from {first[:19].replace('T', ' ')} UTC by {', '.join(callers) or 'nobody'}. "
        "The pages it visits must be reachable from here."
    )


def _warned(built: Plan) -> str:
    """The plan's warning, also raised as a Python warning (shown under the exporting cell)."""
    if not built.warning:
        return ""
    warnings.warn(built.warning, stacklevel=4)
    return f"**{built.warning}**\n\n"


def _who(caller: str) -> str:
    return f"The agent **{caller}** did:" if caller.startswith("agent:") else f"**{caller}** did:"


def _not_replayed(step: Step) -> str:
    envelope = step.record.envelope
    why = f"{envelope.error_type}: {envelope.message}" if not envelope.ok else "unknown tool"
    return f"Not replayed: `{step.record.tool}` was not run ({why})"


def notebook(session: Session, callers: Sequence[str] | None = None) -> dict[str, Any]:
    """The replay notebook (nbformat 4.5, as JSON data)."""
    from .core.render.renderer import mimebundle

    built = plan(session, callers)
    cells = [
        _markdown_cell(
            "# Replay of a webmcp_nb session\n\n"
            + _warned(built)
            + _intro(built.steps)
            + " Run it top to bottom on a fresh kernel; the outputs below each call are those of the recording."
        )
    ]
    parameters = []
    if built.sites:
        parameters += [
            "# Sites the recording visited on loopback (a demo server, a local app): where they are now.",
            "# None: the recorded address if it answers, else WEBMCP_NB_BASE_URL, ..., else you are asked.",
        ]
        parameters += [f"{site.variable} = None  # recorded at {site.origin}" for site in built.sites]
    if built.secrets:
        parameters += [
            "# Secrets typed in the recorded session were not written down. Set them here, or leave None to",
            "# be asked (or set WEBMCP_NB_SECRET_1, ...).",
        ]
        parameters += [f"{secret.variable} = None  # {secret.about}" for secret in built.secrets]
    if parameters:
        cells.append(_code_cell("\n".join(parameters), tags=["parameters"]))
    setup = [
        "%load_ext webmcp_nb",
        "import webmcp_nb",
        "from webmcp_nb.replay import Replay",
        "",
        "nb = webmcp_nb.session()",
        "replay = Replay(nb)",
    ]
    setup += [
        f"{site.variable} = replay.base_url({site.variable}, {site.origin!r}, {site.variable!r})"
        for site in built.sites
    ]
    setup += [f"{s.variable} = replay.secret({s.variable}, {s.variable!r}, {s.about!r})" for s in built.secrets]
    cells.append(_code_cell("\n".join(setup)))
    caller = None
    for step in built.steps:
        if step.record.caller != caller:
            caller = step.record.caller
            cells.append(_markdown_cell(_who(caller)))
        if not step.replayed:
            cells.append(_markdown_cell(_not_replayed(step)))
            continue
        source = magic_cell(step) or python_call(step)
        notes = "".join(f"# {note}\n" for note in step.notes)
        envelope = step.record.envelope
        recorded, metadata = mimebundle(envelope)  # the cell the call made, lean
        cells.append(
            _code_cell(
                notes + source,
                outputs=[
                    {"output_type": "execute_result", "execution_count": None, "data": recorded, "metadata": metadata}
                ],
            )
        )
    cells.append(_markdown_cell("Close the browser this replay opened."))
    cells.append(_code_cell("nb.close()"))
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def _markdown_cell(source: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "id": uuid.uuid4().hex[:8], "metadata": {}, "source": source}


def _code_cell(
    source: str, outputs: list[dict[str, Any]] | None = None, tags: list[str] | None = None
) -> dict[str, Any]:
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": uuid.uuid4().hex[:8],
        "metadata": {"tags": tags} if tags else {},
        "outputs": outputs or [],
        "source": source,
    }


def script(session: Session, callers: Sequence[str] | None = None) -> str:
    """The replay as a Python script using `Session` (exit status 1 if a call ends differently)."""
    built = plan(session, callers)
    body: list[str] = ["replay = Replay(session, echo=True)"]
    body += [f"{site.variable} = replay.base_url(None, {site.origin!r}, {site.variable!r})" for site in built.sites]
    body += [f"{s.variable} = replay.secret(None, {s.variable!r}, {s.about!r})" for s in built.secrets]
    caller = None
    for step in built.steps:
        if step.record.caller != caller:
            caller = step.record.caller
            body.append(f"# {_who(caller).replace('**', '')}")
        if not step.replayed:
            body.append(f"# {_not_replayed(step)}".replace("\n", " "))
            continue
        body += [f"# {note}" for note in step.notes]
        body.append(python_call(step))
    body.append("return replay")
    secrets = (
        f"\nSecrets typed in the recorded session were not written down: set "
        f"{', '.join('WEBMCP_NB_' + s.variable.upper() for s in built.secrets)} or be asked.\n"
        if built.secrets
        else ""
    )
    if built.sites:
        secrets += (
            f"\nSites recorded on loopback ({', '.join(site.origin for site in built.sites)}) are used if they "
            f"answer; else set {', '.join('WEBMCP_NB_' + site.variable for site in built.sites)} or be asked.\n"
        )
    return "\n".join(
        [
            f'"""Replay of a webmcp_nb session. {_warned(built)}{_intro(built.steps)}',
            secrets,
            "Run: python THIS_FILE. Exits with status 1 if a call ends differently than when recorded.",
            '"""',
            "",
            "import sys",
            "",
            "from webmcp_nb import Session",
            "from webmcp_nb.replay import Replay, ReplayMismatch",
            "",
            "",
            "def run(session: Session) -> Replay:",
            *(f"    {line}" for line in body),
            "",
            "",
            'if __name__ == "__main__":',
            "    try:",
            "        with Session() as session:",
            "            replayed = run(session)",
            "    except ReplayMismatch as mismatch:",
            "        sys.exit(str(mismatch))",
            "    for mismatch in replayed.mismatches:",
            '        print("mismatch:", mismatch)',
            "    sys.exit(0 if replayed.matched else 1)",
            "",
        ]
    )


def export_notebook(session: Session, path: str | Path, callers: Sequence[str] | None = None) -> Path:
    target = Path(path)
    target.write_text(json.dumps(notebook(session, callers), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return target


def export_script(session: Session, path: str | Path, callers: Sequence[str] | None = None) -> Path:
    target = Path(path)
    target.write_text(script(session, callers), encoding="utf-8")
    return target


def _get(value: Any, path: Iterable[str | int]) -> Any:
    for part in path:
        value = value[part]
    return value


def _set(value: Any, path: tuple[str | int, ...], new: Any) -> Any:
    if not path:
        return new
    copy: Any = list(value) if isinstance(value, list) else dict(value)
    copy[path[0]] = _set(value[path[0]], path[1:], new)
    return copy
