"""The agent and teaching notebooks under nbclient, and session export replayed on a fresh kernel.

Every notebook opens with what it shows and how long it takes. `03-agent` serves MCP and a scripted
agent attaches from inside it: its calls are in the call log with caller ``agent:class-agent``, one
consequential call approved and one denied through the approval panel. `04-teaching` runs with the
teacher's solutions (every check passes) and without (every check says, in words, what is missing).
A session mixing Python calls and an MCP agent's calls is exported as a notebook and as a script,
both replayed from scratch, and end on the same page with the same submitted data.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import nbformat
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from nbclient import NotebookClient
from nbformat import v4

from webmcp_nb import Session, find_ref
from webmcp_nb.core import aria
from webmcp_nb.demo import DemoServer

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
AGENT = types.Implementation(name="pytest-agent", version="1.0")
SECRET = "hunter2-Secret"
TRICKY_NOTES = 'costs $5 {x} and it\'s "quoted"'


def execute(notebook: Any, directory: Path) -> Any:
    NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(directory)}}
    ).execute()
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert not [o for o in cell.outputs if o.output_type == "error"], (cell.source, cell.outputs)
    return notebook


def text_of(cell: Any) -> str:
    parts = []
    for output in cell.outputs:
        if output.output_type == "stream":
            parts.append(output.text)
        elif "data" in output:
            parts.append(output.data.get("text/plain", ""))
    return "".join(parts)


def cell_by_source(notebook: Any, fragment: str) -> Any:
    found = [cell for cell in notebook.cells if cell.cell_type == "code" and fragment in cell.source]
    assert len(found) == 1, (fragment, [cell.source for cell in found])
    return found[0]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_every_notebook_opens_with_what_it_shows_and_how_long(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    first = notebook.cells[0]
    assert first.cell_type == "markdown" and first.source.startswith("# ")
    assert re.search(r"\*\*How long:\*\* about \d+ seconds", first.source), first.source
    assert notebook.metadata["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_no_notebook_closes_what_it_shows(path: Path) -> None:
    # After Run All the live panel and the call log stay live; the last cell says how to close them.
    notebook = nbformat.read(path, as_version=4)
    closing = [cell.source for cell in notebook.cells if cell.cell_type == "code" and ".close()" in cell.source]
    assert not closing, closing
    last = notebook.cells[-1]
    assert last.cell_type == "markdown" and last.source.startswith("## When you are done"), last.source
    assert "nb.close()" in last.source and "demo.stop()" in last.source and "Shut Down Kernel" in last.source


@pytest.mark.browser  # runs a kernel that drives a Chromium
def test_agent_notebook_approves_and_denies_an_agents_calls(tmp_path: Path) -> None:
    notebook = execute(nbformat.read(ROOT / "notebooks" / "03-agent.ipynb", as_version=4), tmp_path)
    log = text_of(cell_by_source(notebook, "for record in log.records"))
    rows = [line.split() for line in log.splitlines() if not line.startswith("the panel's URL bar:")]
    # The live panel's URL bar followed the agent's navigation.
    assert re.search(r"^the panel's URL bar: http://127\.0\.0\.1:\d+/index\.html$", log, re.MULTILINE), log
    agent_rows = [row for row in rows if row[0] == "agent:class-agent"]
    assert [row[1:] for row in agent_rows] == [
        ["browser_navigate", "success"],
        ["browser_snapshot", "success"],
        ["browser_click", "success"],
        ["browser_evaluate", "success"],
        ["browser_evaluate", "error", "approval_denied"],
    ]
    assert ["notebook", "browser_navigate", "success"] in rows
    asked = [text_of(cell) for cell in notebook.cells if cell.cell_type == "code" and "next_request" in cell.source]
    assert (
        "agent:class-agent wants browser_evaluate(expression=\"document.getElementById('cart').textContent\")"
        in asked[0]
    )
    assert "document.body.innerHTML = ''" in asked[1]
    assert (
        text_of(cell_by_source(notebook, "nb.evaluate(\"document.getElementById('cart')")).strip()
        == "'Cart: 1 item: Banana'"
    )
    assert "server.stop()" in notebook.cells[-1].source  # how to stop serving, in words
    # The session exported by `%browser export`, into a temporary directory (not beside the notebook):
    # the agent's calls, the denied one as a note.
    wrote = re.fullmatch(
        r"wrote (\S+): a replay of the call log\n", text_of(cell_by_source(notebook, "%browser export"))
    )
    assert wrote, text_of(cell_by_source(notebook, "%browser export"))
    exported_path = Path(wrote.group(1))
    assert exported_path.name == "agent-session.ipynb" and not exported_path.is_relative_to(tmp_path)
    exported = nbformat.read(exported_path, as_version=4)
    shutil.rmtree(exported_path.parent)
    sources = [cell.source for cell in exported.cells]
    assert "The agent **agent:class-agent** did:" in sources
    assert any(source.startswith("Not replayed: `browser_evaluate` was not run (approval_denied") for source in sources)
    assert any(
        source.endswith("%browser click {ref}") and "replay.ref('button', 'Add Banana')" in source for source in sources
    )


@pytest.mark.browser  # runs a kernel that drives a Chromium
@pytest.mark.parametrize("solutions", [True, False], ids=["with-solutions", "without"])
def test_teaching_notebook_checks(tmp_path: Path, solutions: bool) -> None:
    notebook = nbformat.read(ROOT / "notebooks" / "04-teaching.ipynb", as_version=4)
    parameters = [cell for cell in notebook.cells if "parameters" in cell.metadata.get("tags", [])]
    assert len(parameters) == 1 and "SHOW_SOLUTIONS = False" in parameters[0].source
    parameters[0].source += f"\nSHOW_SOLUTIONS = {solutions}"  # as papermill injects parameters
    execute(notebook, tmp_path)
    checks = [
        text_of(cell)
        for cell in notebook.cells
        if cell.cell_type == "code" and cell.source.startswith("exercise.") and "solution" not in cell.source
    ]
    assert len(checks) == 4
    solution_outputs = [text_of(cell) for cell in notebook.cells if "exercise.solution(" in cell.source]
    if solutions:
        assert all(check.startswith("Done: Task") for check in checks), checks
        assert all(output.startswith("Solution:") for output in solution_outputs)
    else:
        assert all(output.startswith("The solution is hidden.") for output in solution_outputs)
        assert checks[0].startswith("Not yet: Task 1, find a product. cherry_ref is still None.")
        assert checks[1].startswith(
            "Not yet: Task 2, fill and send the form. The browser is on about:blank, not on "
            'form.html. Go there first: %browser navigate {demo.url_for("form.html")}'
        )
        assert checks[2].startswith("Not yet: Task 3, read the cart. The browser is on about:blank")
        assert checks[3].startswith("Not yet: Task 4, use a page tool. The browser is on about:blank")


# -- session export ---------------------------------------------------------------------------
def result_area(session: Session) -> dict[str, Any]:
    """Where the session ended: the URL, the 'Submitted data' area of the form (refs left out) and
    how long the password field's value is."""
    snapshot = session.snapshot().data["snapshot"]
    area = aria.subtree(snapshot, find_ref(snapshot, "Submitted data", role="status"))
    password = session.evaluate("document.getElementById('password').value.length").data["result"]
    return {"url": session.snapshot().data["url"], "area": aria.REF.sub("", area or ""), "password": password}


