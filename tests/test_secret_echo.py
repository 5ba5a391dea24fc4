"""Secrets by value: a hostile page repeats what it was given, and nothing hands it back.

A page on loopback echoes a typed password in its title, an alert, the console, its DOM and a
link; another logs ``document.cookie``. Whoever typed it (the notebook, an agent), no result, call
log entry, history entry or export holds it afterwards, in any escaped form, unless the caller may
see secrets (the ``secrets`` grant, ``Session(reveal_secrets=True)``). Then the other secret
paths: secret JSON fields in every body mode, secret query parameters in URLs, secret headers,
password fields in closed shadow roots in screenshots.
"""

from __future__ import annotations

import asyncio
import base64
import html
import io
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import httpx2
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import error, ok, ref_for
from tests.helpers import wait_until
from webmcp_nb import Envelope, Session
from webmcp_nb.core.render.renderer import render_html, render_text

pytestmark = pytest.mark.playwright_sensitive  # see tests/test_compat_scope.py

PASSWORD = 'Hunter2 "Open&Sesame" <now>'  # its JSON, URL and HTML forms all differ
COOKIE = "s3ss10n-c00kie-VALUE-829173"
SHORT_COOKIE = "1"
TOKEN = "tok-AbCdEf-123456"
QUERY_PASSWORD = "qpw-987654"
AGENT = types.Implementation(name="echo-reader", version="1")

ECHO_PAGE = """<!doctype html><title>Echo</title>
<h1>Sign in</h1>
<label>User <input id="user"></label>
<label>Password <input id="pw" type="password"></label>
<label>Note <input id="note"></label>
<p id="out">nothing yet</p>
<a id="link" href="/echo">link</a>
<script>
const pw = document.querySelector('#pw');
function echo() {
  const value = pw.value;
  document.title = 'pw:' + value;
  console.log('typed ' + JSON.stringify(value));
  console.log('encoded ' + encodeURIComponent(value));
  document.querySelector('#out').textContent = 'You typed: ' + value;
  document.querySelector('#link').href = '/echo?q=' + encodeURIComponent(value);
}
pw.addEventListener('input', echo);
pw.addEventListener('keydown', (e) => { if (e.key === 'Enter') alert('Your password is ' + pw.value); });
</script>"""

COOKIE_PAGE = """<!doctype html><title>Cookies</title><p>cookies</p>
<script>console.log('cookies: ' + document.cookie);</script>"""

CLOSED_SHADOW_PAGE = """<!doctype html><title>Closed</title>
<style>body { margin: 0; font: 16px sans-serif; }</style>
<div id="host"></div>
<script>
const root = document.querySelector('#host').attachShadow({mode: 'closed'});
root.innerHTML = '<input type="password" aria-label="Closed secret" style="width: 300px; height: 40px;' +
  'font-size: 30px; border: 0; background: white; outline: none">';
window.fillClosed = (text) => { root.querySelector('input').value = text; };
window.closedStyle = () => root.querySelector('input').getAttribute('style');
</script>"""

CREDENTIALS = {
    "user": "ann",
    "Cookie": "sid=abc",
    "set_cookie": "sid=abc",
    "Authorization": "Bearer xyz",
    "proxyAuthorization": "Basic xyz",
    "sessionid": "S-1",
    "Session": "S-2",
    "SID": "S-3",
    "pwd": "p1",
    "passwd": "p2",
    "auth": "a1",
    "credentials": {"user": "u"},
    "credential": "c1",
    "X-Api-Key": "k1",
}
SECRET_KEYS = [key for key in CREDENTIALS if key != "user"]


