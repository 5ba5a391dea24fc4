"""browser_execute: a Python snippet on the live page, from `Session`, over MCP and in a kernel.

Real Chromium on the demo shop; MCP through the official Python client and the TypeScript SDK v2
client over streamable HTTP; `%%browser execute` in a real ipykernel.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
from collections.abc import Iterator
from typing import Any

import httpx2
import mcp_types as types
import pytest
from jupyter_client.manager import start_new_kernel
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from webmcp_nb import Session
from webmcp_nb.core.render.renderer import ENVELOPE_MIME, render_text
from webmcp_nb.demo import DemoServer

from .conftest import CheckedSession, Kernel, error, ok, ref_for
from .helpers import FULL_CELLS, ts_report

pytestmark = pytest.mark.playwright_sensitive  # see tests/test_compat_scope.py

BROWSER_FIXTURES = {"served"}  # a session and its MCP server, on Chromium (see conftest.py)

PNG = b"\x89PNG\r\n\x1a\n"
BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{200,}")
CART = "await page.locator('#cart').text_content()"


def run(session: Session, code: str, **args: Any) -> Any:
    return session.call("browser_execute", code=code, **args)


@pytest.fixture
def shop(session: CheckedSession, demo: DemoServer) -> CheckedSession:
    """The module's session on a freshly loaded demo shop (empty cart)."""
    ok(session.navigate(demo.url_for("index.html")))
    return session


# --------------------------------------------------------------------------- #
# Session
# --------------------------------------------------------------------------- #


def test_the_last_expression_is_the_value_and_print_and_console_are_the_logs(shop: CheckedSession) -> None:
    code = (
        "print('hello', 42)\n"
        "await page.evaluate(\"console.log('from the page'); console.error('page error')\")\n"
        "print('a', 'b', sep='-', end='')\n"
        "print('', 'c', sep=None, end=None)\n"
        "print('!')\n"
        "{'title': await page.title(), 'pair': (1, 2)}"
    )
    data = ok(run(shop, code))
    assert data["value"] == {"title": "Demo Shop", "pair": [1, 2]}  # as JSON reads it back
    assert data["repr"] is None and data["image"] is None
    assert data["logs"] == [
        "print: hello 42",
        "console.log: from the page",
        "console.error: page error",
        "print: a-b c",
        "print: !",
    ]
    assert data["url"].endswith("/index.html")
    # Statements only: no value; what the page logs between calls belongs to no call.
    data = ok(run(shop, "x = 1"))
    assert data["value"] is None and data["logs"] == []
    ok(shop.evaluate("console.log('after the call')"))
    assert ok(run(shop, "None"))["logs"] == []


def test_the_snippets_print_leaves_sys_stdout_alone(shop: CheckedSession, capsys: Any) -> None:
    data = ok(run(shop, "import sys\nprint('captured')\nprint('to stderr', file=sys.stderr)"))
    assert data["logs"] == ["print: captured"]
    out, err = capsys.readouterr()
    assert "captured" not in out and "to stderr" in err


def test_a_value_that_is_not_json_comes_back_as_its_repr(shop: CheckedSession) -> None:
    data = ok(run(shop, "page"))
    assert data["value"] is None and data["repr"].startswith("<Page url='http") and "index.html" in data["repr"]
    assert ok(run(shop, "float('nan')"))["repr"] == "nan"  # not JSON
    assert ok(run(shop, "b'not an image'"))["repr"] == "b'not an image'"
    assert ok(run(shop, "b'\\x89PNG\\r\\n\\x1a\\n but no image'"))["repr"] == "b'\\x89PNG\\r\\n\\x1a\\n but no image'"
    assert "repr: <Page url=" in render_text(run(shop, "page"))


def test_state_persists_per_instance_across_calls(shop: CheckedSession) -> None:
    count = "state['calls'] = state.get('calls', 0) + 1\nstate['calls']"
    assert ok(run(shop, count))["value"] == 1
    assert ok(run(shop, count))["value"] == 2
    assert ok(run(shop, "sorted(state)"))["value"] == ["calls"]
    ok(shop.create_instance("other"))
    try:
        assert ok(run(shop, count, instance="other"))["value"] == 1  # its own state
        assert ok(run(shop, count, instance="default"))["value"] == 3
    finally:
        ok(shop.destroy_instance("other"))


