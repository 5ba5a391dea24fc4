"""Reading the AI-mode aria snapshot text: refs, subtrees, finding an element."""

from __future__ import annotations

import re
from typing import Any

REF = re.compile(r"\[ref=((?:f\d+)?e\d+)\]")
_NODE = re.compile(r'^\s*- (?P<role>[\w-]+)(?: "(?P<name>(?:[^"\\]|\\.)*)")?')


def refs(snapshot: str) -> set[str]:
    """Every ref in a snapshot."""
    return set(REF.findall(snapshot))


def find_ref(snapshot: str | Any, name: str, role: str | None = None) -> str:
    """The ref of the first element whose accessible name contains `name` (and whose role
    is `role`, if given): ``find_ref(envelope_or_text, "Add Banana", role="button")``.

    `snapshot` is a browser_snapshot envelope or its YAML text. Raises LookupError.
    """
    if not isinstance(snapshot, str):
        snapshot = snapshot.data["snapshot"]
    for line in snapshot.splitlines():
        node, ref = _NODE.match(line), REF.search(line)
        if node is None or ref is None:
            continue
        if name in (node["name"] or "") and (role is None or node["role"] == role):
            return ref.group(1)
    wanted = f"{role} " if role else ""
    raise LookupError(f"no {wanted}element named like {name!r} with a ref in this snapshot")


def subtree(yaml: str, ref: str, depth: int | None = None) -> str | None:
    """The lines of `yaml` for the node marked `[ref=<ref>]` and its descendants, dedented."""
    lines = yaml.splitlines()
    marker = f"[ref={ref}]"
    start = next((index for index, line in enumerate(lines) if marker in line), None)
    if start is None:
        return None
    base = _indent(lines[start])
    picked = [lines[start][base:]]
    for line in lines[start + 1 :]:
        indent = _indent(line)
        if indent <= base:
            break
        if depth is None or (indent - base) // 2 <= depth:
            picked.append(line[base:])
    return "\n".join(picked)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))
