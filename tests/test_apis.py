"""Session.api: an OpenAPI document's operations as calls, under the result policy (demo server's API)."""

from __future__ import annotations

import copy
import json
import re
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.helpers import check_contract, error, ok, wait_until
from webmcp_nb import Session
from webmcp_nb.apis import ApiHandle, ApiSpecError
from webmcp_nb.demo import SITE, DemoServer

TOKEN = "tok-api28-bearer"


def document() -> dict[str, Any]:
    return json.loads(SITE.joinpath("openapi.json").read_text())


@pytest.fixture(scope="module")
def s() -> Iterator[Session]:
    with Session() as session:
        yield session


@pytest.fixture(scope="module")
def shop(s: Session, demo: DemoServer) -> ApiHandle:
    return s.api(
        demo.url_for("openapi.json"),
        name="shop",
        base_url=demo.url,
        auth=TOKEN,
        stream_collection={"max_events": 10, "max_bytes": 10_000, "max_duration_ms": 10_000},
        binary={"mode": "base64", "max_bytes": 10_000},
    )


def checked(envelope: Any) -> Any:
    check_contract(envelope)
    return envelope


def test_operations_and_a_read(shop: ApiHandle, demo: DemoServer) -> None:
    rows = {row["name"]: row for row in shop.operations}
    assert rows["listItems"] == {
        "name": "listItems",
        "method": "GET",
        "path": "/api/items",
        "summary": "The shop's items",
        "consequential": False,
    }
    assert rows["createKey"]["consequential"] and rows["bumpCounter"]["consequential"]
    data = ok(checked(shop.listItems(limit=5)))
    assert data["value"][0] == {"id": 1, "name": "Apple", "price": 1.25}
    assert data["response"] == "json" and data["warnings"] == []
    http = data["http"]
    assert http["method"] == "GET" and http["status"] == 200 and http["url"] == demo.url_for("api/items?limit=5")
    assert http["content_type"] == "application/json" and http["byte_length"] > 0 and http["duration_ms"] >= 0


def test_bad_arguments_are_not_started(shop: ApiHandle) -> None:
    message = error(shop.call("listItems", limit=0), "invalid_params", "not_started")
    assert "parameter 'limit' (query)" in message and "minimum of 1" in message
    assert "unknown parameter 'nope'" in error(shop.call("listItems", nope=1), "invalid_params", "not_started")
    assert "needs a request body" in error(shop.call("createKey"), "invalid_params", "not_started")
    assert "$.label" in error(shop.call("createKey", body={"label": 5}), "invalid_params", "not_started")


def test_bearer_stays_out_of_results_and_history(s: Session, shop: ApiHandle) -> None:
    data = ok(shop.call("echo"))
    assert data["value"]["headers"]["Authorization"] == "[blocked]"
    assert TOKEN not in json.dumps(data)
    assert TOKEN not in json.dumps([record.envelope.to_dict() for record in s.history], default=str)
    assert TOKEN not in json.dumps([record.args for record in s.history], default=str)


def test_secret_fields_are_blocked(shop: ApiHandle) -> None:
    data = ok(shop.call("getAccount"))
    assert data["value"]["password_hint"] == "[blocked]"  # x-secret in the document
    assert data["value"]["password"] == "[blocked]" and data["value"]["user"] == "ada"  # a secret-like name
    assert "password_hint" in data["blocked_fields"]
    assert data["http"]["headers"]["x-auth-token"] == "[redacted]"


def test_ndjson_sse_and_binary(shop: ApiHandle) -> None:
    lines = ok(shop.call("streamItems"))
    assert lines["response"] == "ndjson" and lines["value"][1] == {"id": 0, "token": "[blocked]"}
    ticks = ok(shop.call("ticks", n=2))
    assert ticks["response"] == "sse"
    events = ticks["value"]["events"]
    assert [event["event"] for event in events] == ["tick", "tick"] and events[1]["id"] == "2"
    assert events[0]["data"] == {"n": 1, "token": "[blocked]"}
    image = ok(shop.call("getImage"))
    assert image["response"] == "binary" and image["value"]["media_type"] == "image/png"


def test_declared_streams_and_binaries_are_refused_before_sending(s: Session, demo: DemoServer) -> None:
    plain = s.api(demo.url_for("openapi.json"), name="plain", base_url=demo.url)
    try:
        assert "stream_collection=" in error(plain.call("ticks"), "invalid_params", "not_started")
        assert "binary=" in error(plain.call("getImage"), "invalid_params", "not_started")
    finally:
        plain.close()
    with pytest.raises(ValueError, match="max_events"):
        s.api(document(), name="bad", base_url=demo.url, stream_collection={"max_bytes": 1, "max_duration_ms": 1})
    with pytest.raises(ValueError, match="max_duration_ms"):
        s.api(
            document(),
            name="bad",
            base_url=demo.url,
            stream_collection={"max_events": 1, "max_bytes": 1, "max_duration_ms": 2**31},
        )


