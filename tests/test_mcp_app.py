"""The live view, call log and approval prompt as an MCP App, in a real host on real Chromium.

The host (tests/app_host/host.ts, bundled here with esbuild from app/'s locked npm packages) is
built on the SDK's host side, `AppBridge`: it reads `ui://webmcp-nb/live` and runs it in a
sandboxed frame under the CSP the resource declares. Its MCP client is a real Python client over
streamable HTTP that advertises the UI extension (the page's `webmcpRelay` forwards each of the
bridge's requests to it); an agent is another client, without it. The session's own Chromium is
what the agent drives; the host page runs in a browser of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shutil
import subprocess
import threading
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.extension import advertise
from mcp.client.streamable_http import streamable_http_client
from playwright.async_api import Browser, Page, async_playwright

from webmcp_nb.core.backends.chromium import resolve
from webmcp_nb.demo import DemoServer
from webmcp_nb.mcp.app import APP_MIME_TYPE, APP_URI, CLICK_TOOL, DECIDE_TOOL, STATE_TOOL, UI_EXTENSION
from webmcp_nb.notebook.widgets import ApprovalPanel

from .conftest import CheckedSession
from .helpers import npm_install, ok, wait_until

BROWSER_FIXTURES = {"served"}  # a session, its MCP servers and the host's browser (see conftest.py)
ROOT = Path(__file__).parent.parent
APP = ROOT / "app"
APP_TOOLS = {STATE_TOOL, CLICK_TOOL, DECIDE_TOOL}
T = TypeVar("T")


def wire(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def client(url: str, token: str, name: str, *, renders_apps: bool) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120)
    extensions = [advertise(UI_EXTENSION, {"mimeTypes": [APP_MIME_TYPE]})] if renders_apps else None
    return Client(
        streamable_http_client(url, http_client=http),
        cache=None,
        client_info=types.Implementation(name=name, version="1"),
        extensions=extensions,
    )


async def refuse(request: Any) -> str:
    return "No app to answer in (the --no-app server's calls are not held in these tests)."


class Served:
    """A session served with the app (and again with --no-app), its clients, and the host page,
    all driven from one event loop on a thread of its own."""

    def __init__(self, session: CheckedSession, demo: DemoServer, host_html: Path) -> None:
        self.session, self.demo = session, demo
        self.panel = ApprovalPanel(timeout_s=120)  # the notebook's, answering the same decisions as the app
        self.app = session.serve_mcp(caps=["vision", "js"], approve="consequential", approver=self.panel.approve)
        self.no_app = session.serve_mcp(caps=["vision", "js"], approve="consequential", app=False, approver=refuse)
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self.host_html, self._host_open = host_html, False
        self._stop = asyncio.Event()
        self._ready: asyncio.Future[None] = asyncio.run_coroutine_threadsafe(self._life(), self.loop)  # type: ignore[assignment]
        wait_until(lambda: self._opened, timeout=120, message=lambda: repr(self._ready))

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float = 120) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    _opened = False

    async def _life(self) -> None:
        """Open the clients and the host's browser, and close them when told (in this one task:
        the clients' cancel scopes must be left in the task that entered them)."""
        async with contextlib.AsyncExitStack() as stack:
            clients = [
                client(self.app.url, self.app.token, "test-agent", renders_apps=False),
                client(self.app.url, self.app.token, "test-host", renders_apps=True),
                client(self.no_app.url, self.no_app.token, "test-agent", renders_apps=False),
                client(self.no_app.url, self.no_app.token, "test-host", renders_apps=True),
            ]
            entered = [await stack.enter_async_context(c) for c in clients]
            self.agent, self.host, self.agent_no_app, self.host_no_app = entered
            playwright = await stack.enter_async_context(async_playwright())
            executable, _ = resolve(None, None)
            self.browser: Browser = await playwright.chromium.launch(executable_path=executable)
            stack.push_async_callback(self.browser.close)  # closed first: the app stops asking
            self.page: Page = await self.browser.new_page(viewport={"width": 900, "height": 1000})
            self._opened = True
            await self._stop.wait()

    async def relay(self, method: str, params: dict[str, Any]) -> Any:
        """The host's MCP client: each request of the host page (and of the app, through its bridge)."""
        if method == "resources/read":
            return wire(await self.host.read_resource(params["uri"]))
        if method == "tools/call":
            return wire(await self.host.call_tool(params["name"], params.get("arguments") or {}))
        raise ValueError(f"the test host relays no {method}")

    def open_host(self) -> None:
        """The host page, once: it reads the app and loads it in its frame."""
        if not self._host_open:
            self.run(self._open_host())
            self._host_open = True

    async def _open_host(self) -> None:
        await self.page.expose_function("webmcpRelay", self.relay)
        await self.page.set_content(self.host_html.read_text(encoding="utf-8"))
        await self.page.evaluate("window.hostReady")

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self._stop.set)
        self._ready.result(60)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.app.stop()
        self.no_app.stop()


