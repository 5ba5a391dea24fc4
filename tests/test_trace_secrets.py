"""A Playwright trace is an export: it never carries secrets unless they are revealed.

Recorded raw, a trace.zip holds the text typed into a password or one-time-code field (``fill``'s
parameters and log, the value read back, the raw aria snapshot, every DOM snapshot's input value,
also one typed before the trace started), secret request headers and cookies (``trace.network``)
and the page source that sends the token (``resources/``). `browser_trace` stop scrubs them all.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CheckedSession, error, ok, ref_for
from tests.test_mirror import agent
from webmcp_nb.core.browsers.aria import find_ref
from webmcp_nb.core.evidence.trace_scrub import scrub_trace
from webmcp_nb.core.guard.redaction import REDACTED
from webmcp_nb.demo import DemoServer

pytestmark = pytest.mark.playwright_sensitive  # see tests/test_compat_scope.py

TYPED = "hunter2-Sesame"
CODE = "424242"
BEFORE = "typed-before-the-trace"
COOKIE = "cookie-value-Zq81"
TOKEN = "Bearer demo-secret-token"  # evidence.html sends it in Authorization, and "demo-key" in X-Api-Key
SECRET_FIELDS = ("tok-123", "key-456", "ref-789")  # values of /api/secrets' secret JSON fields
SECRETS = (TYPED, CODE, BEFORE, COOKIE, TOKEN, "demo-secret-token", "demo-key", *SECRET_FIELDS)


def record_trace(s: CheckedSession, demo: DemoServer, **stop: Any) -> dict[str, Any]:
    """Type secrets (one before the trace), send a cookie and secret headers; stop with `stop`."""
    ok(s.navigate(demo.url_for("form.html")))
    ok(s.type(ref_for(ok(s.snapshot())["snapshot"], 'textbox "Password"'), BEFORE))
    ok(s.evaluate(f"() => {{ document.cookie = 'sid={COOKIE}; path=/'; }}"))
    ok(s.call("browser_trace", action="start"))
    ok(s.click(ref_for(ok(s.snapshot())["snapshot"], 'textbox "Email"')))  # a snapshot with BEFORE in the field
    yaml = ok(s.snapshot())["snapshot"]
    ok(s.type(ref_for(yaml, 'textbox "Password"'), TYPED))
    ok(s.fill_form([{"ref": ref_for(yaml, 'textbox "One-time code"'), "type": "textbox", "value": CODE}]))
    ok(s.snapshot())
    ok(s.navigate(demo.url_for("evidence.html")))
    ok(s.click(find_ref(ok(s.snapshot())["snapshot"], "Make requests", role="button")))
    ok(s.wait_for(text="Requests done"))
    ok(s.evaluate("() => fetch('/api/secrets').then(response => response.text()).then(text => text.length)"))
    return ok(s.call("browser_trace", action="stop", **stop))


def contents(path: str) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def found_in(entries: dict[str, bytes], secret: str) -> list[str]:
    """The entries holding `secret`: as UTF-8 bytes, or in text once JSON escapes are undone."""
    escaped = json.dumps(secret)[1:-1].encode()
    return [name for name, data in entries.items() if secret.encode() in data or escaped in data]


def events(entries: dict[str, bytes], name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in entries[name].decode().splitlines() if line]


@pytest.fixture(scope="module")
def traces(demo: DemoServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """A scrubbed trace and a revealed one, each of its own session (so its own cookie jar), kept in
    an artifacts directory of the test's (a temporary one goes with its session)."""
    recorded = {}
    for reveal in (False, True):
        with CheckedSession(artifacts_dir=str(tmp_path_factory.mktemp("traces"))) as s:
            recorded["revealed" if reveal else "scrubbed"] = record_trace(s, demo, reveal_secrets=reveal)
    return recorded


def test_a_stopped_trace_holds_no_secret_in_any_entry(traces: dict[str, dict[str, Any]]) -> None:
    stopped = traces["scrubbed"]
    assert stopped["secrets_revealed"] is False and stopped["size_bytes"] == Path(stopped["path"]).stat().st_size
    entries = contents(stopped["path"])
    for secret in SECRETS:
        assert found_in(entries, secret) == [], secret
    # Still a trace: the same kinds of entries, every JSON line parses, the actions are there.
    names = set(entries)
    assert {"trace.trace", "trace.network", "trace.stacks"} <= names
    assert any(name.startswith("resources/") for name in names) and any(name.endswith(".jpeg") for name in names)
    trace, network = events(entries, "trace.trace"), events(entries, "trace.network")
    assert trace[0]["type"] == "context-options"
    fills = [e["params"]["value"] for e in trace if e.get("type") == "before" and e.get("method") == "fill"]
    assert fills == [REDACTED, REDACTED]
    aria = [e["result"]["snapshot"] for e in trace if e.get("type") == "after" and "snapshot" in e.get("result", {})]
    assert any(re.search(r'textbox "Password" \[ref=\w+\]: \[redacted\]', yaml) for yaml in aria)
    # The marker stands where each secret was: headers, cookies, snapshot values, page source.
    headers = {
        (h["name"], h["value"])
        for e in network
        for h in e["snapshot"]["request"]["headers"]
        if "status?code=201" in e["snapshot"]["request"]["url"]
    }
    assert {("Authorization", REDACTED), ("X-Api-Key", REDACTED), ("Cookie", REDACTED)} <= headers
    cookies = [c for e in network for c in e["snapshot"]["request"]["cookies"]]
    assert cookies and all(c == {"name": "sid", "value": REDACTED} for c in cookies)
    assert b'"__playwright_value_":"[redacted]","id":"password"' in entries["trace.trace"]
    assert any(b"[redacted]" in data for name, data in entries.items() if name.startswith("resources/"))
    [body] = [json.loads(data) for name, data in entries.items() if b'"password_hint"' in data]
    assert body["Access-Token"] == "[blocked]" and body["profile"] == {"apiKey": "[blocked]", "theme": "dark"}