def test_show_once_preview_and_idempotency(s: Session, shop: ApiHandle) -> None:
    preview = checked(shop.call("createKey", body={"label": "ci"}, preview=True))
    assert preview.operation.outcome == "not_started"
    request = ok(preview)["preview"]
    assert request["method"] == "POST" and request["body"] == {"label": "ci"}
    assert request["headers"]["Authorization"] == "[redacted]"
    assert request["headers"]["Idempotency-Key"] == ok(preview)["idempotency_key"]
    envelope, revealed = shop.call("createKey", body={"label": "ci"}, reveal=["key"])
    data = ok(envelope)
    assert data["value"]["key"] == "[blocked]" and "reveal=['key']" in data["show_once"]["key"]
    assert revealed["key"].startswith("sk-") and revealed["key"] not in json.dumps(data)
    assert data["value"]["idempotency_key"] == data["idempotency_key"]  # what the server received
    again = ok(shop.call("createKey", body={"label": "ci"}, idempotency_key="mine-1"))
    assert again["value"]["idempotency_key"] == "mine-1" != data["idempotency_key"]
    assert revealed["key"] not in json.dumps([record.envelope.to_dict() for record in s.history], default=str)


def test_verification(shop: ApiHandle) -> None:
    key = "api28-verify"
    passed = ok(
        shop.call(
            "bumpCounter",
            key=key,
            body={},
            verify={"operation": "getCounter", "params": {"key": key}, "expect": {"count": 1}},
        )
    )
    assert passed["verification"] == {"status": "passed", "operation": "getCounter"}
    failed = shop.call(
        "bumpCounter",
        key=key,
        body={},
        verify={"operation": "getCounter", "params": {"key": key}, "expect": {"count": 9}},
    )
    assert "its check getCounter failed" in error(failed, "verification_failed", "completed")
    assert failed.context["verification"]["status"] == "failed"


def test_cut_off_mutation_is_unknown(shop: ApiHandle) -> None:
    cut = shop.call("bumpCounter", key="api28-slow", delay_ms=3000, body={}, call_timeout_s=0.5)
    assert "check the API's state before repeating" in error(cut, "operation_timeout", "unknown", "inspect_state")


def test_response_schema_mismatch(s: Session, demo: DemoServer) -> None:
    spec = document()
    spec["components"]["schemas"]["Item"]["properties"]["price"] = {"type": "string"}
    loose = s.api(spec, name="loose", base_url=demo.url)
    strict = s.api(spec, name="strict", base_url=demo.url, strict=True)
    try:
        warned = ok(loose.call("listItems"))
        [warning] = warned["warnings"]
        assert re.fullmatch(r"response schema: at \$\[\d\]\.price: [\d.]+ is not of type 'string'", warning)
        assert "].price:" in error(strict.call("listItems"), "evaluation_failed", "completed")
    finally:
        loose.close()
        strict.close()


@pytest.mark.parametrize(
    ("scheme", "auth", "seen"),
    [
        ({"type": "http", "scheme": "basic"}, ("ada", "pw-api28"), lambda echo: echo["headers"]["Authorization"]),
        ({"type": "apiKey", "in": "header", "name": "X-Key"}, "hk-api28", lambda echo: echo["headers"]["X-Key"]),
        ({"type": "apiKey", "in": "query", "name": "key"}, "qk-api28", lambda echo: echo["path"]),
        ({"type": "apiKey", "in": "cookie", "name": "sid"}, "ck-api28", lambda echo: echo["cookie"]),
    ],
)
def test_auth_schemes(s: Session, demo: DemoServer, scheme: dict[str, Any], auth: Any, seen: Any) -> None:
    spec = copy.deepcopy(document())
    spec["components"]["securitySchemes"] = {"token": scheme}
    api = s.api(spec, name="auth", base_url=demo.url, auth=auth)
    try:
        data = ok(api.call("echo"))
        secret = auth[1] if isinstance(auth, tuple) else auth
        text = json.dumps(data)
        assert secret not in text and seen(data["value"]) is not None
        assert "[blocked]" in text or "[redacted]" in text
    finally:
        api.close()


