"""Tab completion of ``%browser``: subcommands, flags and enum values, read from the parsers
that run the line; checked as text and through a real kernel's complete_request."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from jupyter_client.manager import start_new_kernel

from webmcp_nb.notebook.completion import complete


def test_subcommands_complete_after_the_magic() -> None:
    assert complete("%browser cl") == (["click"], "cl")  # not IPython's own %clear
    names, word = complete("%browser ")
    assert word == "" and {"navigate", "snapshot", "serve", "export", "panel", "log", "tools"} <= set(names)
    assert complete("%browser help scr") == (["screenshot", "scroll"], "scr")


def test_flags_and_their_values_complete() -> None:
    assert complete("%browser screenshot --fo") == (["--format"], "--fo")
    assert complete("%browser screenshot --format ") == (["png", "jpeg"], "")
    assert complete("%browser screenshot --format j") == (["jpeg"], "j")
    flags, _ = complete("%browser screenshot ")
    assert "--full-page" in flags and "--help" in flags and all(flag.startswith("--") for flag in flags)
    assert complete("%browser network --d") == (["--df"], "--d")  # the magic's own flags: listings only
    assert "--plot" in complete("%browser network --")[0] and "--df" in complete("%browser console --")[0]
    assert complete("%browser navigate http://x --d") == ([], "--d")
    assert complete("%browser serve --appr") == (["--approve"], "--appr")
    assert complete("%browser serve --approve ") == (["consequential", "all", "none"], "")
    assert complete("%browser export x.ipynb --ca") == (["--callers"], "--ca")
    assert complete("%browser navigate http://x --wait-until ") == (
        ["commit", "domcontentloaded", "load", "networkidle"],
        "",
    )


def test_free_values_and_other_lines_offer_nothing_of_ours() -> None:
    assert complete("%browser snapshot --depth ") == ([], "")
    assert complete("%browser nosuchtool --") == ([], "--")
    assert complete("print('%browser cl") is None
    assert complete("x = 1") is None
    assert complete('%browser type e5 "two wo') is None  # inside an open quote


def test_call_lines_of_a_browser_cell_complete() -> None:
    assert complete("%%browser\nnavigate http://x\nscreen") == (["screenshot"], "screen")
    assert complete("%%browser\nscreenshot --format ") == (["png", "jpeg"], "")
    assert complete("%%browser execute --ti") == (["--timeout-s"], "--ti")
    assert complete("%%browser execute\nawait page.cl") is None  # a snippet's body is Python
    assert complete("x = 1\n%browser cl") is None  # a line magic is only a line magic at the top


@pytest.fixture(scope="module")
def kernel() -> Iterator[object]:
    manager, client = start_new_kernel(kernel_name="python3")
    client.execute_interactive("%load_ext webmcp_nb", timeout=60)
    yield client
    client.stop_channels()
    manager.shutdown_kernel(now=True)


def completions(client: object, code: str) -> tuple[list[str], str]:
    reply = client.complete(code, len(code), reply=True, timeout=30)["content"]  # type: ignore[attr-defined]
    assert reply["status"] == "ok", reply
    return reply["matches"], code[reply["cursor_start"] : reply["cursor_end"]]


def test_a_kernel_completes_subcommands_flags_and_values(kernel: object) -> None:
    matches, replaced = completions(kernel, "%browser cl")
    assert "click" in matches and "%clear" not in matches and replaced == "cl"
    assert all(match.startswith("cl") for match in matches)
    matches, replaced = completions(kernel, "%browser screenshot --format ")
    assert sorted(matches) == ["jpeg", "png"] and replaced == ""
    matches, replaced = completions(kernel, "%browser screenshot --fu")
    assert matches == ["--full-page"] and replaced == "--fu"
    assert completions(kernel, "%browser screenshot --fo") == (["--format"], "--fo")  # as tests/test_jupyterlab.py
    matches, _ = completions(kernel, "%%browser\nnavigate http://x\nsnap")
    assert matches == ["snapshot"]
    matches, _ = completions(kernel, "import o")  # other code still completes as before
    assert "os" in matches
