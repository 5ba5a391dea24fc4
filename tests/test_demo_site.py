"""Smoke tests for the bundled demo site, in a real headless Chromium."""

import time
import urllib.error
import urllib.request

import pytest
from playwright import sync_api

from webmcp_nb.demo import DemoServer

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-features=WebMCP",
]
PAGES = {
    "index.html": "Demo Shop",
    "form.html": "Demo Form",
    "login.html": "Sign in",
    "dialog.html": "Dialogs",
    "alert-on-load.html": "Alert on load",
    "frames.html": "Frames",
    "frame-inner.html": "Inner",
    "frame-nested.html": "Nested",
    "table.html": "Big Table",
    "drag.html": "Drag and Drop",
    "upload.html": "Upload",
    "help.html": "Help",
    "webmcp.html": "WebMCP Tools",
    "webmcp-frames.html": "WebMCP Frames",
    "webmcp-frame-inner.html": "WebMCP Frame",
    "webmcp-polyfill.html": "WebMCP Polyfill",
    "webmcp-mirror.html": "WebMCP Mirror",
    "webmcp-mirror-inner.html": "Greeter frame",
    "downloads.html": "Downloads",
    "webmcp-results.html": "WebMCP Results",
    "webmcp-conformance.html": "WebMCP Conformance",
    "slow-parse.html": "Slow parse",
}


@pytest.fixture(scope="module")
def demo():
    with DemoServer() as server:
        yield server


@pytest.fixture(scope="module")
def page():
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
        yield browser.new_page()  # dialogs are auto-dismissed when nothing listens for them
        browser.close()


@pytest.mark.browser
def test_pages_load(demo, page):
    for path, title in PAGES.items():
        page.goto(demo.url_for(path))
        assert page.title() == title, path
        assert page.locator("h1").count() == 1, path
    page.goto(demo.url_for("table.html"))
    assert page.locator("tr").count() == 2001


def test_dynamic_endpoints(demo):
    start = time.monotonic()
    with urllib.request.urlopen(demo.url_for("/slow?ms=200")) as resp:
        assert b"<title>Slow page</title>" in resp.read()
    assert time.monotonic() - start >= 0.2
    for path in ("status?code=404", "no-such-page.html"):
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(demo.url_for(path))
        assert err.value.code == 404
        assert err.value.headers["Cache-Control"] == "no-store"
    with urllib.request.urlopen(demo.url_for("redirect?to=/help.html")) as resp:
        assert resp.url == demo.url_for("help.html")


@pytest.mark.browser
def test_webmcp_tools(demo, page):
    page.goto(demo.url_for("webmcp.html"))
    sync_api.expect(page.locator("#webmcp-status")).to_have_text("WebMCP ready")
    names = page.evaluate("async () => (await document.modelContext.getTools()).map(t => t.name)")
    assert {"add_to_cart", "get_cart", "fail_always", "echo_text", "search_products"} <= set(names)