PROBE = """
import json
from webmcp_nb.core import aria
snapshot = nb.snapshot().data["snapshot"]
area = aria.subtree(snapshot, webmcp_nb.find_ref(snapshot, "Submitted data", role="status"))
print("PROBE" + json.dumps({"url": nb.snapshot().data["url"], "area": aria.REF.sub("", area or ""),
      "password": nb.evaluate("document.getElementById('password').value.length").data["result"]}))
"""


def record(demo: DemoServer) -> Session:
    """A session where Python and an MCP agent take turns: a page tool, a form, a click."""
    session = Session()
    session.navigate(demo.url_for("webmcp.html")).raise_for_status()
    server = session.serve_mcp()

    async def agent(steps: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.token}"}, timeout=60)
        async with Client(streamable_http_client(server.url, http_client=http), client_info=AGENT) as client:
            return [(await client.call_tool(tool, args)).structured_content for tool, args in steps]

    added, _, form = asyncio.run(
        agent(
            [
                ("webmcp_add_to_cart", {"item": "Banana", "quantity": 2}),  # the page's tool, mirrored
                ("browser_navigate", {"url": demo.url_for("form.html")}),
                ("browser_snapshot", {}),
            ]
        )
    )
    assert added["status"] == "success", added
    yaml = form["data"]["snapshot"]
    (filled,) = asyncio.run(
        agent(
            [
                (
                    "browser_fill_form",
                    {
                        "fields": [
                            {"ref": find_ref(yaml, "Name", role="textbox"), "type": "textbox", "value": "Ada Lovelace"},
                            {"ref": find_ref(yaml, "Password", role="textbox"), "type": "textbox", "value": SECRET},
                        ]
                    },
                )
            ]
        )
    )
    assert filled["status"] == "success", filled
    session.type(find_ref(yaml, "Notes", role="textbox"), TRICKY_NOTES).raise_for_status()
    session.type(find_ref(yaml, "Email", role="textbox"), "ada@example.org").raise_for_status()
    submitted, missing = asyncio.run(
        agent(
            [
                ("browser_click", {"ref": find_ref(yaml, "Submit", role="button")}),
                ("browser_click", {"ref": "e99999"}),
            ]
        )
    )
    assert submitted["status"] == "success" and missing["error_type"] == "element_not_found"
    server.stop()
    return session