class Hostile(BaseHTTPRequestHandler):
    """The hostile pages, a cookie-setting page and an API whose answers carry credentials."""

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        headers: dict[str, str] = {}
        cookies: list[str] = []
        media = "text/html; charset=utf-8"
        if path == "/echo":
            body = ECHO_PAGE
            headers["X-Auth-Token"] = "xauth-header-value"
            headers["WWW-Authenticate"] = 'Bearer realm="echo", error="expired"'
        elif path == "/cookie":
            body = COOKIE_PAGE
            cookies = [f"sid={COOKIE}; Path=/", f"flag={SHORT_COOKIE}; Path=/"]
        elif path == "/closed":
            body = CLOSED_SHADOW_PAGE
        elif path == "/api/creds":
            body, media = json.dumps(CREDENTIALS), "application/json"
        elif path == "/api/creds.bin":
            body, media = json.dumps(CREDENTIALS), "application/octet-stream"
        else:
            self.send_error(404)
            return
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", media)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        for cookie in cookies:
            self.send_header("Set-Cookie", cookie)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def web() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def forms(secret: str) -> list[str]:
    """`secret` as a page may repeat it: raw, JSON-, URL- and HTML-escaped."""
    return sorted({secret, json.dumps(secret)[1:-1], quote(secret, safe=""), quote_plus(secret), html.escape(secret)})


def leaks(text: str, *secrets: str) -> list[str]:
    return [form for secret in secrets for form in forms(secret) if form in text]


def dump(envelope: Envelope) -> str:
    return "\n".join((envelope.to_json(), render_text(envelope), render_html(envelope), repr(envelope)))


def recorded(session: Session, since: int = 0) -> str:
    """Everything the history holds since `since`: arguments, envelopes and their renderings."""
    return "\n".join(json.dumps(record.args) + "\n" + dump(record.envelope) for record in session.history[since:])


def client(handle: Any) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {handle.token}"}, timeout=120)
    return Client(streamable_http_client(handle.url, http_client=http), client_info=AGENT, cache=None)


def agent_calls(handle: Any, *calls: tuple[str, dict[str, Any]]) -> list[types.CallToolResult]:
    async def run() -> list[types.CallToolResult]:
        async with client(handle) as agent:
            return [await agent.call_tool(name, args) for name, args in calls]

    return asyncio.run(run())


def type_password(session: Session, web: str) -> str:
    """Open the echo page and type the password into its field (the page echoes it everywhere);
    the field's ref."""
    ok(session.navigate(f"{web}/echo"))
    field = ref_for(ok(session.snapshot())["snapshot"], 'textbox "Password"')
    ok(session.type(field, PASSWORD))
    return field


READERS: list[tuple[str, dict[str, Any]]] = [
    ("browser_snapshot", {}),
    ("browser_tabs", {}),
    ("browser_console", {}),
    ("browser_list_instances", {}),
    ("browser_verify_text_visible", {"text": "You typed"}),
    ("browser_evaluate", {"expression": "() => document.title"}),
]


# --------------------------------------------------------------------------- #
# a typed password, repeated by the page
# --------------------------------------------------------------------------- #
def test_a_page_repeating_a_typed_password_hands_it_to_no_reader(fresh_session: Any, web: str) -> None:
    session = fresh_session()
    type_password(session, web)
    # The page holds it and repeats it (title, console, DOM, a link), as the raw reveal shows.
    shown = {name: session.call(name, **args) for name, args in READERS}
    for name, envelope in shown.items():
        ok(envelope)
        assert leaks(dump(envelope), PASSWORD) == [], name
    assert ok(shown["browser_tabs"])["tabs"][0]["title"] == "pw:[redacted]"
    assert "You typed: [redacted]" in ok(shown["browser_snapshot"])["snapshot"]
    saved = Path(ok(session.snapshot(save=True))["saved"]["path"]).read_text()  # a file agents can read
    assert "You typed: [redacted]" in saved and leaks(saved, PASSWORD) == []
    texts = [entry["text"] for entry in ok(shown["browser_console"])["entries"]]
    assert texts[-2:] == ['typed "[redacted]"', "encoded [redacted]"]
    # Enter makes the page alert it: the press's modal state, then the dialog's own result.
    pressed = ok(session.press_key("Enter"))
    assert pressed["modal_state"]["message"] == "Your password is [redacted]"
    handled = ok(session.handle_dialog(True))
    assert handled["message"] == "Your password is [redacted]"
    assert leaks(recorded(session), PASSWORD) == []
    # Failure text: a verification that quotes the page's text.
    message = error(session.verify_text_visible("nothing like this"), "verification_failed")
    assert leaks(message, PASSWORD) == []
    out = ref_for(ok(session.snapshot())["snapshot"], "paragraph")
    failed = error(session.verify_list_visible(out, ["absent item"]), "verification_failed")
    assert "You typed: [redacted]" in failed and leaks(failed, PASSWORD) == []
    # The notebook's own displays show it only when asked to.
    session.reveal_secrets = True
    assert ok(session.tabs())["tabs"][0]["title"] == f"pw:{PASSWORD}"
    assert leaks(recorded(session), PASSWORD) == []  # never in the history, even then
    session.reveal_secrets = False
    assert ok(session.tabs())["tabs"][0]["title"] == "pw:[redacted]"


