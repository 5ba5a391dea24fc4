"""Front ends use public hooks only: no module outside the core (the Python, notebook, MCP and CLI
front ends, the generated API) reaches into a private attribute of another object (`Session`, the
engine, ...).

Two uses are allowed, each for a stated reason. The modules are parsed in a process of their
own: CPython 3.11.7's AST constructor can fail ("recursion depth mismatch") in a process where
another test has already hit a RecursionError on purpose (the bad-input depth tests).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "webmcp_nb"
# Every module outside the core is a front end (or serves one), derived so a new module is covered;
# the demo site's server is test scaffolding, not a front end (its teaching checks are one).
DEMO_SERVER = {"demo/__init__.py", "demo/__main__.py"}
FRONT_ENDS = sorted(
    path
    for path in PACKAGE.rglob("*.py")
    if path.relative_to(PACKAGE).parts[0] != "core" and path.relative_to(PACKAGE).as_posix() not in DEMO_SERVER
)
ALLOWED = {
    # The MCP SDK has no accessor for a request's connection (the channel 2025-era clients
    # hear list changes on); see ChangeNotifier.seen.
    ("mcp/server.py", "ctx.session._connection"),
    # IPython's display protocol method of our own form object.
    ("notebook/webmcp_tools.py", "self.form()._repr_mimebundle_"),
}


def private_reaches(path: Path, root: Path = PACKAGE) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")):
            continue
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            continue  # the object's own attributes
        expression = ast.unparse(node)
        where = str(path.relative_to(root))
        if (where, expression) not in ALLOWED:
            found.append(f"{where}:{node.lineno}: {expression}")
    return found


def reaches_in_a_fresh_process(paths: list[Path], root: Path = PACKAGE) -> list[str]:
    return findings_in_a_fresh_process("tests.test_front_ends", "private_reaches", paths, root)


def findings_in_a_fresh_process(module: str, rule: str, paths: list[Path], root: Path) -> list[str]:
    """`rule(path, root)` (a function of `module`) over `paths`, its findings joined, in a new process."""
    code = (
        f"import json, sys; from pathlib import Path; from {module} import {rule}; "
        "root = Path(sys.argv[1]); "
        f"print(json.dumps([r for p in sys.argv[2:] for r in {rule}(Path(p), root)]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(root), *map(str, paths)],
        cwd=PACKAGE.parent,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout)


def test_front_ends_touch_no_private_attribute_of_another_object() -> None:
    names = {str(path.relative_to(PACKAGE)) for path in FRONT_ENDS}
    assert {"client.py", "cli.py", "serve_options.py", "mcp/server.py", "notebook/magics.py"} <= names
    assert reaches_in_a_fresh_process(FRONT_ENDS) == []


def test_the_check_finds_a_private_reach(tmp_path: Path) -> None:
    module = tmp_path / "front.py"
    module.write_text("def serve(session):\n    self._ok = session.engine\n    return session._runtime\n")
    assert reaches_in_a_fresh_process([module], tmp_path) == ["front.py:3: session._runtime"]


# -- the MCP front end calls the core through the session hub, not the Python front end --------
MCP_FRONT_END = sorted((PACKAGE / "mcp").rglob("*.py"))


def session_call_methods() -> set[str]:
    """The Python front end's own call methods: every `Session` method that calls through its hub
    (`call`, `acall_as`, ...), read from client.py so a new one is covered."""
    tree = ast.parse((PACKAGE / "client.py").read_text())
    session = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "Session")
    return {
        method.name
        for method in session.body
        if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef))
        and any(
            isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and ast.unparse(node) == "self.hub"
            for node in ast.walk(method)
        )
    }


def session_call_paths(path: Path, root: Path = PACKAGE) -> list[str]:
    """Where `path` calls the core through a `Session` call method rather than `Session.hub`."""
    methods = session_call_methods()
    where = str(path.relative_to(root))
    return [
        f"{where}:{node.lineno}: {ast.unparse(node)}"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute) and node.attr in methods and ast.unparse(node.value).endswith("session")
    ]


def hub_calls(path: Path, root: Path = PACKAGE) -> list[str]:
    return [
        ast.unparse(node)
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute) and ast.unparse(node.value).endswith("session.hub")
    ]


def session_call_methods_in(path: Path, root: Path) -> list[str]:
    """`session_call_methods` as a rule over client.py (for a fresh process)."""
    return sorted(session_call_methods())


def test_the_mcp_front_end_calls_the_core_through_the_hub_only() -> None:
    client = [PACKAGE / "client.py"]
    assert findings_in_a_fresh_process("tests.test_front_ends", "session_call_methods_in", client, PACKAGE) == [
        "acall",
        "acall_as",
        "call",
        "call_as",
        "submit",
    ]
    assert findings_in_a_fresh_process("tests.test_front_ends", "session_call_paths", MCP_FRONT_END, PACKAGE) == []
    server = [PACKAGE / "mcp" / "server.py"]
    assert findings_in_a_fresh_process("tests.test_front_ends", "hub_calls", server, PACKAGE) == [
        "self.session.hub.acall"
    ]


def test_the_check_finds_a_call_through_the_python_front_end(tmp_path: Path) -> None:
    module = tmp_path / "server.py"
    module.write_text(
        "async def call(self, name):\n"
        "    await self.session.acall_as('agent', name, {})\n"
        "    return await self.session.hub.acall(self.terms, name, {})\n"
    )
    assert findings_in_a_fresh_process("tests.test_front_ends", "session_call_paths", [module], tmp_path) == [
        "server.py:2: self.session.acall_as"
    ]
