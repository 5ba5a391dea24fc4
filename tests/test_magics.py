"""The IPython front end: the extension, `%browser` / `%%browser`, `%config BrowserMagics`, and
`webmcp_nb.session()`, in an in-process IPython shell (and one real kernel) on real Chromium.

Every envelope the notebook session returns is checked against the envelope contract.
"""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.testing.globalipapp import get_ipython
from IPython.utils.capture import capture_output
from traitlets import TraitError

import webmcp_nb
from tests.conftest import browser_processes, check_contract, ok, ref_for
from tests.helpers import wait_until
from webmcp_nb import Envelope
from webmcp_nb.core.call.registry import REGISTRY
from webmcp_nb.core.guard.grants import CAPS
from webmcp_nb.core.render.renderer import ENVELOPE_MIME, mimebundle
from webmcp_nb.notebook.extension import is_loaded
from webmcp_nb.notebook.magics import BrowserMagics, CallList, command
from webmcp_nb.notebook.session import NotebookSession, current_shared_session
from webmcp_nb.notebook.tool_commands import is_positional

EXTENSION = "webmcp_nb"


def flat(text: str) -> str:
    """Text with every run of whitespace as one space (help output is re-wrapped)."""
    return " ".join(text.split())


def browser_magics(ip: Any) -> list[BrowserMagics]:
    return [c for c in ip.configurables if isinstance(c, BrowserMagics)]


@pytest.fixture(scope="module")
def ip() -> Iterator[Any]:
    shell = get_ipython()
    yield shell
    shell.extension_manager.unload_extension(EXTENSION)


@pytest.fixture
def shell(ip: Any) -> Iterator[Any]:
    """The shell with the extension loaded; every envelope of the shared session is checked."""
    ip.extension_manager.load_extension(EXTENSION)
    session = webmcp_nb.session()
    seen: list[Envelope] = []
    remove = session.add_listener(lambda record: seen.append(record.envelope))
    yield ip
    remove()
    for envelope in seen:
        check_contract(envelope)


@pytest.fixture
def browser(shell: Any) -> Any:
    """Call ``%browser LINE`` and return its value."""
    return lambda line: shell.run_line_magic("browser", line)


@pytest.fixture
def shop(browser: Any, demo: Any) -> str:
    """The demo shop loaded through the magic; its snapshot."""
    ok(browser(f"navigate {demo.url}"))
    return ok(browser("snapshot"))["snapshot"]


