"""BrowserPanel, CallLog and the core live view, driven in-process on real Chromium.

The widgets' front-end half (the anywidget JavaScript) is exercised in
JupyterLab by test_jupyterlab.py; here the kernel half receives the same
messages the JavaScript sends.
"""

from __future__ import annotations

import itertools
import time

import pytest

from tests.helpers import ok, wait_until
from webmcp_nb.core.browsers.aria import find_ref
from webmcp_nb.notebook.widgets import BrowserPanel, CallLog

pytestmark = pytest.mark.playwright_sensitive  # see tests/test_compat_scope.py


def cart_text(session) -> str:
    return ok(session.evaluate("document.getElementById('cart').textContent"))["result"]


@pytest.fixture
def panel(session, demo):
    ok(session.navigate(demo.url))
    ok(session.evaluate("document.getElementById('clear').click()"))
    widget = BrowserPanel(session, max_fps=10)
    yield widget
    widget.close()


def test_live_view_caps_the_frame_rate_and_drops_stale_frames(session, demo) -> None:
    ok(session.navigate(demo.url))
    frames, delivered_at = [], []

    def on_frame(frame) -> None:
        frames.append(frame)
        delivered_at.append(time.monotonic())

    view = session.live_view(on_frame, max_fps=2)
    try:
        wait_until(lambda: frames)  # a static page still shows its first frame
        ok(
            session.evaluate(
                "() => { const d = document.createElement('div'); document.body.prepend(d);"
                " let i = 0; window.__ticker = setInterval(() => d.textContent = 'tick ' + i++, 16); }"
            )
        )
        start = len(frames)
        wait_until(lambda: len(frames) >= start + 3)  # the ticking page keeps painting
        gaps = [later - earlier for earlier, later in itertools.pairwise(delivered_at)]
        assert min(gaps) >= 0.45, gaps  # at most 2 per second (a little slack for thread switches)
        assert view.frames_received > view.frames_delivered  # the rest were dropped
        frame = frames[-1]
        assert frame.data[:2] == b"\xff\xd8"  # JPEG
        assert (frame.viewport_width, frame.viewport_height) == (1280, 720)
        assert frame.url == demo.url
    finally:
        view.stop()
        ok(session.evaluate("clearInterval(window.__ticker)"))
    stopped_at = len(frames)
    time.sleep(0.5)
    assert len(frames) == stopped_at


def test_live_view_follows_the_current_tab(session, demo) -> None:
    ok(session.navigate(demo.url))
    frames = []
    view = session.live_view(frames.append, max_fps=10)
    try:
        wait_until(lambda: frames)
        new_tab = ok(session.tabs("new", url=demo.url_for("form.html")))
        wait_until(lambda: frames[-1].url.endswith("form.html"))
        assert frames[-1].page_id == new_tab["current_page_id"]
        ok(session.tabs("close"))
    finally:
        view.stop()


