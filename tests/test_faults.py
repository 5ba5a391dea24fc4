"""Faults on real Chromium: a dead driver, a hung page, killed browsers and renderers, dialog
storms, a tab that closes itself, and callers that give up. Each ends in an envelope and the
session recovers."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable

import httpx2
import mcp_types as types
import psutil
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from webmcp_nb import Envelope

from .helpers import BROWSER_NAMES, browser_processes, error, ok, ref_for, wait_for_exit, wait_until, wait_until_async

pytestmark = pytest.mark.playwright_sensitive  # see tests/test_compat_scope.py

HANG = "setTimeout(() => { while (true) {} }, 50); 'hanging'"


def started(fresh_session, url: str):
    """A session on `url` whose calls then time out after 3 s (the launch may take longer)."""
    s = fresh_session()
    ok(s.navigate(url))
    s.reconfigure(operation_timeout_s=3)
    return s


def timeout_once_stuck(call: Callable[[], Envelope]) -> Envelope:
    """The first envelope of `call` that is not a success (the page's loop starts on a timer)."""
    return wait_until(lambda: (envelope := call()).ok is False and envelope, 20.0, message="the call to time out")


def tab_status(s, page_id: str) -> str:
    return next(tab["status"] for tab in ok(s.tabs())["tabs"] if tab["page_id"] == page_id)


def cart(s) -> str:
    return ok(s.evaluate("document.querySelector('#cart').textContent"))["result"]


def renderer_pids(s) -> set[int]:
    """The live renderer processes of the session's first instance."""
    browser_pid = ok(s.list_instances())["instances"][0]["browser_pid"]
    found = set()
    for process in psutil.Process(browser_pid).children(recursive=True):
        try:
            if "--type=renderer" in process.cmdline() and process.status() != psutil.STATUS_ZOMBIE:
                found.add(process.pid)
        except psutil.NoSuchProcess:
            continue
    return found


def process_name(pid: int) -> str:
    try:
        return psutil.Process(pid).name()
    except psutil.NoSuchProcess:
        return ""


def gone(pids: list[int]) -> bool:
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                return False
        except psutil.NoSuchProcess:
            continue
    return True


# the Playwright driver --------------------------------------------------------------------------
def test_a_dead_driver_is_reported_and_replaced_on_the_next_call(fresh_session, demo) -> None:
    s = fresh_session()
    ok(s.navigate(demo.url))
    ok(s.create_instance("second"))
    ok(s.navigate(demo.url, instance="second"))
    driver = ok(s.health())["driver"]
    assert driver["state"] == "running" and driver["restarts"] == 0
    node = psutil.Process(driver["pid"])
    assert node.ppid() == os.getpid() and any("run-driver" in part for part in node.cmdline())
    browsers = [p.pid for p in browser_processes()]
    assert browsers

    node.kill()
    started = time.monotonic()
    health = wait_until(
        lambda: (h := ok(s.health()))["driver"]["state"] == "exited" and h, 2.0, message="health to see it"
    )
    assert time.monotonic() - started < 2.0
    assert health["status"] == "degraded"
    assert health["driver"]["last_exit"]["pid"] == driver["pid"]
    assert f"(pid {driver['pid']}) exited unexpectedly" in health["driver"]["last_exit"]["detail"]
    assert any("Playwright driver" in problem for problem in health["problems"])
    assert sorted(c["name"] for c in health["crashes"]) == ["default", "second"]
    assert ok(s.list_instances())["instances"] == []

    # Each lost instance reports the crash; the call starts nothing.
    message = error(s.snapshot(instance="second"), "instance_crashed", "not_started", "after_correction")
    assert "'second'" in message and "Playwright driver" in message
    error(s.snapshot(), "instance_crashed", "not_started", "after_correction")  # the implicit one, once
    # The next call starts a new driver and a new default instance.
    assert ok(s.navigate(demo.url))["title"] == "Demo Shop"
    assert ok(s.create_instance("third"))["instance"]["state"] == "live"
    assert ok(s.navigate(demo.url_for("form.html"), instance="third"))["url"].endswith("form.html")
    health = ok(s.health())
    assert health["status"] == "ok" and health["problems"] == []
    assert health["driver"]["state"] == "running" and health["driver"]["restarts"] == 1
    assert health["driver"]["pid"] != driver["pid"]
    wait_until(lambda: gone(browsers), 10.0, message="the old browsers to exit")


def test_a_call_running_when_the_driver_dies_ends_with_instance_crashed(fresh_session, demo) -> None:
    s = fresh_session()
    ok(s.navigate(demo.url))
    node = psutil.Process(ok(s.health())["driver"]["pid"])
    waiting = s.submit("browser_wait_for", {"text": "never on this page", "time_s": 20})
    time.sleep(0.5)
    node.kill()
    message = error(waiting.result(timeout=20), "instance_crashed", "unknown", "read_only")
    assert "Playwright driver" in message
    error(s.snapshot(), "instance_crashed", "not_started")  # as after a browser crash, then it is forgotten
    assert ok(s.navigate(demo.url))["title"] == "Demo Shop"


# a hung page ------------------------------------------------------------------------------------
def test_a_hung_page_is_marked_unresponsive_fails_fast_and_is_recovered(fresh_session, demo) -> None:
    s = started(fresh_session, demo.url)
    hung = ok(s.tabs())["current_page_id"]
    other = ok(s.tabs("new", url=demo.url_for("form.html")))["current_page_id"]
    ok(s.evaluate(HANG, page_id=hung))
    timed_out = timeout_once_stuck(lambda: s.snapshot(page_id=hung))
    error(timed_out, "operation_timeout", "unknown", "read_only")
    # Other tabs of the instance never wait for it, nor does the tab list (3 s: the operation timeout).
    beside, listed = s.snapshot(page_id=other), s.tabs()
    assert ok(beside)["url"].endswith("form.html") and beside.operation.duration_ms < 3000
    assert hung in [tab["page_id"] for tab in ok(listed)["tabs"]] and listed.operation.duration_ms < 3000
    wait_until(lambda: tab_status(s, hung) == "unresponsive", 10.0, message="the tab to be marked")
    assert tab_status(s, other) == "ok"
    health = ok(s.health())
    assert health["status"] == "degraded"
    assert [(p["page_id"], p["status"]) for p in health["unhealthy_pages"]] == [(hung, "unresponsive")]

    # The next call on it fails fast, saying how to get out.
    shop = ok(s.snapshot(page_id=other))["snapshot"]  # any ref will do: nothing is started
    envelope = s.click(ref_for(shop, "textbox"), page_id=hung)
    message = error(envelope, "operation_timeout", "not_started", "after_correction")
    assert envelope.operation.duration_ms < 3000  # not the full operation timeout
    assert "unresponsive" in message and "browser_reload(force=true)" in message
    assert f'browser_tabs(action="close", page_id="{hung}")' in message
    message = error(s.reload(page_id=hung), "operation_timeout", "not_started")
    assert "force=true" in message

    renderers_before = renderer_pids(s)
    reloaded = s.reload(page_id=hung, force=True)
    assert ok(reloaded)["title"] == "Demo Shop" and ok(reloaded)["url"] == demo.url
    assert reloaded.operation.page_id == hung  # the same tab id, a fresh renderer
    assert tab_status(s, hung) == "ok"
    assert 'button "Add Banana"' in ok(s.snapshot(page_id=hung))["snapshot"]
    assert [tab["page_id"] for tab in ok(s.tabs())["tabs"]] == [hung, other]
    assert ok(s.health())["status"] == "ok"
    wait_until(lambda: renderers_before - renderer_pids(s), 10.0, message="the stuck renderer to be gone")


def test_a_stuck_tab_is_told_from_what_is_known_and_holds_up_no_other_call(fresh_session, demo, monkeypatch) -> None:
    from playwright.async_api import CDPSession

    asked: list[str] = []  # the trivial evaluations that check a renderer
    send = CDPSession.send

    async def counted(self, method, params=None):
        if method == "Runtime.evaluate" and (params or {}).get("expression") == "0":
            asked.append(method)
        return await send(self, method, params)

    monkeypatch.setattr(CDPSession, "send", counted)
    s = started(fresh_session, demo.url)
    hung = ok(s.tabs())["current_page_id"]
    other = ok(s.tabs("new", url=demo.url_for("form.html")))["current_page_id"]
    ok(s.evaluate(HANG, page_id=hung))
    error(timeout_once_stuck(lambda: s.evaluate("1", page_id=hung)), "operation_timeout", "unknown")
    # While its check is under way, the list tells the tab from the browser process, without waiting.
    listed = s.tabs()
    assert [(tab["page_id"], tab["title"]) for tab in ok(listed)["tabs"]] == [(hung, "Demo Shop"), (other, "Demo Form")]
    assert listed.operation.duration_ms < 1500  # it waited for the check (2 s) before
    wait_until(lambda: tab_status(s, hung) == "unresponsive", 10.0, message="the tab to be marked")
    checks = len(asked)
    assert checks == 1
    for _ in range(3):
        tabs = ok(s.tabs())["tabs"]
        assert [(tab["page_id"], tab["status"], tab["title"], tab["url"]) for tab in tabs] == [
            (hung, "unresponsive", "Demo Shop", demo.url),
            (other, "ok", "Demo Form", demo.url_for("form.html")),
        ]
        assert [page["page_id"] for page in ok(s.health())["unhealthy_pages"]] == [hung]
        assert ok(s.snapshot(page_id=other))["url"].endswith("form.html")
        error(s.evaluate("1", page_id=hung), "operation_timeout", "not_started")
    assert len(asked) == checks  # the stuck renderer was not asked again: the first question still waits


def test_a_script_that_ends_clears_the_mark(fresh_session, demo) -> None:
    s = started(fresh_session, demo.url)
    page = ok(s.tabs())["current_page_id"]
    ok(s.evaluate("setTimeout(() => { const end = Date.now() + 8000; while (Date.now() < end) {} }, 50); 1"))
    error(timeout_once_stuck(s.snapshot), "operation_timeout", "unknown")
    wait_until(lambda: tab_status(s, page) == "unresponsive", 10.0, message="the tab to be marked")
    wait_until(lambda: s.snapshot().ok, 15.0, message="the loop to end")
    assert tab_status(s, page) == "ok"


# killed processes -------------------------------------------------------------------------------
def test_a_killed_renderer_is_page_crashed_and_reload_brings_the_tab_back(fresh_session, demo) -> None:
    s = fresh_session()
    ok(s.navigate(demo.url))
    page = ok(s.tabs())["current_page_id"]
    renderers = renderer_pids(s)
    assert renderers
    for pid in renderers:
        os.kill(pid, signal.SIGKILL)
    wait_until(lambda: tab_status(s, page) == "crashed", 10.0, message="the crash to be seen")
    message = error(s.snapshot(), "page_crashed", "not_started", "after_correction")
    assert "crashed" in message and "browser_reload" in message and 'browser_tabs(action="close"' in message
    assert [p["status"] for p in ok(s.health())["unhealthy_pages"]] == ["crashed"]

    reloaded = ok(s.reload())
    assert reloaded["title"] == "Demo Shop"
    assert "Add Banana" in ok(s.snapshot())["snapshot"]
    assert tab_status(s, page) == "ok" and ok(s.health())["status"] == "ok"


def test_a_browser_killed_during_a_call_ends_it_with_instance_crashed(fresh_session, demo) -> None:
    s = fresh_session()
    info = ok(s.create_instance("victim"))["instance"]
    ok(s.navigate(demo.url, instance="victim"))
    waiting = s.submit("browser_wait_for", {"instance": "victim", "text": "never on this page", "time_s": 20})
    time.sleep(0.5)
    os.kill(info["browser_pid"], signal.SIGKILL)
    envelope = waiting.result(timeout=20)
    message = error(envelope, "instance_crashed", "unknown", "read_only")
    assert "'victim'" in message
    error(s.snapshot(instance="victim"), "instance_crashed", "not_started")
    ok(s.create_instance("victim"))
    assert ok(s.navigate(demo.url, instance="victim"))["title"] == "Demo Shop"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_process_killed_with_live_browsers_leaves_none_running(demo, signum: signal.Signals) -> None:
    """No close(), no atexit: the driver sees its stdin close and takes the browsers with it."""
    script = textwrap.dedent(
        f"""
        import json, psutil, time
        from webmcp_nb import Session
        s = Session()
        s.navigate({demo.url!r}).raise_for_status()  # the default instance
        s.create_instance("second").raise_for_status()
        s.navigate({demo.url!r}, instance="second").raise_for_status()
        print(json.dumps([p.pid for p in psutil.Process().children(recursive=True)]), flush=True)
        time.sleep(600)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        assert line, child.communicate(timeout=10)[1]
        descendants = json.loads(line)
        browsers = [pid for pid in descendants if BROWSER_NAMES.search(process_name(pid))]
        assert len(browsers) >= 2, descendants  # two instances' browsers (and their helpers)
        child.send_signal(signum)
        assert child.wait(timeout=30) == -signum
        wait_for_exit(descendants, timeout=30.0)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=30)


# pages that misbehave ---------------------------------------------------------------------------
def test_a_dialog_storm_gives_envelopes_and_the_tab_can_be_closed(fresh_session, demo) -> None:
    s = fresh_session()  # the default operation timeout: 3 s was too short on a loaded machine for no gain
    ok(s.navigate(demo.url))
    storm = ok(s.tabs())["current_page_id"]
    other = ok(s.tabs("new", url=demo.url))["current_page_id"]
    ok(s.evaluate("setTimeout(() => { for (;;) alert('storm') }, 50); 1", page_id=storm))
    for _ in range(5):  # each accepted alert is followed by the next one
        blocked = wait_until(lambda: (e := s.snapshot(page_id=storm)).error_type == "modal_state_blocked" and e)
        assert "'storm'" in error(blocked, "modal_state_blocked")  # opened before or during the call
        ok(s.handle_dialog(True, page_id=storm))
    assert ok(s.snapshot(page_id=other))["url"] == demo.url
    tabs = ok(s.tabs("close", page_id=storm))["tabs"]
    assert [tab["page_id"] for tab in tabs] == [other]
    assert ok(s.snapshot())["url"] == demo.url


def test_a_tab_that_closes_itself_during_a_call(fresh_session, demo) -> None:
    s = fresh_session()
    ok(s.navigate(demo.url))
    first = ok(s.tabs())["current_page_id"]
    ok(s.evaluate("window.open(location.href, '_blank'); 1"))
    closing = wait_until(
        lambda: [t["page_id"] for t in ok(s.tabs())["tabs"] if t["page_id"] != first], 10.0, message="the popup"
    )[0]
    # 2 s: the wait must have started when the tab goes (a loaded machine took over 300 ms to start it).
    ok(s.evaluate("setTimeout(() => window.close(), 2000); 1", page_id=closing))
    envelope = s.wait_for(text="never on this page", time_s=20, page_id=closing)
    message = error(envelope, "page_not_found", "unknown", "read_only")
    assert closing in message
    error(s.snapshot(page_id=closing), "page_not_found", "not_started")
    assert [tab["page_id"] for tab in ok(s.tabs())["tabs"]] == [first]


# callers that give up ---------------------------------------------------------------------------
def _hold_instance(s, seconds: float) -> threading.Thread:
    """A call that keeps the instance busy for `seconds`, on a thread of its own."""
    holder = threading.Thread(target=lambda: ok(s.wait_for(time_s=seconds)), daemon=True)
    holder.start()
    wait_until(lambda: s._engine.manager.instances["default"].lock.locked(), 10.0, message="the slow call to hold it")
    return holder


def test_a_queued_click_whose_caller_gives_up_never_runs(fresh_session, demo) -> None:
    s = fresh_session()
    ok(s.navigate(demo.url))
    banana = ref_for(ok(s.snapshot())["snapshot"], 'button "Add Banana"')
    holder = _hold_instance(s, 3)
    envelope = s.call("browser_click", ref=banana, call_timeout_s=0.5)
    message = error(envelope, "operation_timeout", "not_started", "after_correction")
    assert "0.5 s" in message and "the call's own timeout" in message and "nothing was done" in message
    holder.join(20)
    time.sleep(0.5)
    assert cart(s) == "Cart: 0 items"
    clicks = [r.envelope for r in s.history if r.tool == "browser_click"]
    assert [(e.error_type, e.operation.outcome) for e in clicks] == [("operation_timeout", "not_started")]


@pytest.mark.parametrize("seconds", [0, -1, float("nan"), "2", True])
def test_a_bad_call_timeout_is_invalid_params(fresh_session, seconds: object) -> None:
    s = fresh_session()
    message = error(s.call("browser_list_instances", call_timeout_s=seconds), "invalid_params", "not_started")
    assert "positive number of seconds" in message


def test_keyboard_interrupt_drops_a_queued_click_and_logs_it_cancelled(fresh_session, demo, sigint) -> None:
    s = fresh_session()
    ok(s.navigate(demo.url))
    banana = ref_for(ok(s.snapshot())["snapshot"], 'button "Add Banana"')
    holder = _hold_instance(s, 3)
    threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()  # as Jupyter's "Interrupt kernel"
    with pytest.raises(KeyboardInterrupt):
        s.click(banana)
    holder.join(20)
    time.sleep(0.5)
    assert cart(s) == "Cart: 0 items"
    clicks = [r.envelope for r in s.history if r.tool == "browser_click"]
    assert [(e.error_type, e.operation.outcome, e.operation.retry) for e in clicks] == [
        ("cancelled", "not_started", "after_correction")
    ]
    assert "nothing was done" in (clicks[0].message or "")


def _raw_headers(server, protocol: str) -> dict[str, str]:
    """Headers of a hand-written tools/call request in `protocol` (a 2025-era one opens its session)."""
    headers = {
        "Authorization": f"Bearer {server.token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "mcp-protocol-version": protocol,
    }
    if protocol == "2026-07-28":
        return headers | {"mcp-method": "tools/call", "mcp-name": "browser_click"}
    info = {"protocolVersion": protocol, "capabilities": {}, "clientInfo": {"name": "leaver", "version": "1"}}
    with httpx2.Client(timeout=60) as http:
        opened = http.post(
            server.url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": info}, headers=headers
        )
        headers["mcp-session-id"] = opened.headers["mcp-session-id"]
        http.post(server.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    return headers


@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
def test_an_agent_that_disconnects_without_a_word_never_clicks(fresh_session, demo, protocol: str) -> None:
    """No cancellation sent: the client's connection just closes while its click is queued."""
    s = fresh_session()
    ok(s.navigate(demo.url))
    banana = ref_for(ok(s.snapshot())["snapshot"], 'button "Add Banana"')
    server = s.serve_mcp()
    headers = _raw_headers(server, protocol)
    params: dict[str, object] = {"name": "browser_click", "arguments": {"ref": banana}}
    if protocol == "2026-07-28":
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": protocol,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "leaver", "version": "1"},
        }
    holder = _hold_instance(s, 3)
    with httpx2.Client(timeout=0.5) as http, pytest.raises(httpx2.ReadTimeout):
        http.post(
            server.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}, headers=headers
        )
    holder.join(20)
    wait_until(lambda: [r for r in s.history if r.caller.startswith("agent:")], 10.0, "the click to be logged")
    time.sleep(0.5)
    assert cart(s) == "Cart: 0 items"
    logged = [
        (r.tool, r.envelope.error_type, r.envelope.operation.outcome)
        for r in s.history
        if r.caller.startswith("agent:")
    ]
    assert logged == [("browser_click", "cancelled", "not_started")]


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # 2026-07-28 (closes its stream) and 2025 (notifies)
def test_an_agent_that_gives_up_on_a_queued_click_never_clicks(fresh_session, demo, mode: str) -> None:
    s = fresh_session()
    ok(s.navigate(demo.url))
    banana = ref_for(ok(s.snapshot())["snapshot"], 'button "Add Banana"')
    server = s.serve_mcp()
    lock = s._engine.manager.instances["default"].lock

    async def held() -> bool:
        return lock.locked()

    async def scenario() -> None:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.token}"}, timeout=60)
        async with Client(streamable_http_client(server.url, http_client=http), mode=mode) as client:
            # An agent's first call on an instance routes its requests under the agents' URL policy,
            # inside the lock: done first, so holding the lock soon means running (a loaded CI
            # machine once cancelled the slow call before it had started).
            assert (await client.call_tool("browser_tabs", {"action": "list"})).is_error is False
            slow = asyncio.ensure_future(client.call_tool("browser_wait_for", {"time_s": 3}))
            await wait_until_async(held, message="the slow call to hold the lock")
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(client.call_tool("browser_click", {"ref": banana}), 0.5)
            if mode == "legacy":  # (a cancelled request's late answer breaks this client's exit)
                assert (await slow).is_error is False
                return
            slow.cancel()  # and gives up on the running call too
            with pytest.raises(asyncio.CancelledError):
                await slow

    asyncio.run(scenario())

    def agents() -> list:
        return [r for r in s.history if r.caller.startswith("agent:") and r.tool != "browser_tabs"]

    wait_until(lambda: len(agents()) == 2, 10.0, message="both calls to be logged")
    assert cart(s) == "Cart: 0 items"
    logged = [
        (r.tool, r.envelope.error_type, r.envelope.operation.outcome, r.envelope.operation.retry) for r in agents()
    ]
    slow_call = (
        ("browser_wait_for", None, "completed", "not_needed")
        if mode == "legacy"
        else (
            "browser_wait_for",
            "cancelled",
            "unknown",
            "read_only",  # running when its caller left
        )
    )
    assert sorted(logged) == [("browser_click", "cancelled", "not_started", "after_correction"), slow_call]