@pytest.mark.browser  # runs a kernel that drives a Chromium
def test_an_exported_session_replays_on_a_fresh_kernel(demo: DemoServer, tmp_path: Path) -> None:
    session = record(demo)
    try:
        exported = session.export_notebook(tmp_path / "replay.ipynb", callers=["python", "agent:*"])
        script = session.export_script(tmp_path / "replay.py")
        original = result_area(session)
    finally:
        session.close()
    assert "Ada Lovelace" in original["area"] and "costs $5 {x}" in original["area"], original
    assert original["password"] == len(SECRET)
    for path in (exported, script):
        assert SECRET not in path.read_text()
    notebook = nbformat.read(exported, as_version=4)
    sources = [cell.source for cell in notebook.cells]
    assert sources.count("The agent **agent:pytest-agent** did:") == 2 and sources.count("**python** did:") == 2
    assert "%browser navigate {BASE_URL}/webmcp.html" in sources  # the demo's port is a parameter
    page_tool = next(source for source in sources if "webmcp_call" in source)
    assert page_tool.startswith("# recorded with page_id ") and page_tool.endswith(
        '%browser webmcp_call add_to_cart --instance default --input \'{"item": "Banana", "quantity": 2}\''
    )
    assert "ref = replay.ref('button', 'Submit')  # " in sources[-4] and sources[-4].endswith("%browser click {ref}")
    assert sources[-3].startswith("Not replayed: `browser_click` was not run (element_not_found")
    typed = next(source for source in sources if "Notes" in source)
    assert typed.startswith("replay.call('browser_type', {'ref': replay.ref('textbox', 'Notes'), ")  # $ and {}: Python
    parameters = next(cell for cell in notebook.cells if "parameters" in cell.metadata.get("tags", []))
    assert (
        'secret_1 = None  # text agent:pytest-agent typed into textbox "Password" with browser_fill_form'
        in parameters.source
    )
    recorded = next(cell for cell in notebook.cells if cell.source.endswith("%browser click {ref}"))
    assert recorded.outputs[0].data["text/plain"].startswith("browser_click: success")

    parameters.source += f"\nsecret_1 = {SECRET!r}"
    notebook.cells.insert(len(notebook.cells) - 1, v4.new_code_cell(PROBE))
    execute(notebook, tmp_path)
    probe = text_of(notebook.cells[-2])
    assert json.loads(probe.split("PROBE", 1)[1]) == original

    env = {**os.environ, "WEBMCP_NB_SECRET_1": SECRET}
    run = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env, check=False
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert [line.split()[:2] for line in run.stdout.splitlines()][-2:] == [
        ["ok", "browser_type"],
        ["ok", "browser_click"],
    ]
    probe_script = (
        f"import json, runpy, sys\nfrom webmcp_nb import Session\nsys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        f"from test_notebooks import result_area\nwith Session() as s:\n    replayed = runpy.run_path({str(script)!r})['run'](s)\n"
        "    print('PROBE' + json.dumps({**result_area(s), 'matched': replayed.matched}))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe_script], capture_output=True, text=True, timeout=300, env=env, check=False
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout.split("PROBE", 1)[1]) == {**original, "matched": True}