def test_invalid_document_names_the_place(s: Session) -> None:
    spec = document()
    spec["paths"]["/api/items"]["get"]["responses"] = "none"
    with pytest.raises(ApiSpecError, match=r"paths/~1api~1items|/api/items"):
        s.api(spec, name="broken")


def test_close_cancels_running_calls(s: Session, demo: DemoServer) -> None:
    api = s.api(demo.url_for("openapi.json"), name="closing", base_url=demo.url)
    results: list[Any] = []
    thread = threading.Thread(
        target=lambda: results.append(api.call("bumpCounter", key="api28-close", delay_ms=5000, body={}))
    )
    thread.start()
    wait_until(lambda: api._api.running, timeout=30)
    assert api.close() == 1
    thread.join(30)
    assert "was closed during the call" in error(results[0], "operation_timeout", "unknown", "inspect_state")
    assert "closing_listItems" not in {spec.name for spec in s.tools}
    assert api.close() == 0


def test_the_browser_api_command(s: Session, demo: DemoServer, tmp_path: Any) -> None:
    from IPython.core.error import UsageError

    from webmcp_nb.notebook.api_command import OperationTable, run_api

    spec = tmp_path / "spec.yaml"
    import yaml

    spec.write_text(yaml.safe_dump(document()))
    table = run_api(s, ["load", str(spec), "--name", "magic", "--base-url", demo.url])
    try:
        assert isinstance(table, OperationTable) and table.name == "magic"
        listed = run_api(s, ["magic"])
        assert "<td>bumpCounter</td><td>POST</td><td>/api/counter</td><td>yes</td>" in listed._repr_html_()
        assert "listItems" in repr(listed) and "consequential" in repr(listed)
        data = ok(run_api(s, ["magic", "listItems", "--limit", "5"]))
        assert data["http"]["url"].endswith("/api/items?limit=5")
        with pytest.raises(UsageError, match="no API named 'nope'"):
            run_api(s, ["nope"])
        with pytest.raises(UsageError, match="has no operation 'nope'"):
            run_api(s, ["magic", "nope"])
    finally:
        s.apis["magic"].close()


def test_per_operation_validation_reports_an_invalid_operation_before_calling_it(s: Session, demo: DemoServer) -> None:
    spec = document()
    spec["paths"]["/api/items"]["get"]["parameters"][0]["schema"] = {"type": "nonsense"}
    lazy = s.api(spec, name="lazy", base_url=demo.url, validation="per_operation")
    try:
        message = error(lazy.call("listItems"), "invalid_params", "not_started")
        assert message.startswith("listItems is invalid in the document at /paths/~1api~1items/get/parameters/0/schema")
        assert ok(lazy.call("getCounter", key="lazy"))["value"] == {"key": "lazy", "count": 0}
    finally:
        lazy.close()
    with pytest.raises(ApiSpecError):  # the same document, validated in full at load
        s.api(spec, name="eager", base_url=demo.url, validation="full")
    misplaced = document()
    misplaced["paths"]["/api/items"]["get"]["parameters"][0]["in"] = "nowhere"  # the meta-schema's rule
    lazy = s.api(misplaced, name="lazy", base_url=demo.url, validation="per_operation")
    try:
        assert error(lazy.call("listItems"), "invalid_params", "not_started") == (
            "listItems is invalid in the document at /paths/~1api~1items/get/parameters/0/in: "
            "'nowhere' is not one of ['query', 'header', 'path', 'cookie']. Nothing was sent."
        )
    finally:
        lazy.close()


def test_include_and_exclude_choose_the_operations(s: Session, demo: DemoServer) -> None:
    some = s.api(document(), name="some", base_url=demo.url, include=["listItems", "getCounter", "createKey"])
    rest = s.api(document(), name="rest", base_url=demo.url, exclude=["createKey", "bumpCounter"])
    both = s.api(document(), name="both", base_url=demo.url, include=["listItems", "createKey"], exclude=["createKey"])
    try:
        assert [row["name"] for row in some.operations] == ["listItems", "getCounter", "createKey"]
        assert sorted(spec.name for spec in some.tools) == ["some_createKey", "some_getCounter", "some_listItems"]
        assert {"createKey", "bumpCounter"}.isdisjoint(row["name"] for row in rest.operations)
        assert len(rest.operations) == len(operations_of(document())) - 2
        assert "rest_createKey" not in {spec.name for spec in s.tools} and "rest_listItems" in {t.name for t in s.tools}
        assert [row["name"] for row in both.operations] == ["listItems"]
        with pytest.raises(AttributeError, match="has no operation 'createKey'"):
            rest.call("createKey", body={"label": "x"})
        assert ok(some.call("getCounter", key="include"))["value"] == {"key": "include", "count": 0}
    finally:
        for api in (some, rest, both):
            api.close()
    with pytest.raises(ValueError, match="no such operation in the document: nope, nada"):
        s.api(document(), name="typo", base_url=demo.url, include=["listItems", "nope"], exclude=["nada"])
    assert "typo" not in s.apis