# -- the extension -------------------------------------------------------------------------
def test_import_stays_cheap() -> None:
    code = textwrap.dedent(
        """
        import sys, webmcp_nb
        webmcp_nb.load_ipython_extension, webmcp_nb.unload_ipython_extension
        nb = webmcp_nb.session()
        assert nb is webmcp_nb.session() and type(nb).__name__ == "NotebookSession", nb
        from webmcp_nb import Session
        import webmcp_nb.client as module
        assert module.Session is Session and webmcp_nb.session() is nb
        heavy = [m for m in sys.modules if m.split(".")[0] in ("IPython", "playwright", "ipywidgets")]
        assert not heavy, heavy
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_load_twice_registers_one_configurable(ip: Any) -> None:
    ip.extension_manager.load_extension(EXTENSION)
    ip.extension_manager.load_extension(EXTENSION)
    webmcp_nb.load_ipython_extension(ip)  # directly, as a second name would
    ip.extension_manager.load_extension("webmcp_nb.notebook.extension")
    assert len(browser_magics(ip)) == 1
    assert ip.find_line_magic("browser").__self__ is browser_magics(ip)[0]
    assert ip.find_cell_magic("browser").__self__ is browser_magics(ip)[0]


@pytest.mark.browser
def test_unload_closes_the_browsers_and_removes_everything(ip: Any, demo: Any) -> None:
    ip.extension_manager.load_extension(EXTENSION)
    before = len(browser_processes())
    ok(ip.run_line_magic("browser", f"navigate {demo.url}"))
    session = webmcp_nb.session()
    assert len(browser_processes()) > before
    assert ip.extension_manager.unload_extension(EXTENSION) is None
    assert session.closed and current_shared_session() is None
    assert not is_loaded(ip)
    assert browser_magics(ip) == []
    assert ip.find_line_magic("browser") is None and ip.find_cell_magic("browser") is None
    assert "BrowserMagics" not in dict(ip.magics_manager.registry)
    wait_until(lambda: len(browser_processes()) == before, message=lambda: f"{browser_processes()} (before: {before})")
    assert ip.extension_manager.unload_extension(EXTENSION) == "not loaded"
    webmcp_nb.unload_ipython_extension(ip)  # unloading again is harmless


@pytest.mark.browser
def test_reload_is_safe_and_gives_a_fresh_session(ip: Any, demo: Any) -> None:
    ip.extension_manager.load_extension(EXTENSION)
    ok(ip.run_line_magic("browser", f"navigate {demo.url}"))
    old = webmcp_nb.session()
    browser_magics(ip)[0].screenshot_width = 640
    with capture_output():
        ip.run_line_magic("reload_ext", EXTENSION)
    assert old.closed
    assert len(browser_magics(ip)) == 1
    assert browser_magics(ip)[0].screenshot_width == 800  # unloading forgets the options
    data = ok(ip.run_line_magic("browser", f"navigate {demo.url}"))
    assert data["title"] == "Demo Shop"
    assert webmcp_nb.session() is not old


def test_unload_restores_a_magic_it_replaced(ip: Any) -> None:
    ip.extension_manager.unload_extension(EXTENSION)
    ip.register_magic_function(lambda line: f"mine: {line}", "line", "browser")
    try:
        ip.extension_manager.load_extension(EXTENSION)
        assert isinstance(ip.find_line_magic("browser").__self__, BrowserMagics)
        ip.extension_manager.unload_extension(EXTENSION)
        assert ip.run_line_magic("browser", "x") == "mine: x"
    finally:
        ip.magics_manager.magics["line"].pop("browser", None)
        ip.extension_manager.load_extension(EXTENSION)


def test_config_file_options_apply_when_loaded(ip: Any) -> None:
    ip.extension_manager.unload_extension(EXTENSION)
    ip.config.BrowserMagics.max_instances = 3
    ip.config.BrowserMagics.screenshot_width = 500
    try:
        ip.extension_manager.load_extension(EXTENSION)
        (magics,) = browser_magics(ip)
        assert (magics.max_instances, magics.screenshot_width) == (3, 500)
        session = webmcp_nb.session()
        assert session.limits.max_instances == 3 and session.screenshot_width == 500
    finally:
        del ip.config.BrowserMagics["max_instances"], ip.config.BrowserMagics["screenshot_width"]
        ip.extension_manager.unload_extension(EXTENSION)
        ip.extension_manager.load_extension(EXTENSION)


def test_a_refused_config_file_option_is_reported_and_the_others_apply(ip: Any) -> None:
    ip.extension_manager.unload_extension(EXTENSION)
    ip.config.BrowserMagics.max_result_bytes = 10
    ip.config.BrowserMagics.screenshot_width = 500
    try:
        with pytest.warns(UserWarning, match=r"BrowserMagics.max_result_bytes not applied: .*at least 4096, got 10"):
            ip.extension_manager.load_extension(EXTENSION)
        (magics,) = browser_magics(ip)
        assert (magics.max_result_bytes, magics.screenshot_width) == (1048576, 500)
        session = webmcp_nb.session()
        assert session.limits.max_result_bytes == 1048576 and session.screenshot_width == 500
    finally:
        del ip.config.BrowserMagics["max_result_bytes"], ip.config.BrowserMagics["screenshot_width"]
        ip.extension_manager.unload_extension(EXTENSION)
        ip.extension_manager.load_extension(EXTENSION)


# -- %config BrowserMagics --------------------------------------------------------------------
def test_config_lists_every_option(shell: Any) -> None:
    with capture_output() as captured:
        shell.run_line_magic("config", "")
        shell.run_line_magic("config", "BrowserMagics")
    assert "BrowserMagics" in captured.stdout
    for name, value in [
        ("headless", "True"),
        ("backend", "'chromium'"),
        ("default_instance", "'default'"),
        ("max_result_bytes", "1048576"),
        ("screenshot_width", "800"),
        ("screenshot_after_actions", "False"),
        ("live_view_fps", "15.0"),
        ("cell_output", "'lean'"),
        ("remote_endpoint", "''"),
        ("remote_headers", "{}"),
    ]:
        assert f"BrowserMagics.{name}=" in captured.stdout
        assert shell.run_line_magic("config", f"BrowserMagics.{name}") == eval(value)


def test_cell_output_full_shows_every_view_until_set_lean_or_unloaded(ip: Any, shell: Any) -> None:
    from tests.helpers import make_operation

    envelope = Envelope("success", "default", make_operation(), data={"url": "http://x/", "title": "X"})
    shown = lambda: shell.display_formatter.format(envelope)[0]  # noqa: E731
    assert shown() == mimebundle(envelope)[0] == {"text/plain": str(envelope)}  # lean: a small result is its text
    (magics,) = browser_magics(shell)
    with pytest.raises(TraitError, match="cell_output must be one of 'lean', 'full', got 'all'"):
        magics.cell_output = "all"
    try:
        shell.run_line_magic("config", "BrowserMagics.cell_output = 'full'")
        full = shown()
        assert full == mimebundle(envelope, full=True)[0] and set(full) == {"text/plain", "text/html", ENVELOPE_MIME}
        assert full[ENVELOPE_MIME] == json.loads(envelope.to_json())
        assert set(shell.display_formatter.format(envelope, exclude={ENVELOPE_MIME})[0]) == {"text/plain", "text/html"}
        shell.run_line_magic("config", "BrowserMagics.cell_output = 'lean'")
        assert shown() == {"text/plain": str(envelope)}
        shell.run_line_magic("config", "BrowserMagics.cell_output = 'full'")
        ip.extension_manager.unload_extension(EXTENSION)  # unloading leaves envelopes lean
        assert shown() == {"text/plain": str(envelope)}
        ip.extension_manager.load_extension(EXTENSION)  # loading applies the configured value
        assert browser_magics(ip)[0].cell_output == "full" and ENVELOPE_MIME in shown()
    finally:
        shell.run_line_magic("config", "BrowserMagics.cell_output = 'lean'")
        del ip.config.BrowserMagics["cell_output"]
        if not is_loaded(ip):
            ip.extension_manager.load_extension(EXTENSION)
    assert shown() == {"text/plain": str(envelope)}


def test_config_pushes_limits_to_the_running_session(shell: Any, browser: Any) -> None:
    session = webmcp_nb.session()
    ok(browser("health"))
    try:
        shell.run_line_magic("config", "BrowserMagics.max_result_bytes = 8192")
        assert session.limits.max_result_bytes == 8192
        assert ok(browser("health"))["limits"]["max_result_bytes"] == 8192
        shell.run_line_magic("config", "BrowserMagics.headless = False")
        assert session.launch_defaults.headless is False
        shell.run_line_magic("config", "BrowserMagics.screenshot_width = 320")
        assert session.screenshot_width == 320
    finally:
        shell.run_line_magic("config", "BrowserMagics.max_result_bytes = 1048576")
        shell.run_line_magic("config", "BrowserMagics.headless = True")
        shell.run_line_magic("config", "BrowserMagics.screenshot_width = 800")
    assert session.limits.max_result_bytes == 1048576 and session.launch_defaults.headless is True


def test_an_invalid_option_fails_clearly_and_changes_nothing(shell: Any, browser: Any, caplog: Any) -> None:
    (magics,) = browser_magics(shell)
    session = webmcp_nb.session()
    ok(browser("health"))
    limits = session.limits
    with caplog.at_level(logging.ERROR):  # %config reports a refused value as an error, not by raising
        shell.run_line_magic("config", "BrowserMagics.max_result_bytes = 1000")
    assert "max_result_bytes must be at least 4096, got 1000" in caplog.text
    with pytest.raises(TraitError, match="at least 4096"):
        magics.max_result_bytes = 4095
    with pytest.raises(TraitError, match="backend must be one of 'chromium'"):
        magics.backend = "firefox"
    with pytest.raises(TraitError, match="live_view_fps"):
        magics.live_view_fps = 0
    with pytest.raises(TraitError, match="cannot change once the notebook session has started"):
        magics.default_instance = "other"
    assert magics.max_result_bytes == 1048576 and magics.backend == "chromium"
    assert magics.live_view_fps == 15.0 and magics.default_instance == "default"
    assert session.limits is limits and session.live_view_fps == 15.0
    assert ok(browser("health"))["limits"]["max_result_bytes"] == 1048576


def test_config_remote_endpoint_and_headers_reach_the_session_and_never_show_a_token(
    shell: Any, browser: Any, caplog: Any
) -> None:
    secret = "tok-SECRET-4711"
    url = f"ws://user:pw-{secret}@127.0.0.1:9/grid?token={secret}"
    session = webmcp_nb.session()
    try:
        shell.run_line_magic("config", f"BrowserMagics.remote_endpoint = {url!r}")
        shell.run_line_magic("config", f"BrowserMagics.remote_headers = {{'X-Token': {secret!r}}}")
        assert session.launch_defaults.remote_endpoint == url  # the whole URL reaches the session
        assert session.launch_defaults.remote_headers == (("X-Token", secret),)
        assert ok(browser("health"))["remote_endpoint"] == "ws://127.0.0.1:9/grid"
        with capture_output() as captured:
            shell.run_line_magic("config", "BrowserMagics")
            print(repr(shell.run_line_magic("config", "BrowserMagics.remote_endpoint")))
            print(repr(shell.run_line_magic("config", "BrowserMagics.remote_headers")))
        assert "Current: 'ws://127.0.0.1:9/grid'" in captured.stdout
        assert "{'X-Token': '[redacted]'}" in captured.stdout
        with caplog.at_level(logging.ERROR):
            shell.run_line_magic("config", f"BrowserMagics.remote_endpoint = 'ftp://u:{secret}@h/?t={secret}'")
            shell.run_line_magic("config", "BrowserMagics.remote_headers = {'bad name': 'x'}")
            shell.run_line_magic("config", f"BrowserMagics.remote_headers = {{'X-Token': '{secret}\\n'}}")
        assert "remote_endpoint: cdp_endpoint must be a http:// or https:// or ws:// or wss:// URL" in caplog.text
        assert "'bad name' is not an HTTP header name" in caplog.text
        assert "the value of 'X-Token' must be one line of text" in caplog.text
        assert secret not in captured.stdout + captured.stderr + caplog.text + repr(session.launch_defaults)
        assert session.launch_defaults.remote_endpoint == url  # refused: nothing changed
        assert session.launch_defaults.remote_headers == (("X-Token", secret),)
    finally:
        shell.run_line_magic("config", "BrowserMagics.remote_endpoint = ''")
        shell.run_line_magic("config", "BrowserMagics.remote_headers = {}")
        for name in ("remote_endpoint", "remote_headers"):  # %config keeps what it set for later loads
            shell.config.BrowserMagics.pop(name, None)
    assert session.launch_defaults.remote_endpoint is None and session.launch_defaults.remote_headers == ()
    assert ok(browser("health"))["remote_endpoint"] is None


def test_remote_headers_default_to_the_environment(ip: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "tok-SECRET-4711"
    monkeypatch.setenv("WEBMCP_NB_REMOTE_HEADERS", json.dumps({"X-Token": secret}))
    ip.extension_manager.unload_extension(EXTENSION)
    try:
        ip.extension_manager.load_extension(EXTENSION)
        (magics,) = browser_magics(ip)
        assert repr(magics.remote_headers) == "{'X-Token': '[redacted]'}"
        assert webmcp_nb.session().launch_defaults.remote_headers == (("X-Token", secret),)
        monkeypatch.setenv("WEBMCP_NB_REMOTE_HEADERS", json.dumps({"bad name": secret}))
        ip.extension_manager.unload_extension(EXTENSION)
        ip.extension_manager.load_extension(EXTENSION)
        (magics,) = browser_magics(ip)
        with pytest.warns(UserWarning, match="'bad name' is not an HTTP header name.*; none are sent") as warned:
            assert magics.remote_headers == {}
        assert secret not in str(warned[0].message)
        assert webmcp_nb.session().launch_defaults.remote_headers == ()
    finally:
        monkeypatch.delenv("WEBMCP_NB_REMOTE_HEADERS")
        ip.extension_manager.unload_extension(EXTENSION)
        ip.extension_manager.load_extension(EXTENSION)


# -- %browser TOOL ---------------------------------------------------------------------------
@pytest.mark.browser
def test_navigate_returns_a_success_envelope(browser: Any, demo: Any) -> None:
    envelope = browser(f"navigate {demo.url}")
    assert isinstance(envelope, Envelope) and envelope.ok
    assert envelope.data["title"] == "Demo Shop"
    assert envelope.operation.tool == "browser_navigate"


@pytest.mark.browser
def test_click_a_ref_from_the_snapshot(browser: Any, shop: str) -> None:
    banana = ref_for(shop, 'button "Add Banana"')
    data = ok(browser(f"click {banana}"))
    assert data["modal_state"] is None
    cart = ok(browser("evaluate \"() => document.querySelector('#cart').textContent\""))["result"]
    assert cart == "Cart: 1 item: Banana"


@pytest.mark.browser
def test_flags_reach_the_tool(browser: Any, shop: str) -> None:
    data = ok(browser("screenshot --full-page --format jpeg --quality 50"))
    assert data["mime_type"] == "image/jpeg" and data["image"][:3] == b"\xff\xd8\xff"
    assert data["source_height"] > 720  # the whole page, not the viewport
    ok(browser("screenshot --full_page"))  # the field's own spelling works too
    shallow, full = ok(browser("snapshot --depth 1"))["snapshot"], ok(browser("snapshot"))["snapshot"]
    assert len(shallow) < len(full)


@pytest.mark.browser
def test_type_takes_quoted_words(browser: Any, demo: Any) -> None:
    assert command("type").parse(["e5", "two words"]) == {"ref": "e5", "text": "two words"}
    ok(browser(f"navigate {demo.url_for('form.html')}"))
    name = ref_for(ok(browser("snapshot"))["snapshot"], 'textbox "Name"')
    ok(browser(f'type {name} "two words"'))
    assert ok(browser("evaluate \"() => document.querySelector('#name').value\""))["result"] == "two words"


def test_arguments_are_generated_from_the_schema() -> None:
    assert command("click").parse(["e3", "--double", "--modifiers", "Shift", "--modifiers", '["Alt"]']) == {
        "ref": "e3",
        "double": True,
        "modifiers": ["Shift", "Alt"],
    }
    assert command("select_option").parse(["e7", "--values", '["a", "b"]', "--values", "c"]) == {
        "ref": "e7",
        "values": ["a", "b", "c"],
    }
    fields = [{"ref": "e5", "type": "textbox", "value": "x y"}]
    assert command("fill_form").parse(["--fields", json.dumps(fields)]) == {"fields": fields}
    assert command("fill_form").parse(["--fields", json.dumps(fields[0])]) == {"fields": fields}
    assert command("create_instance").parse(["x", "--viewport", '{"width": 800, "height": 600}', "--no-headless"]) == {
        "name": "x",
        "viewport": {"width": 800, "height": 600},
        "headless": False,
    }
    assert command("handle_dialog").parse(["--no-accept"]) == {"accept": False}
    assert command("wait_for").parse(["--time-s", "0.5"]) == {"time_s": 0.5}
    assert command("snapshot").parse(["--depth", "2"]) == {"depth": 2}
    assert command("tabs").parse(["--action", "new", "--url", "http://x/"]) == {"action": "new", "url": "http://x/"}
    assert command("evaluate").parse(["() => 1 + 1"]) == {"expression": "() => 1 + 1"}
    assert command("browser_health").parse([]) == {}
    # every registry tool is a subcommand, and its positionals are its required text fields (or the
    # fields the tool names itself: browser_http's [METHOD] URL)
    for spec in REGISTRY:
        tool = command(spec.name)
        required = spec.input_schema.get("required", [])
        positionals = [a.name for a in tool.arguments if is_positional(a, spec.magic_positional)]
        expected = list(spec.magic_positional) or [  # the tool's own say: browser_http's [METHOD] URL
            n for n in required if spec.input_schema["properties"][n].get("type") == "string"
        ]
        assert positionals == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("clik e5", "unknown subcommand 'clik'. Did you mean: click"),
        ("nav x", "Did you mean: navigate, navigate_back, navigate_forward"),
        ("screenshot --fullpage", "unknown flag '--fullpage'. Did you mean: --full-page"),
        ("click e5 --doubel", "Did you mean: --double"),
        ("screenshot --format jpg", "invalid choice 'jpg' (choose from png, jpeg)"),
        ("snapshot --depth deep", "invalid int value: 'deep'"),
        ("create_instance x --viewport {nope", "not valid JSON"),
        ("click", "the following arguments are required: REF"),
        ("handle_dialog", "the following arguments are required: --accept/--no-accept"),
        ("navigate a b", "unexpected argument(s) 'b'"),
        ('type e5 "unclosed', "cannot split"),
        ("panel now", "takes no arguments"),
    ],
)
def test_bad_lines_are_usage_errors(browser: Any, capsys: Any, line: str, expected: str) -> None:
    with pytest.raises(UsageError) as caught:
        browser(line)
    assert expected in str(caught.value)
    assert capsys.readouterr().err == ""  # argparse printed nothing and did not exit


def test_tool_help_is_generated_from_the_registry(browser: Any, capsys: Any) -> None:
    for spec in REGISTRY:
        assert browser(f"{spec.name.removeprefix('browser_')} --help") is None
        out = flat(capsys.readouterr().out)
        assert flat(spec.description) in out
        for name, field in spec.input_schema["properties"].items():
            assert ("--" + name.replace("_", "-")) in out or name.upper() in out
            if "description" in field:
                assert flat(field["description"]).rstrip(".") in out
    browser("help navigate")
    assert "usage: %browser navigate" in capsys.readouterr().out
    for line in ("", "help", "--help", "help --help"):
        assert browser(line) is None
        assert capsys.readouterr().out.strip() == BrowserMagics.browser.getdoc().strip()
    browser("help panel")
    assert "live browser panel" in capsys.readouterr().out


def test_magic_docstring_is_generated_from_the_registry(shell: Any) -> None:
    with capture_output() as captured:
        shell.run_cell("%browser?")
    text = flat(captured.stdout)
    for spec in REGISTRY:
        assert flat(f"{spec.title}: {spec.description}") in text
        assert command(spec.name).signature in text
    for name in BrowserMagics.class_traits(config=True):
        assert name in text
    assert flat(BrowserMagics.browser.getdoc()) in text


def test_tools_panel_and_log_subcommands(browser: Any, monkeypatch: Any) -> None:
    table = browser("tools")
    assert [spec.name for spec in table] == REGISTRY.names()
    made = []
    monkeypatch.setattr(NotebookSession, "panel", lambda self: made.append(("panel", self)) or "P")
    monkeypatch.setattr(NotebookSession, "log", lambda self: made.append(("log", self)) or "L")
    assert (browser("panel"), browser("log")) == ("P", "L")
    assert made == [("panel", webmcp_nb.session()), ("log", webmcp_nb.session())]


# -- %%browser ---------------------------------------------------------------------------------
@pytest.mark.browser
def test_cell_runs_each_line_and_stops_at_the_first_error(shell: Any, demo: Any) -> None:
    shell.user_ns["shop_url"] = demo.url
    cell = """
# open the shop
navigate {shop_url}   # a comment may hold {anything}

  snapshot --depth 2
click e999999
reload
"""
    with capture_output() as captured:
        results = shell.run_cell_magic("browser", "", cell)
    assert isinstance(results, CallList) and len(results) == 3
    assert [r.operation.tool for r in results] == ["browser_navigate", "browser_snapshot", "browser_click"]
    assert results[0].ok and results[1].ok and results[2].error_type == "element_not_found"
    # Only the failed call is shown (besides the launch line, when this cell's call launched Chromium).
    shown = [out for out in captured.outputs if "webmcp-nb-stage" not in out.data.get("text/html", "")]
    assert len(shown) == 1 and "element_not_found" in shown[0].data["text/plain"]
    summary = shell.display_formatter.format(results)[0]["text/plain"]
    assert summary.startswith("3 calls, stopped at an error") and "element_not_found" in summary


def test_cell_checks_every_line_before_calling(shell: Any) -> None:
    session = webmcp_nb.session()
    calls = []
    remove = session.add_listener(calls.append)
    try:
        with pytest.raises(UsageError, match=r"line 3 \('clik e1'\).*Did you mean: click"):
            shell.run_cell_magic("browser", "", "health\n\nclik e1\n")
    finally:
        remove()
    assert calls == []
    assert shell.run_cell_magic("browser", "", "# nothing\n\n") == []
    with pytest.raises(UsageError, match="no arguments on its first line"):
        shell.run_cell_magic("browser", "health", "health")


# -- values, _, await, the shared session ---------------------------------------------------------
def test_assignment_and_underscore(shell: Any) -> None:
    result = shell.run_cell("env = %browser health")
    assert result.success and shell.user_ns["env"].ok
    assert shell.user_ns["env"].operation.tool == "browser_health"
    with capture_output():
        result = shell.run_cell("%browser list_instances")
    assert result.success and shell.user_ns["_"] is result.result and result.result.ok


@pytest.mark.browser
def test_await_uses_the_session_the_magics_use(shell: Any, demo: Any) -> None:
    session = webmcp_nb.session()
    assert session is webmcp_nb.session() and isinstance(session, NotebookSession)
    records = []
    remove = session.add_listener(records.append)
    try:
        shell.user_ns["shop_url"] = demo.url
        result = shell.run_cell(
            "import webmcp_nb\n"
            "nb = webmcp_nb.session()\n"
            "magic_env = %browser navigate {shop_url}\n"
            "awaited = await nb.acall('browser_snapshot')\n"
            "synced = nb.call('browser_health')\n"
        )
        assert result.success, result.error_in_exec
    finally:
        remove()
    assert shell.user_ns["nb"] is session
    assert shell.user_ns["awaited"].ok and shell.user_ns["synced"].ok and shell.user_ns["magic_env"].ok
    assert [(r.tool, r.caller) for r in records] == [
        ("browser_navigate", "notebook"),
        ("browser_snapshot", "notebook"),
        ("browser_health", "notebook"),
    ]


@pytest.mark.browser
def test_screenshot_after_actions(shell: Any, browser: Any, shop: str) -> None:
    (magics,) = browser_magics(shell)
    hover_me = ref_for(shop, 'button "Hover me"')
    magics.screenshot_after_actions = True
    magics.screenshot_width = 320
    try:
        with capture_output() as captured:
            ok(browser(f"hover {hover_me}"))
            ok(browser("snapshot"))  # read-only: no screenshot
            assert not browser("click e999999").ok  # failed: no screenshot
    finally:
        magics.screenshot_after_actions = False
        magics.screenshot_width = 800
    (shown,) = captured.outputs
    assert "image/png" in shown.data and shown.metadata["image/png"]["width"] == 320


def test_magics_work_from_another_thread(browser: Any) -> None:
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        envelopes = list(pool.map(lambda _: browser("health"), range(4)))
    assert all(envelope.ok for envelope in envelopes)


# -- a real kernel -------------------------------------------------------------------------------
@pytest.mark.browser
def test_autoload_in_a_kernel_through_config(demo: Any) -> None:
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(
        kernel_name="python3",
        extra_arguments=[f"--InteractiveShellApp.extensions={EXTENSION}", "--BrowserMagics.screenshot_width=640"],
    )

    def run(code: str) -> list[dict[str, Any]]:
        outputs: list[dict[str, Any]] = []
        reply = kc.execute_interactive(code, output_hook=outputs.append, timeout=120)
        assert reply["content"]["status"] == "ok", reply["content"]
        return [msg["content"] for msg in outputs if msg["msg_type"] in ("stream", "execute_result", "display_data")]

    try:
        (width,) = run("%config BrowserMagics.screenshot_width")
        assert width["data"]["text/plain"] == "640"
        launching, title = run(f"env = %browser navigate {demo.url}\nenv.data['title']")  # it launches Chromium
        assert launching["data"]["text/plain"] == "browser_navigate: launching Chromium…"
        assert title["data"]["text/plain"] == "'Demo Shop'"
        (shown,) = run("%browser list_instances")  # the envelope itself is the cell's value
        assert shown["data"]["text/plain"]
        (pid,) = run(
            "import os, webmcp_nb\n"
            "env = await webmcp_nb.session().acall('browser_snapshot')\n"
            "assert env.ok and 'Add Banana' in env.data['snapshot']\n"
            "os.getpid()"
        )
        kernel_pid = int(pid["data"]["text/plain"])
        assert browser_processes(kernel_pid)
        run(f"%unload_ext {EXTENSION}")
        wait_until(lambda: not browser_processes(kernel_pid), message=lambda: f"left: {browser_processes(kernel_pid)}")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_serve_prints_the_url_token_and_configs_and_stops(browser: Any, capsys: Any) -> None:
    browser("serve --approve none --caps js")
    out = capsys.readouterr().out
    url = re.search(r"MCP server: (http://127\.0\.0\.1:\d+/mcp)", out)
    token = re.search(r"token: +(\S+)", out)
    assert url and token, out
    assert f"Bearer {token.group(1)}" in out  # the HTTP configuration
    assert f'"attach", "--url", "{url.group(1)}", "--token", "{token.group(1)}"' in out  # the stdio bridge
    assert "claude mcp add --transport http" in out and "caps:       js" in out
    session = webmcp_nb.session()
    assert [server.url for server in session.servers] == [url.group(1)]
    assert "to replace an entry added for another URL or token: `claude mcp remove webmcp-nb` first" in out
    browser("serve --stop")
    assert "stopped 1 MCP server" in capsys.readouterr().out
    assert session.servers == []
    browser("serve --approve none")  # again: the same URL and token, so pasted configs keep working
    again = capsys.readouterr().out
    assert f"MCP server: {url.group(1)}" in again and f"token:      {token.group(1)}" in again
    browser("serve --approve none --new")
    fresh = capsys.readouterr().out
    assert url.group(1) not in fresh and token.group(1) not in fresh
    assert len(session.servers) == 2
    browser("serve --stop")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "serve --caps bogus",
            f"unknown capability bogus; choose from {', '.join(CAPS)}",
        ),
        ("serve --approve maybe", "invalid choice: 'maybe'"),
        ("serve --host 0.0.0.0", "only loopback by default"),
        ("serve --port nine", "invalid int value"),
        ("serve --allow-scheme file", "the file: scheme is granted with a root directory: file_root (--file-root DIR)"),
        ("serve --allow-scheme ftp", "unknown scheme ftp; choose from data, blob, view-source, chrome, devtools"),
        ("serve --file-root /nonexistent-root", "the file root /nonexistent-root does not exist"),
        ("serve --chromium-arg=no-dashes", "Chromium arguments start with '--': no-dashes"),
    ],
)
def test_serve_rejects_bad_options_and_starts_nothing(browser: Any, line: str, message: str) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        browser(line)
    assert webmcp_nb.session().servers == []


# -- browser_http in a notebook ----------------------------------------------------------------
@pytest.mark.browser
def test_http_renders_json_as_a_tree_and_shows_sse_live(browser: Any, demo: Any) -> None:
    ok(browser(f"navigate {demo.url}"))
    envelope = browser("http GET /api/items")
    assert ok(envelope)["body"][1]["name"] == "Banana"
    # A small body's lean cell is its text; a full cell's HTML shows it as a tree.
    assert envelope._repr_mimebundle_()[0] == {"text/plain": str(envelope)} and "Banana" in str(envelope)
    html = mimebundle(envelope, full=True)[0]["text/html"]
    assert "<table" in html and "<td" in html and "Banana" in html and "<script" not in html
    nested = browser("http /api/secrets")  # the method is optional: GET
    html = mimebundle(nested, full=True)[0]["text/html"]
    assert "<details open>" in html and "[blocked]" in html and "hunter2" not in html
    limits = json.dumps({"max_events": 10, "max_bytes": 10_000, "max_duration_ms": 10_000})
    with capture_output() as captured:
        envelope = browser(f"http GET '/api/sse?n=3&interval_ms=300' --response sse --sse '{limits}'")
    assert len(ok(envelope)["body"]["events"]) == 3
    shown = [output for output in captured.outputs if "webmcp-nb-progress" in output.data.get("text/html", "")]
    assert len(shown) >= 2  # displayed, then updated in place as the events arrived
    assert len({output.transient["display_id"] for output in shown}) == 1
    assert [output.update for output in shown] == [False] + [True] * (len(shown) - 1)
    assert "3 events" in shown[-1].data["text/plain"]
