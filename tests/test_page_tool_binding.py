"""Python page tools are bound to one document (seed 003's `exposedTo`), failing closed.

The demo site is served on 127.0.0.1; the same server reached as ``localhost`` is a second
origin. The attacks: page B (``localhost``) calling a tool page A registered after the tab
navigated, and a cross-origin iframe inside A calling it. Both know the binding's name and, to
make the attack as strong as it gets, the registration's token (as if page A had leaked it).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers import error, ok, wait_until
from webmcp_nb import Session
from webmcp_nb.core.call.errors import ToolFailure
from webmcp_nb.core.call.util import origin_of
from webmcp_nb.core.webmcp.page_tools import BINDING
from webmcp_nb.demo import DemoServer

pytestmark = pytest.mark.playwright_sensitive  # see tests/test_compat_scope.py


def other_origin(url: str) -> str:
    return url.replace("://127.0.0.1:", "://localhost:")


def call_binding(session: Session, token: str, word: str, **where: Any) -> str:
    """Call the binding directly from a frame, as a hostile script would; the answer or the error."""
    script = f"() => window[{BINDING!r}]({token!r}, {{word: {word!r}}}).then(String, (e) => 'refused: ' + e.message)"
    return ok(session.evaluate(script, **where))["result"]


def tool_names(session: Session) -> set[str]:
    return {tool["name"] for tool in ok(session.webmcp_list())["tools"]}


def refusals(session: Session, since: int) -> list[str]:
    return [event.summary() for event in session.webmcp_history[since:] if event.kind == "refused"]


@pytest.fixture
def page_a(session: Session, demo: DemoServer) -> str:
    url = demo.url_for("webmcp.html")
    ok(session.navigate(url))
    return url


def test_origins_are_read_from_urls_and_opaque_ones_are_none() -> None:
    assert origin_of("http://127.0.0.1:8000/a/b?c#d") == "http://127.0.0.1:8000"
    assert origin_of("https://Example.COM:443/") == "https://example.com"
    assert origin_of("http://[::1]:80/x") == "http://[::1]"
    for opaque in ("about:blank", "about:srcdoc", "data:text/html,x", "file:///etc/passwd", "blob:null/1", "", "x"):
        assert origin_of(opaque) is None, opaque


def test_page_b_after_a_navigation_cannot_call_the_tool_of_page_a(session: Session, page_a: str) -> None:
    seen: list[str] = []

    @session.page_tool
    def lookup(word: str) -> str:
        seen.append(word)
        return f"found {word}"

    token = lookup.registration.token
    assert call_binding(session, token, "same-document") == "found same-document"  # the real path works
    assert ok(session.webmcp_call("lookup", {"word": "agent"}))["text"] == "found agent"
    assert lookup.calls == 2
    # A same-document navigation (a hash change) keeps the document, and the tool.
    ok(session.evaluate("() => { location.hash = 'elsewhere'; }"))
    assert call_binding(session, token, "after-hash") == "found after-hash"

    mark = len(session.webmcp_history)
    ok(session.navigate(other_origin(page_a)))
    wait_until(lambda: not lookup.active)  # the Python side knows the document is gone
    assert "lookup" not in tool_names(session)  # and page B never had the tool
    answer = call_binding(session, token, "from-b")
    assert answer == (
        "refused: Python page tool call refused: no Python tool is registered under this token in this browser "
        "(it was unregistered, or the page that registered it navigated away)."
    )
    assert call_binding(session, "lookup", "guessed-name").startswith("refused: Python page tool call refused")
    assert seen == ["same-document", "agent", "after-hash"] and lookup.calls == 3
    assert len(refusals(session, mark)) == 2
    # The page's own origin coming back (page A again) is a new document: still not callable.
    ok(session.navigate(page_a))
    assert call_binding(session, token, "back-on-a").startswith("refused: ")
    assert seen == ["same-document", "agent", "after-hash"]


def test_a_cross_origin_iframe_is_refused_unless_its_origin_is_listed(session: Session, page_a: str) -> None:
    frame_url = other_origin(page_a.replace("webmcp.html", "frame-inner.html"))
    ok(
        session.evaluate(f"""() => new Promise((done) => {{
        const frame = document.createElement("iframe");
        frame.onload = done;
        frame.src = {frame_url!r};
        document.body.append(frame);
    }})""")
    )
    frames = ok(session.frames())["frames"]
    inner = next(frame["frame_id"] for frame in frames if frame["url"] == frame_url)
    seen: list[str] = []

    def lookup(word: str) -> str:
        seen.append(word)
        return f"found {word}"

    bound = session.page_tool(lookup)
    mark = len(session.webmcp_history)
    answer = call_binding(session, bound.registration.token, "from-iframe", frame_id=inner)
    page_origin, frame_origin = origin_of(page_a), origin_of(frame_url)
    assert answer == (
        f"refused: Python page tool call refused: 'lookup' is exposed to {page_origin}, not to the calling "
        f"frame ({frame_origin})."
    )
    assert seen == [] and bound.calls == 0 and bound.active  # refused, and still usable by its page
    [refused] = [event for event in session.webmcp_history[mark:] if event.kind == "refused"]
    assert (refused.tool_name, refused.frame_id, refused.caller, refused.status) == ("lookup", inner, "page", "error")
    assert refused.summary() == (
        f"refused lookup: 'lookup' is exposed to {page_origin}, not to the calling frame ({frame_origin})."
    )
    assert call_binding(session, bound.registration.token, "from-page") == "found from-page"

    bound.unregister()  # one tool per name: withdrawn, then registered again for both origins
    listed = session.page_tool(lookup, exposed_to=[frame_origin])
    assert not bound.active and listed.active
    assert call_binding(session, listed.registration.token, "listed-iframe", frame_id=inner) == "found listed-iframe"
    assert call_binding(session, bound.registration.token, "old-token", frame_id=inner).startswith("refused: ")
    assert seen == ["from-page", "listed-iframe"]

    # An opaque frame (srcdoc) inside page A is refused even with the token and the page's origin listed.
    ok(
        session.evaluate("""() => new Promise((done) => {
        const frame = document.createElement("iframe");
        frame.onload = done;
        frame.srcdoc = "<p>opaque</p>";
        document.body.append(frame);
    })""")
    )
    srcdoc = next(frame["frame_id"] for frame in ok(session.frames())["frames"] if frame["url"] == "about:srcdoc")
    answer = call_binding(session, listed.registration.token, "from-srcdoc", frame_id=srcdoc)
    assert "not to the calling frame (opaque origin: about:srcdoc)" in answer
    assert seen == ["from-page", "listed-iframe"]
    listed.unregister()


def test_exposed_to_takes_origins_only(session: Session, page_a: str) -> None:
    for wrong in ("localhost", "http://localhost:8000/path", "file:///tmp", "*", "http://user@localhost"):
        with pytest.raises(ToolFailure) as raised:
            session.page_tool(lambda: "x", name="nothing", exposed_to=[wrong])
        assert raised.value.error_type == "invalid_params"
        assert f"exposed_to: {wrong!r} is not an http(s) origin" in raised.value.message
    assert "nothing" not in tool_names(session)


def test_a_page_without_an_origin_cannot_register(session: Session) -> None:
    ok(session.navigate("about:blank"))
    with pytest.raises(ToolFailure) as raised:
        session.page_tool(lambda: "x", name="nowhere")
    assert raised.value.error_type == "unsupported_capability"
    assert "has no http(s) origin to bind 'nowhere' to" in raised.value.message


def test_a_tool_in_another_tab_is_refused(session: Session, page_a: str) -> None:
    bound = session.page_tool(lambda word: f"found {word}", name="lookup_tab")
    token = bound.registration.token
    second = ok(session.tabs("new", url=page_a))["current_page_id"]
    try:
        answer = call_binding(session, token, "other-tab", page_id=second)
        assert answer == "refused: Python page tool call refused: 'lookup_tab' is registered in another tab."
        assert bound.calls == 0
    finally:
        ok(session.tabs("close", page_id=second))
    bound.unregister()
    error(session.webmcp_call("lookup_tab", {"word": "x"}), "element_not_found")


def test_a_sandboxed_frame_at_the_pages_own_url_is_refused(session: Session, page_a: str) -> None:
    """Its URL names the page's origin, but its real origin is opaque: the browser's word counts."""
    frame_url = page_a.replace("webmcp.html", "frame-inner.html")
    ok(
        session.evaluate(f"""() => Promise.all(["allow-scripts", null].map((sandbox) => new Promise((done) => {{
        const frame = document.createElement("iframe");
        if (sandbox) frame.sandbox = sandbox;
        frame.name = sandbox ? "sandboxed" : "plain";
        frame.onload = done;
        frame.src = {frame_url!r};
        document.body.append(frame);
    }})))""")
    )
    frames = {frame["name"]: frame["frame_id"] for frame in ok(session.frames())["frames"] if frame["url"] == frame_url}
    seen: list[str] = []
    bound = session.page_tool(lambda word: seen.append(word) or f"found {word}", name="lookup_sandbox")
    token = bound.registration.token
    assert ok(session.evaluate("() => self.origin", frame_id=frames["sandboxed"]))["result"] == "null"
    answer = call_binding(session, token, "from-sandbox", frame_id=frames["sandboxed"])
    assert answer == (
        f"refused: Python page tool call refused: 'lookup_sandbox' is exposed to {origin_of(page_a)}, not to the "
        f"calling frame (opaque origin: {frame_url})."
    )
    # Page script cannot talk its way in: the origin is the browser's, not what `self.origin` says.
    ok(
        session.evaluate(
            "() => { Object.defineProperty(self, 'origin', {value: location.origin}); }", frame_id=frames["sandboxed"]
        )
    )
    assert call_binding(session, token, "lying", frame_id=frames["sandboxed"]).startswith("refused: ")
    assert call_binding(session, token, "from-plain", frame_id=frames["plain"]) == "found from-plain"
    assert seen == ["from-plain"]
    bound.unregister()