def test_session_reveal_secrets_is_an_option(fresh_session: Any, web: str) -> None:
    session = fresh_session(reveal_secrets=True)
    assert session.reveal_secrets is True
    type_password(session, web)
    assert ok(session.evaluate("() => document.title"))["result"] == f"pw:{PASSWORD}"
    assert leaks(recorded(session), PASSWORD) == []


def test_an_agent_reads_nothing_the_notebook_typed(fresh_session: Any, web: str) -> None:
    session = fresh_session()
    type_password(session, web)
    plain, granted = session.serve_mcp(caps=["js", "testing"]), session.serve_mcp(caps=["js", "testing", "secrets"])
    try:
        results = agent_calls(plain, *READERS, ("browser_press_key", {"key": "Enter"}))
        results += agent_calls(plain, ("browser_handle_dialog", {"accept": True}))
        revealed = agent_calls(granted, ("browser_tabs", {}))
    finally:
        plain.stop()
        granted.stop()
    for (name, _), result in zip(
        [*READERS, ("browser_press_key", {}), ("browser_handle_dialog", {})], results, strict=True
    ):
        assert not result.is_error, (name, result)
        assert leaks(result.model_dump_json(), PASSWORD) == [], name
    assert results[-2].structured_content["data"]["modal_state"]["message"] == "Your password is [redacted]"
    assert results[-1].structured_content["data"]["message"] == "Your password is [redacted]"
    # The operator's grant is the way for an agent to see it.
    assert revealed[0].structured_content["data"]["tabs"][0]["title"] == f"pw:{PASSWORD}"
    assert leaks(recorded(session), PASSWORD) == []


def test_an_approval_prompt_shows_no_known_secret(fresh_session: Any, web: str) -> None:
    """The prompt is shown on the notebook's (shared) screen: an agent's arguments that repeat a
    known secret, and a page URL that carries one, reach the approver scrubbed."""
    session = fresh_session()
    type_password(session, web)
    ok(session.click(ref_for(ok(session.snapshot())["snapshot"], 'link "link"')))  # the page put it in its URL
    asked: list[Any] = []

    async def approver(request: Any) -> str | None:
        asked.append(request)
        return None

    server = session.serve_mcp(caps=["js"], approve="all", approver=approver)
    try:
        (result,) = agent_calls(server, ("browser_evaluate", {"expression": f"() => {json.dumps(PASSWORD)}.length"}))
    finally:
        server.stop()
    assert not result.is_error, result
    assert len(asked) == 1 and "?q=" in (asked[0].url or "")
    shown = json.dumps(asked[0].args) + " " + (asked[0].url or "")
    assert leaks(shown, PASSWORD) == [] and "[redacted]" in shown