def test_page_id_picks_the_tab_the_snippet_sees(shop: CheckedSession) -> None:
    shop_page = run(shop, "page.url").operation.page_id
    ok(shop.tabs("new"))
    try:
        assert ok(run(shop, "page.url"))["value"] == "about:blank"  # the new tab is current
        envelope = run(shop, "page.url", page_id=shop_page)
        assert ok(envelope)["value"].endswith("/index.html") and envelope.operation.page_id == shop_page
    finally:
        ok(shop.tabs("close"))


def test_the_snapshot_and_ref_helpers_act_on_the_page(shop: CheckedSession) -> None:
    text = ok(run(shop, "await snapshot()"))["value"]
    assert text == ok(shop.snapshot())["snapshot"]  # the same text as browser_snapshot
    code = (
        "await ref('Add Banana', role='button').click()\n"
        "import re\n"
        "apple = re.search(r'button \"Add Apple\" \\[ref=(\\w+)\\]', await snapshot()).group(1)\n"
        "await ref(apple).click()\n" + CART
    )
    assert ok(run(shop, code))["value"] == "Cart: 2 items: Banana, Apple"
    assert ok(shop.evaluate("document.getElementById('cart').textContent"))["result"] == "Cart: 2 items: Banana, Apple"
    # The snippet's snapshot made its refs current for the other tools too.
    fig = ref_for(ok(run(shop, "await snapshot()"))["value"], 'button "Add Fig"')
    ok(shop.click(fig))
    assert ok(run(shop, CART))["value"] == "Cart: 3 items: Banana, Apple, Fig"


def test_a_ref_helper_misuse_is_reported_at_its_line(shop: CheckedSession) -> None:
    message = error(run(shop, "x = 1\nref('e999999')"), "evaluation_failed", "unknown", "inspect_state")
    assert "element_not_found: Ref e999999 does not appear in any snapshot" in message
    assert "<execute>:2:1: ref('e999999')" in message
    message = error(run(shop, "ref('Add Banana')"), "evaluation_failed")
    assert "give its role" in message and "role='button'" in message


def test_an_image_result_is_an_image(shop: CheckedSession) -> None:
    envelope = run(shop, "await page.screenshot()")
    data = ok(envelope)
    assert data["image"].startswith(PNG) and data["mime_type"] == "image/png"
    assert (data["width"], data["height"]) == (1280, 720)
    assert data["value"] is None and data["repr"] is None
    text = render_text(envelope)
    assert "image: image/png 1280x720," in text and base64.b64encode(data["image"][:30]).decode() not in text
    data = ok(run(shop, "await page.locator('#cart').screenshot(type='jpeg')"))
    assert data["image"].startswith(b"\xff\xd8\xff") and data["mime_type"] == "image/jpeg"


def test_a_dialog_the_snippet_opens_is_reported_and_the_snippet_finishes_once_it_is_handled(
    shop: CheckedSession, demo: DemoServer
) -> None:
    ok(shop.navigate(demo.url_for("dialog.html")))
    code = "await page.click('#confirm')\nstate['after_dialog'] = await page.locator('#dialog-status').text_content()"
    data = ok(run(shop, code))
    assert data["modal_state"]["kind"] == "dialog" and data["modal_state"]["message"] == "Proceed?"
    assert data["modal_state"]["resolved_by"] == "browser_handle_dialog"
    ok(shop.handle_dialog(accept=True))
    assert ok(run(shop, "state.pop('after_dialog')"))["value"] == "Confirm: true"


def test_a_result_over_the_limit_is_result_too_large(shop: CheckedSession) -> None:
    message = error(run(shop, "'x' * 2_000_000"), "result_too_large", "completed", "inspect_state")
    assert "Return or print less." in message
    assert ok(run(shop, "len('x' * 2_000_000)"))["value"] == 2_000_000


