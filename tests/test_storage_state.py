"""Named storage states (browser_storage_state): a login saved once logs new instances in.

On real Chromium and the demo site's sign-in page (an HttpOnly session cookie set by the
server, a token the page keeps in local storage). The agent's side goes through a real MCP
client over streamable HTTP: saving and loading need the `storage` grant, a state's contents
need `secrets`, and what a state holds is redacted by value from what an agent without
`secrets` gets.
"""

from __future__ import annotations

import asyncio
import json
import stat
from collections.abc import Iterator
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from webmcp_nb.core.tools.storage import states_dir
from webmcp_nb.demo import DemoServer

from .conftest import CheckedSession
from .helpers import error, ok, ref_for, wait_until

pytestmark = pytest.mark.playwright_sensitive  # see tests/test_compat_scope.py

AGENT = types.Implementation(name="storage-agent", version="1.0")


@pytest.fixture(scope="module")
def signed_in(session: CheckedSession, demo: DemoServer) -> dict[str, Any]:
    """The notebook signs in once, on the default instance, and saves the state as shop-login."""
    ok(session.navigate(demo.url_for("login.html")))
    snapshot = ok(session.snapshot())["snapshot"]
    ok(session.type(ref_for(snapshot, "User"), "ada"))
    ok(session.type(ref_for(snapshot, "Password"), "hunter2-secret"))
    ok(session.click(ref_for(snapshot, 'button "Sign in"')))
    wait_until(lambda: "Signed in as ada" in str(session.evaluate("document.body.innerText").data), timeout=30)
    ok(session.navigate(demo.url_for("login.html")))
    token = ok(session.evaluate("localStorage.getItem('demo_token')"))["result"]
    assert token.startswith("tok-")
    assert ok(session.storage_state("save", name="shop-login"))["states"] == ["shop-login"]
    path = states_dir(session.engine.artifacts_dir) / "shop-login.json"
    state = json.loads(path.read_text())
    cookie = next(c["value"] for c in state["cookies"] if c["name"] == "demo_session")
    return {"path": path, "token": token, "cookie": cookie}


def test_a_saved_state_logs_a_new_instance_in_without_typing(
    session: CheckedSession, demo: DemoServer, signed_in: dict[str, Any]
) -> None:
    assert stat.S_IMODE(signed_in["path"].stat().st_mode) == 0o600
    ok(session.create_instance("clone", storage_state="shop-login"))
    try:
        ok(session.navigate(demo.url_for("account"), instance="clone"))
        assert "Signed in as ada" in ok(session.evaluate("document.body.innerText", instance="clone"))["result"]
        ok(session.navigate(demo.url_for("login.html"), instance="clone"))
        # A known secret now: the notebook reads it redacted too, so the page compares it.
        value = ok(session.evaluate("localStorage.getItem('demo_token')", instance="clone"))["result"]
        assert value == "[redacted]"
        same = f"localStorage.getItem('demo_token') === {signed_in['token']!r}"
        assert ok(session.evaluate(same, instance="clone"))["result"] is True
        # The hidden tab that wrote local storage is not one of the instance's tabs.
        assert len(ok(session.tabs(instance="clone"))["tabs"]) == 1
    finally:
        ok(session.destroy_instance("clone"))


def test_loading_into_the_current_instance_and_deleting(
    session: CheckedSession, demo: DemoServer, signed_in: Any
) -> None:
    ok(session.create_instance("later"))
    try:
        ok(session.navigate(demo.url_for("account"), instance="later"))
        assert "Not signed in" in ok(session.evaluate("document.body.innerText", instance="later"))["result"]
        ok(session.storage_state("load", name="shop-login", instance="later"))
        ok(session.navigate(demo.url_for("account"), instance="later"))
        assert "Signed in as ada" in ok(session.evaluate("document.body.innerText", instance="later"))["result"]
    finally:
        ok(session.destroy_instance("later"))
    ok(session.storage_state("save", name="spare"))
    assert ok(session.storage_state("list"))["states"] == ["shop-login", "spare"]
    assert ok(session.storage_state("delete", name="spare"))["states"] == ["shop-login"]
    message = error(session.storage_state("load", name="spare"), "invalid_params", "not_started", "after_correction")
    assert "No storage state 'spare'" in message and "shop-login" in message
    message = error(session.storage_state("save"), "invalid_params", "not_started")
    assert "needs a name" in message
    # A name is never a path.
    error(session.storage_state("save", name="../escape"), "invalid_params", "not_started")
    error(session.create_instance("x", storage_state="/tmp/state"), "invalid_params", "not_started")
    assert "x" not in ok(session.list_instances())["instances"]


def structured(result: types.CallToolResult) -> dict[str, Any]:
    assert isinstance(result.structured_content, dict), result
    return result.structured_content


