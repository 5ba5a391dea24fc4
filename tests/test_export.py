"""Session export, piece by piece: refs recorded as role and name, ``%browser`` lines that parse back
exactly (IPython's expansion included), secrets as placeholders, calls not started not replayed.
(The replay of a whole exported session on a fresh kernel is in test_notebooks.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import nbformat
import pytest
from IPython.utils.text import DollarFormatter

from webmcp_nb.client import tool_registry
from webmcp_nb.core.browsers.aria import RefTarget, ref_of, refs_in_args, target_of
from webmcp_nb.core.call.engine import CallRecord
from webmcp_nb.core.call.envelope import Envelope
from webmcp_nb.demo import DemoServer
from webmcp_nb.export import Code, Step, magic_cell, python_call, script
from webmcp_nb.notebook.magics import command, split_words

from .conftest import make_operation

SNAPSHOT = """- main [ref=e1]:
  - button "Add" [ref=e2]
  - listitem:
    - button "Add" [ref=e3]
  - button "Say \\"hi\\"" [ref=e4]
  - textbox "Name" [ref=f1e5]: Ada
  - paragraph [ref=e7]: one
  - paragraph "Add" [ref=e8]
  - paragraph [ref=e9]: two
"""


def test_a_ref_is_recorded_as_role_name_and_position_and_found_again() -> None:
    assert target_of(SNAPSHOT, "e3") == RefTarget("button", "Add", 1)
    assert target_of(SNAPSHOT, "e4") == RefTarget("button", 'Say "hi"', 0)
    assert target_of(SNAPSHOT, "f1e5") == RefTarget("textbox", "Name", 0)
    assert target_of(SNAPSHOT, "e9") == RefTarget("paragraph", "", 1)
    assert ref_of(SNAPSHOT, RefTarget("paragraph", "", 1)) == "e9"
    assert target_of(SNAPSHOT, "e10") is None
    renumbered = SNAPSHOT.replace("e2]", "e20]").replace("e3]", "e30]")
    assert ref_of(renumbered, RefTarget("button", "Add", 1)) == "e30"
    assert ref_of(renumbered, RefTarget("button", "Add", 2)) is None
    assert refs_in_args({"ref": "e2", "fields": [{"ref": "f1e5"}], "source_ref": "e3", "text": "e4"}) == [
        "e2",
        "f1e5",
        "e3",
    ]


def step(tool: str, args: dict[str, Any], refs: dict[str, str] | None = None) -> Step:
    spec = tool_registry().get(tool)
    envelope = Envelope(status="success", instance="default", data={}, operation=make_operation(tool=tool))
    record = CallRecord(tool, args, "notebook", envelope)
    lookups = {key: Code(f"replay.ref('textbox', {key!r})") for key in refs or {}}
    return Step(record, spec, {**args, **lookups}, refs=lookups)


def replayed_args(cell: str, namespace: dict[str, Any]) -> dict[str, Any]:
    """What the ``%browser`` line of `cell` gives the tool in a kernel whose namespace is `namespace`:
    IPython's own expansion (kept as written when it fails), then the magic's parser."""
    line = cell.splitlines()[-1].removeprefix("%browser ")
    try:
        line = DollarFormatter().vformat(line, args=[], kwargs=namespace)
    except Exception:  # noqa: BLE001 - what IPython does
        pass
    words = split_words(line)
    return command(words[0]).parse(words[1:])


TEXTS = [
    "plain",
    "two words",
    "it's",
    'it\'s "x"',
    "#hash",
    "what?",
    'say "hi"',
    "naïve — ok",
    "a\\b",
    "--flag",
    "",
    "$5",
    "$x",
    "{x}",
    "{x!r}",
    '{"a": 1}',
    "price: {0}",
    "}",
    "{",
    "line\nbreak",
]


@pytest.mark.parametrize("text", TEXTS)
def test_typed_text_is_written_as_a_line_only_when_it_comes_back_exactly(text: str) -> None:
    namespace = {"x": "EXPANDED", "ref": "e7"}
    cell = magic_cell(step("browser_type", {"ref": "e2", "text": text}, refs={"ref": "e2"}))
    if cell is None:
        assert set(text) & set("{}$\n") or text.startswith("-")  # Python instead
        return
    assert cell.splitlines()[0] == "ref = replay.ref('textbox', 'ref')  # e2 when recorded"
    assert replayed_args(cell, namespace) == {"ref": "e7", "text": text}


@pytest.mark.parametrize("value", [{"item": "Banana", "quantity": 2}, {}, {"note": "$x {x}"}, {"a": {"b": [1, 2]}}])
def test_json_arguments_stay_verbatim(value: dict[str, Any]) -> None:
    cell = magic_cell(step("browser_webmcp_call", {"name": "add_to_cart", "input": value}))
    assert cell is not None and cell.startswith("%browser webmcp_call add_to_cart --input ")
    assert replayed_args(cell, {"x": "EXPANDED"}) == {"name": "add_to_cart", "input": value}


def test_flags_numbers_and_switches_parse_back() -> None:
    args = {"full_page": True, "format": "jpeg", "quality": 40}
    cell = magic_cell(step("browser_screenshot", args))
    assert cell == "%browser screenshot --format jpeg --quality 40 --full-page"  # declaration order
    assert replayed_args(cell, {}) == args
    assert magic_cell(step("browser_screenshot", {"full_page": False})) == "%browser screenshot"


def test_secrets_and_refs_inside_values_are_python() -> None:
    fields = [{"ref": Code("replay.ref('textbox', 'Password')"), "type": "textbox", "value": Code("secret_1")}]
    planned = step("browser_fill_form", {"fields": fields})
    assert magic_cell(planned) is None
    assert python_call(planned) == (
        "replay.call('browser_fill_form', {'fields': [{'ref': replay.ref('textbox', 'Password'), "
        "'type': 'textbox', 'value': secret_1}]}, expect='success')"
    )


def test_export_from_a_live_session(session: Any, demo: DemoServer) -> None:
    session.navigate(demo.url_for("form.html")).raise_for_status()
    yaml = session.snapshot().data["snapshot"]
    password = next(line for line in yaml.splitlines() if '"Password"' in line).split("ref=")[1].split("]")[0]
    session.type(password, "s3cret-value").raise_for_status()
    session.click("e424242")  # not started: written as a note
    typed = [record for record in session.history if record.tool == "browser_type"][-1]
    assert typed.args["text"] == "[redacted]" and typed.targets == {password: RefTarget("textbox", "Password")}
    written = script(session)
    assert "s3cret-value" not in written
    assert (
        "secret_1 = replay.secret(None, 'secret_1', 'text python typed into textbox \"Password\" with browser_type')"
        in written
    )
    assert (
        "replay.call('browser_type', {'ref': replay.ref('textbox', 'Password'), 'text': secret_1}, expect='success')"
        in written
    )
    assert "# Not replayed: `browser_click` was not run (element_not_found" in written
    compile(written, "replay.py", "exec")


def test_an_export_of_a_log_that_forgot_its_first_calls_says_so(fresh_session: Any, demo: DemoServer) -> None:
    from webmcp_nb.core.call import engine

    session = fresh_session()
    session.navigate(demo.url).raise_for_status()
    session.engine.history = engine.deque(session.history, maxlen=2)
    for _ in range(2):
        session.call("browser_snapshot").raise_for_status()
    with pytest.warns(UserWarning, match=r"Incomplete: the session's first 1 calls are no longer in the call log"):
        written = script(session)
    assert written.startswith('"""Replay of a webmcp_nb session. **Incomplete: the session\'s first 1 calls')
    assert "browser_navigate" not in written


