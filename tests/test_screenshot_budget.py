"""Screenshots have a pixel budget, checked before capture (issue 21): a huge page or element is
refused with `invalid_params` (`not_started`) naming the ways out, and the instance lives on.

A full-page screenshot of a 200,000 x 20,000 px page used to end in `internal_error` twice, then
`instance_crashed` (every tab and cookie of the instance lost). Real Chromium, pages served on
loopback, and a no-grant agent over MCP (HTTP).
"""

from __future__ import annotations

import asyncio
import http.server
import threading
from collections.abc import Iterator
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.helpers import error, ok, ref_for
from webmcp_nb import Session
from webmcp_nb.core.config import Limits

pytestmark = pytest.mark.playwright_sensitive  # see tests/test_compat_scope.py

HUGE = (
    b"<!doctype html><title>Huge</title><body style='margin:0'><p>A huge poster follows.</p>"
    b"<div role='img' aria-label='Poster' style='width:200000px;height:20000px;"
    b"background:linear-gradient(red,blue)'></div></body>"
)
LONG = b"<!doctype html><title>Long</title><body style='margin:0'><div style='height:5000px'>Long</div></body>"
PAGES = {"/huge": HUGE, "/long": LONG}


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        body = PAGES.get(self.path, b"<title>Other</title><p>another tab</p>")
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    with Session() as session:
        yield session


def refused(envelope: Any) -> str:
    message = error(envelope, "invalid_params", "not_started", "after_correction")
    assert "over the capture budget" in message and "nothing was captured" in message
    return message


@pytest.mark.browser
def test_a_full_page_screenshot_of_a_huge_page_is_refused_and_the_instance_lives_on(
    session: Session, site: str
) -> None:
    ok(session.navigate(f"{site}/other"))
    ok(session.call("browser_tabs", action="new", url=f"{site}/huge"))
    ok(session.evaluate("document.cookie = 'kept=1; path=/'"))
    before = session.call("browser_tabs")
    for _ in range(3):  # it used to fail twice, then crash the instance
        message = refused(session.call("browser_screenshot", full_page=True))
        assert "200000 x 200" in message  # the page's size, in device pixels
        assert "Ways out: a ref (one element), or no full_page (the viewport)" in message
    # The same instance, its tabs and cookies: nothing was lost; the viewport screenshot works.
    after = session.call("browser_tabs")
    assert after.operation.instance_id == before.operation.instance_id
    assert ok(after)["tabs"] == ok(before)["tabs"]
    shot = ok(session.call("browser_screenshot"))
    assert (shot["source_width"], shot["source_height"]) == (1280, 720)
    assert ok(session.evaluate("document.cookie"))["result"] == "kept=1"
    # Printing the same page is no capture of its pixels: it works, and the instance lives on.
    assert ok(session.call("browser_pdf"))["size_bytes"] > 0
    assert ok(session.call("browser_tabs")).get("tabs") == ok(before)["tabs"]


@pytest.mark.browser
def test_an_element_screenshot_of_a_huge_element_is_refused(session: Session, site: str) -> None:
    ok(session.navigate(f"{site}/huge"))
    snapshot = ok(session.call("browser_snapshot"))["snapshot"]
    message = refused(session.call("browser_screenshot", ref=ref_for(snapshot, "Poster")))
    assert "A screenshot of element " in message and "200000 x 20000" in message
    assert "Ways out: the ref of a smaller element inside it" in message
    small = ok(session.call("browser_screenshot", ref=ref_for(snapshot, "A huge poster")))
    assert small["source_height"] < 100
    ok(session.call("browser_screenshot"))


@pytest.mark.browser
def test_a_long_page_within_the_budget_is_captured(session: Session, site: str) -> None:
    ok(session.navigate(f"{site}/long"))
    shot = ok(session.call("browser_screenshot", full_page=True, original=True))
    assert (shot["source_width"], shot["source_height"]) == (1280, 5000)


@pytest.mark.browser
def test_the_budget_counts_device_pixels(site: str) -> None:
    """At device scale 2, the largest viewport (7680 x 4320, within the budget in CSS px) is four
    times as many pixels, over it; the default viewport stays well within."""
    with Session(args=["--force-device-scale-factor=2"]) as session:
        ok(session.navigate(f"{site}/long"))
        shot = ok(session.call("browser_screenshot", original=True))
        assert (shot["source_width"], shot["source_height"]) == (2560, 1440)
        ok(session.call("browser_create_instance", name="wall", viewport={"width": 7680, "height": 4320}))
        ok(session.navigate(f"{site}/long", instance="wall"))
        assert 7680 * 4320 < Limits().max_capture_pixels < 15360 * 8640
        message = refused(session.call("browser_screenshot", instance="wall"))
        assert "the viewport would be 15360 x 8640 px" in message
        assert "Ways out: a ref (one element), or a smaller viewport" in message
        assert ok(session.call("browser_tabs", instance="wall"))["tabs"][0]["url"] == f"{site}/long"


@pytest.mark.browser
def test_a_no_grant_agent_gets_the_refusal_over_mcp(site: str) -> None:
    with Session() as session:
        ok(session.navigate(f"{site}/huge"))
        handle = session.serve_mcp()

        async def scenario() -> list[types.CallToolResult]:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {handle.token}"}, timeout=120)
            async with Client(
                streamable_http_client(handle.url, http_client=http),
                client_info=types.Implementation(name="budget-agent", version="1"),
            ) as agent:
                return [
                    await agent.call_tool("browser_screenshot", {"full_page": True}),
                    await agent.call_tool("browser_screenshot", {"full_page": True}),
                    await agent.call_tool("browser_tabs", {}),
                    await agent.call_tool("browser_screenshot", {}),
                ]

        first, second, tabs, viewport = asyncio.run(scenario())
        handle.stop()
        for result in (first, second):
            envelope = result.structured_content
            assert result.is_error and envelope is not None
            assert (envelope["error_type"], envelope["operation"]["outcome"]) == ("invalid_params", "not_started")
            assert "Ways out: a ref" in envelope["message"]
        assert tabs.is_error is False and tabs.structured_content is not None
        assert tabs.structured_content["data"]["tabs"][0]["url"] == f"{site}/huge"
        assert viewport.is_error is False and viewport.content[0].type == "image"
        assert ok(session.call("browser_list_instances"))["instances"][0]["state"] == "live"
