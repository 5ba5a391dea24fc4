"""Secrets never leave the core: password and one-time-code fields on the demo form.

A snapshot shows a filled secret field as ``[redacted]`` (whatever its length, in every frame,
in an open shadow root (closed ones are not in snapshots at all), in a subtree); text typed into one is ``[redacted]`` in the call history, the
envelope (JSON, text and HTML renderings) and messages; cookies appear in no result.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
from typing import Any

import mcp_types as types
import pytest

from tests.conftest import error, ok, ref_for
from tests.test_mirror import agent
from webmcp_nb import Envelope, Session
from webmcp_nb.core.call.engine import ApprovalRequest
from webmcp_nb.core.render.renderer import render_html, render_text
from webmcp_nb.demo import DemoServer

pytestmark = pytest.mark.playwright_sensitive  # see tests/test_compat_scope.py

SECRET = "hunter2-Sesame"
LONGER = "correct horse battery staple and more"
CODE = "424242"


def snapshot(session: Session, **args: Any) -> str:
    return ok(session.snapshot(**args))["snapshot"]


def field_line(yaml: str, name: str) -> str:
    [line] = [line.strip() for line in yaml.splitlines() if f'textbox "{name}"' in line]
    return re.sub(r" \[active\]", "", line)


def everything_of(session: Session, since: int) -> str:
    """Every trace the calls since `since` left: record arguments, envelope JSON, text and HTML."""
    records = session.history[since:]
    parts = []
    for record in records:
        parts += [
            json.dumps(record.args),
            record.envelope.to_json(),
            render_text(record.envelope),
            render_html(record.envelope),
            str(record.envelope),
            repr(record.envelope),
        ]
    return "\n".join(parts)


@pytest.fixture
def form(session: Session, demo: DemoServer) -> str:
    ok(session.navigate(demo.url_for("form.html")))
    return snapshot(session)


def test_a_filled_secret_field_reads_redacted_whatever_its_length(session: Session, form: str) -> None:
    password, otp = ref_for(form, 'textbox "Password"'), ref_for(form, 'textbox "One-time code"')
    assert field_line(form, "Password") == f'- textbox "Password" [ref={password}]'  # empty: shown as it is
    ok(session.type(password, SECRET))
    ok(session.fill_form([{"ref": otp, "type": "textbox", "value": CODE}]))
    yaml = snapshot(session)
    assert field_line(yaml, "Password") == f'- textbox "Password" [ref={password}]: [redacted]'
    assert field_line(yaml, "One-time code") == f'- textbox "One-time code" [ref={otp}]: [redacted]'
    assert SECRET not in yaml and CODE not in yaml
    # Another length gives the same line; the page still holds what was typed.
    ok(session.type(password, LONGER))
    again = snapshot(session)
    assert field_line(again, "Password") == f'- textbox "Password" [ref={password}]: [redacted]'
    assert len(again) == len(yaml)
    # (Shown to the notebook only when it asks: what was typed there is a known secret.)
    assert ok(session.evaluate("() => document.querySelector('#password').value"))["result"] == "[redacted]"
    session.reveal_secrets = True
    assert ok(session.evaluate("() => document.querySelector('#password').value"))["result"] == LONGER
    session.reveal_secrets = False
    # A subtree: the field itself, and the form around it.
    assert (
        snapshot(session, ref=password).replace(" [active]", "") == f'- textbox "Password" [ref={password}]: [redacted]'
    )
    signup = ref_for(again, "- form")  # named "Sign up" on Playwright 1.65, unnamed on 1.62
    subtree = snapshot(session, ref=signup)
    assert subtree.startswith("- form") and f"[ref={signup}]:" in subtree.splitlines()[0]
    assert LONGER not in subtree and CODE not in subtree
    assert field_line(subtree, "Password") == f'- textbox "Password" [ref={password}]: [redacted]'
    # With a placeholder, Playwright puts the value on a child line: the whole node is redacted.
    ok(session.evaluate("() => document.querySelector('#password').placeholder = 'Your password'"))
    with_placeholder = snapshot(session)
    assert field_line(with_placeholder, "Password") == f'- textbox "Password" [ref={password}]: [redacted]'
    assert LONGER not in with_placeholder and "/placeholder: Your password" not in with_placeholder
    # An ordinary field keeps its value.
    name = ref_for(again, 'textbox "Name"')
    ok(session.type(name, "Ann"))
    assert field_line(snapshot(session), "Name") == f'- textbox "Name" [ref={name}]: Ann'


def test_secret_fields_in_frames_and_shadow_roots_are_redacted(session: Session, demo: DemoServer) -> None:
    ok(session.navigate(demo.url_for("form.html")))
    other_origin = demo.url_for("form.html").replace("://127.0.0.1:", "://localhost:")
    ok(
        session.evaluate(f"""() => new Promise((done) => {{
        const host = document.createElement("div");
        host.attachShadow({{mode: "open"}}).innerHTML =
            '<input type="password" aria-label="Shadow secret" value="{SECRET}-shadow">';
        document.body.append(host);
        const frame = document.createElement("iframe");
        frame.onload = done;
        frame.src = {other_origin!r};
        document.body.append(frame);
    }})""")
    )
    inner = next(f["frame_id"] for f in ok(session.frames())["frames"] if f["url"] == other_origin)
    ok(session.evaluate(f"() => {{ document.querySelector('#password').value = '{SECRET}-frame'; }}", frame_id=inner))
    yaml = snapshot(session)
    assert SECRET not in yaml
    assert re.search(r'- textbox "Shadow secret" \[ref=(?:f\d+)?e\d+\]: \[redacted\]', yaml)
    assert re.search(r'- textbox "Password" \[ref=f\d+e\d+\]: \[redacted\]', yaml)
    framed = snapshot(session, frame_id=inner)
    assert SECRET not in framed
    assert re.search(r'- textbox "Password" \[ref=f\d+e\d+\]: \[redacted\]', framed)


def test_typed_secrets_are_redacted_in_history_envelopes_and_renderings(session: Session, form: str) -> None:
    password, otp = ref_for(form, 'textbox "Password"'), ref_for(form, 'textbox "One-time code"')
    name = ref_for(form, 'textbox "Name"')
    since = len(session.history)
    typed = session.type(password, SECRET, submit=True)
    filled = session.fill_form(
        [
            {"ref": name, "type": "textbox", "value": "Ann"},
            {"ref": otp, "type": "textbox", "value": CODE},
            {"ref": password, "type": "textbox", "value": LONGER, "name": "Password"},
        ]
    )
    ok(typed), ok(filled)
    records = session.history[since:]
    assert [record.args for record in records] == [
        {"ref": password, "text": "[redacted]", "submit": True},
        {
            "fields": [
                {"ref": name, "type": "textbox", "value": "Ann"},  # an ordinary field keeps its text
                {"ref": otp, "type": "textbox", "value": "[redacted]"},
                {"ref": password, "type": "textbox", "value": "[redacted]", "name": "Password"},
            ]
        },
    ]
    traces = everything_of(session, since)
    for secret in (SECRET, LONGER, CODE):
        assert secret not in traces
    assert "Ann" in traces


def test_calls_that_fail_before_the_field_is_checked_keep_the_text_out(session: Session, form: str) -> None:
    since = len(session.history)
    error(session.type("e9999", SECRET), "element_not_found", "not_started", "after_correction")
    error(session.call("browser_type", ref="e1", text=SECRET, speed=3), "invalid_params", "not_started")
    error(session.fill_form([{"ref": "e9999", "type": "textbox", "value": SECRET}]), "element_not_found")
    assert [record.args.get("text") for record in session.history[since:][:2]] == ["[redacted]", "[redacted]"]
    assert session.history[-1].args["fields"][0]["value"] == "[redacted]"
    assert SECRET not in everything_of(session, since)


def test_verification_messages_never_quote_a_secret_field(session: Session, form: str) -> None:
    password = ref_for(form, 'textbox "Password"')
    ok(session.evaluate("() => { document.querySelector('#password').maxLength = 4; }"))
    since = len(session.history)
    for slowly in (False, True):
        message = error(
            session.type(password, SECRET, slowly=slowly), "verification_failed", "unknown", "inspect_state"
        )
        assert message == (
            f"After typing into {password}, a secret field, it does not hold the text requested; the field may "
            "limit or transform its input (its content is not shown)."
        )
    traces = everything_of(session, since)
    assert SECRET[:4] not in traces and SECRET not in traces


def test_a_typed_secret_echoed_by_the_page_is_scrubbed_from_the_envelope(session: Session, form: str) -> None:
    password = ref_for(form, 'textbox "Password"')
    ok(
        session.evaluate("""() => document.querySelector('#password').addEventListener('change',
        (e) => alert('You chose ' + e.target.value))""")
    )
    envelope = session.type(password, SECRET, submit=True)  # Enter commits the value: the page alerts it
    modal = ok(envelope)["modal_state"]
    assert modal["kind"] == "dialog" and modal["message"] == "You chose [redacted]"
    assert SECRET not in envelope.to_json() and SECRET not in str(envelope)
    ok(session.handle_dialog(True))


def test_wait_for_text_does_not_see_field_values(session: Session, form: str) -> None:
    ok(session.type(ref_for(form, 'textbox "Password"'), SECRET))
    message = error(session.wait_for(text=SECRET, time_s=0.5), "wait_timeout")
    # The caller's own text, not the field's (and as it is a known secret, redacted too).
    assert message == "Waited 0.5 s but text '[redacted]' is not visible."


def test_cookies_appear_in_no_result(session: Session, demo: DemoServer) -> None:
    ok(session.navigate(demo.url_for("form.html")))
    ok(session.evaluate("() => { document.cookie = 'session=cookie-value-8731; path=/'; }"))
    envelopes: list[Envelope] = [
        session.reload(),
        session.snapshot(),
        session.tabs(),
        session.frames(),
        session.list_instances(),
        session.health(),
        session.navigate(demo.url_for("form.html")),
        session.wait_for(text="Demo Form"),
        session.webmcp_list(),
    ]
    for envelope in envelopes:
        ok(envelope)
        assert "cookie-value-8731" not in envelope.to_json() and "cookie-value-8731" not in str(envelope)
    # It is there, for script the operator granted, shown when the notebook asks for secrets.
    assert ok(session.evaluate("() => document.cookie"))["result"] == "session=[redacted]"
    session.reveal_secrets = True
    assert "cookie-value-8731" in ok(session.evaluate("() => document.cookie"))["result"]
    session.reveal_secrets = False


def test_an_agent_typing_a_secret_over_mcp_sees_and_leaves_no_trace(session: Session, form: str) -> None:
    password, name = ref_for(form, 'textbox "Password"'), ref_for(form, 'textbox "Name"')
    asked: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> None:
        asked.append(request)

    since = len(session.history)
    handle = session.serve_mcp(approve="all", approver=approve)
    try:

        async def scenario() -> list[types.CallToolResult]:
            async with agent(handle) as client:
                return [
                    await client.call_tool("browser_type", {"ref": password, "text": SECRET}),
                    await client.call_tool("browser_type", {"ref": name, "text": "Ann"}),
                    await client.call_tool("browser_snapshot", {}),
                ]

        results = asyncio.run(scenario())
    finally:
        handle.stop()
    # The person approving sees the text for the ordinary field only.
    assert [request.args for request in asked] == [
        {"ref": password, "text": "[redacted]"},
        {"ref": name, "text": "Ann"},
    ]
    assert [result.is_error for result in results] == [False, False, False]
    for result in results:
        assert SECRET not in result.model_dump_json()
    assert f'- textbox "Password" [ref={password}]: [redacted]' in results[2].structured_content["data"]["snapshot"]
    records = session.history[since:]
    assert [record.caller.startswith("agent:") for record in records] == [True, True, True]
    assert [record.args.get("text") for record in records] == ["[redacted]", "Ann", None]
    assert SECRET not in everything_of(session, since)


def test_screenshots_paint_secret_fields_over(session: Session, form: str) -> None:
    password, name = ref_for(form, 'textbox "Password"'), ref_for(form, 'textbox "Name"')
    ok(session.type(password, SECRET))
    ok(session.type(name, "Ann"))
    box = ok(
        session.evaluate("""() => {
        const field = document.querySelector('#password');
        field.scrollIntoView({block: 'center'});
        const r = field.getBoundingClientRect();
        return {x: Math.round(r.x + r.width / 2), y: Math.round(r.y + r.height / 2), dpr: devicePixelRatio};
    }""")
    )["result"]
    shot = ok(session.screenshot(original=True))
    assert pixel(shot["image"], box["x"] * box["dpr"], box["y"] * box["dpr"]) == MASK
    element = ok(session.screenshot(ref=password, original=True))
    assert pixel(element["image"], element["width"] // 2, element["height"] // 2) == MASK
    ordinary = ok(session.screenshot(ref=name, original=True))  # an ordinary field is drawn as it is
    assert pixel(ordinary["image"], ordinary["width"] // 2, ordinary["height"] // 2) != MASK


MASK = (127, 127, 127)


def pixel(png: bytes, x: float, y: float) -> tuple[int, int, int]:
    from PIL import Image

    with Image.open(io.BytesIO(png)) as picture:
        return picture.convert("RGB").getpixel((int(x), int(y)))