# many callers at once ---------------------------------------------------------------------------
def test_four_agents_and_two_threads_on_two_instances_lose_nothing(fresh_session, demo) -> None:
    """Each caller's calls come back once each, in the order it made them, whoever else is calling."""
    s = fresh_session()
    ok(s.navigate(demo.url))  # the default instance
    ok(s.create_instance("second"))
    ok(s.navigate(demo.url, instance="second"))
    instances = ["default", "second"]
    server = s.serve_mcp()
    calls = 12

    def url(caller: str, k: int) -> str:
        return f"{demo.url}#{caller}-{k}"

    async def agent(index: int) -> list[str]:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.token}"}, timeout=120)
        info = types.Implementation(name=f"agent{index}", version="1")
        async with Client(streamable_http_client(server.url, http_client=http), client_info=info) as client:
            answers = []
            for k in range(calls):
                args = {"url": url(f"agent{index}", k), "instance": instances[index % 2]}
                result = await client.call_tool("browser_navigate", args)
                assert result.is_error is False, result
                answers.append(result.structured_content["data"]["url"])
            return answers

    async def agents() -> list[list[str]]:
        return list(await asyncio.gather(*(agent(index) for index in range(4))))

    answers: dict[str, list[str]] = {}

    def thread(index: int) -> None:
        name = f"thread{index}"
        answers[name] = [ok(s.navigate(url(name, k), instance=instances[index % 2]))["url"] for k in range(calls)]

    threads = [threading.Thread(target=thread, args=(index,)) for index in range(2)]
    for worker in threads:
        worker.start()
    for index, found in enumerate(asyncio.run(agents())):
        answers[f"agent{index}"] = found
    for worker in threads:
        worker.join(120)
    server.stop()

    callers = [f"agent{index}" for index in range(4)] + ["thread0", "thread1"]
    for caller in callers:  # each answer is its own call's, in order
        assert answers[caller] == [url(caller, k) for k in range(calls)], caller
    logged = [r.args["url"] for r in s.history if r.tool == "browser_navigate" and "#" in r.args.get("url", "")]
    assert len(logged) == len(set(logged)) == len(callers) * calls  # none lost, none twice
    for caller in callers:  # and logged in the order each caller made them
        assert [u for u in logged if u.startswith(f"{demo.url}#{caller}-")] == [url(caller, k) for k in range(calls)]