def operations_of(spec: dict[str, Any]) -> list[str]:
    return [op["operationId"] for item in spec["paths"].values() for op in item.values()]


def echo_document(origin: dict[str, Any]) -> dict[str, Any]:
    """An OpenAPI 3.0 document for the demo's echo, whose `origin` field is null here (httpx sends none)."""
    schema = {"type": "object", "required": ["origin"], "properties": {"origin": origin}}
    answer = {"description": "the request", "content": {"application/json": {"schema": schema}}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "echo", "version": "1"},
        "paths": {"/api/echo": {"get": {"operationId": "echo", "responses": {"200": answer}}}},
    }


def test_openapi_30_nullable_is_honoured(s: Session, demo: DemoServer) -> None:
    nullable = s.api(echo_document({"type": "string", "nullable": True}), name="nullable", base_url=demo.url)
    plain = s.api(echo_document({"type": "string"}), name="notnull", base_url=demo.url)
    try:
        data = ok(nullable.call("echo"))
        assert data["value"]["origin"] is None and data["warnings"] == []
        assert ok(plain.call("echo"))["warnings"] == [
            "response schema: at $.origin: None for not nullable"
        ]  # (openapi-schema-validator's words)
    finally:
        nullable.close()
        plain.close()


def test_a_defaults_format_is_an_annotation(s: Session, demo: DemoServer) -> None:
    """GitHub's document has `default: ''` on a `format: uri` string: valid (docs/apis.md says why);
    a default of the wrong type is still an invalid document."""
    quirk = s.api(echo_document({"type": "string", "format": "uri", "default": ""}), name="quirk", base_url=demo.url)
    quirk.close()
    with pytest.raises(ApiSpecError, match="5 is not of type 'string'"):
        s.api(echo_document({"type": "string", "default": 5}), name="wrong", base_url=demo.url, validation="full")


def test_a_per_event_byte_bound(s: Session, demo: DemoServer) -> None:
    # The demo's first tick is 57 bytes as sent: `id: 1`, `event: tick`, `data: {...}` and the blank line.
    limits = {"max_events": 10, "max_bytes": 10_000, "max_duration_ms": 10_000}
    fits = s.api(document(), name="fits", base_url=demo.url, stream_collection={**limits, "max_event_bytes": 57})
    over = s.api(document(), name="over", base_url=demo.url, stream_collection={**limits, "max_event_bytes": 56})
    try:
        assert len(ok(fits.call("ticks", n=3))["value"]["events"]) == 3
        failed = over.call("ticks", n=3)
        message = error(failed, "result_too_large")
        assert message.startswith("An event passed max_event_bytes (56 bytes) before it ended.")
        assert failed.context["partial"] == []
    finally:
        fits.close()
        over.close()
    with pytest.raises(ValueError, match="max_event_bytes"):
        s.api(document(), name="bad", base_url=demo.url, stream_collection={**limits, "max_event_bytes": 0})


def test_the_event_bound_holds_before_an_event_ends() -> None:
    from webmcp_nb.core.browsers.sse import EventStreamParser, EventTooLarge

    parser = EventStreamParser(max_event_bytes=20)
    assert [event.data for event in parser.feed(b"data: a\n\n" + b"data: b\n\n")] == ["a", "b"]  # 9 bytes each
    with pytest.raises(EventTooLarge) as raised:
        parser.feed(b"data: c\n\ndata: " + b"x" * 15)  # no line end yet: still bounded
    assert [event.data for event in raised.value.events] == ["c"] and raised.value.limit == 20


def test_an_unreachable_server_is_told_as_the_kernels_request(s: Session) -> None:
    """A via="kernel" call that cannot connect names the kernel's request and httpx's reason, not
    the page's fetch (whose wording about CORS does not apply)."""
    import socket

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    api = s.api(document(), name="gone", base_url=f"http://127.0.0.1:{port}")
    try:
        message = error(checked(api.call("listItems")), "navigation_failed")
    finally:
        api.close()
    assert message.startswith(f"The kernel's request of http://127.0.0.1:{port}/api/items failed: "), message
    assert "ConnectError" in message and "CORS" not in message and "no browser involved" in message, message
