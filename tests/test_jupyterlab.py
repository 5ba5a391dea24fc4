"""End to end in JupyterLab: the quickstart notebook run in a real browser.

A JupyterLab server (the venv's, on loopback, with a token and throw-away
config/data/runtime directories) serves a copy of `notebooks/01-quickstart.ipynb`;
headless Chromium, driven by Playwright, opens it, runs every cell above the closing
one from the Run menu and checks what a user sees: the inline screenshot, a small snapshot as its
text (and as a tree in a full cell), the error envelope, Tab completion of `%browser` in the
completer popup (a subcommand, a flag, the format's values), the BrowserPanel's live view streaming
frames, and a click on
that live view reaching the page (read back through the kernel). Then the closing
cell runs and the kernel's Chromium exits.

A second notebook serves MCP: an agent's consequential call waits in the approval
panel until the Deny / Approve button is clicked in the page.

A PNG of the JupyterLab window is written to tests/artifacts/ (also on failure);
with WEBMCP_NB_UPDATE_DOCS set it is copied to docs/quickstart-jupyterlab.png.
When the server stops, no Chromium started by the kernel may be left running.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
from playwright import sync_api as playwright_sync

from tests.helpers import browser_processes, free_port, wait_until

REPO = Path(__file__).resolve().parent.parent
NOTEBOOK = REPO / "notebooks" / "01-quickstart.ipynb"
ARTIFACTS = REPO / "tests" / "artifacts"
SCREENSHOT = ARTIFACTS / "jupyterlab-quickstart.png"
CLOSING_CELL = 'nb.close()\ndemo.stop()\nprint("browser closed:", nb.closed, "|", demo)'
SERVER_LOG = ARTIFACTS / "jupyterlab-server.log"
DOCS_IMAGE = REPO / "docs" / "quickstart-jupyterlab.png"
CHROMIUM = os.environ.get("WEBMCP_NB_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1400, "height": 1000}
PAGE_VIEWPORT = (1280, 720)  # the kernel's browser page, as the live view maps it

SERVER_START_S = 60
KERNEL_IDLE_MS = 60_000
RUN_ALL_MS = 90_000
UI_MS = 20_000
# The live view's image scrolled to the middle and measured in one turn, with what explains a bad box.
LIVE_VIEW_BOX_JS = """img => {
  img.scrollIntoView({block: 'center'});
  const r = img.getBoundingClientRect();
  const cell = img.closest('.jp-Cell');
  return {width: r.width, height: r.height, top: r.top, connected: img.isConnected,
          complete: img.complete, naturalWidth: img.naturalWidth,
          cellVisibility: cell ? getComputedStyle(cell).contentVisibility : null};
}"""
CELL_MS = 30_000
RESULT = "WEBMCP_TEST_RESULT "

pytestmark = [pytest.mark.timeout(240), pytest.mark.browser]  # JupyterLab in a Chromium, its kernels driving another


# --------------------------------------------------------------------------- #
# The server
# --------------------------------------------------------------------------- #


@dataclass
class Lab:
    url: str
    token: str
    pid: int
    root: Path
    log: Path

    def tree_url(self, name: str) -> str:
        return f"{self.url}/lab/tree/{name}?token={self.token}"


def _status_ok(url: str, token: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2) as response:
            return response.status == 200 and "started" in json.loads(response.read())
    except (OSError, ValueError):
        return False


def _log_tail(log: Path, lines: int = 40) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _stop_server(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM (the server shuts its kernels down), then SIGKILL the group if it hangs."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def copy_without_outputs(source: Path, target: Path) -> None:
    """The notebook as committed, minus any outputs: what the test sees must come from this run."""
    notebook = json.loads(source.read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    target.write_text(json.dumps(notebook, indent=1), encoding="utf-8")


@pytest.fixture(scope="module")
def jupyter_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    base = tmp_path_factory.mktemp("jupyterlab")
    root = base / "root"
    root.mkdir()
    copy_without_outputs(NOTEBOOK, root / NOTEBOOK.name)
    env = dict(os.environ)
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR"):
        path = base / name.lower()
        path.mkdir()
        env[name] = str(path)
    env.pop("JUPYTER_PATH", None)
    env.pop("JUPYTER_CONFIG_PATH", None)
    token = secrets.token_hex(16)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    log = SERVER_LOG
    with log.open("wb") as log_file:
        # The venv's Python runs the server; the python3 kernelspec's "python" becomes
        # sys.executable too, so the kernel imports this checkout's webmcp_nb.
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyter",
                "lab",
                "--no-browser",
                "--ip",
                "127.0.0.1",
                "--port",
                str(port),
                f"--IdentityProvider.token={token}",
                "--allow-root",
                f"--ServerApp.root_dir={root}",
                "--LabApp.news_url=None",
                "--ServerApp.open_browser=False",
            ],
            env=env,
            cwd=root,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:

        def answering() -> bool:
            if proc.poll() is not None:
                pytest.fail(f"jupyter lab exited with {proc.returncode}:\n{_log_tail(log)}")
            return _status_ok(url, token)

        wait_until(
            answering,
            timeout=SERVER_START_S,
            interval=0.2,
            message=lambda: f"jupyter lab did not answer /api/status:\n{_log_tail(log)}",
        )
        yield Lab(url=url, token=token, pid=proc.pid, root=root, log=log)
    finally:
        # Everything the server started (kernels, their Chromium and Playwright driver),
        # taken before stopping it: once a parent dies its children are re-parented.
        try:
            descendants = psutil.Process(proc.pid).children(recursive=True)
            browsers = browser_processes(proc.pid)
        except psutil.NoSuchProcess:
            descendants, browsers = [], []
        _stop_server(proc)
        _, alive = psutil.wait_procs(descendants, timeout=15)
        for leftover in alive:
            try:
                leftover.kill()
            except psutil.NoSuchProcess:
                pass
        left_browsers = [p for p in alive if p in browsers]
        print(
            f"\n[jupyterlab] server stopped; {len(browsers)} kernel Chromium process(es) before, "
            f"{len(left_browsers)} left, {len(alive)} descendant(s) left"
        )
        assert not left_browsers, (
            f"Chromium processes started by the kernel outlived the server: {[p.pid for p in left_browsers]}"
        )
        assert not alive, f"processes started by the server outlived it: {alive}"


# --------------------------------------------------------------------------- #
# The browser
# --------------------------------------------------------------------------- #


@pytest.fixture(scope="module")
def chromium() -> Iterator[object]:
    assert Path(CHROMIUM).exists(), f"no Chromium at {CHROMIUM}: `make test` installs it"
    with playwright_sync.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(chromium, jupyter_lab: Lab):  # type: ignore[no-untyped-def]
    context = chromium.new_context(viewport=VIEWPORT)
    context.set_default_timeout(UI_MS)
    pg = context.new_page()
    try:
        yield pg
    finally:
        context.close()


def save_screenshot(page) -> None:  # type: ignore[no-untyped-def]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        page.screenshot(path=str(SCREENSHOT), full_page=True, timeout=10_000)
    except playwright_sync.Error as exc:  # a failing screenshot must not hide the real failure
        print(f"[jupyterlab] screenshot failed: {exc}")


@contextmanager
def step(page, name: str, lab: Lab) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """Name the step in any failure, and keep a screenshot of the page as it failed."""
    started = time.monotonic()
    try:
        yield
    except Exception as exc:
        save_screenshot(page)
        raise AssertionError(
            f"step '{name}' failed after {time.monotonic() - started:.1f}s: {exc}\n"
            f"(screenshot: {SCREENSHOT}; server log: {lab.log})\n"
            f"errors shown in the notebook:\n{notebook_errors(page)}"
        ) from exc
    print(f"[jupyterlab] {name}: {time.monotonic() - started:.1f}s")


def notebook_errors(page) -> str:  # type: ignore[no-untyped-def]
    try:
        texts = page.locator(
            ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr'],"
            " .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']"
        ).all_text_contents()
    except playwright_sync.Error:
        return "(unavailable)"
    return "\n---\n".join(text[:1500] for text in texts) or "(none)"


# --------------------------------------------------------------------------- #
# JupyterLab helpers
# --------------------------------------------------------------------------- #


def dismiss_popups(page, wait_ms: int = 0) -> None:  # type: ignore[no-untyped-def]
    """Answer the "Jupyter news" toast and a kernel chooser, if either is showing.

    With `wait_ms`, give the toast that long to appear (it comes with the first notebook).
    """
    news = page.locator(".Toastify__toast", has_text="Jupyter news")
    if wait_ms:
        try:
            news.first.wait_for(state="visible", timeout=wait_ms)
        except playwright_sync.TimeoutError:
            pass
    if news.count():
        news.first.get_by_role("button", name="No", exact=True).click(timeout=5_000)
        playwright_sync.expect(news).to_have_count(0, timeout=5_000)
    dialog = page.locator(".jp-Dialog")
    if dialog.count() and "Select Kernel" in (dialog.first.inner_text(timeout=3_000) or ""):
        dialog.first.locator(".jp-Dialog-button.jp-mod-accept").click(timeout=3_000)


def code_cells(page):  # type: ignore[no-untyped-def]
    return page.locator(".jp-Notebook .jp-CodeCell")


def cell_sources(page) -> list[str]:  # type: ignore[no-untyped-def]
    """The source of every code cell, one editor line (`.cm-line`) per text line."""
    return page.evaluate(
        """() => [...document.querySelectorAll('.jp-Notebook .jp-CodeCell')].map(cell =>
             [...cell.querySelectorAll('.jp-InputArea-editor .cm-line')].map(line => line.textContent).join('\\n'))"""
    )


def cell_with_source(page, source: str):  # type: ignore[no-untyped-def]
    """The code cell whose source is exactly `source` (ignoring trailing whitespace)."""
    sources = [text.strip() for text in cell_sources(page)]
    matches = [index for index, text in enumerate(sources) if text == source.strip()]
    assert len(matches) == 1, f"expected one code cell with source {source!r}, found {len(matches)} in {sources}"
    return code_cells(page).nth(matches[0])


def wait_executed(cell, timeout: int) -> None:  # type: ignore[no-untyped-def]
    """Until the cell's prompt shows an execution count, like `[7]:`."""
    prompt = cell.locator(".jp-InputPrompt")
    playwright_sync.expect(prompt).to_have_text(re.compile(r"\[\d+\]"), timeout=timeout)