def test_the_export_magic_reads_a_path_and_callers() -> None:
    from IPython.core.error import UsageError

    from webmcp_nb.notebook.magics import parse_export

    assert parse_export(["a b.ipynb", "--callers", "notebook", "agent:*"]) == {
        "path": "a b.ipynb",
        "callers": ["notebook", "agent:*"],
    }
    assert parse_export(["repro.py"]) == {"path": "repro.py", "callers": None}
    with pytest.raises(UsageError, match=r"'notes.txt' must end in .ipynb \(a notebook\) or .py \(a script\)"):
        parse_export(["notes.txt"])
    with pytest.raises(UsageError, match="%browser export: the following arguments are required: path"):
        parse_export([])


def test_a_published_function_is_replayed_as_a_python_call(fresh_session: Any, tmp_path: Any) -> None:
    session = fresh_session()

    @session.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    assert session.call("add", a=2, b=3).ok
    session.call("add", a="two", b=3)  # invalid_params: a note
    import nbformat

    sources = [cell.source for cell in nbformat.read(session.export_notebook(tmp_path / "published.ipynb"), 4).cells]
    assert (
        "# add is a function the recorded session published: publish it again first\n"
        "replay.call('add', {'a': 2, 'b': 3}, expect='success')" in sources
    )
    assert any(source.startswith("Not replayed: `add` was not run (invalid_params") for source in sources)


