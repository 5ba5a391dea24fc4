"""webmcp_nb in a real kernel (jupyter_client) and the quickstart notebook under nbclient.

What a front end receives is checked on the wire: the iopub messages carry the
screenshot as image/png and, in a kernel asking for full cells (``FULL_CELLS``, as a program
reading outputs does), the envelope as its own JSON MIME type; a failing call renders its
error type and message. A kernel restart leaves no browser behind.
"""

from __future__ import annotations

import ast
import base64
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_client.manager import start_new_kernel
from nbclient import NotebookClient

from tests.helpers import FULL_CELLS, SLEEPING_CELL, Kernel, wait_for_exit
from webmcp_nb.core.render.renderer import ENVELOPE_MIME

ROOT = Path(__file__).resolve().parents[1]
# Every process the kernel started (the Playwright driver and its browser), as JSON.
PRINT_BROWSER_PIDS = (
    "import json, psutil\nprint(json.dumps([p.pid for p in psutil.Process().children(recursive=True)]))"
)

pytestmark = pytest.mark.browser  # every test runs a kernel that drives a Chromium


@pytest.fixture
def kernel(demo) -> Iterator[Kernel]:
    manager, client = start_new_kernel(kernel_name="python3", extra_arguments=FULL_CELLS)
    kernel = Kernel(manager, client)
    kernel.run(
        f"%load_ext webmcp_nb\nimport json, webmcp_nb\nfrom webmcp_nb.core.browsers.aria import find_ref\nnb = webmcp_nb.session()\nDEMO = {demo.url!r}"
    )
    yield kernel
    client.stop_channels()
    if manager.is_alive():
        manager.shutdown_kernel(now=False)