@pytest.fixture(scope="module")
def app_folder() -> Path:
    """app/ with its locked npm packages (the SDK and esbuild)."""
    return npm_install(APP, ("@modelcontextprotocol/ext-apps", "@modelcontextprotocol/client"))


@pytest.fixture(scope="module")
def host_html(app_folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("app_host") / "host.html"
    host = ROOT / "tests" / "app_host"
    node = shutil.which("node")
    assert node
    subprocess.run(
        [node, str(app_folder / "build.mjs"), "host", str(host / "host.ts"), str(host / "host.html"), str(out)],
        check=True,
        timeout=120,
    )
    return out


@pytest.fixture(scope="module")
def served(session: CheckedSession, demo: DemoServer, host_html: Path) -> Iterator[Served]:
    served = Served(session, demo, host_html)
    try:
        yield served
    finally:
        served.close()


def test_the_shipped_app_is_what_its_sources_build_to(app_folder: Path) -> None:
    node = shutil.which("node")
    assert node
    checked = subprocess.run(
        [node, str(app_folder / "build.mjs"), "--check"], capture_output=True, text=True, timeout=120
    )
    assert checked.returncode == 0, checked.stderr
    html = (ROOT / "webmcp_nb" / "mcp" / "static" / "live.html").read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)=["']?https?:""", html)  # nothing fetched at run time


def volatile(result: types.CallToolResult) -> str:
    """A result's wire JSON, its call's id and timings blanked (they differ from call to call)."""
    text = json.dumps(wire(result), sort_keys=True)
    text = re.sub(r'("(id|call_id|started_at|finished_at|duration_ms|elapsed_ms)": )("[^"]*"|[0-9.]+)', r"\1_", text)
    return re.sub(r"\b\d+(\.\d+)? ?ms\b", "_ms", text)


def test_hosts_that_do_not_render_apps_are_sent_what_they_were(served: Served) -> None:
    async def scenario() -> None:
        plain = [wire(t) for t in (await served.agent.list_tools()).tools]
        without = [wire(t) for t in (await served.agent_no_app.list_tools()).tools]
        assert json.dumps(plain) == json.dumps(without)  # byte for byte
        assert not APP_TOOLS & {t["name"] for t in plain} and not any("_meta" in t for t in plain)
        assert APP_URI not in {str(r.uri) for r in (await served.agent.list_resources()).resources}
        # A host that renders apps: the same tools, those that change or show the page naming the view,
        # and the app-only tools (hidden from its model by their visibility).
        rendered = {t["name"]: t for t in (wire(t) for t in (await served.host.list_tools()).tools)}
        assert rendered["browser_navigate"]["_meta"] == {"ui": {"resourceUri": APP_URI}}
        assert rendered["browser_snapshot"]["_meta"] == {"ui": {"resourceUri": APP_URI}}
        assert "_meta" not in rendered["browser_list_instances"]
        for name in APP_TOOLS:
            assert rendered[name]["_meta"]["ui"]["visibility"] == ["app"]
        assert [
            {k: v for k, v in t.items() if k != "_meta"} for t in rendered.values() if t["name"] not in APP_TOOLS
        ] == plain
        # --no-app: nothing of it, even for such a host.
        assert not APP_TOOLS & {t.name for t in (await served.host_no_app.list_tools()).tools}
        listed = {str(r.uri): r for r in (await served.host.list_resources()).resources}
        assert listed[APP_URI].mime_type == APP_MIME_TYPE
        assert wire(listed[APP_URI])["_meta"]["ui"]["csp"] == {"connectDomains": [], "resourceDomains": []}
        # An ordinary tool's result is the same with the app on and off.
        url = served.demo.url_for("/table.html")
        first = await served.agent.call_tool("browser_navigate", {"url": url})
        second = await served.agent_no_app.call_tool("browser_navigate", {"url": url})
        assert volatile(first) == volatile(second)
        assert not first.is_error
        # The app-only tools are no one else's: to a client without the extension they do not exist.
        unknown = await served.agent.call_tool(CLICK_TOOL, {"x": 1, "y": 1})
        assert unknown.is_error and (unknown.structured_content or {})["error_type"] == "invalid_params"

    served.run(scenario())