def test_reveal_secrets_keeps_the_trace_raw_and_the_scrub_is_what_removes_them(
    traces: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    stopped = traces["revealed"]
    assert stopped["secrets_revealed"] is True
    raw = contents(stopped["path"])
    assert "trace.trace" in found_in(raw, TYPED) and "trace.trace" in found_in(raw, CODE)
    assert "trace.trace" in found_in(raw, BEFORE)  # the DOM snapshot of a field filled before the start
    assert "trace.network" in found_in(raw, COOKIE) and "trace.network" in found_in(raw, TOKEN)
    assert any(name.startswith("resources/") for name in found_in(raw, "demo-secret-token"))
    assert all(found_in(raw, value) for value in SECRET_FIELDS)
    # Scrubbed by structure alone (no typed texts given): secret headers, cookies, secret fields'
    # values in DOM snapshots, and those values wherever else they appear.
    copy = tmp_path / "trace.zip"
    shutil.copy(stopped["path"], copy)
    scrub_trace(copy, ())
    scrubbed = contents(str(copy))
    for secret in SECRETS:
        assert found_in(scrubbed, secret) == [], secret
    assert list(scrubbed) == list(raw)  # the same entries, in the same order
    assert all(scrubbed[name] == raw[name] for name in raw if name.endswith(".jpeg"))
    for name in ("trace.trace", "trace.network"):
        assert len(events(scrubbed, name)) == len(events(raw, name))


def test_playwright_trace_viewer_opens_the_scrubbed_trace(traces: dict[str, dict[str, Any]]) -> None:
    command = [sys.executable, "-m", "playwright", "show-trace", "--host", "127.0.0.1", "--port", "0"]
    viewer = subprocess.Popen(  # its own process group: `python -m playwright` runs the viewer in a child
        [*command, traces["scrubbed"]["path"]], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert viewer.stdout is not None
        url = next((line for line in viewer.stdout if line.startswith("Listening on ")), "").split()[-1:]
        assert url and url[0].startswith("http://127.0.0.1:"), url
        with CheckedSession() as s:
            ok(s.navigate(url[0]))
            ok(s.wait_for(text='Fill "[redacted]"', time_s=30))
            actions = ok(s.snapshot())["snapshot"]
    finally:
        os.killpg(viewer.pid, signal.SIGTERM)
        viewer.wait()
    assert actions.count('Fill \\"[redacted]\\"') >= 2  # both fills, named as redacted
    assert TYPED not in actions and CODE not in actions


def test_a_trace_without_snapshots_still_loses_what_was_typed(demo: DemoServer) -> None:
    with CheckedSession() as s:
        ok(s.navigate(demo.url_for("form.html")))
        ok(s.call("browser_trace", action="start", snapshots=False, screenshots=False))
        ok(s.type(ref_for(ok(s.snapshot())["snapshot"], 'textbox "Password"'), TYPED))
        ok(s.type(ref_for(ok(s.snapshot())["snapshot"], 'textbox "Email"'), "ada@example.org"))
        entries = contents(ok(s.call("browser_trace", action="stop"))["path"])
    assert found_in(entries, TYPED) == []
    trace = events(entries, "trace.trace")
    fills = [e["params"]["value"] for e in trace if e.get("type") == "before" and e.get("method") == "fill"]
    assert fills == [REDACTED, "ada@example.org"]  # what went into an ordinary field stays


def test_an_agent_needs_the_secrets_grant_to_keep_a_trace_raw(demo: DemoServer) -> None:
    with CheckedSession() as s:
        ok(s.navigate(demo.url_for("form.html")))
        error(s.call("browser_trace", action="start", reveal_secrets=True), "invalid_params", "not_started")
        handle, granted = s.serve_mcp(caps=["tracing"]), s.serve_mcp(caps=["tracing", "secrets"])

        async def scenario() -> tuple[Any, Any, Any]:
            async with agent(handle) as client:
                await client.call_tool("browser_trace", {"action": "start"})
                refused = await client.call_tool("browser_trace", {"action": "stop", "reveal_secrets": True})
                stopped = await client.call_tool("browser_trace", {"action": "stop"})
                again = await client.call_tool("browser_trace", {"action": "stop"})
                return refused, stopped, again

        async def granted_scenario() -> Any:
            async with agent(granted) as client:
                await client.call_tool("browser_trace", {"action": "start"})
                return await client.call_tool("browser_trace", {"action": "stop", "reveal_secrets": True})

        refused, stopped, again = asyncio.run(scenario())
        revealed = asyncio.run(granted_scenario())
    assert refused.is_error is True
    content = refused.structured_content
    assert content["error_type"] == "invalid_params" and "'secrets' grant" in content["message"]
    assert content["operation"]["outcome"] == "not_started" and content["operation"]["retry"] == "after_correction"
    # Refused, the trace went on recording; stopped without reveal it is scrubbed.
    assert stopped.is_error is False and stopped.structured_content["data"]["secrets_revealed"] is False
    assert again.structured_content["error_type"] == "invalid_params"
    assert revealed.is_error is False and revealed.structured_content["data"]["secrets_revealed"] is True