def test_a_loopback_site_is_a_parameter_and_the_replay_follows_it_elsewhere(fresh_session: Any, tmp_path: Any) -> None:
    recorded_at = DemoServer().start()
    session = fresh_session()
    session.navigate(recorded_at.url_for("form.html")).raise_for_status()
    session.call("browser_wait_for", url=recorded_at.url_for("form.html")).raise_for_status()
    path = session.export_script(tmp_path / "replay.py")
    notebook = nbformat.read(session.export_notebook(tmp_path / "replay.ipynb"), 4)
    origin = recorded_at.url.rstrip("/")
    recorded_at.stop()  # the demo's random port is gone, as after any demo
    sources = [cell.source for cell in notebook.cells]
    parameters = next(cell for cell in notebook.cells if "parameters" in cell.metadata.get("tags", []))
    assert f"BASE_URL = None  # recorded at {origin}" in parameters.source
    setup = sources[sources.index(parameters.source) + 1]
    assert f"BASE_URL = replay.base_url(BASE_URL, {origin!r}, 'BASE_URL')" in setup
    assert "%browser navigate {BASE_URL}/form.html" in sources  # still a %browser line, the port a parameter
    assert not [
        source for source in sources if origin in source and "recorded at" not in source and "base_url" not in source
    ]

    gone = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )
    assert gone.returncode == 1
    assert f"replay: {origin} does not answer and there is no one to ask (EOFError); set BASE_URL" in gone.stderr
    assert "Traceback" not in gone.stderr

    with DemoServer() as elsewhere:
        moved = subprocess.run(
            [sys.executable, str(path)],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "WEBMCP_NB_BASE_URL": elsewhere.url},
        )
    assert moved.returncode == 0, moved.stdout + moved.stderr
    assert [line.split()[:2] for line in moved.stdout.splitlines()] == [
        ["ok", "browser_navigate"],
        ["ok", "browser_wait_for"],
    ]


def test_the_export_writes_and_reads_its_lines_without_ipython() -> None:
    """The export and the parser it checks its lines with import no IPython (the magics wrap that
    parser): in a process where importing IPython fails, a step becomes a line and a bad line a
    CommandError."""
    code = """
import json, sys
sys.modules["IPython"] = None  # importing IPython now fails
from tests.helpers import make_operation
from webmcp_nb.client import tool_registry
from webmcp_nb.core.call.engine import CallRecord
from webmcp_nb.core.call.envelope import Envelope
from webmcp_nb.export import Step, magic_cell
from webmcp_nb.tool_commands import CommandError, tool_command

args = {"ref": "e5", "text": "two words"}
envelope = Envelope(status="success", instance="default", data={}, operation=make_operation(tool="browser_type"))
cell = magic_cell(Step(CallRecord("browser_type", args, "notebook", envelope), tool_registry().get("browser_type"), args))
try:
    tool_command(tool_registry().get("browser_click")).parse([])
except CommandError as exc:
    error = str(exc).splitlines()[0]
print(json.dumps([cell, error, sorted(name for name in sys.modules if name.startswith("IPython."))]))
"""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [
        "%browser type e5 'two words'",
        "%browser click: the following arguments are required: REF",
        [],
    ]