def test_an_exception_names_the_line_and_column_in_the_snippet(shop: CheckedSession) -> None:
    code = "state['before'] = 'ran'\nif True:\n    raise ValueError('boom ' + str(1))\n"
    envelope = run(shop, code)
    message = error(envelope, "evaluation_failed", "unknown", "inspect_state")
    assert message.startswith("The snippet raised ValueError: boom 1")
    assert "<execute>:3:5: raise ValueError('boom ' + str(1))" in message
    assert ok(run(shop, "state.pop('before')"))["value"] == "ran"  # what ran before stays done
    # The innermost line of the snippet, inside its own function; a Playwright error keeps its message.
    code = "async def go():\n    await page.locator('#nope').click(timeout=200)\n\nawait go()"
    message = error(run(shop, code), "evaluation_failed")
    assert "TimeoutError: Locator.click: Timeout 200ms exceeded" in message
    assert "<execute>:2:5: await page.locator('#nope').click(timeout=200)" in message


def test_playwright_calls_in_a_snippet_wait_the_action_timeout(fresh_session: Any, demo: DemoServer) -> None:
    session = fresh_session(action_timeout_s=0.5)
    ok(session.navigate(demo.url_for("index.html")))
    message = error(run(session, "await page.click('#nope')"), "evaluation_failed", "unknown", "inspect_state")
    assert "Timeout 500ms exceeded" in message


def test_system_exit_in_a_snippet_is_an_error_and_the_runtime_lives_on(shop: CheckedSession) -> None:
    message = error(run(shop, "raise SystemExit(3)"), "evaluation_failed", "unknown", "inspect_state")
    assert "SystemExit: 3" in message and "<execute>:1:1" in message
    assert ok(run(shop, "await page.title()"))["value"] == "Demo Shop"


def test_a_syntax_error_is_invalid_params_and_runs_nothing(shop: CheckedSession) -> None:
    envelope = run(shop, "state['ran'] = True\nfor x in :\n    pass")
    message = error(envelope, "invalid_params", "not_started", "after_correction")
    assert message == "The snippet does not compile: invalid syntax at <execute>:2:10: for x in :"
    assert ok(run(shop, "'ran' in state"))["value"] is False
    message = error(run(shop, "def f():\n    await page.title()"), "invalid_params", "not_started")
    assert "'await' outside async function at <execute>:2:5" in message
    message = error(run(shop, ""), "invalid_params", "not_started")
    assert "code" in message


def test_timeout_s_stops_the_snippet(shop: CheckedSession) -> None:
    code = "import asyncio\nstate['started'] = True\nawait asyncio.sleep(30)\nstate['finished'] = True"
    envelope = run(shop, code, timeout_s=0.5)
    message = error(envelope, "operation_timeout", "unknown", "inspect_state")
    assert message.startswith("The snippet did not finish within timeout_s=0.5 s and was stopped")
    assert ok(run(shop, "[state.pop('started', None), state.pop('finished', None)]"))["value"] == [True, None]
    # The snippet's own TimeoutError is an exception of the snippet, not the tool's timeout.
    code = "import asyncio\nawait asyncio.wait_for(asyncio.sleep(30), 0.05)"
    message = error(run(shop, code, timeout_s=20), "evaluation_failed", "unknown", "inspect_state")
    assert (
        message
        == "The snippet raised TimeoutError\n  at <execute>:2:1: await asyncio.wait_for(asyncio.sleep(30), 0.05)"
    )
    message = error(run(shop, "1", timeout_s=1000), "invalid_params", "not_started", "after_correction")
    assert "over the operation timeout of 60 s" in message


def test_the_operation_timeout_stops_a_snippet_without_timeout_s(fresh_session: Any, demo: DemoServer) -> None:
    session = fresh_session()
    ok(session.navigate(demo.url_for("index.html")))
    session.reconfigure(operation_timeout_s=1)
    message = error(
        run(session, "import asyncio\nawait asyncio.sleep(30)"), "operation_timeout", "unknown", "inspect_state"
    )
    assert "did not finish within 1 s" in message
    assert ok(run(session, "await page.title()"))["value"] == "Demo Shop"


