"""APIs whose requests the page sends (`via="page"`): the page's cookies, origin and CORS, browser_http's
bounded reader and the same envelope, and credentials the page never holds (the kernel adds them to the
request as it leaves the browser)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.helpers import check_contract, error, ok
from webmcp_nb import Session
from webmcp_nb.apis import ApiHandle
from webmcp_nb.demo import SITE, DemoServer

pytestmark = pytest.mark.playwright_sensitive  # see tests/test_compat_scope.py

TOKEN = "tok-apipage-bearer"
# Records, in the page, every fetch's arguments and every resource URL the page can see.
SPY_JS = """() => {
  window.__seen = [];
  const original = window.fetch;
  window.fetch = function (url, init) {
    window.__seen.push(JSON.stringify([String(url), init && init.headers]));
    return original.apply(this, arguments);
  };
}"""
SEEN_JS = "() => JSON.stringify([window.__seen, performance.getEntriesByType('resource').map((e) => e.name)])"


def document(scheme: dict[str, Any] | None = None) -> dict[str, Any]:
    spec = json.loads(SITE.joinpath("openapi.json").read_text())
    if scheme is not None:
        spec = copy.deepcopy(spec)
        spec["components"]["securitySchemes"] = {"token": scheme}
    return spec


def other_origin(url: str) -> str:
    return url.replace("://127.0.0.1:", "://localhost:")


@pytest.fixture(scope="module")
def s(demo: DemoServer) -> Iterator[Session]:
    with Session() as session:
        ok(session.navigate(demo.url_for("index.html")))
        yield session


@pytest.fixture(scope="module")
def shop(s: Session) -> ApiHandle:
    # No base_url: the document's server ("/") is the page's own origin.
    return s.api(
        document(),
        name="pshop",
        via="page",
        auth=TOKEN,
        stream_collection={"max_events": 10, "max_bytes": 10_000, "max_duration_ms": 10_000},
    )


def checked(envelope: Any) -> Any:
    check_contract(envelope)
    return envelope


def test_the_page_sends_with_its_cookies_and_the_same_envelope(s: Session, shop: ApiHandle, demo: DemoServer) -> None:
    assert [spec.target for spec in shop.tools] == ["page"] * len(shop.tools)
    ok(s.evaluate("() => { document.cookie = 'pagecookie=apipage1; path=/'; }"))
    data = ok(checked(shop.listItems(limit=2)))
    assert data["value"][:2] == [{"id": 1, "name": "Apple", "price": 1.25}, {"id": 2, "name": "Banana", "price": 0.5}]
    http = data["http"]
    assert (http["method"], http["status"], http["url"]) == ("GET", 200, demo.url_for("api/items?limit=2"))
    assert http["content_type"] == "application/json" and http["byte_length"] > 0
    envelope, raw = shop.call("echo", reveal=["cookie", "Authorization"])  # what the server got, to Python only
    assert raw == {"cookie": "pagecookie=apipage1", "Authorization": f"Bearer {TOKEN}"}  # the page's cookie, our bearer
    assert ok(envelope)["value"]["cookie"] == "[blocked]" and TOKEN not in json.dumps(envelope.to_dict())
    ticks = ok(shop.call("ticks", n=2))  # SSE through the page's bounded reader
    assert ticks["response"] == "sse" and [e["data"]["n"] for e in ticks["value"]["events"]] == [1, 2]


@pytest.mark.parametrize(
    ("scheme", "value", "field", "arrived"),
    [
        ({"type": "apiKey", "in": "header", "name": "X-Key"}, "hk-apipage", "X-Key", "hk-apipage"),
        ({"type": "apiKey", "in": "query", "name": "key"}, "qk-apipage", "path", "/api/echo?key=qk-apipage"),
    ],
)
def test_credentials_reach_the_server_but_never_the_page(
    s: Session, scheme: dict[str, Any], value: str, field: str, arrived: str
) -> None:
    ok(s.evaluate("() => { document.cookie = 'pagecookie=apipage2; path=/'; }"))
    ok(s.evaluate(SPY_JS))
    api = s.api(document(scheme), name="pauth", via="page", auth=value)
    try:
        envelope, raw = api.call("echo", reveal=[field])
    finally:
        api.close()
    assert raw == {field: arrived}  # the server got it
    data = ok(envelope)
    assert value not in json.dumps(data) and value not in json.dumps([r.envelope.to_dict() for r in s.history])
    page_saw = ok(s.evaluate(SEEN_JS))["result"]
    assert "/api/echo" in page_saw and value not in page_saw  # neither fetch's arguments nor resource URLs
    recorded = ok(s.network(url="/api/echo"))  # nor the session's network evidence (headers, URLs)
    assert recorded["entries"] and value not in json.dumps(recorded)


def test_a_redirect_is_not_followed_with_credentials_added(s: Session, demo: DemoServer) -> None:
    spec = document()
    spec["paths"]["/redirect"] = {
        "get": {
            "operationId": "bounce",
            "parameters": [{"name": "to", "in": "query", "required": True, "schema": {"type": "string"}}],
            "responses": {"200": {"description": "where it lands"}},
        }
    }
    api = s.api(spec, name="pbounce", via="page", auth=TOKEN)
    plain = s.api(spec, name="pbounce_plain", via="page", include=["bounce"])  # no auth: nothing added
    try:
        message = error(api.call("bounce", to="/api/echo"), "navigation_failed", "unknown", "read_only")
        assert "Redirected: the answer is a redirect, which this request does not follow" in message
        assert TOKEN not in message
        landed = ok(plain.call("bounce", to="/api/items"))  # no credentials added: redirects are followed
        assert landed["http"]["url"] == demo.url_for("api/items") and landed["value"][0]["name"] == "Apple"
    finally:
        api.close()
        plain.close()


def test_a_cookie_credential_is_refused_before_sending(s: Session) -> None:
    api = s.api(document({"type": "apiKey", "in": "cookie", "name": "sid"}), name="pcookie", via="page", auth="ck-1")
    try:
        message = error(api.call("echo"), "invalid_params", "not_started")
        assert "sends a cookie (sid); with via='page' only the page's own cookies go" in message
        assert "ck-1" not in message
    finally:
        api.close()


def test_the_pages_cors_and_the_result_limits_apply(s: Session, demo: DemoServer) -> None:
    ok(s.navigate(other_origin(demo.url_for("index.html"))))
    try:
        cross = s.api(document(), name="pcross", via="page", base_url=demo.url)
        try:
            message = error(cross.call("listItems"), "navigation_failed", "unknown", "read_only")
            assert "Failed to fetch" in message  # the demo API sends no CORS headers
        finally:
            cross.close()
    finally:
        ok(s.navigate(demo.url_for("index.html")))
    small = s.api(document(), name="psmall", via="page", max_result_bytes=1_100)
    try:
        message = error(small.call("listItems"), "result_too_large", "unknown", "read_only")
        assert "the read was cancelled" in message
        preview = ok(small.call("bumpCounter", key="pk", body={}, preview=True))["preview"]
        assert preview["url"].endswith("/api/counter?key=pk") and preview["method"] == "POST"
    finally:
        small.close()


# expose_to_page: the API's tools as WebMCP tools of the listed origins' documents

CALL_JS = """async () => {
  const tool = (await document.modelContext.getTools()).find((t) => t.name === %s);
  if (!tool) return "no such tool";
  const result = await document.modelContext.executeTool(tool, %s);
  return typeof result === "string" ? result : JSON.stringify(result);
}"""
# A script calling the page-tool binding directly (as a hostile one would), with a token it obtained.
BINDING_JS = "() => window.__webmcp_nb_python_tool(%s, {}).then(JSON.stringify, (e) => 'refused: ' + e.message)"
NAMES_JS = "async () => (await document.modelContext.getTools()).map((t) => t.name).join(' ')"


def page_call(s: Session, tool: str, args: dict[str, Any]) -> Any:
    """A page script calling the page tool `tool`: the envelope it gets (or what went wrong)."""
    answer = ok(s.evaluate(CALL_JS % (json.dumps(tool), json.dumps(args))))["result"]
    return json.loads(answer) if answer.startswith("{") else answer


def echo_token(api: ApiHandle) -> str:
    """The binding token of the echo tool's registration (as if the page had leaked it)."""
    exposure = api.exposure
    assert exposure is not None
    [token] = {r.token for found in exposure.registrations.values() for r in found if r.tool.name.endswith("_echo")}
    return token


