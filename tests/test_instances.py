"""Instances on real Chromium: lifecycle, limits, profiles, binaries, crashes, clean shutdown."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import get_args

import psutil
import pytest

from tests.helpers import browser_processes, error, ok, wait_for_exit, wait_until
from webmcp_nb.core import backends
from webmcp_nb.core.backends import LaunchOptions, chromium
from webmcp_nb.core.backends.remote import RemoteOptions
from webmcp_nb.core.call.errors import InvalidParams
from webmcp_nb.core.config import LaunchDefaults

pytestmark = pytest.mark.playwright_sensitive  # see tests/test_compat_scope.py

CHROMIUM = "/usr/bin/chromium"


def test_create_list_destroy_and_current_instance(fresh_session, demo) -> None:
    s = fresh_session()
    created = ok(s.create_instance("work", viewport={"width": 800, "height": 600}, locale="de-DE"))
    info = created["instance"]
    assert info["name"] == "work" and info["state"] == "live" and info["backend"] == "chromium"
    assert info["browser_pid"] and psutil.pid_exists(info["browser_pid"])
    listed = ok(s.list_instances())
    assert listed["current_instance"] == "work"
    assert [i["name"] for i in listed["instances"]] == ["work"]
    # Tools without `instance` act on the current one.
    nav = s.navigate(demo.url)
    assert nav.instance == "work" and nav.operation.instance_id == info["instance_id"]
    assert ok(s.evaluate("[innerWidth, navigator.language]"))["result"] == [800, "de-DE"]
    destroyed = s.destroy_instance("work")
    assert ok(destroyed) == {"destroyed": "work", "instance_id": info["instance_id"], "was": "live"}
    assert destroyed.instance == "work"
    assert ok(s.list_instances()) == {"current_instance": "default", "instances": []}
    error(s.destroy_instance("work"), "instance_not_found", "not_started", "after_correction")
    error(s.navigate(demo.url, instance="work"), "instance_not_found", "not_started", "after_correction")


def test_default_instance_is_created_on_first_use(fresh_session, demo) -> None:
    s = fresh_session()
    envelope = s.navigate(demo.url)
    assert ok(envelope)["title"] == "Demo Shop"
    assert envelope.instance == "default"
    assert [i["name"] for i in ok(s.list_instances())["instances"]] == ["default"]
    health = s.health()
    assert health.instance is None and health.operation.instance_id is None


def test_name_and_limit_conflicts(fresh_session) -> None:
    s = fresh_session(max_instances=2)
    ok(s.create_instance("a"))
    message = error(s.create_instance("a"), "instance_already_exists", "not_started", "after_correction")
    assert "'a'" in message
    ok(s.create_instance("b"))
    message = error(s.create_instance("c"), "instance_limit_exceeded", "not_started", "after_correction")
    assert "limit is 2" in message
    assert ok(s.health())["instances"]["total"] == 2


def test_profile_dir_in_use_by_our_instance_and_by_another_browser(fresh_session, tmp_path: Path) -> None:
    s = fresh_session()
    profile = tmp_path / "profile"
    ok(s.create_instance("p1", profile_dir=str(profile)))
    message = error(s.create_instance("p2", profile_dir=str(profile)), "profile_dir_in_use", "not_started")
    assert "'p1'" in message
    ok(s.destroy_instance("p1"))

    other = tmp_path / "other"
    outsider = subprocess.Popen(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={other}", "about:blank"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        locked = other / "SingletonLock"
        wait_until(locked.is_symlink, timeout=15, message="the outsider never locked its profile")
        message = error(s.create_instance("p3", profile_dir=str(other)), "profile_dir_in_use", "not_started")
        assert f"pid {outsider.pid}" in message
    finally:
        outsider.kill()
        outsider.wait()


def test_one_registry_of_backends_and_their_own_options() -> None:
    """Each backend is registered under its name, the names the create tool offers; an unknown
    name is bad input naming the choices; a backend's own options are its own part of LaunchOptions."""
    registered = [(name, backend.name) for name, backend in backends.BACKENDS.items()]
    assert registered == [(name, name) for name in get_args(backends.BackendName)]
    with pytest.raises(InvalidParams) as refused:
        backends.get("firefox")
    assert refused.value.message == "No backend 'firefox': choose one of chromium, camoufox, remote."
    given = {"backend": "remote", "endpoint": "ws://grid:3000/x", "headers": (("Authorization", "tok-123"),)}
    options = backends.launch_options("grid", LaunchDefaults(), given)
    own = RemoteOptions(endpoint="ws://grid:3000/x", headers=(("Authorization", "tok-123"),))
    assert options == LaunchOptions(name="grid", backend="remote", webmcp="page", own=own)
    assert "tok-123" not in repr(options)
    assert backends.launch_options("here", LaunchDefaults(args=("--mute-audio",)), {}) == LaunchOptions(
        name="here", args=("--mute-audio",)
    )


def test_binary_not_found_names_every_place_tried(monkeypatch) -> None:
    """With no explicit path and nothing found, every place looked at is named, then how to install."""
    monkeypatch.delenv("WEBMCP_NB_CHROMIUM", raising=False)
    tried = [
        *chromium.candidates(None, None)[:3],
        chromium.check_path("/usr/bin/chromium", "/nonexistent/usr-bin-chromium"),
    ]
    message = chromium.describe_failure(tried)
    assert message.startswith(
        "No usable Chromium found. Tried: executable_path: not given; $WEBMCP_NB_CHROMIUM: not set; "
        "playwright-managed: not installed; /usr/bin/chromium (/nonexistent/usr-bin-chromium): no such file."
    )
    assert "apt-get install" in message and "playwright install chromium" in message