def wait_kernel_idle(page, timeout: int) -> None:  # type: ignore[no-untyped-def]
    """Until the shown notebook's kernel is idle (a restored tab may have a hidden indicator too)."""
    indicator = page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").filter(visible=True)
    indicator.first.wait_for(timeout=timeout)


def run_new_cell(page, code: str) -> str:  # type: ignore[no-untyped-def]
    """Append a code cell after the last one, run it, return its output text."""
    cells = page.locator(".jp-Notebook .jp-Cell")
    count = cells.count()
    cells.nth(count - 1).locator(".jp-InputPrompt").click()  # select it, command mode
    page.keyboard.press("Escape")
    page.keyboard.press("b")  # insert a cell below
    playwright_sync.expect(cells).to_have_count(count + 1)
    cell = cells.nth(count)
    editor = cell.locator(".cm-content")
    editor.click()
    editor.fill(code)  # inserted as text: no auto-closed brackets or quotes
    typed = "\n".join(line.rstrip() for line in editor.inner_text().splitlines()).strip()
    assert typed == code.strip(), f"the editor holds {typed!r}, not {code!r}"
    page.keyboard.press("Control+Enter")  # run in place: no extra empty cell below
    wait_executed(cell, CELL_MS)
    output = cell.locator(".jp-OutputArea-output")
    playwright_sync.expect(output.first).to_be_attached()
    return "\n".join(output.all_inner_texts())