def page_tools(s: Session) -> set[str]:
    return set(ok(s.evaluate(NAMES_JS))["result"].split())


def test_exposed_operations_are_page_tools_of_the_listed_origin_only(s: Session, demo: DemoServer) -> None:
    from tests.helpers import wait_until
    from webmcp_nb.core.call.util import origin_of

    ok(s.navigate(demo.url_for("index.html")))
    origin = origin_of(demo.url)
    with pytest.raises(ValueError, match="is not an http"):
        s.api(document(), name="xbad", base_url=demo.url, expose_to_page=["localhost"])
    api = s.api(document(), name="xshop", base_url=demo.url, auth=TOKEN, expose_to_page=[origin])
    try:
        assert {"xshop_listItems", "xshop_createKey"} <= page_tools(s)
        envelope = page_call(s, "xshop_listItems", {"limit": 1})
        assert envelope["status"] == "success" and envelope["data"]["value"][0]["name"] == "Apple"
        assert envelope["data"]["http"]["status"] == 200 and envelope["operation"]["outcome"] == "completed"
        made = page_call(s, "xshop_createKey", {"body": {"label": "page"}})["data"]
        assert made["value"]["key"] == "[blocked]" and "key" in made["show_once"]  # never revealed to the page
        bad = page_call(s, "xshop_listItems", {"limit": 0})
        assert (bad["error_type"], bad["operation"]["outcome"]) == ("invalid_params", "not_started")
        text = json.dumps([envelope, made])
        assert TOKEN not in text and "sk-" not in text
        assert [r.caller for r in s.history if r.tool == "xshop_createKey"] == [f"page:{origin}"]
        token = echo_token(api)
        # Another origin's document gets no tool, and the binding refuses it even with a leaked token.
        ok(s.navigate(other_origin(demo.url_for("index.html"))))
        assert not any(name.startswith("xshop_") for name in page_tools(s))
        refused = ok(s.evaluate(BINDING_JS % json.dumps(token)))["result"]
        assert refused.startswith("refused: Python page tool call refused")
        ok(s.navigate(demo.url_for("index.html")))  # the listed origin again: a new document, registered again
        wait_until(lambda: "xshop_echo" in page_tools(s))
        # A frame of another origin inside the listed document is refused, even with the live token.
        token = echo_token(api)
        frame_url = other_origin(demo.url_for("frame-inner.html"))
        ok(
            s.evaluate(f"""() => new Promise((done) => {{
            const frame = document.createElement("iframe");
            frame.onload = done;
            frame.src = {frame_url!r};
            document.body.append(frame);
        }})""")
        )
        inner = next(frame["frame_id"] for frame in ok(s.frames())["frames"] if frame["url"] == frame_url)
        refused = ok(s.evaluate(BINDING_JS % json.dumps(token), frame_id=inner))["result"]
        assert refused == (
            f"refused: Python page tool call refused: 'xshop_echo' is exposed to {origin}, not to the calling frame "
            f"({origin_of(frame_url)})."
        )
        assert ok(s.evaluate(BINDING_JS % json.dumps(token)))["result"].startswith('{"status":"success"')
    finally:
        api.close()
    assert not any(name.startswith("xshop_") for name in page_tools(s))  # close() unregistered them


