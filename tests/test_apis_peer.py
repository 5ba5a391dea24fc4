"""Session.api against a document that is not ours, served by a mock server that is not ours:
GitHub's REST description (npm `@octokit/openapi`, about 1,200 operations, 13 MB) served by Prism
(npm `@stoplight/prism-cli`), both pinned in tests/api_peer's lock file. Prism, a separate process,
checks every request it gets against the same document and reports what its own example responses
break, so our request and response checks are compared with an independent validator's."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.helpers import check_contract, error, free_port, npm_install, ok, wait_until
from webmcp_nb import Session
from webmcp_nb.apis import ApiHandle

PEER = Path(__file__).parent / "api_peer"
GITHUB = PEER / "node_modules" / "@octokit" / "openapi" / "generated" / "api.github.com.json"


class Prism:
    """`prism mock` on GitHub's document; its log lines kept (it logs each request it receives)."""

    def __init__(self) -> None:
        folder = npm_install(PEER, ("@stoplight/prism-cli", "@octokit/openapi"))
        self.url = f"http://127.0.0.1:{free_port()}"
        self.lines: list[str] = []
        port = self.url.rsplit(":", 1)[1]
        self.process = subprocess.Popen(
            [str(folder / "node_modules" / ".bin" / "prism"), "mock", "-h", "127.0.0.1", "-p", port, str(GITHUB)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=folder,
        )
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip())

    def wait_ready(self) -> None:
        wait_until(
            lambda: any("Prism is listening" in line for line in self.lines) or self.process.poll() is not None,
            timeout=300,
            interval=0.2,
            message=lambda: "\n".join(self.lines[-20:]),
        )
        assert self.process.poll() is None, "\n".join(self.lines[-20:])

    def received(self, method: str, path: str) -> int:
        return sum(f"[HTTP SERVER] {method.lower()} {path} " in line for line in self.lines)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)


@pytest.fixture(scope="module")
def prism() -> Iterator[Prism]:
    server = Prism()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def s() -> Iterator[Session]:
    with Session() as session:
        yield session


@pytest.fixture(scope="module")
def loaded(s: Session, prism: Prism) -> tuple[ApiHandle, dict[str, float]]:
    """GitHub's document, loaded once for the module (while Prism starts), with what it cost."""
    Path("/proc/self/clear_refs").write_text("5")  # Linux: the peak RSS (VmHWM) starts again from now
    before, wall, cpu = memory_kb("VmRSS"), time.monotonic(), time.process_time()
    gh = s.api(GITHUB, name="gh", base_url=prism.url)
    cost = {
        "wall_s": time.monotonic() - wall,
        "cpu_s": time.process_time() - cpu,
        "peak_growth_mb": (memory_kb("VmHWM") - before) / 1024,
    }
    prism.wait_ready()
    return gh, cost


def memory_kb(field: str) -> int:
    """This process's VmRSS (now) or VmHWM (the peak), in kB."""
    match = re.search(rf"^{field}:\s+(\d+) kB", Path("/proc/self/status").read_text(), re.MULTILINE)
    assert match is not None
    return int(match.group(1))


@pytest.fixture(scope="module")
def gh(loaded: tuple[ApiHandle, dict[str, float]]) -> ApiHandle:
    return loaded[0]


def test_githubs_document_loads_within_its_budget(loaded: tuple[ApiHandle, dict[str, float]]) -> None:
    gh, cost = loaded
    rows = {row["name"]: row for row in gh.operations}
    assert len(rows) > 1_000
    assert rows["repos_get"] == {
        "name": "repos_get",
        "method": "GET",
        "path": "/repos/{owner}/{repo}",
        "summary": "Get a repository",
        "consequential": False,
    }
    assert rows["issues_create"]["consequential"] and rows["repos_delete"]["consequential"]
    assert gh._api.lazy and not gh._api.checked  # validated per operation, nothing checked yet
    # Loose bounds (the machine may be loaded): the budget is 3 s and 300 MB (numbers in notes).
    assert 20 < cost["peak_growth_mb"] < 300, cost  # (the document alone is 13 MB of JSON)
    assert cost["cpu_s"] < 10, cost


def test_a_read_and_its_response_checked_like_prism_does(gh: ApiHandle, prism: Prism) -> None:
    data = ok(check(gh.call("repos_get", owner="octocat", repo="hello-world")))
    http = data["http"]
    assert http["status"] == 200 and http["url"] == f"{prism.url}/repos/octocat/hello-world"
    assert data["value"]["full_name"] == "octocat/Hello-World"
    # GitHub's own example lacks a required field; Prism says so in a header, and so do we.
    violations = json.loads(http["headers"]["sl-violations"])
    assert violations[0]["message"] == "Response body must have required property 'language'"
    assert data["warnings"] == ["response schema: at $: 'language' is a required property"]
    assert "repos_get" in gh._api.checked
    assert prism_accepted(prism, "get", "/repos/octocat/hello-world")