def kernel_result(page, code: str) -> object:  # type: ignore[no-untyped-def]
    """Run `code` (which prints RESULT + json) in a new cell; return the decoded value."""
    text = run_new_cell(page, code)
    match = re.search(re.escape(RESULT) + r"(.*)", text)
    assert match, f"no result line in the cell's output:\n{text[:2000]}"
    return json.loads(match.group(1))


def show_in(cell, element) -> None:  # type: ignore[no-untyped-def]
    """Scroll `cell` to the middle until `element` in it is visible. JupyterLab 4.6 skips offscreen
    cells' contents (windowing "contentVisibility"), so Playwright, which scrolls only to visible
    elements, cannot; and the page moves while the notebook re-measures cells whose outputs changed."""
    wait_until(
        lambda: cell.evaluate("cell => cell.scrollIntoView({block: 'center'})") or element.is_visible(),
        timeout=UI_MS / 1000,
        interval=0.2,
        message="the element did not become visible in its cell",
    )


def tab_complete(page, editor, text: str) -> list[str]:  # type: ignore[no-untyped-def]
    """Put `text` in the cell editor, cursor at its end, and press Tab: what the completer popup
    offers (its labels, not their types), or [] when JupyterLab inserted a single match in place."""
    editor.fill(text)
    page.keyboard.press("End")
    page.keyboard.press("Tab")
    offered = page.locator(".jp-Completer .jp-Completer-item .jp-Completer-match").filter(visible=True)
    wait_until(
        lambda: offered.count() > 0 or editor.inner_text().strip() != text.strip(),
        timeout=UI_MS / 1000,
        message=lambda: f"no completion of {text!r}: the editor holds {editor.inner_text()!r}",
    )
    return offered.all_inner_texts()


