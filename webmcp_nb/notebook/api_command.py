"""``%browser api``: load an OpenAPI document, list an API's operations, call one."""

from __future__ import annotations

import html
import json
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

if TYPE_CHECKING:
    from ..client import Session

USAGE = (
    "%browser api load SPEC --name NAME [--base-url URL] [--via page] [--expose-to-page ORIGIN,...] | "
    "%browser api NAME | "
    "%browser api NAME OPERATION [--param value ...] [--body JSON] [--preview]"
)


class OperationTable:
    """An API's operations: name, method, path, consequential, summary."""

    def __init__(self, name: str, rows: list[dict[str, Any]]) -> None:
        self.name, self.rows = name, rows

    def __repr__(self) -> str:
        lines = [f"API {self.name}: {len(self.rows)} operations"]
        lines += [
            f"  {row['name']:<28} {row['method']:<7} {row['path']:<40} {'consequential' if row['consequential'] else ''}"
            for row in self.rows
        ]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        head = "<tr><th>operation</th><th>method</th><th>path</th><th>consequential</th><th>summary</th></tr>"
        body = "".join(
            "<tr>"
            + "".join(
                f"<td>{html.escape(str(value))}</td>"
                for value in (
                    row["name"],
                    row["method"],
                    row["path"],
                    "yes" if row["consequential"] else "",
                    row["summary"],
                )
            )
            + "</tr>"
            for row in self.rows
        )
        return f"<p>API <b>{html.escape(self.name)}</b></p><table>{head}{body}</table>"


def options(words: list[str]) -> tuple[list[str], dict[str, Any]]:
    """Positional words, and ``--name value`` pairs (a value read as JSON when it is JSON; a
    flag without a value is true)."""
    positional: list[str] = []
    named: dict[str, Any] = {}
    index = 0
    while index < len(words):
        word = words[index]
        if word.startswith("--") and len(word) > 2:
            key = word[2:].replace("-", "_")
            if index + 1 < len(words) and not words[index + 1].startswith("--"):
                raw = words[index + 1]
                try:
                    named[key] = json.loads(raw)
                except ValueError:
                    named[key] = raw
                index += 2
                continue
            named[key] = True
        else:
            positional.append(word)
        index += 1
    return positional, named


def run_api(session: Session, words: list[str]) -> Any:
    positional, named = options(words)
    if not positional:
        raise UsageError(USAGE)
    if positional[0] == "load":
        if len(positional) != 2 or "name" not in named:
            raise UsageError(USAGE)
        unknown = set(named) - {"name", "base_url", "strict", "via", "expose_to_page"}
        if unknown:
            raise UsageError(f"%browser api load: unknown option --{sorted(unknown)[0]} ({USAGE})")
        if isinstance(named.get("expose_to_page"), str):
            named["expose_to_page"] = named["expose_to_page"].split(",")
        try:
            loaded = session.api(positional[1], **named)
        except ValueError as exc:
            raise UsageError(f"%browser api load: {exc}") from None
        return OperationTable(loaded.name, loaded.operations)
    handle = session.apis.get(positional[0])
    if handle is None:
        names = ", ".join(session.apis) or "none"
        raise UsageError(f"%browser api: no API named {positional[0]!r} is loaded (loaded: {names}). {USAGE}")
    if len(positional) == 1:
        return OperationTable(handle.name, handle.operations)
    if len(positional) > 2:
        raise UsageError(USAGE)
    try:
        return handle.call(positional[1], **named)
    except AttributeError as exc:
        raise UsageError(f"%browser api: {exc}") from None