def test_panel_shows_frames_and_a_click_on_the_live_view_clicks_the_page(session, panel) -> None:
    wait_until(lambda: panel.live.frames_shown > 0)
    assert panel.live.frame[:2] == b"\xff\xd8"
    assert panel.live.viewport_width == 1280
    # Where "Add Banana" is on the page, in viewport CSS pixels (what the JavaScript computes).
    box = ok(
        session.evaluate(
            "(() => { const r = document.querySelector('[data-item=Banana]').getBoundingClientRect();"
            " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
    )["result"]
    panel._on_live_event(panel.live, {"event": "click", "x": box[0], "y": box[1], "button": "left"}, [])
    wait_until(lambda: cart_text(session) == "Cart: 1 item: Banana")
    record = wait_until(lambda: [r for r in session.history if r.tool == "browser_mouse_click_xy"])[-1]
    assert record.caller == "panel" and record.envelope.ok


def test_panel_typing_goes_to_the_focused_element(session, demo, panel) -> None:
    ok(session.navigate(demo.url_for("form.html")))
    ok(session.evaluate("document.getElementById('name').focus()"))
    for key in "Ada":
        panel._on_live_event(panel.live, {"event": "type", "text": key}, [])
    panel._on_live_event(panel.live, {"event": "key", "key": "Backspace"}, [])
    wait_until(lambda: ok(session.evaluate("document.getElementById('name').value"))["result"] == "Ad")


def test_panel_url_bar_navigates_and_follows_other_front_ends(session, demo, panel) -> None:
    panel.url.value = demo.url_for("help.html")
    wait_until(lambda: ok(session.evaluate("document.title"))["result"] == "Help")
    wait_until(lambda: "status" not in panel.status.value and "browser_navigate: success" in panel.status.value)
    ok(session.navigate(demo.url_for("form.html")))  # another front end (a cell) navigates
    wait_until(lambda: panel.url.value == demo.url_for("form.html"))
    panel.back.click()
    wait_until(lambda: ok(session.evaluate("location.pathname"))["result"] == "/help.html")


def test_panel_tab_selector_and_snapshot_pane(session, demo, panel) -> None:
    ok(session.tabs("new", url=demo.url_for("form.html")))
    wait_until(lambda: len(panel.tabs.options) == 2)
    first_page = panel.tabs.options[0][1]
    panel.tabs.value = first_page
    wait_until(lambda: ok(session.tabs())["current_page_id"] == first_page)
    panel.snapshot_button.click()
    wait_until(lambda: "Add Banana" in panel.snapshot_pane.value)
    assert "<details" in panel.snapshot_pane.value
    tabs = ok(session.tabs())["tabs"]
    ok(session.tabs("close", page_id=next(t["page_id"] for t in tabs if not t["current"])))


def test_call_log_shows_every_caller_and_filters(session, demo) -> None:
    ok(session.navigate(demo.url))
    log = CallLog(session, refresh_s=0.05)
    try:
        snap = ok(session.snapshot())
        session.call_as("agent:claude", "browser_click", {"ref": find_ref(snap["snapshot"], "Add Apple")})
        session.call_as("panel", "browser_click", {"ref": "e999999"})
        wait_until(lambda: "agent:claude" in log.table.value and "element_not_found" in log.table.value)
        assert "browser_snapshot" in log.table.value
        log.status_filter.value = "error"
        wait_until(lambda: "agent:claude" not in log.table.value)
        assert "element_not_found" in log.table.value
        log.status_filter.value = "all"
        log.filter.value = "claude"
        wait_until(lambda: "browser_snapshot" not in log.table.value)
        assert "agent:claude" in log.table.value
        assert log.records[-1].caller == "panel"
    finally:
        log.close()


def test_call_log_is_bounded(session) -> None:
    log = CallLog(session, limit=5, refresh_s=0.05)
    try:
        for _ in range(8):
            ok(session.health())
        wait_until(lambda: len(log.records) == 5)
        assert log.table.value.count("<details") == 5
    finally:
        log.close()


def test_panel_instance_selector_switches_the_live_view_and_the_calls(session, demo, panel) -> None:
    ok(session.create_instance("second"))
    try:
        ok(session.navigate(demo.url_for("help.html"), instance="second"))
        wait_until(lambda: "second" in panel.instances.options)
        panel.instances.value = "second"
        wait_until(lambda: panel.url.value == demo.url_for("help.html"))
        # The new instance's own view delivers a frame (counted by that view: its first frame may
        # have come before the URL bar followed, and a still page sends no other).
        wait_until(lambda: panel.view.frames_delivered > 0, timeout=30)
        panel.reload.click()
        record = wait_until(lambda: [r for r in session.history if r.tool == "browser_reload"])[-1]
        assert record.envelope.instance == "second" and record.caller == "panel"
    finally:
        panel.close()
        ok(session.destroy_instance("second"))


def test_live_view_polls_screenshots_where_there_is_no_devtools_protocol(session, demo, monkeypatch) -> None:
    """A stand-in for a Firefox-based backend (no such browser can be installed here): the
    DevTools session is refused, so the view falls back to polling screenshots."""
    from playwright.async_api import BrowserContext, Error

    async def refuse(self, page):
        raise Error("CDP session is only available in Chromium")

    monkeypatch.setattr(BrowserContext, "new_cdp_session", refuse)
    ok(session.navigate(demo.url))
    frames, delivered_at = [], []

    def on_frame(frame) -> None:
        frames.append(frame)
        delivered_at.append(time.monotonic())

    view = session.live_view(on_frame, max_fps=4)
    try:
        wait_until(lambda: len(frames) >= 4)  # polling keeps delivering
        gaps = [later - earlier for earlier, later in itertools.pairwise(delivered_at)]
        assert min(gaps) >= 0.22, gaps  # at most 4 per second (a little slack for thread switches)
        assert frames[-1].data[:2] == b"\xff\xd8" and frames[-1].viewport_width == 1280
    finally:
        view.stop()


def test_call_log_shows_webmcp_events_including_calls_from_inside_the_page(session, demo) -> None:
    ok(session.navigate(demo.url_for("webmcp.html")))
    wait_until(lambda: "echo_text" in {t["name"] for t in ok(session.webmcp_list())["tools"]})
    log = CallLog(session, refresh_s=0.05)
    try:
        ok(
            session.evaluate("""async () => {
            const tool = (await document.modelContext.getTools()).find((t) => t.name === "echo_text");
            return await document.modelContext.executeTool(tool, {text: "agent in the page"});
        }""")
        )
        wait_until(lambda: "webmcp responded" in log.table.value)
        assert "webmcp invoked</b> <span style='color:#555'>by page</span>" in log.table.value
        assert "agent in the page" in log.table.value
        ok(session.evaluate("document.getElementById('unregister').click()"))
        wait_until(lambda: "removed: add_to_cart" in log.table.value)
        assert [e.kind for e in log.events if e.kind in ("invoked", "responded")][-2:] == ["invoked", "responded"]
        log.filter.value = "removed"
        wait_until(lambda: "agent in the page" not in log.table.value)
        assert "removed: add_to_cart" in log.table.value
    finally:
        log.close()


def test_page_tool_form_calls_the_tool(session, demo) -> None:
    from webmcp_nb.notebook.webmcp_tools import WebMCP

    ok(session.navigate(demo.url_for("webmcp.html")))
    wait_until(lambda: "add_to_cart" in {t["name"] for t in ok(session.webmcp_list())["tools"]})
    tool = {t.name: t for t in WebMCP(session).tools()}["add_to_cart"]
    form = tool.form()
    header, item, quantity, button, result = form.children
    assert "add_to_cart" in header.value
    assert list(item.options) == ["Apple", "Banana", "Cherry", "Date", "Elderberry", "Fig", "Grape"]
    item.value, quantity.value = "Cherry", 4
    button.click()
    wait_until(lambda: "success" in result.value)
    assert "&quot;Cherry&quot;" in result.value or '"Cherry"' in result.value
    assert ok(session.evaluate("document.getElementById('webmcp-cart').textContent"))["result"] == "Cart: 4 items"
    quantity.value = 11  # over the schema's maximum: refused before the page sees it
    button.click()
    wait_until(lambda: "invalid_params" in result.value)
    assert ok(session.evaluate("document.getElementById('webmcp-cart').textContent"))["result"] == "Cart: 4 items"
    assert tool(item="Fig", quantity=1).data["structured"]["cart"][-1] == {"item": "Fig", "quantity": 1}


def test_call_log_shows_console_errors_and_failed_requests_as_they_happen(session, demo) -> None:
    ok(session.navigate(demo.url_for("evidence.html")))
    log = CallLog(session, refresh_s=0.05)
    try:
        snapshot = ok(session.snapshot())["snapshot"]
        ok(session.click(find_ref(snapshot, "Log every level", role="button")))
        ok(session.click(find_ref(snapshot, "Make requests", role="button")))
        wait_until(lambda: "net::ERR_CONNECTION_REFUSED" in log.table.value)
        wait_until(lambda: "-&gt; 404" in log.table.value)
        text = log.table.value
        assert "console error: error message" in text
        assert "console warning" not in text and "debug message" not in text  # only what went wrong
        assert "-&gt; 200" not in text
        assert {event.stream for event in log.evidence} == {"console", "network"}
        assert all(event.notable for event in log.evidence)
        log.status_filter.value = "success"
        wait_until(lambda: "ERR_CONNECTION_REFUSED" not in log.table.value)
    finally:
        log.close()
    before = len(log.evidence)
    ok(session.click(find_ref(snapshot, "Log every level", role="button")))
    ok(session.wait_for(time_s=0.3))
    assert len(log.evidence) == before  # a closed log stops listening


def test_a_closed_session_leaves_its_panel_and_log_saying_closed(fresh_session, demo) -> None:
    """Closing the session (the last cell of a notebook, say) does not leave a frozen panel or a
    blank log: both say "Closed", the panel's controls are disabled, the log keeps its calls."""
    s = fresh_session()
    ok(s.navigate(demo.url))
    panel, log = BrowserPanel(s), CallLog(s)
    wait_until(lambda: panel.live.frames_shown > 0, message="a first frame")
    assert "Closed" not in panel.status.value
    s.close()
    assert "<b>Closed</b>: the browser session was closed." in panel.status.value
    assert all(control.disabled for control in (panel.go, panel.reload, panel.url, panel.tabs, panel.snapshot_button))
    assert panel.live.frame  # the last frame stays on show
    assert "<b>Closed</b>: the session was closed; these are its last calls." in log.table.value
    assert "browser_navigate" in log.table.value
    assert panel.comm is not None and log.comm is not None  # still displayed, not destroyed