# --------------------------------------------------------------------------- #
# The test
# --------------------------------------------------------------------------- #


def test_quickstart_in_jupyterlab(page, jupyter_lab: Lab) -> None:  # type: ignore[no-untyped-def]
    lab = jupyter_lab
    expect = playwright_sync.expect

    with step(page, "open the notebook, kernel idle", lab):
        page.goto(lab.tree_url(NOTEBOOK.name), wait_until="domcontentloaded")
        expect(code_cells(page).first).to_be_visible(timeout=KERNEL_IDLE_MS)
        dismiss_popups(page, wait_ms=5_000)
        wait_kernel_idle(page, KERNEL_IDLE_MS)
        expect(page.locator("#jp-main-statusbar")).to_contain_text("Idle", timeout=UI_MS)  # may lag the indicator
        # JupyterLab renders a long notebook's cells progressively ("defer" windowing).
        page.wait_for_function(
            "n => document.querySelectorAll('.jp-Notebook .jp-CodeCell').length >= n", arg=10, timeout=30_000
        )

    with step(page, "run all cells", lab):
        dismiss_popups(page)
        executed = [
            text for text in code_cells(page).locator(".jp-InputPrompt").all_text_contents() if re.search(r"\d", text)
        ]
        assert not executed, f"cells show execution counts before running: {executed}"
        page.locator(".lm-MenuBar-item", has_text=re.compile(r"^Run$")).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        cells = code_cells(page)
        last = cells.nth(cells.count() - 1)
        wait_executed(last, RUN_ALL_MS)
        wait_kernel_idle(page, UI_MS)
        prompts = cells.locator(".jp-InputPrompt").all_text_contents()
        unrun = [i for i, text in enumerate(prompts) if not re.search(r"\[\d+\]", text)]
        assert not unrun, f"code cells without an execution count: {unrun} ({prompts})"
        counts = [int(re.search(r"\d+", text).group()) for text in prompts]  # type: ignore[union-attr]
        assert counts == sorted(counts), f"cells did not run in order: {counts}"
        expect(last.locator(".webmcp-nb-calllog")).to_be_visible()  # nb.log() rendered
        # Nothing the notebook shows is closed at its end: the panel and the log stay live.
        expect(page.locator(".webmcp-nb-closed")).to_have_count(0)

    with step(page, "inline screenshot rendered", lab):
        shot = cell_with_source(page, "%browser screenshot")
        shot.scroll_into_view_if_needed()
        image = shot.locator(".jp-OutputArea-output img[src^='data:image/png']")
        expect(image).to_have_count(1)
        image.evaluate("img => img.decode()")  # waits for the PNG to decode
        width = image.evaluate("img => img.naturalWidth")
        assert width > 0, f"the inline screenshot has naturalWidth {width}"

    with step(page, "a small snapshot shown as its text; in a full cell, as a tree", lab):
        snap = cell_with_source(page, "snap = %browser snapshot\nsnap")
        output = snap.locator(".jp-OutputArea-output")
        expect(output.last).to_have_attribute("data-mime-type", "text/plain")  # a lean cell: its text
        expect(output.last).to_contain_text(re.compile(r'button "Add Banana" \[ref=e\d+\]'))
        run_new_cell(page, '%config BrowserMagics.cell_output = "full"\nsnap')  # the steps below: full cells
        output = code_cells(page).last.locator(".jp-OutputArea-output")
        expect(output.locator("details").first).to_be_attached()
        chips = output.locator("details summary code, details div code").all_text_contents()
        refs = [chip for chip in chips if re.fullmatch(r"e\d+", chip.strip())]
        assert refs, f"no ref chips (e2, e3, ...) in the snapshot output; code elements: {chips[:20]}"

    with step(page, "error envelope rendered", lab):
        failing = cell_with_source(page, "%browser click e99999")
        expect(failing.locator(".jp-OutputArea-output")).to_contain_text("element_not_found")

    with step(page, "the call that launched Chromium shows one line, updated in place", lab):
        first = cell_with_source(page, "%browser navigate {demo.url}")
        first.evaluate("cell => cell.scrollIntoView({block: 'start'})")  # offscreen cells' outputs are not drawn
        line = first.locator(".webmcp-nb-stage")
        expect(line).to_have_count(1)
        expect(line).to_have_attribute("data-stage", "ready")
        expect(line).to_contain_text(re.compile(r"launching Chromium… ready in \d+\.\d s"))
        later = cell_with_source(page, "%browser screenshot")
        later.evaluate("cell => cell.scrollIntoView({block: 'start'})")
        expect(later.locator(".jp-OutputArea-output img")).to_have_count(1)
        expect(later.locator(".webmcp-nb-stage")).to_have_count(0)

    with step(page, "a listing: its table first, its paging on one line, long ids shortened", lab):
        run_new_cell(page, "%browser network")
        listing = code_cells(page).last.locator(".jp-OutputArea-output")
        expect(listing.locator(".webmcp-nb-envelope > table ~ .webmcp-nb-paging")).to_contain_text(
            re.compile(r"has_more \w+ · next_cursor ")
        )
        expect(listing.locator("dt", has_text="next_cursor")).to_have_count(0)
        run_new_cell(page, "%browser frames")
        frame_id = code_cells(page).last.locator(".webmcp-nb-envelope table code[title]").first
        expect(frame_id).to_have_text(re.compile(r"^[0-9a-f]{8}…$"))
        expect(frame_id).to_have_attribute("title", re.compile(r"^[0-9a-f-]{36}$"))

    with step(page, "live view streams frames", lab):
        panel_cell = cell_with_source(page, "nb.navigate(demo.url)\nnb.panel()")
        live = panel_cell.locator(".webmcp-nb-live img")
        expect(live).to_have_count(1, timeout=UI_MS)
        show_in(panel_cell, live)
        live.evaluate(
            """(img, timeout) => new Promise((resolve, reject) => {
                 const start = performance.now();
                 (function poll() {
                   if (img.src.startsWith('blob:') && img.complete && img.naturalWidth > 0) return resolve();
                   if (performance.now() - start > timeout)
                     return reject(new Error('no frame: src=' + img.src.slice(0, 40) + ' naturalWidth=' + img.naturalWidth));
                   setTimeout(poll, 100);
                 })();
               })""",
            UI_MS,
        )
        first_src = live.get_attribute("src")

    with step(page, "click 'Add Banana' on the live view", lab):
        found = kernel_result(
            page,
            (
                "import json\n"
                "r = nb.evaluate(\"(() => { const b = document.querySelector('[data-item=Banana]').getBoundingClientRect();"
                " return {x: b.x + b.width / 2, y: b.y + b.height / 2,"
                " w: innerWidth, h: innerHeight, cart: document.getElementById('cart').textContent}; })()\")\n"
                f"print({RESULT!r} + json.dumps(r.data['result']))"
            ),
        )
        assert isinstance(found, dict), found
        assert (found["w"], found["h"]) == PAGE_VIEWPORT, f"unexpected page viewport {found}"
        before = found["cart"]
        dismiss_popups(page)
        show_in(panel_cell, live)  # a new cell scrolled it away
        # The notebook may re-measure and move it again: scroll the image itself to the middle and
        # measure it in the same turn, until it has a real size (offscreen, windowing skips its layout).
        box = wait_until(
            lambda: (b := live.evaluate(LIVE_VIEW_BOX_JS)) and b["width"] > 100 and b,
            timeout=UI_MS / 1000,
            interval=0.2,
            message=lambda: f"the live view is not displayed: {live.evaluate(LIVE_VIEW_BOX_JS)}",
        )
        position = {
            "x": found["x"] * box["width"] / PAGE_VIEWPORT[0],
            "y": found["y"] * box["height"] / PAGE_VIEWPORT[1],
        }
        live.click(position=position)
        after = kernel_result(
            page,
            (
                "import json, sys, time\n"
                f"before, deadline = {before!r}, time.monotonic() + 15\n"
                "while True:\n"
                "    cart = nb.evaluate(\"document.getElementById('cart').textContent\").data['result']\n"
                "    if cart != before or time.monotonic() > deadline:\n"
                "        break\n"
                "    time.sleep(0.2)\n"
                "clicks = [r.envelope.status for r in nb.history if r.tool == 'browser_mouse_click_xy']\n"
                f"print({RESULT!r} + json.dumps({{'cart': cart, 'clicks': clicks, 'prefix': sys.prefix}}))"
            ),
        )
        assert isinstance(after, dict), after
        assert after["clicks"] == ["success"], f"the panel's click calls: {after['clicks']}"
        assert after["cart"] != before, f"the cart did not change after the click: {before!r}"
        assert after["cart"].count("Banana") == before.count("Banana") + 1, (
            f"expected one more Banana: {before!r} -> {after['cart']!r}"
        )
        assert Path(after["prefix"]).resolve() == Path(sys.prefix).resolve(), (
            f"the kernel runs {after['prefix']}, not this venv {sys.prefix}"
        )
        print(f"[jupyterlab] cart {before!r} -> {after['cart']!r}")
        # The new frame after the click replaces the old one.
        expect(live).not_to_have_attribute("src", first_src or "", timeout=UI_MS)

    with step(page, "screenshot for review", lab):
        dismiss_popups(page)
        page.keyboard.press("Escape")  # command mode
        # Collapse the file browser: the notebook gets the width.
        page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current").click()
        expect(page.locator("#jp-left-stack")).to_be_hidden()
        panel_cell.evaluate("cell => cell.scrollIntoView({block: 'start'})")
        page.mouse.move(0, 0)
        save_screenshot(page)
        assert SCREENSHOT.stat().st_size > 10_000, "the screenshot is suspiciously small"
        if os.environ.get("WEBMCP_NB_UPDATE_DOCS"):
            DOCS_IMAGE.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(SCREENSHOT, DOCS_IMAGE)
            print(f"[jupyterlab] updated {DOCS_IMAGE}")

    with step(page, "%browser completes subcommands, flags and values; the completed line runs", lab):
        cells = page.locator(".jp-Notebook .jp-Cell")
        count = cells.count()
        cells.nth(count - 1).locator(".jp-InputPrompt").click()
        page.keyboard.press("Escape")
        page.keyboard.press("b")
        expect(cells).to_have_count(count + 1)
        cell = cells.nth(count)
        editor = cell.locator(".cm-content")
        editor.click()
        # The kernel's matches come first: they outrank JupyterLab's context provider, whose words of
        # the cell may follow. One match each (not IPython's own %clear, not a builtin), then two.
        for typed, matches in (
            ("%browser cl", ["click"]),
            ("%browser screenshot --fo", ["--format"]),
            ("%browser screenshot --format ", ["jpeg", "png"]),
        ):
            offered = tab_complete(page, editor, typed)
            if len(matches) == 1 and not offered:  # inserted in place
                expect(editor).to_have_text(typed.rsplit(" ", 1)[0] + " " + matches[0])
                continue
            assert sorted(offered[: len(matches)]) == matches, offered
            assert all(word in typed for word in offered[len(matches) :]), offered
            if len(matches) == 1:
                page.keyboard.press("Enter")
                expect(editor).to_have_text(typed.rsplit(" ", 1)[0] + " " + matches[0])
        # Picking a value completes the line, which then runs.
        page.locator(".jp-Completer .jp-Completer-item", has_text="jpeg").filter(visible=True).click()
        expect(editor).to_have_text("%browser screenshot --format jpeg")
        page.keyboard.press("Control+Enter")
        wait_executed(cell, CELL_MS)
        expect(cell.locator(".jp-OutputArea-output img[src^='data:image/jpeg']")).to_have_count(1)

    with step(page, "closing from a cell, as the last cell says: the panel and the log say Closed", lab):
        pids = kernel_result(
            page,
            "import json, psutil\n"
            "def chromium(p):  # a renderer may exit while it is looked at\n"
            "    try:\n"
            "        return 'chrom' in p.name().lower()\n"
            "    except psutil.NoSuchProcess:\n"
            "        return False\n"
            f"print({RESULT!r} + json.dumps([p.pid for p in psutil.Process().children(recursive=True) if chromium(p)]))",
        )
        assert isinstance(pids, list) and pids, "the kernel should be running a Chromium before it is closed"
        output = run_new_cell(page, CLOSING_CELL)
        assert "browser closed: True" in output and "stopped" in output, output
        panel = cell_with_source(page, "nb.navigate(demo.url)\nnb.panel()")
        expect(panel.locator(".webmcp-nb-closed")).to_contain_text("Closed: the browser session was closed.")
        log = cell_with_source(page, "nb.log()")
        expect(log.locator(".webmcp-nb-closed")).to_contain_text("Closed: the session was closed")
        wait_until(lambda: not any(psutil.pid_exists(pid) for pid in pids), timeout=30)