def test_an_exposed_via_page_api_is_sent_by_the_calling_tab(s: Session, demo: DemoServer) -> None:
    from tests.helpers import wait_until
    from webmcp_nb.core.call.util import origin_of

    ok(s.navigate(demo.url_for("index.html")))
    page_id = ok(s.tabs())["current_page_id"]
    api = s.api(document(), name="yshop", via="page", auth=TOKEN, expose_to_page=[origin_of(demo.url)])
    try:
        wait_until(lambda: "yshop_echo" in page_tools(s))
        # The page calls on its own, as a page script does (a call inside browser_evaluate holds the tab).
        script = CALL_JS % (json.dumps("yshop_echo"), json.dumps({"page_id": "elsewhere"}))
        ok(s.evaluate(f"() => {{ setTimeout(async () => {{ window.__answer = await ({script})(); }}, 0); }}"))
        answer = wait_until(lambda: ok(s.evaluate("() => window.__answer || null"))["result"])
    finally:
        api.close()
    envelope = json.loads(answer)
    assert envelope["status"] == "success" and envelope["operation"]["page_id"] == page_id  # the calling tab's fetch
    assert envelope["data"]["url"] == demo.url_for("index.html") and TOKEN not in answer
    [record] = [r for r in s.history if r.tool == "yshop_echo"]
    assert record.args["page_id"] == page_id  # the page's own page_id was replaced by its tab's


