"""The docs' architecture page matches the tree: every package, folder and notebook it names exists,
and every package of webmcp_nb, every notebook and every script is named there."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "architecture.md"
ENTRY_INDENTS = (0, 2, 4, 6)  # a tree entry; a deeper line continues the description above it


def layout_block(page: str) -> str:
    section = page.split("\n## The tree\n", 1)[1]
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


def packages() -> set[str]:
    """Every package of webmcp_nb (a folder with an `__init__.py`), as the section writes them."""
    return {init.parent.relative_to(ROOT).as_posix() + "/" for init in (ROOT / "webmcp_nb").rglob("__init__.py")}


def test_the_architecture_names_every_package_and_nothing_else() -> None:
    entries = layout_entries(layout_block(ARCHITECTURE.read_text(encoding="utf-8")))
    assert len(entries) == len(set(entries)), "an entry is listed twice"
    missing = [entry for entry in entries if not (ROOT / entry).is_dir()]
    assert missing == [], f"the section names what the tree lacks: {missing}"
    in_package = {entry for entry in entries if entry.startswith("webmcp_nb/")}
    assert sorted(in_package - packages()) == [], "the section names a folder of webmcp_nb that is no package"
    assert sorted(packages() - in_package) == [], "the section does not name every package"


def test_the_architecture_names_every_notebook_and_script() -> None:
    block = layout_block(ARCHITECTURE.read_text(encoding="utf-8"))
    named = set(re.findall(r"[\w.-]+", block))
    for folder in ("notebooks", "scripts"):
        files = sorted(path.name for path in (ROOT / folder).iterdir() if path.is_file())
        assert files and [name for name in files if name not in named] == [], folder
    for name in re.findall(r"\b[\w-]+\.ipynb\b", block):
        assert (ROOT / "notebooks" / name).exists(), name


def test_the_reader_follows_the_tree() -> None:
    block = "pkg/\n  a.py     one\n  sub/     two\n    b.py   three\n                 more of three\n  c.py     four\nother/\n"
    assert layout_entries(block) == ["pkg/", "pkg/a.py", "pkg/sub/", "pkg/sub/b.py", "pkg/c.py", "other/"]


def test_the_tools_reference_is_generated_from_the_registry() -> None:
    spec = importlib.util.spec_from_file_location("generate_docs", ROOT / "scripts" / "generate_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    page = module.TARGET.read_text(encoding="utf-8")
    assert page == module.render(), module.STALE_HINT
    from webmcp_nb.client import tool_registry

    assert [line[4:-1] for line in page.splitlines() if line.startswith("## `")] == tool_registry().names()


def test_the_readme_is_short_and_links_into_the_docs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    linked = set(re.findall(r"\]\(docs/([\w/]+\.md)\)", readme))
    pages = {path.relative_to(ROOT / "docs").as_posix() for path in (ROOT / "docs").rglob("*.md")}
    assert linked == pages, f"pages the README does not link: {sorted(pages - linked)}"