# --------------------------------------------------------------------------- #
# An agent's consequential call, answered in JupyterLab
# --------------------------------------------------------------------------- #

SERVE_NOTEBOOK = "serve.ipynb"
SERVE_CODE = (
    "%load_ext webmcp_nb\n"
    "import json, webmcp_nb\n"
    "from webmcp_nb.demo import DemoServer\n"
    "demo = DemoServer().start()\n"
    "nb = webmcp_nb.session()\n"
    "nb.navigate(demo.url)\n"
    "server = nb.serve_mcp(caps=['js'])\n"
    f"print({RESULT!r} + json.dumps([server.url, server.token]))"
)


def _write_serve_notebook(root: Path) -> None:
    notebook = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    notebook["cells"] = [
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": SERVE_CODE}
    ]
    (root / SERVE_NOTEBOOK).write_text(json.dumps(notebook, indent=1), encoding="utf-8")


def _agent_evaluate(url: str, token: str, expression: str) -> dict[str, object]:
    """One MCP call by a real client, in a thread of its own (it waits for the approval)."""
    import asyncio

    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def call() -> dict[str, object]:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=90)
        async with Client(streamable_http_client(url, http_client=http)) as client:
            result = await client.call_tool("browser_evaluate", {"expression": expression})
            return result.structured_content  # type: ignore[return-value]

    return asyncio.run(call())


