"""No fire-and-forget task without a reference: the event loop keeps only weak references to its
tasks, so a task whose result is dropped may be garbage-collected mid-flight. Background work goes
through `webmcp_nb.core.call.util.spawn`, which keeps each task referenced until it is done."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.test_front_ends import PACKAGE, findings_in_a_fresh_process

STARTERS = {"create_task", "ensure_future"}


def dropped_tasks(path: Path, root: Path = PACKAGE) -> list[str]:
    """The task-starting calls in `path` whose task nothing keeps: a statement of its own, a call
    chained on it as a statement, or a lambda's result (its caller drops it)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Expr):
            value = node.value
        elif isinstance(node, ast.Lambda):
            value = node.body
        else:
            continue
        # `starter(...).add_done_callback(...)` drops the task as well.
        while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and not _starts(value):
            value = value.func.value
        if isinstance(value, ast.Call) and _starts(value):
            found.append(f"{path.relative_to(root)}:{value.lineno}: {ast.unparse(value)}")
    return found


def _starts(call: ast.Call) -> bool:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in STARTERS


def test_every_background_task_is_referenced() -> None:
    paths = sorted(PACKAGE.rglob("*.py"))
    assert findings_in_a_fresh_process("tests.test_background_tasks", "dropped_tasks", paths, PACKAGE) == []


def test_the_check_finds_dropped_tasks(tmp_path: Path) -> None:
    module = tmp_path / "loose.py"
    module.write_text(
        "import asyncio\n"
        "def go(loop, work, more, other):\n"
        "    kept = asyncio.ensure_future(work())\n"
        "    loop.create_task(more())\n"
        "    asyncio.ensure_future(other()).add_done_callback(print)\n"
        "    loop.call_soon(lambda: loop.create_task(more()))\n"
        "    return kept\n"
    )
    assert findings_in_a_fresh_process("tests.test_background_tasks", "dropped_tasks", [module], tmp_path) == [
        "loose.py:4: loop.create_task(more())",
        "loose.py:5: asyncio.ensure_future(other())",
        "loose.py:6: loop.create_task(more())",
    ]