def test_a_page_tool_repeating_a_known_secret_is_mirrored_without_it(fresh_session: Any, web: str) -> None:
    """A page may put what it was given into its own tools' names and descriptions: agents list them
    scrubbed, unless the operator granted `secrets`."""
    session = fresh_session()
    type_password(session, web)
    ok(
        session.evaluate(
            """() => document.modelContext.registerTool({name: 'leak', description: 'pw ' +
            document.querySelector('#pw').value, inputSchema: {type: 'object', properties: {}},
            execute: async () => 'x'})"""
        )
    )
    wait_until(lambda: "leak" in [tool["name"] for tool in ok(session.call("browser_webmcp_list"))["tools"]])
    plain, granted = session.serve_mcp(), session.serve_mcp(caps=["secrets"])

    async def listed(handle: Any) -> dict[str, Any]:
        async with client(handle) as agent:
            for _ in range(100):  # the mirror appears once the server has seen the page's tool
                tools = {tool.name: tool for tool in (await agent.list_tools()).tools}
                if "webmcp_leak" in tools:
                    return tools
                await asyncio.sleep(0.1)
        raise AssertionError("webmcp_leak was never listed")

    try:
        hidden, shown = asyncio.run(listed(plain))["webmcp_leak"], asyncio.run(listed(granted))["webmcp_leak"]
    finally:
        plain.stop()
        granted.stop()
    assert leaks(hidden.model_dump_json(), PASSWORD) == [] and "pw [redacted]" in (hidden.description or "")
    assert PASSWORD in (shown.description or "")


@pytest.mark.browser
def test_an_agent_over_stdio_does_not_read_back_what_it_typed(web: str) -> None:
    """`webmcp-nb serve --transport stdio` (a session of its own, as its own process): the agent types
    the password itself, the page repeats it, and no later result hands it back."""
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "webmcp_nb.cli", "serve", "--transport", "stdio"], env=dict(os.environ)
    )

    async def scenario() -> list[types.CallToolResult]:
        async with Client(server, client_info=AGENT) as agent:
            await agent.call_tool("browser_navigate", {"url": f"{web}/echo"})
            snapshot = await agent.call_tool("browser_snapshot", {})
            field = ref_for(snapshot.structured_content["data"]["snapshot"], 'textbox "Password"')  # type: ignore[index]
            typed = await agent.call_tool("browser_type", {"ref": field, "text": PASSWORD})
            reads = [
                (name, args)
                for name, args in READERS
                if name not in ("browser_evaluate", "browser_verify_text_visible")
            ]
            return [typed, *[await agent.call_tool(name, args) for name, args in reads]]

    results = asyncio.run(scenario())
    assert all(not result.is_error for result in results), results
    assert leaks("\n".join(result.model_dump_json() for result in results), PASSWORD) == []
    assert results[2].structured_content["data"]["tabs"][0]["title"] == "pw:[redacted]"  # type: ignore[index]


def test_an_export_holds_the_password_zero_times(fresh_session: Any, web: str, tmp_path: Path) -> None:
    session = fresh_session()
    field = type_password(session, web)
    handle = session.serve_mcp()
    try:
        agent_calls(handle, ("browser_snapshot", {}), ("browser_tabs", {}), ("browser_console", {}))
    finally:
        handle.stop()
    ok(session.press_key("Enter"))
    ok(session.handle_dialog(True))
    ok(session.verify_value(field, PASSWORD))
    ok(session.console())
    ok(session.snapshot())
    notebook = session.export_notebook(tmp_path / "echo.ipynb").read_text()
    script = session.export_script(tmp_path / "echo.py").read_text()
    assert leaks(notebook, PASSWORD) == [] and leaks(script, PASSWORD) == []
    assert "pw:[redacted]" in notebook  # the page's echo is there, scrubbed


