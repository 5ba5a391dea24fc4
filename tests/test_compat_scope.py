"""What `make test-compat` runs: the tests of the code that calls Playwright, on Playwright 1.62.

Every module of webmcp_nb that imports Playwright is named here with the test files whose subject
it is; those files, and only those, carry the `playwright_sensitive` marker the compatibility run
selects (with the camoufox checks). A new module that calls Playwright fails here until it names
the tests that check it on both versions. No browser is needed.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "webmcp_nb"
TESTS = ROOT / "tests"
MARKER = "playwright_sensitive"

# module (relative to webmcp_nb/) -> the test files (tests/test_*.py) whose subject it is
PLAYWRIGHT_MODULES: dict[str, tuple[str, ...]] = {
    "apis/calls.py": ("apis_page",),  # via="page": Playwright's errors while the page fetches
    "apis/page_tools.py": ("apis_page",),  # expose_to_page: tabs' load events, page-tool registration
    "apis/transport.py": ("apis_page",),  # via="page": the route that adds credentials on the wire
    "backends/__init__.py": ("instances",),
    "backends/camoufox.py": ("camoufox",),
    "backends/chromium.py": ("instances",),
    "backends/remote.py": ("remote",),  # connect (browser server) and connect_over_cdp
    "browsers/downloads.py": ("files",),
    "browsers/driver.py": ("faults",),  # the driver process, killed and restarted
    "browsers/instances.py": ("instances", "faults"),  # launch, crashes, close
    "browsers/live.py": ("widgets",),  # the DevTools screencast
    "browsers/observe.py": ("observe",),
    "browsers/page_fetch.py": ("http",),
    "browsers/pages.py": ("pages",),  # aria snapshots, refs, frames, modal state
    "call/context.py": ("actions", "screenshot_budget"),  # locators by ref, capture timeouts
    "call/engine.py": ("faults",),  # Playwright's errors as envelopes
    "evidence/recorder.py": ("evidence", "trace_secrets"),  # console, network, tracing
    "guard/closed_shadow.py": ("secrets",),
    "guard/file_guard.py": ("security",),  # routing of file: loads
    "guard/known_secrets.py": ("secret_echo",),
    "guard/redirect_hops.py": ("url_policy",),  # CDP Network.setBlockedURLs on each tab
    "guard/redaction.py": ("secrets", "snapshot_secrets"),  # masks, snapshot redaction
    "guard/url_policy.py": ("url_policy",),  # routing of every request, redirects fetched by hand
    "tools/dialogs.py": ("actions",),
    "tools/evaluate.py": ("actions",),
    "tools/execute.py": ("execute",),  # raw Playwright in the snippet
    "tools/files.py": ("files",),  # downloads, PDF
    "tools/http.py": ("http",),
    "tools/input.py": ("actions",),
    "tools/navigation.py": ("pages",),
    "tools/recorded.py": ("evidence",),
    "tools/storage.py": ("storage_state",),  # storage_state(indexed_db=), set_storage_state
    "tools/tabs.py": ("pages",),
    "tools/wait.py": ("observe",),
    "webmcp/native.py": ("webmcp",),  # CDP sessions, the WebMCP domain
    "webmcp/page_tools.py": ("page_tool_binding",),  # expose_binding
    "webmcp/script.py": ("conformance",),  # init scripts
}


def imports_playwright(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "playwright":
            return True
        if isinstance(node, ast.Import) and any(alias.name.split(".")[0] == "playwright" for alias in node.names):
            return True
    return False


def marked(path: Path) -> bool:
    """Whether the module-level `pytestmark` names the marker."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "pytestmark" for t in node.targets):
            return any(isinstance(n, ast.Attribute) and n.attr == MARKER for n in ast.walk(node.value))
    return False


def test_every_module_that_calls_playwright_names_its_tests() -> None:
    found = {
        str(path.relative_to(PACKAGE / "core"))
        for path in sorted((PACKAGE / "core").rglob("*.py"))
        if imports_playwright(path)
    }
    outside = [
        str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*.py") if "core" not in p.parts and imports_playwright(p)
    ]
    assert outside == [], "only webmcp_nb/core calls Playwright; name the module and its tests here"
    assert sorted(found - PLAYWRIGHT_MODULES.keys()) == [], "a module imports Playwright: name its tests above"
    assert sorted(PLAYWRIGHT_MODULES.keys() - found) == [], "these no longer import Playwright: remove them above"


def test_exactly_the_named_test_files_carry_the_marker() -> None:
    named = {name for files in PLAYWRIGHT_MODULES.values() for name in files}
    missing = sorted(name for name in named if not (TESTS / f"test_{name}.py").is_file())
    assert missing == []
    carrying = {path.stem.removeprefix("test_") for path in TESTS.glob("test_*.py") if marked(path)}
    assert sorted(named - carrying) == [], f"add `pytestmark = pytest.mark.{MARKER}` to these"
    assert sorted(carrying - named) == [], "marked, but the subject of no module above: name the module or unmark"