def test_a_click_on_the_view_needs_the_grant_a_click_needs(served: Served) -> None:
    """A server with the default grant: the host's click is refused as the agent's would be."""
    plain = served.session.serve_mcp()

    async def scenario() -> None:
        async with client(plain.url, plain.token, "test-host", renders_apps=True) as host:
            assert CLICK_TOOL in {t.name for t in (await host.list_tools()).tools}
            refused = await host.call_tool(CLICK_TOOL, {"x": 1, "y": 1})
            envelope = refused.structured_content or {}
            assert refused.is_error and envelope["error_type"] == "invalid_params", envelope
            assert "'vision' was not granted" in envelope["message"]
            assert envelope["operation"]["outcome"] == "not_started"
            bad = await host.call_tool(DECIDE_TOOL, {"id": "one", "approve": True})
            assert bad.is_error

    try:
        served.run(scenario())
    finally:
        plain.stop()


BAD_APP_INPUT: list[tuple[str, dict[str, Any], str]] = [
    (STATE_TOOL, {"after": "3"}, "parameter 'after': Input should be a valid integer"),
    (STATE_TOOL, {"frame": -1}, "parameter 'frame': Input should be greater than or equal to 0"),
    (STATE_TOOL, {"since": 1}, "unknown parameter 'since' (allowed: after, frame)"),
    (CLICK_TOOL, {"x": 10}, "missing required parameter 'y'"),
    (CLICK_TOOL, {"x": "10", "y": 5}, "parameter 'x': Input should be a valid number"),
    (DECIDE_TOOL, {"id": "one", "approve": True}, "parameter 'id': Input should be a valid integer"),
    (DECIDE_TOOL, {"id": 1, "approve": "yes"}, "parameter 'approve': Input should be a valid boolean"),
    (DECIDE_TOOL, {"id": 0, "approve": True}, "parameter 'id': Input should be greater than or equal to 1"),
    (DECIDE_TOOL, {"id": 10_000, "approve": True}, "No pending approval 10000: it was answered already"),
]
"""Bad input to each app-only tool, and the words its refusal must hold."""


def test_the_app_tools_refuse_bad_input_as_every_tool_does(served: Served) -> None:
    async def scenario() -> tuple[types.CallToolResult, list[types.CallToolResult]]:
        tool = await served.host.call_tool("browser_snapshot", {"depth": "3"})  # a registry tool's bad input
        return tool, [await served.host.call_tool(name, args) for name, args, _ in BAD_APP_INPUT]

    before = len(served.session.history)
    tool, refused = served.run(scenario())
    baseline = tool.structured_content or {}
    assert tool.is_error and baseline["error_type"] == "invalid_params", baseline
    for (name, args, words), result in zip(BAD_APP_INPUT, refused, strict=True):
        envelope = result.structured_content or {}
        assert result.is_error is True and set(envelope) == set(baseline), (name, args, envelope)
        assert (envelope["status"], envelope["error_type"]) == ("error", "invalid_params"), envelope
        operation = envelope["operation"]
        assert (operation["tool"], operation["outcome"], operation["retry"]) == (
            name,
            "not_started",
            "after_correction",
        )
        assert set(operation) == set(baseline["operation"]), operation
        assert words in envelope["message"] and envelope["message"].startswith(
            f"Invalid arguments for {name}: " if not words.startswith("No pending") else "No pending"
        ), envelope["message"]
        assert isinstance(result.content[-1], types.TextContent) and words in result.content[-1].text
    # Refused before anything ran: no click, no decision (only the registry tool's call is logged).
    assert [record.tool for record in list(served.session.history)[before:]] == ["browser_snapshot"]


def frame_state(served: Served) -> dict[str, Any]:
    """What the app shows: its frame's seq and source, its URL line, log rows and approval rows."""
    return served.run(
        served.page.frame_locator("#app")
        .locator("body")
        .evaluate(
            """body => ({
                seq: body.querySelector('#view').dataset.seq || null,
                src: body.querySelector('#view').src,
                url: body.querySelector('#url').textContent,
                calls: [...body.querySelectorAll('#log tr')].map(r => [...r.cells].map(c => c.textContent)),
                pending: [...body.querySelectorAll('.pending')].map(r => r.textContent),
                decided: [...body.querySelectorAll('.decided')].map(r => r.textContent),
            })"""
        )
    )


def app_calls(session: CheckedSession) -> list[Any]:
    """The envelopes of the calls the app made (the host's client, as the app), oldest first."""
    return [record.envelope for record in session.history if record.caller == "agent:test-host/app"]