# --------------------------------------------------------------------------- #
# browser_verify_value and browser_keyboard_type on a secret field
# --------------------------------------------------------------------------- #
def test_verify_value_and_keyboard_type_on_a_password_field_are_redacted(fresh_session: Any, web: str) -> None:
    session = fresh_session()
    field = type_password(session, web)
    since = len(session.history)
    assert ok(session.verify_value(field, PASSWORD))["verified"] == f"{field} has the expected value"
    assert session.history[-1].args["value"] == "[redacted]"
    error(session.verify_value(field, "another guess 123"), "verification_failed")
    assert session.history[-1].args["value"] == "[redacted]"
    # Typed key by key into the focused password field: recorded redacted, then known as a secret.
    ok(session.evaluate("() => { const pw = document.querySelector('#pw'); pw.value = ''; pw.focus(); }"))
    typed = "keyed-Secret-4711"
    ok(session.keyboard_type(typed))
    assert session.history[-1].args["text"] == "[redacted]"
    assert ok(session.tabs())["tabs"][0]["title"] == "pw:[redacted]"
    assert leaks(recorded(session, since), PASSWORD, typed, "another guess 123") == []
    # Into an ordinary field the text is recorded as given.
    ok(session.evaluate("() => document.querySelector('#note').focus()"))
    ok(session.keyboard_type("plain note"))
    assert session.history[-1].args["text"] == "plain note"
    user = ref_for(ok(session.snapshot())["snapshot"], 'textbox "User"')
    ok(session.type(user, "ann"))
    ok(session.verify_value(user, "ann"))
    assert session.history[-1].args["value"] == "ann"


# --------------------------------------------------------------------------- #
# cookies
# --------------------------------------------------------------------------- #
def test_a_page_logging_document_cookie_hands_no_cookie_to_an_agent(fresh_session: Any, web: str) -> None:
    session = fresh_session()
    handle = session.serve_mcp()
    try:
        results = agent_calls(
            handle,
            ("browser_navigate", {"url": f"{web}/cookie"}),
            ("browser_console", {}),
            ("browser_events_export", {"stream": "console"}),
            ("browser_events_export", {"stream": "network", "format": "har"}),
            ("browser_network", {}),
        )
    finally:
        handle.stop()
    for result in results:
        assert not result.is_error, result
        assert COOKIE not in result.model_dump_json()
    texts = [entry["text"] for entry in results[1].structured_content["data"]["entries"]]
    # A value too short to scrub safely (a flag) stays: see COOKIE_MIN_LENGTH.
    assert f"cookies: sid=[redacted]; flag={SHORT_COOKIE}" in texts
    console_export, har = (Path(result.structured_content["data"]["path"]).read_text() for result in results[2:4])
    assert COOKIE not in console_export and "cookies: sid=[redacted]" in console_export
    assert COOKIE not in har
    assert COOKIE not in recorded(session)
    # The page has it, as script the notebook runs with reveal_secrets shows.
    session.reveal_secrets = True
    assert COOKIE in ok(session.evaluate("() => document.cookie"))["result"]


def test_a_cookie_a_call_sets_is_scrubbed_from_that_calls_own_result(fresh_session: Any, web: str) -> None:
    """The closing cookie read goes out only once the tool is done, whatever carries it: the engine
    after the tool returns (evaluate, execute), or a native page tool's raw-text read."""
    by_script, by_tool, by_context = (f"{name}-c00kie-set-by-the-call-4471" for name in ("script", "tool", "ctx"))
    session = fresh_session()
    ok(session.navigate(f"{web}/cookie"))
    ok(
        session.evaluate(
            f"""() => document.modelContext.registerTool({{name: 'login', description: 'Logs in',
            inputSchema: {{type: 'object', properties: {{}}}},
            execute: () => {{ document.cookie = 'tool={by_tool}; path=/'; return 'token {by_tool}'; }}}})"""
        )
    )
    handle = session.serve_mcp(caps=["js", "code"])
    try:
        results = agent_calls(
            handle,
            (
                "browser_evaluate",
                {"expression": f"() => {{ document.cookie = 'js={by_script}; path=/'; return '{by_script}'; }}"},
            ),
            ("browser_webmcp_call", {"name": "login"}),
            (
                "browser_execute",
                {
                    "code": f"await context.add_cookies([{{'name': 'ctx', 'value': '{by_context}', 'url': page.url}}])\n'{by_context}'"
                },
            ),
        )
    finally:
        handle.stop()
    for result, value in zip(results, (by_script, by_tool, by_context), strict=True):
        assert not result.is_error, result
        dumped = result.model_dump_json()
        assert value not in dumped and "[redacted]" in dumped, dumped
    session.reveal_secrets = True  # the browser has all three
    assert {by_script, by_tool, by_context} <= {
        c["value"] for c in ok(session.call("browser_execute", code="await context.cookies()"))["value"]
    }


