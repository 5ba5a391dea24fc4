"""The agent sandbox, attacked through real MCP clients.

Each attack from the issue is made by an agent against a server that did not grant
what it needs, and must fail with an `invalid_params` envelope naming the grant
(nothing done); then the same thing succeeds where the operator granted it. Servers:
a session serving over streamable HTTP (in this process), and the `webmcp-nb serve`
console script over stdio (its grant options on the command line).
"""

from __future__ import annotations

import asyncio
import dataclasses
import html
import os
import re
import socket
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from webmcp_nb import Session
from webmcp_nb.core.backends import chromium
from webmcp_nb.core.call.engine import ApprovalRequest
from webmcp_nb.core.guard.grants import CAPS, SCHEMES, Grant
from webmcp_nb.demo import DemoServer
from webmcp_nb.serve_options import ServeOptions

from .conftest import ref_for
from .helpers import free_port

pytestmark = pytest.mark.playwright_sensitive  # see tests/test_compat_scope.py

REPO = Path(__file__).resolve().parents[1]
AGENT = types.Implementation(name="attacker", version="1.0")
SECRET = "TOP SECRET CONTENT"


# --------------------------------------------------------------------------- #
# The attacker's surroundings: local files, a web page, servers
# --------------------------------------------------------------------------- #


@dataclass
class Files:
    root: Path  # granted with --file-root where a test says so
    outside: Path  # never granted
    uploads: Path  # granted with --upload-root
    canary: Path  # what --renderer-cmd-prefix would create

    @property
    def secret(self) -> Path:
        return self.outside / "secret.html"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Files:
    base = tmp_path_factory.mktemp("sandbox")
    found = Files(base / "root", base / "outside", base / "uploads", base / "outside" / "touched")
    for directory in (found.root, found.outside, found.uploads):
        directory.mkdir()
    found.secret.write_text(f"<title>Secret</title><p>{SECRET}</p>")
    (found.root / "inside.html").write_text("<title>Inside</title><p>INSIDE PAGE</p>")
    (found.root / "index.html").write_text(
        f'<title>Root</title><p><a href="{found.secret.as_uri()}">Leave the root</a></p>'
        '<p><a href="inside.html">Stay inside</a></p>'
    )
    (found.root / "framed.html").write_text(
        f'<title>Framed</title><iframe title="framed" src="{found.secret.as_uri()}"></iframe>'
    )
    (found.uploads / "notes.txt").write_text("notes")
    (found.uploads / "escape.txt").symlink_to(found.secret)
    (found.outside / "link").symlink_to(found.root)  # a link outside the roots
    return found


class Pages(BaseHTTPRequestHandler):
    """/ua shows the browser's User-Agent; /links links to a local file."""

    secret_url = ""

    def do_GET(self) -> None:
        if self.path == "/ua":
            body = f"<title>UA</title><p>UA: {html.escape(self.headers.get('User-Agent', ''))}</p>"
        else:
            body = f'<title>Links</title><a href="{self.secret_url}">Open the local file</a>'
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def web(files: Files) -> Iterator[str]:
    Pages.secret_url = files.secret.as_uri()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Pages)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


class Served:
    """A session serving MCP over HTTP in this process, and clients for it."""

    def __init__(self, session: Session, **options: Any) -> None:
        self.session = session
        self.handle = session.serve_mcp(**options)

    def client(self) -> Client:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {self.handle.token}"}, timeout=120)
        return Client(streamable_http_client(self.handle.url, http_client=http), client_info=AGENT)

    def calls(self, *calls: tuple[str, dict[str, Any]]) -> list[types.CallToolResult]:
        return asyncio.run(_calls(self.client(), calls))


async def _calls(client: Client, calls: tuple[tuple[str, dict[str, Any]], ...]) -> list[types.CallToolResult]:
    async with client:
        return [await client.call_tool(name, args) for name, args in calls]


