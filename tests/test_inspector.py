"""The MCP Inspector steps of docs/mcp.md, run as written: the Inspector's own CLI (2.12, from npm) against a
`webmcp-nb serve` process over streamable HTTP with the bearer header, and through the stdio bridge
(`webmcp-nb attach`), which is what the Inspector's window starts when given a command."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .helpers import install_ts_client, wait_for_exit, wait_until
from .test_server_bounds import Served

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """`webmcp-nb serve --transport http` on the port it chose itself, with its own token (as it
    prints them: a port chosen here first could be taken by another test before the server binds it)."""
    served = Served(tmp_path_factory.mktemp("inspector"), {})
    wait_until(
        lambda: inspector(served.url, "--method", "initialize", token=served.token, check=False) is not None,
        90,
        0.5,
        lambda: f"the server: {served.stderr()[-2000:]}",
    )
    yield served.url, served.token
    served.stop()
    wait_for_exit([served.process.pid])


def inspector(*args: str, token: str | None = None, check: bool = True) -> dict | None:  # type: ignore[type-arg]
    """The Inspector CLI's JSON answer (None when it failed and `check` is off)."""
    binary = install_ts_client() / "node_modules" / ".bin" / "mcp-inspector"
    header = ["--header", f"Authorization: Bearer {token}"] if token else []
    done = subprocess.run([str(binary), "--cli", *args, *header], capture_output=True, text=True, timeout=120, cwd=REPO)
    if done.returncode != 0:
        assert not check, done.stdout[-2000:] + done.stderr[-2000:]
        return None
    answer: dict = json.loads(done.stdout)  # type: ignore[type-arg]
    return answer


def documented_inspector_lines() -> str:
    readme = (REPO / "docs" / "mcp.md").read_text()
    return readme[readme.index("**MCP Inspector**") :].split("\n\n", 1)[0]


def test_the_docs_give_the_inspector_commands_this_test_runs() -> None:
    lines = documented_inspector_lines()
    assert "npx @modelcontextprotocol/inspector --cli http://127.0.0.1:PORT/mcp" in lines
    assert '--header "Authorization: Bearer TOKEN"' in lines
    assert "npx @modelcontextprotocol/inspector webmcp-nb attach --url http://127.0.0.1:PORT/mcp --token TOKEN" in lines
    installed = json.loads((REPO / "tests" / "ts_client" / "package.json").read_text())["dependencies"]
    assert installed["@modelcontextprotocol/inspector"] == re.search(r"Inspector (\d+\.\d+\.\d+)", lines).group(1)  # type: ignore[union-attr]


def test_the_inspector_cli_lists_and_calls_tools_over_http(server: tuple[str, str]) -> None:
    url, token = server
    listed = inspector(url, "--method", "tools/list", token=token)
    assert listed is not None
    names = [tool["name"] for tool in listed["tools"]]
    assert "browser_navigate" in names and "browser_snapshot" in names
    called = inspector(url, "--method", "tools/call", "--tool-name", "browser_health", token=token)
    assert called is not None and called["isError"] is False
    assert called["structuredContent"]["status"] == "success"
    assert inspector(url, "--method", "tools/list", token="wrong", check=False) is None  # the token is checked


def test_the_inspector_reaches_the_server_through_the_stdio_bridge(server: tuple[str, str]) -> None:
    url, token = server
    bridge = [sys.executable, "-m", "webmcp_nb.cli", "attach", "--url", url, "--token", token]
    listed = inspector(*bridge, "--method", "tools/list")
    assert listed is not None and "browser_navigate" in [tool["name"] for tool in listed["tools"]]
