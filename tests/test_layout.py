"""README's layout section matches the tree: every module, folder and notebook it names exists,
and every module and folder of the package, notebook and script is named there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

# the README's layout against the tree: the same whichever Playwright runs the suite.
pytestmark = pytest.mark.playwright_independent

ROOT = Path(__file__).resolve().parent.parent
ENTRY_INDENTS = (0, 2, 4, 6)  # a tree entry; a deeper line continues the description above it


def layout_block(readme: str) -> str:
    section = readme.split("\n## Layout\n", 1)[1]
    return section.split("```\n", 2)[1]


def layout_entries(block: str) -> list[str]:
    """The paths the layout's tree names (folders end with /), in order."""
    entries: list[str] = []
    folders: list[str] = []
    for line in block.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        if not line.strip() or indent not in ENTRY_INDENTS:
            continue
        depth = indent // 2
        assert depth <= len(folders), f"{line!r} is nested under no folder"
        path = (folders[depth - 1] if depth else "") + line.split()[0]
        entries.append(path)
        folders[depth:] = [path] if path.endswith("/") else []
    return entries


def package_tree() -> set[str]:
    """Every module and folder of the package, as the layout writes them."""
    found = set()
    for path in (ROOT / "webmcp_nb").rglob("*"):
        if "__pycache__" in path.parts:
            continue
        relative = path.relative_to(ROOT).as_posix()
        if path.is_dir():
            found.add(relative + "/")
        elif path.suffix == ".py" and not (path.name == "__init__.py" and path.parent.name != "webmcp_nb"):
            found.add(relative)  # a subpackage's __init__.py is its folder's entry
    return found


def test_the_layout_names_every_module_and_folder_of_the_package_and_nothing_else() -> None:
    entries = layout_entries(layout_block((ROOT / "README.md").read_text(encoding="utf-8")))
    assert len(entries) == len(set(entries)), "an entry is listed twice"
    missing = [entry for entry in entries if not (ROOT / entry).exists()]
    assert missing == [], f"the layout names what the tree lacks: {missing}"
    in_package = {entry for entry in entries if entry.startswith("webmcp_nb/")}
    unlisted = sorted(package_tree() - in_package - {"webmcp_nb/"})
    assert unlisted == [], f"README's layout does not list: {unlisted}"


def test_the_layout_names_every_notebook_and_script() -> None:
    block = layout_block((ROOT / "README.md").read_text(encoding="utf-8"))
    named = set(re.findall(r"[\w.-]+", block))
    for folder in ("notebooks", "scripts"):
        files = sorted(path.name for path in (ROOT / folder).iterdir() if path.is_file())
        assert files and [name for name in files if name not in named] == [], folder
    for name in re.findall(r"\b[\w-]+\.ipynb\b", block):
        assert (ROOT / "notebooks" / name).exists(), name


def test_the_reader_follows_the_tree() -> None:
    block = "pkg/\n  a.py     one\n  sub/     two\n    b.py   three\n                 more of three\n  c.py     four\nother/\n"
    assert layout_entries(block) == ["pkg/", "pkg/a.py", "pkg/sub/", "pkg/sub/b.py", "pkg/c.py", "other/"]