@pytest.fixture(scope="module")
def plain() -> Iterator[Served]:
    """A server with no extra grants."""
    with Session() as session:
        yield Served(session)


def stdio(*options: str, cwd: Path | None = None) -> Client:
    """A client of `webmcp-nb serve --transport stdio OPTIONS` (this checkout's package)."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "webmcp_nb.cli", "serve", "--transport", "stdio", *options],
        # The SDK passes a minimal environment on; a Chromium set for the tests goes too (make test-fast
        # points it nowhere, so an unmarked test that launches one fails there).
        env={"PYTHONPATH": str(REPO), **{k: v for k, v in os.environ.items() if k == chromium.ENV_VAR}},
        cwd=cwd,
    )
    return Client(params, client_info=AGENT)


def run_stdio(client: Client, *calls: tuple[str, dict[str, Any]]) -> list[types.CallToolResult]:
    return asyncio.run(_calls(client, calls))


def envelope(result: types.CallToolResult) -> dict[str, Any]:
    assert isinstance(result.structured_content, dict), result
    return result.structured_content


def text_of(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


def refused(result: types.CallToolResult, *names: str) -> str:
    """Assert a refusal before anything was done, naming each of `names`; return the message."""
    found = envelope(result)
    assert result.is_error is True
    assert found["status"] == "error"
    assert found["error_type"] == "invalid_params", found
    assert (found["operation"]["outcome"], found["operation"]["retry"]) == ("not_started", "after_correction")
    for name in names:
        assert name in found["message"], (name, found["message"])
    return found["message"]


def succeeded(result: types.CallToolResult) -> dict[str, Any]:
    found = envelope(result)
    assert result.is_error is False, found
    assert (found["status"], found["operation"]["outcome"]) == ("success", "completed")
    return found["data"]


# --------------------------------------------------------------------------- #
# Launch options: without the browser cap, only safe ones
# --------------------------------------------------------------------------- #


@pytest.mark.browser
def test_launch_options_beyond_the_safe_ones_need_the_browser_cap(plain: Served, files: Files, web: str) -> None:
    port = free_port()
    attacks = [
        ({"args": [f'--renderer-cmd-prefix=/bin/sh -c "touch {files.canary}; exec $0 $@"']}, "args"),
        ({"args": [f"--remote-debugging-port={port}"]}, "args"),
        ({"executable_path": "/bin/sh"}, "executable_path"),
        ({"profile_dir": str(files.outside / "profile")}, "profile_dir as a path"),
        ({"profile_dir": "../../profile"}, "profile_dir as a path"),
        ({"headless": False}, "headless=false"),
    ]
    results = plain.calls(
        *[("browser_create_instance", {"name": f"evil{i}", **args}) for i, (args, _) in enumerate(attacks)],
        ("browser_navigate", {"url": f"{web}/ua"}),  # a renderer starts: a prefix would have run now
        ("browser_list_instances", {}),
    )
    for result, (_, option) in zip(results, attacks, strict=False):
        refused(result, "browser_create_instance", option, "`browser` capability", "--caps browser")
    succeeded(results[-2])
    assert [info["name"] for info in succeeded(results[-1])["instances"]] == ["default"]
    assert not files.canary.exists()
    assert not (files.outside / "profile").exists()
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), timeout=5):
        pass


@pytest.mark.browser
def test_a_profile_name_stays_in_the_session_profiles_directory(plain: Served) -> None:
    created, destroyed = plain.calls(
        ("browser_create_instance", {"name": "kept", "profile_dir": "work"}),
        ("browser_destroy_instance", {"name": "kept"}),
    )
    profile = Path(succeeded(created)["instance"]["profile_dir"])
    engine = plain.session.engine
    assert profile == engine.artifacts_dir / "profiles" / "work"
    assert profile.is_dir() and any(profile.iterdir())  # Chromium wrote its profile there
    succeeded(destroyed)


# --------------------------------------------------------------------------- #
# URL schemes
# --------------------------------------------------------------------------- #


def test_file_urls_are_judged_as_the_browser_reads_them(files: Files) -> None:
    grant = Grant.build(file_root=files.root, allow_schemes=["view-source"])
    (files.root / "link.html").symlink_to(files.secret)
    root = files.root.as_uri()
    allowed = [
        f"{root}/index.html",
        f"FILE://{files.root}/index.html",
        f"file://localhost{files.root}/",
        f"{root}/x/../index.html",
        f"view-source:{root}/index.html",
        "about:blank",
        "https://example.org/",
    ]
    refused_urls = [
        f"{root}/../outside/secret.html",
        f"{root}/%2e%2e/outside/secret.html",
        f"{root}/a\\..\\..\\outside/secret.html",
        f"{root}/link.html",  # a symlink out of the root
        f"fi\tle://{files.secret}",
        f"file://otherhost{files.root}/index.html",
        f"view-source:{files.secret.as_uri()}",
        "about:version",
        "data:text/html,x",
    ]
    assert [url for url in allowed if not grant.allows_url(url)] == []
    assert [url for url in refused_urls if grant.allows_url(url)] == []


@pytest.mark.parametrize(
    ("url", "grant"),
    [
        ("file:///etc/passwd", "--file-root DIR"),
        ("file:///root/", "--file-root DIR"),
        ("FILE:///etc/passwd", "--file-root DIR"),
        ("data:text/html,<script>document.title='pwned'</script>", "--allow-scheme data"),
        ("view-source:http://127.0.0.1/", "--allow-scheme view-source"),
        ("chrome://version", "--allow-scheme chrome"),
        ("devtools://devtools/bundled/inspector.html", "--allow-scheme devtools"),
        ("blob:http://127.0.0.1/0d1c6a0e-0000-4000-8000-000000000000", "--allow-scheme blob"),
        ("javascript:document.title='pwned'", "no known scheme"),
    ],
)
@pytest.mark.browser
def test_urls_outside_the_grant_are_refused(plain: Served, web: str, url: str, grant: str) -> None:
    start, navigate, new_tab, tabs = plain.calls(
        ("browser_navigate", {"url": f"{web}/ua"}),
        ("browser_navigate", {"url": url}),
        ("browser_tabs", {"action": "new", "url": url}),
        ("browser_tabs", {"action": "list"}),
    )
    succeeded(start)
    refused(navigate, grant)
    refused(new_tab, grant)
    listed = succeeded(tabs)["tabs"]
    assert len(listed) == 1 and listed[0]["url"] == f"{web}/ua"  # no tab opened, nowhere navigated


@pytest.mark.browser
def test_a_clicked_link_to_a_local_file_loads_nothing(plain: Served, web: str) -> None:
    async def scenario() -> tuple[types.CallToolResult, types.CallToolResult]:
        async with plain.client() as client:
            await client.call_tool("browser_navigate", {"url": f"{web}/links"})
            page = text_of(await client.call_tool("browser_snapshot", {}))
            click = await client.call_tool("browser_click", {"ref": ref_for(page, "Open the local file")})
            return click, await client.call_tool("browser_snapshot", {})

    click, after = asyncio.run(scenario())
    succeeded(click)
    assert SECRET not in text_of(after)
    assert succeeded(after)["url"] == f"{web}/links"


@pytest.mark.browser
def test_a_file_page_the_notebook_opened_cannot_lead_the_agent_further(plain: Served, files: Files, web: str) -> None:
    plain.session.navigate((files.root / "index.html").as_uri()).raise_for_status()  # full power

    async def scenario() -> tuple[types.CallToolResult, types.CallToolResult]:
        async with plain.client() as client:
            page = text_of(await client.call_tool("browser_snapshot", {}))
            click = await client.call_tool("browser_click", {"ref": ref_for(page, "Leave the root")})
            return click, await client.call_tool("browser_snapshot", {})

    click, after = asyncio.run(scenario())
    succeeded(click)
    assert SECRET not in text_of(after)
    assert not succeeded(after)["url"].startswith(files.secret.as_uri())
    plain.session.navigate(files.secret.as_uri()).raise_for_status()  # the notebook keeps full power
    assert SECRET in plain.session.snapshot().data["snapshot"]
    plain.session.navigate(f"{web}/ua").raise_for_status()
    back, page = plain.calls(("browser_navigate_back", {}), ("browser_snapshot", {}))  # into the history
    failed = envelope(back)
    assert (failed["error_type"], failed["operation"]["outcome"]) == ("navigation_failed", "unknown")
    assert "ERR_ACCESS_DENIED" in failed["message"]
    assert SECRET not in text_of(page)


# --------------------------------------------------------------------------- #
# The operator's grants, through `webmcp-nb serve` options
# --------------------------------------------------------------------------- #


@pytest.mark.browser
def test_a_file_root_allows_files_under_it_and_the_browser_blocks_the_rest(files: Files, web: str) -> None:
    async def scenario() -> dict[str, Any]:
        serve = stdio(
            "--file-root", str(files.root), "--allow-scheme", "data", "--chromium-arg=--user-agent=OperatorUA/1"
        )
        async with serve as client:
            found: dict[str, Any] = {}
            root = (files.root / "index.html").as_uri()
            found["outside"] = await client.call_tool("browser_navigate", {"url": files.secret.as_uri()})
            found["dotdot"] = await client.call_tool(
                "browser_navigate", {"url": f"{files.root.as_uri()}/../outside/secret.html"}
            )
            await client.call_tool("browser_navigate", {"url": (files.root / "framed.html").as_uri()})
            found["framed"] = await client.call_tool("browser_snapshot", {})
            found["root"] = await client.call_tool("browser_navigate", {"url": root})
            page = text_of(await client.call_tool("browser_snapshot", {}))
            found["leave"] = await client.call_tool("browser_click", {"ref": ref_for(page, "Leave the root")})
            found["left"] = await client.call_tool("browser_snapshot", {})
            await client.call_tool("browser_navigate", {"url": root})
            page = text_of(await client.call_tool("browser_snapshot", {}))
            found["stay"] = await client.call_tool("browser_click", {"ref": ref_for(page, "Stay inside")})
            found["stayed"] = await client.call_tool("browser_snapshot", {})
            found["data"] = await client.call_tool(
                "browser_navigate", {"url": "data:text/html,<title>D</title>DATA OK"}
            )
            found["data_page"] = await client.call_tool("browser_snapshot", {})
            found["ua"] = await client.call_tool("browser_navigate", {"url": f"{web}/ua"})
            found["ua_page"] = await client.call_tool("browser_snapshot", {})
            return found

    found = asyncio.run(scenario())
    refused(found["outside"], "outside the granted file root", str(files.root))
    refused(found["dotdot"], "outside the granted file root")
    assert succeeded(found["root"])["title"] == "Root"
    assert "framed" in text_of(found["framed"]) and SECRET not in text_of(found["framed"])  # the route refused it
    succeeded(found["leave"])
    assert SECRET not in text_of(found["left"])  # the route refused the navigation the click started
    assert not succeeded(found["left"])["url"].startswith(files.secret.as_uri())
    succeeded(found["stay"])
    assert "INSIDE PAGE" in text_of(found["stayed"])
    succeeded(found["data"])
    assert "DATA OK" in text_of(found["data_page"])
    succeeded(found["ua"])
    assert "UA: OperatorUA/1" in text_of(found["ua_page"])  # the operator's flag reached the browser


@pytest.mark.browser
def test_uploads_only_from_the_upload_roots(files: Files, demo: DemoServer) -> None:
    async def scenario() -> dict[str, Any]:
        async with stdio("--caps", "files", "--upload-root", str(files.uploads), cwd=files.uploads) as client:
            found: dict[str, Any] = {}
            await client.call_tool("browser_navigate", {"url": demo.url_for("upload.html")})
            page = text_of(await client.call_tool("browser_snapshot", {}))
            found["open"] = await client.call_tool("browser_click", {"ref": ref_for(page, "Choose file")})
            for name, path in [
                ("relative", os.path.relpath("/etc/passwd", files.uploads)),
                ("absolute", "/etc/passwd"),
                ("absent outside", "/etc/no-such-key.pem"),
                ("linked outside", str(files.outside / "link" / "inside.html")),
                ("symlink", str(files.uploads / "escape.txt")),
                ("missing", str(files.uploads / "nothing.txt")),
            ]:
                found[name] = await client.call_tool("browser_file_upload", {"paths": [path]})
            found["granted"] = await client.call_tool("browser_file_upload", {"paths": ["notes.txt"]})
            found["page"] = await client.call_tool("browser_snapshot", {})
            return found

    found = asyncio.run(scenario())
    assert succeeded(found["open"])["modal_state"]["kind"] == "file_chooser"
    refused(found["relative"], "/etc/passwd", "outside the directories agents may upload from", "--upload-root")
    refused(found["absolute"], "outside the directories agents may upload from", str(files.uploads))
    # whether a file outside the roots exists is not told: the roots are judged first
    refused(found["absent outside"], "outside the directories agents may upload from")
    # nor where a link outside them leads (a link inside them is named with its target)
    linked = refused(found["linked outside"], "outside the directories agents may upload from")
    assert "really" not in linked and str(files.root) not in linked
    refused(found["symlink"], f"really {files.secret}", "outside")
    refused(found["missing"], "Not a readable file")
    assert succeeded(found["granted"])["files"] == [str(files.uploads / "notes.txt")]
    assert "Selected: notes.txt" in text_of(found["page"])


def test_the_default_upload_root_is_the_artifacts_directory(plain: Served, files: Files) -> None:
    engine = plain.session.engine
    assert plain.handle._server.grant.upload_roots == (engine.artifacts_dir.resolve(),)
    assert "uploads from: " + str(engine.artifacts_dir.resolve()) in plain.handle.describe()


def test_the_default_upload_root_keeps_browser_profiles_out(files: Files, demo: DemoServer) -> None:
    with Session() as session:
        served = Served(session, caps=["files"])
        artifacts = session.engine.artifacts_dir
        (artifacts / "report.txt").write_text("a report")
        kept = artifacts / "profiles" / "notebook" / "Default" / "Cookies"  # a profile the notebook named
        kept.parent.mkdir(parents=True)
        kept.write_text(SECRET)
        (artifacts / "cookies.txt").symlink_to(kept)

        async def scenario() -> list[types.CallToolResult]:
            async with served.client() as client:
                await client.call_tool("browser_navigate", {"url": demo.url_for("upload.html")})
                page = text_of(await client.call_tool("browser_snapshot", {}))
                await client.call_tool("browser_click", {"ref": ref_for(page, "Choose file")})
                return [
                    await client.call_tool("browser_file_upload", {"paths": [str(kept)]}),
                    await client.call_tool("browser_file_upload", {"paths": [str(artifacts / "cookies.txt")]}),
                    await client.call_tool("browser_file_upload", {"paths": [str(artifacts / "report.txt")]}),
                    await client.call_tool("browser_snapshot", {}),
                ]

        direct, linked, granted, page = asyncio.run(scenario())
    profiles = str((artifacts / "profiles").resolve())
    refused(direct, str(kept.resolve()), profiles, "agents never upload from")
    refused(linked, str(kept.resolve()), "agents never upload from")
    assert succeeded(granted)["files"] == [str((artifacts / "report.txt").resolve())]
    assert "Selected: report.txt" in text_of(page)


# --------------------------------------------------------------------------- #
# The browser cap, and approval of calls that use it
# --------------------------------------------------------------------------- #


@pytest.mark.browser
def test_the_browser_cap_allows_launch_options_once_approved(web: str) -> None:
    requests: list[ApprovalRequest] = []
    answers = ["not this one", None]

    async def approver(request: ApprovalRequest) -> str | None:
        requests.append(request)
        return answers.pop(0)

    flags = {"name": "flagged", "args": ["--user-agent=AgentUA/2"]}
    with Session() as session:
        served = Served(session, caps=["browser"], approve="consequential", approver=approver)
        denied, created, ua, page, safe = served.calls(
            ("browser_create_instance", flags),
            ("browser_create_instance", flags),
            ("browser_navigate", {"instance": "flagged", "url": f"{web}/ua"}),
            ("browser_snapshot", {"instance": "flagged"}),
            ("browser_create_instance", {"name": "safe", "viewport": {"width": 800, "height": 600}}),
        )
    found = envelope(denied)
    assert (found["error_type"], found["operation"]["outcome"]) == ("approval_denied", "not_started")
    assert "not this one" in found["message"]
    assert succeeded(created)["instance"]["name"] == "flagged"
    succeeded(ua)
    assert "UA: AgentUA/2" in text_of(page)
    succeeded(safe)
    assert [(r.tool, r.args.get("args")) for r in requests] == [("browser_create_instance", flags["args"])] * 2


@pytest.mark.browser
def test_http_from_the_page_is_held_to_the_url_grant(demo: DemoServer) -> None:
    from .conftest import CheckedSession
    from .helpers import error, ok

    grant = Grant.build(caps=["http"])
    with CheckedSession() as s:
        ok(s.navigate(demo.url_for("index.html")))

        def call(url: str) -> Any:
            return asyncio.run(s.acall_as("agent:test", "browser_http", {"url": url}, grant=grant))

        for url in ("file:///etc/passwd", "data:text/plain,x", " FILE:///etc/hostname", "view-source:http://x/"):
            message = error(call(url), "invalid_params", "not_started", "after_correction")
            assert "granted" in message or "grant" in message, message
        assert ok(call("/status?code=200"))["status"] == 200  # relative: the page's own origin
        assert ok(call(demo.url_for("status?code=201")))["status"] == 201


# --------------------------------------------------------------------------- #
# The threat model (docs/mcp.md) matches the code
# --------------------------------------------------------------------------- #


def test_the_grants_table_names_every_grant_and_option() -> None:
    readme = (REPO / "docs" / "mcp.md").read_text(encoding="utf-8")
    section = readme.split("### Threat model and grants", 1)[1].split("\n### ", 1)[0]
    assert "**Who the agent is.**" in section and "**Never grant an untrusted agent**" in section
    rows = {
        cells[0]: cells[1:]
        for line in section.splitlines()
        if line.startswith("| ") and not line.startswith("|---")
        for cells in [[cell.strip() for cell in line.strip("|").split(" | ")]]
    }
    for cap in CAPS:  # every --caps value has its row, saying how to grant it
        assert f"`--caps {cap}`" in rows[f"`{cap}`"][0], cap
    assert {row for row in rows if re.fullmatch(r"`[a-z]+`", row)} == {f"`{cap}`" for cap in CAPS}
    assert f"`--allow-scheme {' '.join(SCHEMES)}`" in rows["schemes"][0]
    for option in ("executable_path", "profile_dir", "endpoint", "cdp_endpoint", "headers"):  # launch_widening's
        assert f"`{option}`" in rows["`browser`"][1], option
    flags = {field.metadata["flag"] for field in dataclasses.fields(ServeOptions)}
    for row, flag in [
        ("file root", "--file-root"),
        ("upload roots", "--upload-root"),
        ("operator flags", "--chromium-arg"),
    ]:
        assert flag in flags and f"`{flag}" in rows[row][0], row
    refused_by_default = section.split("Refused:", 1)[1].split("\n\n", 1)[0]
    for scheme in ("file", *SCHEMES):
        assert f"`{scheme}:`" in refused_by_default, scheme