# --------------------------------------------------------------------------- #
# secret JSON fields, in every body mode
# --------------------------------------------------------------------------- #
def test_more_secret_json_fields_are_blocked_in_every_body_mode(fresh_session: Any, web: str) -> None:
    session = fresh_session()
    rendered: list[bytes] = []

    def renderer(data: bytes, media_type: str, operation: dict[str, Any], cancelled: Any) -> dict[str, Any]:
        rendered.append(data)
        return {"url": "https://files.example/x", "expires_at": int(time.time() * 1000) + 60_000}

    session.binary_renderer = renderer
    ok(session.navigate(f"{web}/echo"))
    as_json = ok(session.http("/api/creds"))
    assert as_json["body"] == {key: "[blocked]" if key in SECRET_KEYS else value for key, value in CREDENTIALS.items()}
    assert sorted(as_json["blocked_fields"]) == sorted(SECRET_KEYS)
    as_text = ok(session.http("/api/creds", response="text"))
    assert json.loads(as_text["body"])["Authorization"] == "[blocked]"
    binary = ok(session.http("/api/creds.bin", response="binary"))
    assert json.loads(binary["body"]["data"])["Cookie"] == "[blocked]"
    assert sorted(binary["blocked_fields"]) == sorted(SECRET_KEYS)
    json_as_binary = ok(session.http("/api/creds", response="binary"))
    assert json.loads(json_as_binary["body"]["data"])["sessionid"] == "[blocked]"
    download = ok(session.http("/api/creds.bin", response="binary", binary={"mode": "download"}))
    assert download["body"]["kind"] == "download" and sorted(download["blocked_fields"]) == sorted(SECRET_KEYS)
    assert [json.loads(data)["pwd"] for data in rendered] == ["[blocked]"]
    saved = ok(session.http("/api/creds.bin", response="binary", save=True))
    assert json.loads(Path(saved["saved"]["path"]).read_text())["X-Api-Key"] == "[blocked]"
    # browser_network_body: the page's own fetch of the octet-stream body, as text, base64 and saved.
    ok(session.evaluate("() => fetch('/api/creds.bin').then(r => r.text())"))
    entries = ok(session.network(url="/api/creds.bin"))["entries"]
    body = ok(session.network_body(entries[-1]["request_id"]))
    assert body["encoding"] == "base64"
    assert json.loads(base64.b64decode(body["body"]))["auth"] == "[blocked]"
    assert sorted(body["blocked_fields"]) == sorted(SECRET_KEYS)
    saved_body = ok(session.network_body(entries[-1]["request_id"], save=True))
    assert json.loads(Path(saved_body["path"]).read_text())["credential"] == "[blocked]"
    json_entry = ok(session.network(url="/api/creds"))["entries"][0]
    assert json.loads(ok(session.network_body(json_entry["request_id"]))["body"])["SID"] == "[blocked]"