def test_the_app_follows_the_agent_and_acts_on_the_page(served: Served) -> None:
    agent, session = served.agent, served.session
    served.run(agent.call_tool("browser_navigate", {"url": served.demo.url_for("/index.html")}))
    served.open_host()
    first = wait_until(lambda: (s := frame_state(served))["seq"] and "index.html" in s["url"] and s, timeout=30)
    served.run(agent.call_tool("browser_navigate", {"url": served.demo.url_for("/form.html")}))
    after = wait_until(lambda: "form.html" in (s := frame_state(served))["url"] and s, timeout=30)
    assert after["src"] != first["src"] and int(after["seq"]) > int(first["seq"])
    assert ["agent:test-agent", "browser_navigate", "success"] in after["calls"]

    # A click on the view is a click on the page, at the same point.
    served.run(agent.call_tool("browser_navigate", {"url": served.demo.url_for("/index.html")}))
    wait_until(lambda: "index.html" in frame_state(served)["url"], timeout=30)
    box = ok(session.evaluate("(() => { const r = document.querySelector('[data-item=Apple]').getBoundingClientRect();"
                              " return [r.x + r.width / 2, r.y + r.height / 2, innerWidth]; })()"))["result"]  # fmt: skip
    view = served.page.frame_locator("#app").locator("#view")
    scale = served.run(view.evaluate("img => img.getBoundingClientRect().width")) / box[2]
    earlier = len(app_calls(session))
    served.run(view.click(position={"x": box[0] * scale, "y": box[1] * scale}))
    wait_until(lambda: "Apple" in ok(session.evaluate("document.querySelector('#cart').textContent"))["result"],
               timeout=30)  # fmt: skip
    # The call ended in success, and the log shows it, newest first (an earlier test's refused click by
    # the app may be below it).
    by_app = wait_until(lambda: len(found := app_calls(session)) > earlier and found)
    assert by_app[-1].ok and by_app[-1].operation.tool == "browser_mouse_click_xy", by_app[-1].to_json()
    success = ["agent:test-host/app", "browser_mouse_click_xy", "success"]
    wait_until(
        lambda: [r for r in frame_state(served)["calls"] if r[0] == success[0]][:1] == [success],
        timeout=30,
        message=lambda: f"the app's log shows {frame_state(served)['calls']}",
    )


def held_call(served: Served, expression: str) -> asyncio.Future[types.CallToolResult]:
    """An agent's consequential call, waiting for approval (its result when it is answered)."""
    call = served.agent.call_tool("browser_evaluate", {"expression": expression})
    return asyncio.run_coroutine_threadsafe(call, served.loop)  # type: ignore[return-value]


@pytest.mark.parametrize("answer", ["Approve", "Deny"])
def test_an_answer_in_the_app_decides_the_held_call_once(served: Served, answer: str) -> None:
    served.open_host()
    expression = f"document.title + ' {answer}'"
    before, answered = len(served.session.history), len(frame_state(served)["decided"])
    pending = held_call(served, expression)
    row = wait_until(lambda: frame_state(served)["pending"], timeout=30)
    assert "agent:test-agent wants browser_evaluate" in row[0]
    if answer == "Approve":  # the picture in docs/app.md (copied from tests/artifacts by hand)
        shot = ROOT / "tests" / "artifacts" / "mcp-app.png"
        shot.parent.mkdir(parents=True, exist_ok=True)
        served.run(served.page.screenshot(path=str(shot)))
    served.run(served.page.frame_locator("#app").locator(f".pending button:text-is('{answer}')").click())
    result = pending.result(60)  # type: ignore[arg-type]
    envelope = result.structured_content or {}
    records = [r for r in list(served.session.history)[before:] if r.args.get("expression") == expression]
    assert len(records) == 1  # recorded once
    if answer == "Approve":
        assert not result.is_error and envelope["status"] == "success"
        assert records[0].envelope.ok
    else:
        assert result.is_error
        assert records[0].envelope.error_type == "approval_denied"
        assert records[0].envelope.operation.outcome == "not_started"
    verdict = "approved" if answer == "Approve" else "denied"
    decided = wait_until(lambda: len(d := frame_state(served)["decided"]) > answered and d, timeout=30)
    assert decided[0].endswith(f"{verdict} (app)")
    # The notebook's panel, asked the same, shows the app's decision; its row is gone.
    assert served.panel.decided[-1] == (row[0].removesuffix("ApproveDeny"), f"{verdict} in the app")
    assert not served.panel.pending
    # Answered: a second answer to it is refused, and nothing runs again.
    again = served.run(served.host.call_tool(DECIDE_TOOL, {"id": 10_000, "approve": True}))
    assert again.is_error
    assert not frame_state(served)["pending"]


def test_the_notebook_panel_answering_first_decides_and_the_app_shows_it(served: Served) -> None:
    served.open_host()
    answered = len(frame_state(served)["decided"])
    pending = held_call(served, "document.title + ' panel'")
    wait_until(lambda: frame_state(served)["pending"], timeout=30)
    served.panel.next_request().deny()
    result = pending.result(60)  # type: ignore[arg-type]
    assert result.is_error and "denied" in str(result.content[-1])
    decided = wait_until(lambda: len(d := frame_state(served)["decided"]) > answered and d, timeout=30)
    assert decided[0].endswith("denied (notebook)")
    assert not frame_state(served)["pending"]