def test_a_bad_explicit_path_names_itself_and_the_fix(fresh_session, monkeypatch) -> None:
    """An executable_path or $WEBMCP_NB_CHROMIUM that does not work is the answer: the message
    names it, says how to fix or unset it, and names the browser that would be used instead;
    it does not list that browser as "found" among the places tried."""
    s = fresh_session()
    message = error(s.create_instance("x", executable_path="/nonexistent/chrome"), "binary_not_found", "not_started")
    assert message.startswith("The executable_path path /nonexistent/chrome cannot be used: no such file.")
    assert "leave it out to use the Chromium found at /usr/bin/chromium" in message
    assert ": found" not in message
    health = ok(s.health())
    assert health["failed_launches"][-1]["error_type"] == "binary_not_found"
    assert "x" not in [i["name"] for i in ok(s.list_instances())["instances"]]

    monkeypatch.setenv("WEBMCP_NB_CHROMIUM", "/nonexistent/env-chrome")
    env_session = fresh_session()
    message = error(env_session.navigate("about:blank"), "binary_not_found", "not_started")
    assert message.startswith("The $WEBMCP_NB_CHROMIUM path /nonexistent/env-chrome cannot be used: no such file.")
    assert "unset WEBMCP_NB_CHROMIUM" in message and "del os.environ['WEBMCP_NB_CHROMIUM']" in message
    assert "found at /usr/bin/chromium" in message and ": found" not in message
    assert "$WEBMCP_NB_CHROMIUM (/nonexistent/env-chrome): no such file" in message


def test_health_reports_browsers_and_launches_nothing(fresh_session) -> None:
    s = fresh_session()
    before = browser_processes()
    health = ok(s.health())
    assert browser_processes() == before
    assert health["chromium"] == CHROMIUM and health["status"] == "ok"
    assert [b["source"] for b in health["browsers"]][:4] == [
        "executable_path",
        "$WEBMCP_NB_CHROMIUM",
        "playwright-managed",
        "/usr/bin/chromium",
    ]
    assert health["limits"] == {"max_instances": 10, "max_result_bytes": 1_048_576, "operation_timeout_s": 60.0}


def test_headed_without_a_display_is_unsupported(fresh_session, monkeypatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    s = fresh_session()
    message = error(s.create_instance("headed", headless=False), "unsupported_capability", "not_started")
    assert "xvfb-run" in message


def test_crash_is_reported_quickly_cleaned_up_and_recoverable(fresh_session, demo) -> None:
    s = fresh_session()
    info = ok(s.create_instance("c"))["instance"]
    ok(s.navigate(demo.url, instance="c"))
    os.kill(info["browser_pid"], signal.SIGKILL)
    started = time.monotonic()
    crashed = s.snapshot(instance="c")
    assert time.monotonic() - started < 10  # not held until the 30 s observation timeout
    message = error(crashed, "instance_crashed")
    assert "'c'" in message
    # The record stays until the name is reused; the name itself is released.
    error(s.click("e1", instance="c"), "instance_crashed", "not_started", "after_correction")
    health = ok(s.health())
    assert [c["name"] for c in health["crashes"]] == ["c"]
    assert health["crashes"][0]["instance_id"] == info["instance_id"]
    assert "c" not in [i["name"] for i in ok(s.list_instances())["instances"]]
    wait_for_exit([info["browser_pid"]])
    again = ok(s.create_instance("c"))["instance"]
    assert again["instance_id"] != info["instance_id"]
    assert ok(s.navigate(demo.url, instance="c"))["title"] == "Demo Shop"


def test_close_leaves_no_browser_processes(fresh_session, demo) -> None:
    s = fresh_session()
    ok(s.create_instance("one"))
    ok(s.create_instance("two", profile_dir=None))
    ok(s.navigate(demo.url))
    assert len(browser_processes()) >= 2
    s.close()
    wait_until(lambda: not browser_processes(), message=lambda: f"left running: {browser_processes()}")


@pytest.mark.browser
def test_context_manager_and_interpreter_exit_leave_no_browsers(demo) -> None:
    script = textwrap.dedent(
        f"""
        import json, psutil, os
        from webmcp_nb import Session
        with Session() as s:
            s.navigate({demo.url!r})
        def chromium(p):  # a process that ends while it is looked at is not running
            try:
                return 'chrom' in p.name()
            except psutil.NoSuchProcess:
                return False
        print(json.dumps(len([p for p in psutil.Process().children(recursive=True) if chromium(p)])))
        s = Session()                         # left open: interpreter exit must close it
        s.create_instance("left-open")
        s.navigate({demo.url!r})
        print(json.dumps([p.pid for p in psutil.Process().children(recursive=True)]))
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    after_with, pids = result.stdout.strip().splitlines()
    assert after_with == "0"
    import json

    descendants = json.loads(pids)
    assert descendants, "the child should have had browser processes"
    wait_for_exit(descendants)


def test_a_binary_that_is_not_a_browser_is_an_internal_error_reported_in_health(fresh_session) -> None:
    s = fresh_session()
    message = error(s.create_instance("broken", executable_path="/bin/true"), "internal_error", "not_started")
    assert "failed to launch" in message and "/bin/true" in message
    failed = ok(s.health())["failed_launches"][-1]
    assert (failed["name"], failed["error_type"]) == ("broken", "internal_error")
    assert ok(s.list_instances())["instances"] == []
    assert ok(s.create_instance("broken"))["instance"]["state"] == "live"  # the name was released