def only(outputs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = [o for o in outputs if o["type"] == kind]
    assert len(found) == 1, outputs
    return found[0]


def test_magics_in_a_kernel_send_envelopes_and_images_on_iopub(kernel: Kernel) -> None:
    result = only(kernel.run("%browser navigate {DEMO}"), "execute_result")
    envelope = result["data"][ENVELOPE_MIME]
    assert envelope["status"] == "success" and envelope["data"]["title"] == "Demo Shop"
    assert "browser_navigate: success" in result["data"]["text/plain"]
    assert "success" in result["data"]["text/html"]

    result = only(kernel.run("snap = %browser snapshot\nsnap"), "execute_result")
    snapshot = result["data"][ENVELOPE_MIME]["data"]["snapshot"]
    assert 'button "Add Banana"' in snapshot and "<details" in result["data"]["text/html"]

    result = only(kernel.run("%browser click {find_ref(snap, 'Add Banana', role='button')}"), "execute_result")
    assert result["data"][ENVELOPE_MIME]["status"] == "success"
    assert (
        kernel.value("print(json.dumps(nb.evaluate(\"document.getElementById('cart').textContent\").data['result']))")
        == "Cart: 1 item: Banana"
    )

    result = only(kernel.run("%browser screenshot"), "execute_result")
    png = base64.b64decode(result["data"]["image/png"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert result["metadata"]["image/png"]["width"] == 800
    assert result["data"][ENVELOPE_MIME]["data"]["width"] == 1280


def test_cells_are_lean_unless_a_kernel_asks_for_full_ones(kernel: Kernel) -> None:
    # This kernel was started with FULL_CELLS (see the fixture); %config changes it live.
    kernel.run("%config BrowserMagics.cell_output = 'lean'")
    result = only(kernel.run("%browser navigate {DEMO}"), "execute_result")
    assert set(result["data"]) == {"text/plain"} and "title: Demo Shop" in result["data"]["text/plain"]
    kernel.run("%config BrowserMagics.cell_output = 'full'")
    result = only(kernel.run("%browser navigate {DEMO}"), "execute_result")
    assert set(result["data"]) == {"text/plain", "text/html", ENVELOPE_MIME}


def test_a_failing_call_renders_its_error_type_and_message(kernel: Kernel) -> None:
    kernel.run("%browser navigate {DEMO}")
    result = only(kernel.run("%browser click e424242"), "execute_result")
    data = result["data"]
    assert data[ENVELOPE_MIME]["error_type"] == "element_not_found"
    assert data[ENVELOPE_MIME]["operation"]["outcome"] == "not_started"
    for text in (data["text/plain"], data["text/html"]):
        assert "element_not_found" in text and "e424242" in text and "after_correction" in text
    outputs = kernel.run("%browser navigate example.com")  # bad input: an envelope, not a traceback
    assert not [o for o in outputs if o["type"] == "error"]
    assert only(outputs, "execute_result")["data"][ENVELOPE_MIME]["error_type"] == "invalid_params"


def test_the_server_keeps_state_between_cells_and_calls_from_a_thread(kernel: Kernel) -> None:
    kernel.run("%browser navigate {DEMO}")
    code = (
        "import threading\nout = []\n"
        "t = threading.Thread(target=lambda: out.append(nb.evaluate('document.title').data['result']))\n"
        "t.start(); t.join(); print(json.dumps(out))"
    )
    assert kernel.value(code) == ["Demo Shop"]


def test_interrupting_a_cell_leaves_the_browser_running(kernel: Kernel) -> None:
    # Jupyter's Interrupt signals the kernel's whole process group; the browser must survive it.
    kernel.run("%browser navigate {DEMO}")
    pids = kernel.browser_pids()
    msg_id = kernel.start(SLEEPING_CELL)
    kernel.manager.interrupt_kernel()
    outputs = kernel.finish(msg_id, 15)
    assert [o["ename"] for o in outputs if o["type"] == "error"] == ["KeyboardInterrupt"]
    assert kernel.value("print(json.dumps(nb.evaluate('document.title').data['result']))") == "Demo Shop"
    assert set(kernel.browser_pids()) == set(pids)


@pytest.mark.parametrize("how", ["restart", "shutdown"])
def test_kernel_restart_or_shutdown_leaves_no_browser(kernel: Kernel, how: str) -> None:
    kernel.run("%browser navigate {DEMO}")
    pids = kernel.browser_pids()
    assert pids, "the kernel should have started a browser"
    if how == "restart":
        kernel.manager.restart_kernel(now=False)
    else:
        kernel.manager.shutdown_kernel(now=False)
    wait_for_exit(pids)


def test_quickstart_notebook_under_nbclient(tmp_path: Path) -> None:
    notebook_path = tmp_path / "01-quickstart.ipynb"
    shutil.copy(ROOT / "notebooks" / "01-quickstart.ipynb", notebook_path)
    notebook = nbformat.read(notebook_path, as_version=4)
    # The notebook leaves its browser open; a last cell of ours notes which processes serve it.
    notebook.cells.append(nbformat.v4.new_code_cell(PRINT_BROWSER_PIDS))
    NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        extra_arguments=FULL_CELLS,
        resources={"metadata": {"path": str(tmp_path)}},
    ).execute()
    pids = json.loads(notebook.cells.pop().outputs[-1]["text"])
    assert pids, "the quickstart's browser should still be running at its end"
    wait_for_exit(pids)  # nbclient shut the kernel down: nothing is left behind
    results = {}
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        assert not [o for o in cell.outputs if o.output_type == "error"], cell.source
        envelopes = [o.data[ENVELOPE_MIME] for o in cell.outputs if "data" in o and ENVELOPE_MIME in o.data]
        if envelopes:
            results[cell.source.splitlines()[-1]] = (envelopes[-1], cell.outputs)
    by_tool = {envelope["operation"]["tool"]: envelope for envelope, _ in results.values()}
    assert by_tool["browser_navigate"]["status"] == "success"
    assert 'button "Add Banana"' in by_tool["browser_snapshot"]["data"]["snapshot"]
    assert by_tool["browser_fill_form"]["data"]["filled"] == 3
    screenshot_outputs = results["%browser screenshot"][1]
    assert any("image/png" in o.get("data", {}) for o in screenshot_outputs)
    assert results["%browser click e99999"][0]["error_type"] == "element_not_found"
    widgets = [
        o
        for cell in notebook.cells
        for o in cell.get("outputs", [])
        if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
    ]
    assert len(widgets) == 2  # the panel and the call log
    assert notebook.cells[-1].cell_type == "markdown"  # how to close, in words: nothing is closed for the reader


def test_webmcp_notebook_under_nbclient(tmp_path: Path) -> None:
    notebook_path = tmp_path / "02-webmcp.ipynb"
    shutil.copy(ROOT / "notebooks" / "02-webmcp.ipynb", notebook_path)
    notebook = nbformat.read(notebook_path, as_version=4)
    NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        extra_arguments=FULL_CELLS,
        resources={"metadata": {"path": str(tmp_path)}},
    ).execute()
    outputs = {}
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert not [o for o in cell.outputs if o.output_type == "error"], cell.source
            outputs[cell.source.splitlines()[-1]] = [o.get("data", {}) for o in cell.outputs]
    listed = outputs["%browser webmcp"][-1][ENVELOPE_MIME]
    kinds = {tool["name"]: tool["kind"] for tool in listed["data"]["tools"]}
    assert kinds["search_products"] == "declarative" and kinds["add_to_cart"] == "imperative"
    added = outputs["""%browser webmcp_call add_to_cart --input '{"item": "Banana", "quantity": 2}'"""][-1][
        ENVELOPE_MIME
    ]
    assert added["data"]["structured"] == {"ok": True, "cart": [{"item": "Banana", "quantity": 2}]}
    refused = outputs["""%browser webmcp_call add_to_cart --input '{"item": "Kiwi", "quantity": 2}'"""][-1]
    assert (refused[ENVELOPE_MIME]["error_type"], refused[ENVELOPE_MIME]["operation"]["outcome"]) == (
        "invalid_params",
        "not_started",
    )
    failed = outputs["%browser webmcp_call fail_always"][-1][ENVELOPE_MIME]
    assert (failed["error_type"], failed["operation"]["retry"]) == ("evaluation_failed", "inspect_state")
    assert (
        outputs['tools["search_products"](query="cherry")'][-1][ENVELOPE_MIME]["data"]["text"] == "Results for: cherry"
    )
    form = outputs['tools["add_to_cart"]'][-1]
    assert "application/vnd.jupyter.widget-view+json" in form and "add_to_cart" in form["text/html"]
    assert outputs['}""").data["result"]'][-1]["text/plain"] == """'{"fruit":"Fig","letters":3,"plural":"figs"}'"""
    assert outputs['"fruit_facts" in [tool.name for tool in nb.webmcp.tools()]'][-1]["text/plain"] == "False"


def test_network_plot_shows_the_table_and_the_waterfall(kernel: Kernel) -> None:
    kernel.run("%browser navigate {DEMO}evidence.html")
    outputs = kernel.run("%browser network --plot")
    [picture] = [o for o in outputs if o["type"] == "display_data"]
    assert picture["data"]["image/svg+xml"].startswith("<svg") and "evidence.html" in picture["data"]["image/svg+xml"]
    assert picture["data"]["text/plain"].startswith("<network waterfall: ")
    result = only(outputs, "execute_result")
    assert result["data"][ENVELOPE_MIME]["operation"]["tool"] == "browser_network"
    assert "<table" in result["data"]["text/html"]
    refused = kernel.run("%browser console --plot")  # only the network list has a picture
    assert "--plot" in str(refused) and not [o for o in refused if o["type"] in ("execute_result", "display_data")]


def test_a_listing_with_df_is_a_dataframe_of_its_items(kernel: Kernel) -> None:
    kernel.run("%browser navigate {DEMO}evidence.html")
    frame = only(kernel.run("%browser network --df"), "execute_result")["data"]
    assert "<table" in frame["text/html"] and "dataframe" in frame["text/html"]  # pandas' own table
    assert ENVELOPE_MIME not in frame and "evidence.html" in frame["text/plain"]
    [columns] = [o for o in kernel.run("list(_.columns)") if o["type"] == "execute_result"]
    assert {"request_id", "method", "url", "status"} <= set(ast.literal_eval(columns["data"]["text/plain"]))
    refused = kernel.run("%browser navigate {DEMO} --df")  # navigate lists nothing
    assert "--df" in str(refused) and not [o for o in refused if o["type"] == "execute_result"]


def test_the_call_that_launches_the_browser_shows_a_line_updated_in_place(kernel: Kernel) -> None:
    outputs = kernel.run("%browser navigate {DEMO}")  # the kernel's first call: it launches Chromium
    [shown] = [o for o in outputs if o["type"] == "display_data"]
    [updated] = [o for o in outputs if o["type"] == "update_display_data"]
    assert shown["data"]["text/plain"] == "browser_navigate: launching Chromium…"
    assert 'data-stage="launching"' in shown["data"]["text/html"]
    display_id = shown["transient"]["display_id"]
    assert updated["transient"]["display_id"] == display_id  # the same line, updated in place
    assert re.fullmatch(r"browser_navigate: launching Chromium… ready in \d+\.\d s", updated["data"]["text/plain"])
    assert 'data-stage="ready"' in updated["data"]["text/html"]
    assert only(outputs, "execute_result")["data"][ENVELOPE_MIME]["status"] == "success"
    later = kernel.run("%browser snapshot")  # the browser is up: no line
    assert not [o for o in later if o["type"] in ("display_data", "update_display_data")]