# --------------------------------------------------------------------------- #
# MCP
# --------------------------------------------------------------------------- #

AGENT = types.Implementation(name="pytest-agent", version="1.0")


def agent(server: Any, mode: str = "auto") -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.token}"}, timeout=60)
    return Client(streamable_http_client(server.url, http_client=http), client_info=AGENT, mode=mode)


def only_text(result: types.CallToolResult) -> str:
    assert [block.type for block in result.content] == ["text"], result.content
    return result.content[0].text  # type: ignore[union-attr]


@pytest.fixture(scope="module")
def served(demo: DemoServer) -> Iterator[tuple[Session, Any]]:
    """A session serving agents with `code` granted, approvals off."""
    with Session() as session:
        ok(session.navigate(demo.url_for("index.html")))
        server = session.serve_mcp(caps=["code"], approve="none")
        yield session, server
        server.stop()


def test_browser_execute_is_not_listed_without_the_code_grant(demo: DemoServer) -> None:
    async def scenario(server: Any) -> tuple[list[str], types.CallToolResult]:
        async with agent(server) as client:
            tools = [tool.name for tool in (await client.list_tools()).tools]
            return tools, await client.call_tool("browser_execute", {"code": "1"})

    with Session() as session:
        server = session.serve_mcp(caps=["js", "files", "pdf"], approve="none")
        tools, result = asyncio.run(scenario(server))
        server.stop()
    assert "browser_execute" not in tools and "browser_evaluate" in tools
    assert result.is_error is True and result.structured_content["error_type"] == "invalid_params"  # type: ignore[index]
    assert "capability group 'code' was not granted" in result.structured_content["message"]  # type: ignore[index]


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # protocol 2026-07-28, and 2025-11-25
def test_over_mcp_a_success_is_structured_an_image_is_an_image_a_failure_is_text(
    served: tuple[Session, Any], mode: str
) -> None:
    async def scenario(server: Any) -> tuple[types.Tool, list[types.CallToolResult]]:
        async with agent(server, mode) as client:
            assert client.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
            tool = next(t for t in (await client.list_tools()).tools if t.name == "browser_execute")
            results = [
                await client.call_tool("browser_execute", {"code": "print('hi')\nawait page.title()"}),
                await client.call_tool("browser_execute", {"code": "await page.screenshot()"}),
                await client.call_tool("browser_execute", {"code": "x = 1\n1 / 0"}),
                await client.call_tool("browser_execute", {"code": "def f(:"}),
            ]
            return tool, results

    tool, (success, image, failure, syntax) = asyncio.run(scenario(served[1]))
    assert tool.output_schema is None
    # Only what differs from MCP's defaults is sent: a destructive, open-world tool sends no hints at all.
    assert tool.annotations is None

    envelope = success.structured_content
    assert success.is_error is False and envelope["status"] == "success"  # type: ignore[index]
    assert envelope["data"]["value"] == "Demo Shop" and envelope["data"]["logs"] == ["print: hi"]  # type: ignore[index]
    text = only_text(success)
    assert text.startswith("browser_execute: success") and "value: Demo Shop" in text

    assert image.structured_content is None and image.is_error is False
    picture, caption = image.content
    assert isinstance(picture, types.ImageContent) and picture.mime_type == "image/png"
    assert base64.b64decode(picture.data).startswith(PNG)
    assert isinstance(caption, types.TextContent) and "image: image/png 1280x720" in caption.text
    assert picture.data[:100] not in caption.text

    assert failure.is_error is True and failure.structured_content is None
    text = only_text(failure)
    assert "error evaluation_failed" in text and "ZeroDivisionError: division by zero" in text
    assert "<execute>:2:1: 1 / 0" in text and "retry: inspect_state" in text

    assert syntax.is_error is True and syntax.structured_content is None
    assert "error invalid_params" in only_text(syntax) and "<execute>:1:7" in only_text(syntax)


