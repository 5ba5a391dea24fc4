"""Each session option is declared once (`Limits` in core/config.py) and every front end takes it
from there: `Session(...)`, `reconfigure`, the notebook's traits, `webmcp-nb serve` flags and the
the configuration page's table. Values remember their source, and a bad value is refused naming it."""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import re
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from traitlets import TraitError

from tests.conftest import error, ok
from webmcp_nb.cli import build_parser, main
from webmcp_nb.client import Session
from webmcp_nb.core.call.envelope import Envelope, enforce_size_limit
from webmcp_nb.core.config import LIMIT_OPTIONS, Limits
from webmcp_nb.core.options import flag
from webmcp_nb.notebook.options import NotebookOptions
from webmcp_nb.notebook.session import NotebookSession
from webmcp_nb.serve_options import HTTP_OPTIONS, HttpLimits

from .helpers import make_operation

ROOT = Path(__file__).resolve().parent.parent
NAMES = list(LIMIT_OPTIONS)
ENVIRONMENT = {
    "max_result_bytes": ("BROWSER_MCP_MAX_RESULT_BYTES", "5000", 5000),
    "max_instances": ("BROWSER_MCP_MAX_INSTANCES", "3", 3),
    "operation_timeout_s": ("BROWSER_MCP_OPERATION_TIMEOUT_SECONDS", "7.5", 7.5),
    "action_timeout_s": ("WEBMCP_NB_ACTION_TIMEOUT_SECONDS", "2.5", 2.5),
    "navigation_timeout_s": ("WEBMCP_NB_NAVIGATION_TIMEOUT_SECONDS", "12", 12.0),
    "capture_timeout_s": ("WEBMCP_NB_CAPTURE_TIMEOUT_SECONDS", "9", 9.0),
    "event_buffer_size": ("WEBMCP_NB_EVENT_BUFFER_SIZE", "50", 50),
    "max_capture_pixels": ("WEBMCP_NB_MAX_CAPTURE_PIXELS", "1000000", 1_000_000),
    "max_capture_side": ("WEBMCP_NB_MAX_CAPTURE_SIDE", "4000", 4000),
}


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for spec in LIMIT_OPTIONS.values():
        monkeypatch.delenv(spec.env, raising=False)
        if spec.deprecated_env:
            monkeypatch.delenv(spec.deprecated_env, raising=False)


def exactly(text: str) -> str:
    """A `match` pattern for exactly `text`."""
    return f"^{re.escape(text)}$"


@pytest.fixture
def notebook_options() -> Iterator[Callable[[], NotebookOptions]]:
    """Make options as the loaded extension has them (attached: no shared session is open here)."""
    made: list[NotebookOptions] = []

    def make() -> NotebookOptions:
        made.append(NotebookOptions())
        return made[-1]

    yield make
    for options in made:
        options.detach()


