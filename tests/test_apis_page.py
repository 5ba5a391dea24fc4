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