@pytest.mark.browser
def test_approval_applies_to_browser_execute(demo: DemoServer) -> None:
    asked: list[str] = []

    async def deny(request: Any) -> str:
        asked.append(request.args["code"])
        return "not this one"

    async def scenario(server: Any) -> types.CallToolResult:
        async with agent(server) as client:
            return await client.call_tool("browser_execute", {"code": "state['ran'] = True"})

    with Session() as session:
        ok(session.navigate(demo.url_for("index.html")))
        server = session.serve_mcp(caps=["code"], approve="consequential", approver=deny)
        result = asyncio.run(scenario(server))
        server.stop()
        assert ok(run(session, "'ran' in state"))["value"] is False
    assert asked == ["state['ran'] = True"]
    text = only_text(result)
    assert "error approval_denied" in text and "not this one" in text and "outcome: not_started" in text


@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
def test_the_typescript_client_receives_an_image_result_without_structured_content(
    served: tuple[Session, Any], era: str
) -> None:
    calls = [
        ["browser_execute", {"code": "await page.screenshot()"}],
        ["browser_execute", {"code": "await page.title()"}],
        ["browser_execute", {"code": "raise RuntimeError('nope')"}],
    ]
    server = served[1]
    report = ts_report("call.mjs", server.url, server.token, json.dumps(calls), era, era=era)
    assert report["tools"]["browser_execute"] == {"hasOutputSchema": False}
    image, value, failure = report["calls"]
    assert "thrown" not in image, image
    assert image["contentTypes"] == ["image", "text"] and image["hasStructuredContent"] is False
    assert image["imageMime"] == "image/png" and base64.b64decode(image["imageBase64"]).startswith(PNG)
    assert value["contentTypes"] == ["text"] and value["hasStructuredContent"] is True and not value["isError"]
    assert value["structured"]["data"]["value"] == "Demo Shop" and "value: Demo Shop" in value["text"]
    assert not BASE64_RUN.search(image["text"]) and image["imageBase64"][:100] not in image["text"]
    assert failure["isError"] is True and failure["hasStructuredContent"] is False
    assert "RuntimeError: nope" in failure["text"] and "<execute>:1:1" in failure["text"]


# --------------------------------------------------------------------------- #
# %%browser execute in a real kernel
# --------------------------------------------------------------------------- #


@pytest.mark.browser
def test_cell_magic_runs_the_cell_body_as_a_snippet(demo: DemoServer) -> None:
    manager, client = start_new_kernel(kernel_name="python3", extra_arguments=FULL_CELLS)
    kernel = Kernel(manager, client)
    try:
        kernel.run(f"%load_ext webmcp_nb\n%browser navigate {demo.url_for('index.html')}")
        outputs = kernel.run(
            "%%browser execute --timeout-s 20\n"
            "# the body is Python, as written: {braces} and $dollars are not expanded\n"
            "print('from {the} cell')\n"
            "await ref('Add Banana', role='button').click()\n"
            "await page.locator('#cart').text_content()\n"
        )
        assert not [o for o in outputs if o["type"] in ("stream", "error")], outputs
        (result,) = [o for o in outputs if o["type"] == "execute_result"]
        envelope = result["data"][ENVELOPE_MIME]
        assert envelope["operation"]["tool"] == "browser_execute" and envelope["status"] == "success"
        assert envelope["data"]["value"] == "Cart: 1 item: Banana"
        assert envelope["data"]["logs"] == ["print: from {the} cell"]
        assert "value: Cart: 1 item: Banana" in result["data"]["text/plain"]

        (result,) = [
            o for o in kernel.run("%%browser execute\nawait page.screenshot()") if o["type"] == "execute_result"
        ]
        assert base64.b64decode(result["data"]["image/png"]).startswith(PNG)

        (result,) = [
            o for o in kernel.run("%%browser execute\nstate['x'] = 1\nstate['x'] +") if o["type"] == "execute_result"
        ]
        assert result["data"][ENVELOPE_MIME]["error_type"] == "invalid_params"
        assert "<execute>:2:13" in result["data"]["text/plain"]

        outputs = kernel.run("%%browser execute --help\nraise SystemExit")
        assert [o["type"] for o in outputs] == ["stream"] and "usage: %browser execute" in outputs[0]["text"]
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=False)