def test_the_browser_api_command_loads_via_the_page_and_exposes(s: Session, demo: DemoServer, tmp_path: Any) -> None:
    from tests.helpers import wait_until
    from webmcp_nb.core.call.util import origin_of
    from webmcp_nb.notebook.api_command import OperationTable, run_api

    ok(s.navigate(demo.url_for("index.html")))
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(document()))
    origin = origin_of(demo.url)
    table = run_api(s, ["load", str(spec), "--name", "mpage", "--via", "page", "--expose-to-page", origin])
    try:
        assert isinstance(table, OperationTable) and table.name == "mpage"
        assert {spec.target for spec in s.apis["mpage"].tools} == {"page"}
        wait_until(lambda: "mpage_listItems" in page_tools(s))
        data = ok(run_api(s, ["mpage", "listItems", "--limit", "1"]))
        assert data["url"] == demo.url_for("index.html") and data["http"]["status"] == 200
    finally:
        s.apis["mpage"].close()
    assert "mpage_listItems" not in page_tools(s)


def test_session_close_ends_the_page_exposure(demo: DemoServer) -> None:
    from webmcp_nb.core.call.util import origin_of

    session = Session()
    api = session.api(document(), name="zshop", base_url=demo.url, expose_to_page=[origin_of(demo.url)])
    exposure = api.exposure
    assert exposure is not None and not exposure.closed
    engine = session.engine
    listening = len(engine.listeners)
    session.close()
    assert exposure.closed and exposure.registrations == {} and "zshop" not in session.apis
    assert len(engine.listeners) == listening - 1  # its call listener (finding new tabs) is gone


def test_a_large_api_gives_the_page_its_three_tools(s: Session, demo: DemoServer) -> None:
    from tests.helpers import wait_until
    from webmcp_nb.core.call.util import origin_of

    ok(s.navigate(demo.url_for("index.html")))
    api = s.api(document(), name="bigp", base_url=demo.url, max_tools=3, expose_to_page=[origin_of(demo.url)])
    try:
        wait_until(lambda: {"bigp_search", "bigp_describe", "bigp_call"} <= page_tools(s))
        assert not any(name.startswith("bigp_list") for name in page_tools(s))
        found = page_call(s, "bigp_search", {"query": "counter"})["data"]["operations"]
        assert [row["name"] for row in found] == ["getCounter", "bumpCounter"]
        called = page_call(s, "bigp_call", {"operation": "listItems", "args": {"limit": 1}})
        assert called["data"]["value"][0]["name"] == "Apple" and called["data"]["operation"] == "listItems"
    finally:
        api.close()
    assert not any(name.startswith("bigp_") for name in page_tools(s))