def test_the_configuration_table_is_generated_from_the_declarations() -> None:
    spec = importlib.util.spec_from_file_location("generate_options", ROOT / "scripts" / "generate_options.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    readme = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert module.with_table(readme) == readme, "the options table is stale: run scripts/generate_options.py"
    assert "| navigation timeout (s) | `WEBMCP_NB_NAVIGATION_TIMEOUT_SECONDS` | `navigation_timeout_s` |" in readme


def test_every_front_end_takes_every_option() -> None:
    def keywords(function: Any) -> list[str]:
        return [name for name in inspect.signature(function).parameters if name in LIMIT_OPTIONS]

    assert keywords(Session) == keywords(Session.reconfigure) == NAMES
    assert all(inspect.signature(Session).parameters[name].default is None for name in NAMES)
    traits = NotebookOptions.class_traits(applies="limit")
    assert sorted(traits) == sorted(NAMES)
    for name, spec in LIMIT_OPTIONS.items():
        assert traits[name].help == f"{spec.help} It {spec.bound}. Default: {spec.env} or {spec.default:g}."
    serve = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices["serve"]
    flags = {action.dest: action for action in serve._actions if action.dest in LIMIT_OPTIONS}
    assert list(flags) == NAMES
    for name, spec in LIMIT_OPTIONS.items():
        assert (flags[name].option_strings, flags[name].type, flags[name].default) == ([flag(spec)], spec.type, None)


@pytest.mark.parametrize("name", NAMES)
def test_each_option_is_read_from_its_environment_variable(
    monkeypatch: pytest.MonkeyPatch, notebook_options: Any, name: str
) -> None:
    env, raw, value = ENVIRONMENT[name]
    monkeypatch.setenv(env, raw)
    session = Session()
    assert getattr(session.limits, name) == value
    assert session.limits.source(name) == f"environment variable {env}"
    assert getattr(notebook_options(), name) == value
    assert getattr(Session(**{name: value * 2}).limits, name) == value * 2  # a keyword wins


def test_a_value_names_where_it_came_from(monkeypatch: pytest.MonkeyPatch, notebook_options: Any) -> None:
    monkeypatch.setenv("WEBMCP_NB_CAPTURE_TIMEOUT_SECONDS", "9")
    session = Session(max_result_bytes=5000)
    assert session.limits.source("max_result_bytes") == "Session(max_result_bytes=...)"
    assert session.limits.source("capture_timeout_s") == "environment variable WEBMCP_NB_CAPTURE_TIMEOUT_SECONDS"
    assert session.limits.source("max_instances") == "the default; BROWSER_MCP_MAX_INSTANCES or max_instances= sets it"
    session.reconfigure(max_instances=4, capture_timeout_s=3)
    assert (session.limits.max_instances, session.limits.capture_timeout_s) == (4, 3)
    assert session.limits.source("max_instances") == "reconfigure(max_instances=...)"
    assert session.limits.source("max_result_bytes") == "Session(max_result_bytes=...)"
    options = notebook_options()
    options.max_result_bytes = 8192
    from_notebook = NotebookSession(**options.session_options()).limits
    assert from_notebook.max_result_bytes == 8192 and from_notebook.capture_timeout_s == 9
    assert from_notebook.source("max_result_bytes") == "%config BrowserMagics.max_result_bytes"
    assert from_notebook.source("capture_timeout_s") == "environment variable WEBMCP_NB_CAPTURE_TIMEOUT_SECONDS"
    assert from_notebook.source("max_instances") == Limits().source("max_instances")
    envelope = Envelope("success", "default", make_operation(), data={"x": "y" * 6000})
    message = enforce_size_limit(
        envelope, 4096, read_only=True, hint="", source=session.limits.source("max_result_bytes")
    )
    assert "over the limit of 4096 bytes (Session(max_result_bytes=...)); it was not returned" in message.message


BAD = [
    ("max_result_bytes", "10", 10, "max_result_bytes must be at least 4096, got 10"),
    ("max_instances", "0", 0, "max_instances must be at least 1, got 0"),
    ("operation_timeout_s", "-1", -1.0, "operation_timeout_s must be positive, got -1.0"),
    ("navigation_timeout_s", "0", 0.0, "navigation_timeout_s must be positive, got 0.0"),
]


@pytest.mark.parametrize(("name", "raw", "value", "refusal"), BAD)
def test_a_bad_value_is_refused_the_same_way_everywhere(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    notebook_options: Any,
    name: str,
    raw: str,
    value: Any,
    refusal: str,
) -> None:
    env = LIMIT_OPTIONS[name].env
    with pytest.raises(ValueError, match=exactly(f"{refusal} (Session({name}=...))")):
        Session(**{name: value})
    session = Session()
    with pytest.raises(ValueError, match=exactly(f"{refusal} (reconfigure({name}=...))")):
        session.reconfigure(**{name: value})
    assert session.limits == Limits()  # nothing changed
    options = notebook_options()
    with pytest.raises(TraitError) as configured:
        setattr(options, name, value)
    assert str(configured.value) == (
        f"NotebookOptions.{name} = {value!r} was refused, nothing changed: {refusal} (%config BrowserMagics.{name})"
    )
    assert main(["serve", flag(LIMIT_OPTIONS[name]), raw]) == 2
    assert capsys.readouterr().err == f"webmcp-nb serve: {refusal} (webmcp-nb serve {flag(LIMIT_OPTIONS[name])})\n"
    monkeypatch.setenv(env, raw)
    with pytest.raises(ValueError, match=exactly(f"{refusal} (environment variable {env})")):
        Session()
    options = notebook_options()
    with pytest.warns(UserWarning, match="not applied") as warned:
        assert getattr(options, name) == LIMIT_OPTIONS[name].default  # the notebook warns, keeps the default
    assert [str(w.message) for w in warned] == [
        f"BrowserMagics.{name} not applied: {refusal} (environment variable {env})"
    ]
    assert getattr(NotebookSession(**options.session_options()).limits, name) == LIMIT_OPTIONS[name].default


def test_values_of_the_wrong_kind_are_refused_naming_the_option(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(
        ValueError, match=r"^max_result_bytes must be an int, got '5000' \(Session\(max_result_bytes=...\)\)$"
    ):
        Session(max_result_bytes="5000")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^operation_timeout_s must be a number, got True"):
        Session(operation_timeout_s=True)
    with pytest.raises(TypeError, match=r"^unknown option max_result$"):
        Session().reconfigure(max_result=5000)
    monkeypatch.setenv("BROWSER_MCP_MAX_RESULT_BYTES", "lots")
    with pytest.raises(
        ValueError,
        match=exactly(
            "max_result_bytes: environment variable BROWSER_MCP_MAX_RESULT_BYTES='lots' is not a valid int "
            "(must be at least 4096)"
        ),
    ):
        Session()
    assert Session(max_result_bytes=5000).limits.max_result_bytes == 5000  # a keyword: the variable is not read


def test_the_old_event_buffer_variable_is_still_read_with_a_deprecation_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BROWSER_MCP_EVENT_BUFFER_SIZE", "70")
    with pytest.warns(
        DeprecationWarning,
        match="^BROWSER_MCP_EVENT_BUFFER_SIZE is deprecated: set WEBMCP_NB_EVENT_BUFFER_SIZE instead$",
    ):
        limits = Session().limits
    assert limits.event_buffer_size == 70
    assert limits.source("event_buffer_size") == "environment variable BROWSER_MCP_EVENT_BUFFER_SIZE"
    monkeypatch.setenv("WEBMCP_NB_EVENT_BUFFER_SIZE", "80")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Session().limits.event_buffer_size == 80  # the new name wins, without a warning


def test_the_instance_limit_message_names_where_the_limit_came_from(fresh_session: Any) -> None:
    s = fresh_session(max_instances=1)
    ok(s.create_instance("a"))
    message = error(s.create_instance("b"), "instance_limit_exceeded", "not_started", "after_correction")
    assert message == (
        "1 instances are live, launching or closing; the limit is 1 (Session(max_instances=...)). Destroy one first."
    )
    s.reconfigure(max_instances=1)
    message = error(s.create_instance("b"), "instance_limit_exceeded", "not_started", "after_correction")
    assert "the limit is 1 (reconfigure(max_instances=...))." in message


def test_the_http_limits_are_declared_the_same_way_and_documented() -> None:
    readme = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
    assert [spec.env for spec in HTTP_OPTIONS.values()] == [
        f"WEBMCP_NB_HTTP_{name.upper().replace('_S', '_SECONDS')}" for name in HTTP_OPTIONS
    ]
    assert all(f"| `{spec.env}` |" in readme for spec in HTTP_OPTIONS.values())
    with pytest.raises(
        ValueError, match=exactly("max_requests must be positive, got 0 (HttpLimits(max_requests=...))")
    ):
        HttpLimits(max_requests=0)