def test_a_mutation_previewed_sent_and_refused(gh: ApiHandle, prism: Prism) -> None:
    path = "/repos/octocat/hello-world/issues"
    preview = ok(
        check(gh.call("issues_create", owner="octocat", repo="hello-world", body={"title": "Bug"}, preview=True))
    )
    shown = preview["preview"]
    assert (shown["method"], shown["url"], shown["body"]) == ("POST", f"{prism.url}{path}", {"title": "Bug"})
    assert prism.received("post", path) == 0
    message = error(
        gh.call("issues_create", owner="octocat", repo="hello-world", body={"body": "untitled"}),
        "invalid_params",
        "not_started",
    )
    assert message == "issues_create's body does not match its schema: at $: 'title' is a required property"
    assert prism.received("post", path) == 0  # refused before the request
    created = ok(check(gh.call("issues_create", owner="octocat", repo="hello-world", body={"title": "Bug"})))
    assert created["http"]["status"] == 201 and created["value"]["number"] == 1347
    assert created["warnings"] == [] and "sl-violations" not in created["http"]["headers"]
    assert prism_accepted(prism, "post", path)


def test_an_invalid_operation_is_reported_before_it_is_sent(s: Session, prism: Prism) -> None:
    document = json.loads(GITHUB.read_text())
    prism.wait_ready()  # (when this test runs alone)
    document["paths"]["/meta"]["get"]["responses"]["200"]["content"]["application/json"]["schema"] = {
        "type": "nonsense"
    }
    broken = s.api(document, name="ghbroken", base_url=prism.url)
    try:
        described = error(s.call("ghbroken_describe", operation="meta_get"), "invalid_params", "not_started")
        message = error(broken.call("meta_get"), "invalid_params", "not_started")
        assert described == message
        assert message.startswith(
            "meta_get is invalid in the document at /paths/~1meta/get/responses/200/content/application~1json/schema"
        )
        assert "Nothing was sent" in message and prism.received("get", "/meta") == 0
        assert ok(broken.call("meta_root"))["http"]["status"] == 200  # its neighbours still work
        assert prism_accepted(prism, "get", "/") and prism.received("get", "/meta") == 0  # (logged in order)
    finally:
        broken.close()


def test_an_agent_searches_describes_and_calls(s: Session, gh: ApiHandle, prism: Prism) -> None:
    assert [spec.name for spec in gh.tools] == ["gh_search", "gh_describe", "gh_call"]
    handle = s.serve_mcp(caps=["api:gh"], approve="none")
    agent_info = types.Implementation(name="peer-agent", version="1.0")

    async def scenario() -> tuple[list[str], Any, Any, Any, Any]:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {handle.token}"}, timeout=120)
        async with Client(streamable_http_client(handle.url, http_client=http), client_info=agent_info) as agent:
            names = [tool.name for tool in (await agent.list_tools()).tools]
            found = await agent.call_tool("gh_search", {"query": "issues create", "limit": 5})
            described = await agent.call_tool("gh_describe", {"operation": "issues_create"})
            called = await agent.call_tool(
                "gh_call",
                {"operation": "issues_get", "args": {"owner": "octocat", "repo": "hello-world", "issue_number": 1}},
            )
            refused = await agent.call_tool("gh_call", {"operation": "issues_get", "args": {"owner": "octocat"}})
            return names, found, described, called, refused

    try:
        names, found, described, called, refused = asyncio.run(scenario())
    finally:
        handle.stop()
    assert sorted(name for name in names if name.startswith("gh")) == ["gh_call", "gh_describe", "gh_search"]
    rows = data_of(found)["operations"]
    assert {"name": "issues_create", "method": "POST", "path": "/repos/{owner}/{repo}/issues"} in [
        {key: row[key] for key in ("name", "method", "path")} for row in rows
    ]
    schema = data_of(described)["input_schema"]
    assert {"owner", "repo", "body", "preview"} <= set(schema["properties"]) and {"owner", "repo"} <= set(
        schema["required"]
    )
    value = data_of(called)
    assert value["http"]["status"] == 200 and value["operation"] == "issues_get"
    # This operation's example in GitHub's document is `{"value": {"$ref": <an Example Object>}}`: Prism
    # serves the whole Example Object ({value, x-github-breaking-changes}), not an issue, and does not
    # flag it; the check against the issue schema does.
    assert value["value"]["value"]["number"] == 1347 and "sl-violations" not in value["http"]["headers"]
    assert value["warnings"] == ["response schema: at $: 'assignee' is a required property"]
    assert refused.is_error is True
    shown = refused.structured_content or {}
    assert (shown["error_type"], shown["operation"]["outcome"]) == ("invalid_params", "not_started")
    assert "'issue_number'" in shown["message"] and "'repo'" in shown["message"]
    assert prism_accepted(prism, "get", "/repos/octocat/hello-world/issues/1")


def prism_accepted(prism: Prism, method: str, path: str) -> bool:
    """Prism received the request once and its own check of it passed (its log is read by a
    thread, so the lines may come a moment after the response)."""

    def passed() -> bool:
        starts = [i for i, line in enumerate(prism.lines) if f"[HTTP SERVER] {method} {path} " in line]
        following = prism.lines[starts[0] + 1 : starts[0] + 4] if starts else []
        return len(starts) == 1 and any("The request passed the validation rules" in line for line in following)

    return bool(wait_until(passed, timeout=30, message=lambda: "\n".join(prism.lines[-10:])))


def data_of(result: types.CallToolResult) -> dict[str, Any]:
    assert result.is_error is False, result.structured_content
    return result.structured_content["data"]  # type: ignore[index,no-any-return]


def check(envelope: Any) -> Any:
    check_contract(envelope)
    return envelope