def agent_calls(session: CheckedSession, caps: list[str], *calls: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    handle = session.serve_mcp(caps=caps)

    async def run() -> list[dict[str, Any]]:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {handle.token}"}, timeout=120)
        async with Client(streamable_http_client(handle.url, http_client=http), client_info=AGENT) as client:
            return [structured(await client.call_tool(name, args)) for name, args in calls]

    try:
        return asyncio.run(run())
    finally:
        handle.stop()


@pytest.fixture(scope="module")
def agents(session: CheckedSession, signed_in: Any) -> Iterator[None]:
    yield
    for name in ("agent-clone",):
        if name in {i["name"] for i in ok(session.list_instances())["instances"]}:
            session.destroy_instance(name)


def test_an_agent_needs_storage_and_secrets(
    session: CheckedSession, demo: DemoServer, signed_in: dict[str, Any], agents: None
) -> None:
    show = ("browser_storage_state", {"action": "show", "name": "shop-login"})
    create = ("browser_create_instance", {"name": "agent-clone", "storage_state": "shop-login"})
    (denied, refused) = agent_calls(session, [], show, create)
    assert denied["error_type"] == "invalid_params" and "not granted" in denied["message"], denied
    assert denied["operation"]["outcome"] == "not_started"
    assert refused["error_type"] == "invalid_params" and "`storage` capability" in refused["message"], refused

    listed, shown, created, _, account, _, login = agent_calls(
        session,
        ["storage"],
        ("browser_storage_state", {"action": "list"}),
        show,
        create,
        ("browser_navigate", {"url": demo.url_for("account"), "instance": "agent-clone"}),
        ("browser_snapshot", {"instance": "agent-clone"}),
        ("browser_navigate", {"url": demo.url_for("login.html"), "instance": "agent-clone"}),
        ("browser_snapshot", {"instance": "agent-clone"}),
    )
    assert listed["data"]["states"] == ["shop-login"], listed
    assert shown["error_type"] == "invalid_params" and "`secrets` capability" in shown["message"], shown
    assert created["status"] == "success", created
    assert "Signed in as ada" in account["data"]["snapshot"], account
    # The page shows the token it keeps; the agent reads it redacted by value.
    assert "Remembered token: [redacted]" in login["data"]["snapshot"], login
    assert signed_in["token"] not in json.dumps(login)

    (revealed,) = agent_calls(session, ["storage", "secrets"], show)
    cookies = {c["name"]: c["value"] for c in revealed["data"]["contents"]["cookies"]}
    assert cookies["demo_session"] == signed_in["cookie"]


def test_the_state_magics(session: CheckedSession, signed_in: Any) -> None:
    from webmcp_nb.notebook.magics import command

    tool = command("state")
    assert tool.spec.name == "browser_storage_state"
    assert tool.parse(["save", "shop-copy"]) == {"action": "save", "name": "shop-copy"}


WRITE_IDB = """new Promise((resolve, reject) => {
  const open = indexedDB.open('shop', 1);
  open.onupgradeneeded = () => open.result.createObjectStore('carts', { keyPath: 'id' });
  open.onsuccess = () => {
    const tx = open.result.transaction('carts', 'readwrite');
    tx.objectStore('carts').put({ id: 'ada', note: 'cart-token-7f3a9c2e', items: 3 });
    tx.oncomplete = () => { open.result.close(); resolve('written'); };
    tx.onerror = () => reject(tx.error);
  };
  open.onerror = () => reject(open.error);
})"""
READ_IDB = """new Promise((resolve) => {
  const open = indexedDB.open('shop');
  open.onsuccess = () => {
    const db = open.result;
    if (!db.objectStoreNames.contains('carts')) { db.close(); return resolve('none'); }
    const get = db.transaction('carts').objectStore('carts').get('ada');
    get.onsuccess = () => { db.close(); resolve(get.result ? get.result.note + ' x' + get.result.items : 'none'); };
  };
})"""


def test_indexeddb_is_saved_and_restored(session: CheckedSession, demo: DemoServer, signed_in: Any) -> None:
    ok(session.create_instance("idb-source"))
    try:
        ok(session.navigate(demo.url_for("login.html"), instance="idb-source"))
        assert ok(session.evaluate(WRITE_IDB, instance="idb-source"))["result"] == "written"
        ok(session.storage_state("save", name="with-idb", instance="idb-source"))
    finally:
        ok(session.destroy_instance("idb-source"))
    state = json.loads((states_dir(session.engine.artifacts_dir) / "with-idb.json").read_text())
    (origin,) = [o for o in state["origins"] if o["origin"] == demo.url_for("").rstrip("/")]
    assert [database["name"] for database in origin["indexedDB"]] == ["shop"]

    ok(session.create_instance("idb-clone", storage_state="with-idb"))
    try:
        ok(session.navigate(demo.url_for("login.html"), instance="idb-clone"))
        # The record's string is a known secret now: the notebook reads it redacted.
        assert ok(session.evaluate(READ_IDB, instance="idb-clone"))["result"] == "[redacted] x3"
        assert len(ok(session.tabs(instance="idb-clone"))["tabs"]) == 1
        # Loading into a running instance replaces its storage: shop-login has no IndexedDB.
        ok(session.storage_state("load", name="shop-login", instance="idb-clone"))
        ok(session.navigate(demo.url_for("login.html"), instance="idb-clone"))
        assert ok(session.evaluate(READ_IDB, instance="idb-clone"))["result"] == "none"
        ok(session.navigate(demo.url_for("account"), instance="idb-clone"))
        assert "Signed in as ada" in ok(session.evaluate("document.body.innerText", instance="idb-clone"))["result"]
    finally:
        ok(session.destroy_instance("idb-clone"))
        ok(session.storage_state("delete", name="with-idb"))