def test_an_agents_consequential_call_waits_for_a_click_in_jupyterlab(page, jupyter_lab: Lab) -> None:  # type: ignore[no-untyped-def]
    from concurrent.futures import ThreadPoolExecutor

    lab = jupyter_lab
    expect = playwright_sync.expect
    _write_serve_notebook(lab.root)
    with step(page, "open a notebook and serve MCP", lab):
        page.goto(lab.tree_url(SERVE_NOTEBOOK) + "&reset", wait_until="domcontentloaded")  # no restored tabs
        expect(code_cells(page).first).to_be_visible(timeout=KERNEL_IDLE_MS)
        dismiss_popups(page, wait_ms=3_000)
        wait_kernel_idle(page, KERNEL_IDLE_MS)
        cell = code_cells(page).first
        cell.locator(".jp-InputPrompt").click()
        page.keyboard.press("Escape")
        page.keyboard.press("Control+Enter")
        wait_executed(cell, CELL_MS)
        text = "\n".join(cell.locator(".jp-OutputArea-output").all_inner_texts())
        match = re.search(re.escape(RESULT) + r"(.*)", text)
        assert match, text[:2000]
        url, token = json.loads(match.group(1))
        approvals = cell.locator(".webmcp-nb-approvals")
        expect(approvals).to_contain_text("none pending")

    with ThreadPoolExecutor(1) as pool:
        for answer, expression in (("Deny", "document.title = 'denied'"), ("Approve", "document.title = 'approved'")):
            with step(page, f"{answer} in the approval panel", lab):
                pending = pool.submit(_agent_evaluate, url, token, expression)
                row = approvals.locator(".widget-hbox", has_text="browser_evaluate")
                expect(row).to_contain_text(expression, timeout=UI_MS)
                expect(row).to_contain_text("on http://127.0.0.1:")  # the target page
                row.get_by_role("button", name=answer).click()
                envelope = pending.result(timeout=30)
                expect(approvals).to_contain_text("none pending")
                if answer == "Deny":
                    assert envelope["status"] == "error" and envelope["error_type"] == "approval_denied"
                    assert envelope["operation"]["outcome"] == "not_started"  # type: ignore[index]
                else:
                    assert envelope["status"] == "success", envelope
                    assert envelope["data"]["result"] == "approved"  # type: ignore[index]
    title = kernel_result(page, f"print({RESULT!r} + json.dumps(nb.evaluate('document.title').data['result']))")
    assert title == "approved"
