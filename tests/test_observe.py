"""Action observations and the extended browser_wait_for, on real Chromium.

Every observation kind is seen matched and timed out; a timeout is `observation_timeout` with
outcome `completed` (the action ran). Bad observation specs are `invalid_params`, not started.
"""

from __future__ import annotations

from typing import Any

import pytest

from webmcp_nb.demo import DemoServer

from .conftest import CheckedSession, error, ok, ref_for

pytestmark = pytest.mark.playwright_sensitive  # see tests/test_compat_scope.py


def button(s: CheckedSession, name: str) -> str:
    return ref_for(ok(s.snapshot())["snapshot"], f'button "{name}"')


def timed_out(envelope: Any) -> str:
    message = error(envelope, "observation_timeout", "completed", "inspect_state")
    assert envelope.context["action_completed"] is True  # the data.action_completed: errors carry no data
    return message


def test_response_and_request(session: CheckedSession, demo: DemoServer) -> None:
    ok(session.navigate(demo.url_for("evidence.html")))
    seen = ok(session.click(button(session, "Make requests"), observe={"kind": "response", "url": "code=404"}))
    observation = seen["observation"]
    assert (observation["kind"], observation["status"], observation["method"]) == ("response", 404, "GET")
    assert observation["url"].endswith("/status?code=404") and observation["request_id"].startswith("r")
    [recorded] = ok(session.call("browser_network", url="code=404", limit=1))["entries"]
    assert recorded["request_id"] == observation["request_id"]  # the same id browser_network uses
    seen = ok(
        session.click(
            button(session, "Make requests"), observe={"kind": "request", "url": "*slow?ms=*", "method": "get"}
        )
    )
    assert seen["observation"]["url"].endswith("/slow?ms=300")
    late = session.click(
        button(session, "Make requests"),
        observe={"kind": "response", "url": "code=404", "status": 500, "timeout_ms": 800},
    )
    assert "response (url 'code=404', status 500)" in timed_out(late)


def test_console_and_text(session: CheckedSession, demo: DemoServer) -> None:
    ok(session.navigate(demo.url_for("evidence.html")))
    seen = ok(session.click(button(session, "Log every level"), observe={"kind": "console", "level": "warning"}))
    assert seen["observation"] == {**seen["observation"], "level": "warning", "text": "warning message"}
    timed_out(
        session.click(
            button(session, "Log every level"), observe={"kind": "console", "text": "never logged", "timeout_ms": 300}
        )
    )
    ok(session.navigate(demo.url))
    seen = ok(session.click(button(session, "Slow button"), observe={"kind": "text", "text": "Slow result ready"}))
    assert seen["observation"]["kind"] == "text" and seen["observation"]["elapsed_ms"] >= 0
    gone = ok(session.click(button(session, "Add Fig"), observe={"kind": "text_gone", "text": "Cart: 0 items"}))
    assert gone["observation"]["text"] == "Cart: 0 items"
    timed_out(session.click(button(session, "Add Fig"), observe={"kind": "text", "text": "Nope", "timeout_ms": 300}))


def test_element_url_and_popup(session: CheckedSession, demo: DemoServer) -> None:
    ok(session.navigate(demo.url))
    seen = ok(
        session.click(
            button(session, "Hover me"), observe={"kind": "element", "role": "tooltip", "name": "Tooltip shown"}
        )
    )
    assert seen["observation"]["role"] == "tooltip"
    navigated = ok(session.navigate(demo.url_for("form.html"), observe={"kind": "url", "url": "*/form.html"}))
    assert navigated["observation"]["url"] == demo.url_for("form.html")
    timed_out(session.navigate(demo.url, observe={"kind": "url", "url": "help.html", "timeout_ms": 300}))
    link = ref_for(ok(session.snapshot())["snapshot"], 'link "Open help in new tab"')
    opened = ok(session.click(link, observe={"kind": "popup"}))["observation"]
    assert opened["url"].endswith("/help.html")
    tabs = ok(session.tabs())["tabs"]
    assert opened["page_id"] in [tab["page_id"] for tab in tabs]
    ok(session.tabs("close", page_id=opened["page_id"]))


def test_download(fresh_session: Any, demo: DemoServer, tmp_path: Any) -> None:
    s = fresh_session(artifacts_dir=str(tmp_path))
    ok(s.navigate(demo.url_for("downloads.html")))
    seen = ok(s.click(button(s, "Download report"), observe={"kind": "download"}))["observation"]
    assert seen["suggested_filename"] == "report.csv"
    listed = ok(s.call("browser_downloads", download_id=seen["download_id"], wait_s=5))["downloads"]
    assert listed[0]["suggested_filename"] == "report.csv"
    link = ref_for(ok(s.snapshot())["snapshot"], 'link "Download notes"')
    timed_out(s.hover(link, observe={"kind": "download", "timeout_ms": 300}))  # hovering downloads nothing


@pytest.mark.parametrize(
    ("observe", "fragment"),
    [
        ({"kind": "text"}, "needs text"),
        ({"kind": "response"}, "needs url"),
        ({"kind": "element", "role": "button"}, "needs name"),
        ({"kind": "popup", "url": "x"}, "does not take url"),
        ({"kind": "sound"}, "observe.kind"),
        ({"kind": "text", "text": "x", "timeout_ms": 0}, "observe.timeout_ms"),
    ],
)
def test_bad_observations_are_refused_before_the_action(
    session: CheckedSession, demo: DemoServer, observe: dict[str, Any], fragment: str
) -> None:
    ok(session.navigate(demo.url))
    fig = button(session, "Add Fig")
    message = error(session.click(fig, observe=observe), "invalid_params", "not_started", "after_correction")
    assert fragment in message
    ok(session.call("browser_verify_text_visible", text="Cart: 0 items"))  # nothing was clicked


def test_wait_for_elements_urls_and_network_idle(session: CheckedSession, demo: DemoServer) -> None:
    ok(session.navigate(demo.url))
    remove = button(session, "Remove me")
    ok(session.wait_for(ref=remove, state="visible"))
    ok(session.click(remove))
    assert ok(session.wait_for(ref=remove, state="detached"))["condition"] == f"{remove} is detached"
    ok(session.wait_for(role="button", name="Add Fig"))
    message = error(
        session.wait_for(role="button", name="Add Kiwi", time_s=0.3), "wait_timeout", "unknown", "read_only"
    )
    assert "button 'Add Kiwi' is not visible" in message
    ok(session.wait_for(url="127.0.0.1"))
    assert "does not match 'help.html'" in error(session.wait_for(url="help.html", time_s=0.3), "wait_timeout")
    ok(session.navigate(demo.url_for("evidence.html")))
    ok(session.click(button(session, "Make requests")))
    idle = ok(session.wait_for(network_idle=True))
    assert idle["condition"] == "no request in flight for 0.5 s"
    ok(session.call("browser_verify_text_visible", text="Requests done"))
    message = error(session.wait_for(text="x", url="y"), "invalid_params", "not_started")
    assert "give one condition, not text and url" in message
    error(session.wait_for(role="button"), "invalid_params", "not_started")


def test_handlers_without_a_modal_say_modal_state_blocked(session: CheckedSession, demo: DemoServer) -> None:
    ok(session.navigate(demo.url))
    message = error(session.handle_dialog(accept=True), "modal_state_blocked", "not_started", "after_correction")
    assert "dialog" in message
    error(session.file_upload([]), "modal_state_blocked", "not_started", "after_correction")
