"""The MCP serve options are declared once (ServeOptions) and every front end takes them from there."""

from __future__ import annotations

import argparse
import dataclasses
import http.client
import inspect
from urllib.parse import urlsplit

import pytest

from webmcp_nb.cli import build_parser
from webmcp_nb.client import Session
from webmcp_nb.notebook.magics import parse_serve, serve_parser
from webmcp_nb.notebook.session import NotebookSession
from webmcp_nb.serve_options import ServeOptions

FIELDS = [option.name for option in dataclasses.fields(ServeOptions)]


def flags(parser: argparse.ArgumentParser) -> dict[str, tuple[str, str | None]]:
    return {action.dest: (action.option_strings[0], action.help) for action in parser._actions if action.option_strings}


def cli_serve_parser() -> argparse.ArgumentParser:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["serve"]


def test_session_serve_mcp_takes_exactly_the_serve_options() -> None:
    parameters = inspect.signature(Session.serve_mcp).parameters
    assert list(parameters) == ["self", "options", "approver", *FIELDS]
    # with the same defaults (sequences as tuples there, lists here)
    defaults = {name: parameters[name].default for name in FIELDS}
    declared = dataclasses.asdict(ServeOptions())
    assert {name: list(v) if isinstance(v, tuple) else v for name, v in defaults.items()} == declared


def test_the_notebook_and_the_command_line_flags_are_the_same_declaration() -> None:
    notebook, command_line = flags(serve_parser()), flags(cli_serve_parser())
    declared = {f.name: (f.metadata["flag"], f.metadata["help"]) for f in dataclasses.fields(ServeOptions)}
    assert {k: v for k, v in notebook.items() if k in declared} == declared
    assert {k: v for k, v in command_line.items() if k in declared} == {
        k: v for k, v in declared.items() if k != "approve"
    }


def test_serve_options_are_one_value_and_keywords_go_over_it() -> None:
    options = ServeOptions(caps=["js"], port=9)
    assert ServeOptions.of(options, port=10, upload_roots=("/a",)) == ServeOptions(
        caps=["js"], port=10, upload_roots=["/a"]
    )
    assert ServeOptions.of(None) == ServeOptions() and options.port == 9
    with pytest.raises(TypeError, match="unknown serve option prot"):
        ServeOptions.of(options, prot=10)


def test_parsed_flags_become_serve_options() -> None:
    parsed = parse_serve(["--caps", "js", "files", "--upload-root", "/a", "--upload-root", "/b", "--port", "9"])
    assert parsed is not None and parsed.pop("stop") is False and parsed.pop("new") is False
    options = ServeOptions(**parsed)
    assert (options.caps, options.upload_roots, options.port, options.approve) == (
        ["js", "files"],
        ["/a", "/b"],
        9,
        "consequential",
    )
    assert ServeOptions().approve == "none" and ServeOptions().upload_roots == []


def test_a_bad_option_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match="unknown capability bogus"):
        ServeOptions(caps=["bogus"]).grant("/tmp")
    with pytest.raises(ValueError, match="approve must be one of consequential, all, none, not 'maybe'"):
        ServeOptions(approve="maybe").grant("/tmp")  # type: ignore[arg-type]


def authorized(url: str, token: str) -> bool:
    """Whether the server at `url` takes `token` (an MCP GET: 401 without a valid token)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        connection.request("GET", parts.path, headers={"Authorization": f"Bearer {token}"})
        return connection.getresponse().status != 401
    finally:
        connection.close()


def test_serving_again_in_a_kernel_keeps_the_url_and_token() -> None:
    """A pasted client configuration keeps working when the notebook serves again; --token, --port
    and --new ask for others."""
    with NotebookSession() as session:
        first = session.serve_mcp(approve="none")
        second = session.serve_mcp(approve="none", caps=["js"])
        assert (second.url, second.token) == (first.url, first.token)
        assert not first.running and second.running and authorized(second.url, first.token)
        fresh = session.serve_mcp(approve="none", new=True)
        assert fresh.url != second.url and fresh.token != second.token and second.running
        again = session.serve_mcp(approve="none")
        assert (again.url, again.token) == (fresh.url, fresh.token) and not fresh.running
        chosen = session.serve_mcp(approve="none", token="my-own-token-0123456789")
        assert chosen.token == "my-own-token-0123456789" and authorized(chosen.url, chosen.token)
        assert not authorized(chosen.url, fresh.token)


def test_the_serve_magic_takes_a_token_and_new() -> None:
    parsed = parse_serve(["--token", "abc", "--new"])
    assert parsed is not None and (parsed["token"], parsed["new"]) == ("abc", True)
    assert parse_serve([])["token"] is None  # type: ignore[index]