# --------------------------------------------------------------------------- #
# URLs and headers
# --------------------------------------------------------------------------- #
def test_secret_query_parameters_leave_the_core_in_no_url(fresh_session: Any, web: str, tmp_path: Path) -> None:
    session = fresh_session()
    url = f"{web}/echo?access_token={TOKEN}&user=ann&Password={QUERY_PASSWORD}"
    handle = session.serve_mcp()
    try:
        results = agent_calls(
            handle,
            ("browser_navigate", {"url": url}),
            ("browser_tabs", {}),
            ("browser_network", {}),
            ("browser_events_export", {"stream": "network", "format": "har"}),
            ("browser_snapshot", {}),
        )
    finally:
        handle.stop()
    for result in results:
        assert not result.is_error, result
        assert leaks(result.model_dump_json(), TOKEN, QUERY_PASSWORD) == []
    redacted = f"{web}/echo?access_token=[redacted]&user=ann&Password=[redacted]"
    assert results[0].structured_content["data"]["url"] == redacted
    assert results[1].structured_content["data"]["tabs"][0]["url"] == redacted
    [document] = [e for e in results[2].structured_content["data"]["entries"] if e["resource_type"] == "document"]
    assert document["url"] == redacted
    har = json.loads(Path(results[3].structured_content["data"]["path"]).read_text())
    [request] = [e["request"] for e in har["log"]["entries"] if "/echo" in e["request"]["url"]]
    assert request["url"] == redacted
    assert request["queryString"] == [
        {"name": "access_token", "value": "[redacted]"},
        {"name": "user", "value": "ann"},
        {"name": "Password", "value": "[redacted]"},
    ]
    # The notebook's own call: its result, the call log and the export.
    ok(session.navigate(url.replace("user=ann", "user=bob")))
    assert session.overview()["instances"]["default"]["pages"][0]["url"].endswith("Password=[redacted]")
    assert leaks(recorded(session), TOKEN, QUERY_PASSWORD) == []
    exported = session.export_notebook(tmp_path / "urls.ipynb").read_text()
    assert leaks(exported, TOKEN, QUERY_PASSWORD) == []


def test_x_auth_and_www_authenticate_headers_are_redacted(fresh_session: Any, web: str) -> None:
    session = fresh_session()
    ok(session.navigate(f"{web}/echo"))
    [document] = [e for e in ok(session.network())["entries"] if e["resource_type"] == "document"]
    headers = {name.lower(): value for name, value in document["response_headers"].items()}
    assert headers["x-auth-token"] == "[redacted]" and headers["www-authenticate"] == "[redacted]"
    raw = ok(session.network(reveal_secrets=True))["entries"]
    [document] = [e for e in raw if e["resource_type"] == "document"]
    assert "xauth-header-value" in json.dumps(document["response_headers"])


# --------------------------------------------------------------------------- #
# closed shadow roots in screenshots
# --------------------------------------------------------------------------- #
MASK = (127, 127, 127)


def pixel(png: bytes, x: float, y: float) -> tuple[int, int, int]:
    from PIL import Image

    with Image.open(io.BytesIO(png)) as picture:
        return picture.convert("RGB").getpixel((int(x), int(y)))


def test_a_password_field_in_a_closed_shadow_root_is_painted_over(fresh_session: Any, web: str) -> None:
    session = fresh_session()
    ok(session.navigate(f"{web}/closed"))
    shots = []
    for text in ("a", "much-longer-password-here"):
        ok(session.evaluate(f"() => window.fillClosed({text!r})"))
        shot = ok(session.screenshot(original=True))
        scale = shot["width"] / 1280 if shot["width"] > 1280 else 1
        assert pixel(shot["image"], 150 * scale, 20 * scale) == MASK
        assert pixel(shot["image"], 10 * scale, 20 * scale) == MASK  # where the first dot would be
        shots.append(shot["image"])
    assert shots[0] == shots[1]  # the dots' count does not show
    full = ok(session.screenshot(full_page=True, original=True))
    assert pixel(full["image"], 10, 20) == MASK


