"""Front ends use public hooks only: no module of the notebook, MCP or CLI front end (nor the
generated API) reaches into a private attribute of another object (`Session`, the engine, ...).

Two uses are allowed, each for a stated reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "webmcp_nb"
FRONT_ENDS = [
    *PACKAGE.glob("mcp/*.py"),
    *PACKAGE.glob("notebook/*.py"),
    PACKAGE / "cli.py",
    PACKAGE / "published.py",
    PACKAGE / "_generated.py",
    PACKAGE / "export.py",
    PACKAGE / "replay.py",
    PACKAGE / "teaching.py",
]
ALLOWED = {
    # The MCP SDK has no accessor for a request's connection (the channel 2025-era clients
    # hear list changes on); see ChangeNotifier.seen.
    ("mcp/server.py", "ctx.session._connection"),
    # IPython's display protocol method of our own form object.
    ("notebook/webmcp.py", "self.form()._repr_mimebundle_"),
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


def test_front_ends_touch_no_private_attribute_of_another_object() -> None:
    assert len(FRONT_ENDS) > 10
    found = [reach for path in FRONT_ENDS for reach in private_reaches(path)]
    assert found == []


def test_the_check_finds_a_private_reach(tmp_path: Path) -> None:
    module = tmp_path / "front.py"
    module.write_text("def serve(session):\n    self._ok = session.engine\n    return session._runtime\n")
    assert private_reaches(module, tmp_path) == ["front.py:3: session._runtime"]
