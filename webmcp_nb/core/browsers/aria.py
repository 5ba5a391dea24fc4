"""Reading the AI-mode aria snapshot text: refs, subtrees, finding an element."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
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


@dataclass(frozen=True)
class RefTarget:
    """What a ref pointed at, in words that survive a new snapshot: the element's role, its
    accessible name and which of the elements with that role and name it was (0: the first)."""

    role: str
    name: str
    nth: int = 0

    def describe(self) -> str:
        ordinal = f" (number {self.nth + 1})" if self.nth else ""
        return f'{self.role} "{self.name}"{ordinal}'


def target_of(snapshot: str, ref: str) -> RefTarget | None:
    """The `RefTarget` of `ref` in a whole-page snapshot, or None if it is not there."""
    at = snapshot.find(f"[ref={ref}]")
    if at < 0:
        return None
    start = snapshot.rfind("\n", 0, at) + 1
    node = _NODE.match(snapshot[start:at])
    if node is None:
        return None
    role, raw = node["role"], node["name"]
    head = f'- {role} "{raw}"' if raw is not None else f"- {role}"
    same = re.compile(r"^ *" + re.escape(head) + r'(?! ")(?=[ :\n]|$)[^\n]*\[ref=', re.MULTILINE)
    return RefTarget(role, _unescape(raw or ""), len(same.findall(snapshot, 0, start)))


def ref_of(snapshot: str, target: RefTarget) -> str | None:
    """The ref of the element `target` describes in `snapshot` (exact role and name), or None."""
    seen = 0
    for line in snapshot.splitlines():
        node, ref = _NODE.match(line), REF.search(line)
        if node is None or ref is None:
            continue
        if node["role"] == target.role and _unescape(node["name"] or "") == target.name:
            if seen == target.nth:
                return ref.group(1)
            seen += 1
    return None


def refs_in_args(args: Any) -> list[str]:
    """The refs an argument object names: values of ``ref`` / ``*_ref`` keys, at any depth."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if isinstance(item, str) and (key == "ref" or key.endswith("_ref")) and REF.fullmatch(f"[ref={item}]"):
                    found.append(item)
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(args)
    return found


def _unescape(name: str) -> str:
    try:
        value = json.loads(f'"{name}"')
    except ValueError:
        return name
    return value if isinstance(value, str) else name