def closed_field_masked(session: Any) -> bool:
    """Whether a viewport screenshot shows the closed shadow root's password field painted over."""
    ok(session.evaluate("() => window.fillClosed('hunter2-hunter2')"))
    shot = ok(session.screenshot(original=True))
    scale = shot["width"] / 1280 if shot["width"] > 1280 else 1
    return pixel(shot["image"], 10 * scale, 20 * scale) == MASK


def test_closed_shadow_fields_stay_painted_over_across_documents_and_a_crashed_renderer(
    fresh_session: Any, web: str
) -> None:
    """The search for them keeps a DevTools session per tab: it must survive what a tab goes through."""
    from tests.test_faults import renderer_pids, tab_status

    session = fresh_session()
    page_url = f"{web}/closed"
    ok(session.navigate(page_url))
    assert closed_field_masked(session)
    ok(session.navigate(f"{web}/cookie"))
    ok(session.navigate(f"{web}/closed"))
    assert closed_field_masked(session)  # a new document
    page = ok(session.tabs())["current_page_id"]
    for pid in renderer_pids(session):
        os.kill(pid, signal.SIGKILL)
    wait_until(lambda: tab_status(session, page) == "crashed", 10.0, message="the crash to be seen")
    ok(session.reload())
    assert closed_field_masked(session)  # a new renderer
    from webmcp_nb.core.guard import closed_shadow

    [kept] = [  # this tab's, detached under it, as another client could
        opening for tab, opening in closed_shadow._TAB_SESSIONS.items() if tab.url == page_url and not tab.is_closed()
    ]
    session.runtime.run(kept.result().detach())
    assert closed_field_masked(session)  # a new session, in the same call
    style = ok(session.evaluate("() => window.closedStyle()"))["result"]
    assert "rgb(127, 127, 127)" not in style and "transparent" not in style  # given back after each capture


def test_a_refused_screenshot_leaves_closed_shadow_fields_as_they_were(fresh_session: Any, web: str) -> None:
    """The painting goes out beside the budget check: a refusal must undo it before it answers."""
    session = fresh_session(max_capture_side=500)
    ok(session.navigate(f"{web}/closed"))
    ok(session.evaluate("() => window.fillClosed('hunter2-hunter2')"))
    before = ok(session.evaluate("() => window.closedStyle()"))["result"]
    error(session.screenshot(), "invalid_params", "not_started")
    time.sleep(0.5)  # a painting left running after the answer would be done by now
    assert ok(session.evaluate("() => window.closedStyle()"))["result"] == before


# --------------------------------------------------------------------------- #
# the rules themselves
# --------------------------------------------------------------------------- #
def test_what_counts_as_a_known_secret_and_a_secret_url_part() -> None:
    from webmcp_nb.core.guard.known_secrets import COOKIE_MIN_LENGTH, KnownSecrets, redact_urls

    known = KnownSecrets()
    known.add(["ab", PASSWORD])  # a 2-character typed value is kept but not searched for
    known.set_cookies("i1", ["1", "true", "en-US", "x" * (COOKIE_MIN_LENGTH - 1), "a%3Dlong-cookie-value"])
    scrubbed = known.scrub(
        {
            "ab": "ab true 1 en-US xxxxxxx",  # keys stay; short values stay
            "list": [json.dumps(PASSWORD), html.escape(PASSWORD), quote_plus(PASSWORD)],
            "cookie": "a=long-cookie-value and a%3Dlong-cookie-value",  # the cookie value, URL-decoded too
            "n": 5,
        }
    )
    assert scrubbed == {
        "ab": "ab true 1 en-US xxxxxxx",
        "list": ['"[redacted]"', "[redacted]", "[redacted]"],
        "cookie": "[redacted] and [redacted]",
        "n": 5,
    }
    assert redact_urls("see https://u:pw@h/p?q=1&api-key=K&Session_Id=S&apiKey=A&key=kept&auth=") == (
        "see https://u:[redacted]@h/p?q=1&api-key=[redacted]&Session_Id=[redacted]&apiKey=[redacted]&key=kept&auth="
    )
