"""Verification tools on real Chromium: each passes on what the page shows and fails saying what it found.

A mismatch is `verification_failed` with outcome `completed` and retry `read_only`.
"""

from __future__ import annotations

from urllib.parse import quote

from webmcp_nb.demo import DemoServer

from .conftest import CheckedSession, error, ok, ref_for


def failed(envelope) -> str:  # type: ignore[no-untyped-def]
    return error(envelope, "verification_failed", "completed", "read_only")


def test_element_visible(session: CheckedSession, demo: DemoServer) -> None:
    ok(session.navigate(demo.url))
    assert (
        ok(session.call("browser_verify_element_visible", role="button", name="Add Banana"))["verified"]
        == "button 'Add Banana' is visible"
    )
    message = failed(session.call("browser_verify_element_visible", role="button", name="Add Kiwi"))
    assert message.startswith("No visible button named 'Add Kiwi'; found ") and "'Add Banana'" in message
    assert "and " in message and "more" in message  # long lists are shortened, not dumped
    message = failed(session.call("browser_verify_element_visible", role="slider", name="Volume"))
    assert message == "No visible slider named 'Volume'; found no visible slider element."


def test_text_visible(session: CheckedSession, demo: DemoServer) -> None:
    ok(session.navigate(demo.url))
    ok(session.call("browser_verify_text_visible", text="Cart: 0 items"))
    snapshot = ok(session.snapshot())["snapshot"]
    ok(session.click(ref_for(snapshot, 'button "Add Fig"')))
    assert (
        failed(session.call("browser_verify_text_visible", text="Cart: 0 items"))
        == "Text 'Cart: 0 items' is not visible."
    )
    ok(session.call("browser_verify_text_visible", text="Cart: 1 item: Fig"))


def test_list_visible(session: CheckedSession, demo: DemoServer) -> None:
    ok(session.navigate(demo.url))
    snapshot = ok(session.snapshot())["snapshot"]
    products = ref_for(snapshot[snapshot.index('region "Products"') :], "list")
    ok(session.call("browser_verify_list_visible", ref=products, items=["Apple", "Grape"]))
    message = failed(session.call("browser_verify_list_visible", ref=products, items=["Apple", "Kiwi", "Mango"]))
    assert message.startswith(f"Not visible in {products}: 'Kiwi', 'Mango'; found 'Apple Add Apple Banana")


def test_value_of_fields_checkboxes_and_text(session: CheckedSession, demo: DemoServer) -> None:
    ok(session.navigate(demo.url_for("form.html")))
    snapshot = ok(session.snapshot())["snapshot"]
    name, subscribe = ref_for(snapshot, 'textbox "Name"'), ref_for(snapshot, 'checkbox "Subscribe"')
    ok(session.type(name, "Ada"))
    assert ok(session.call("browser_verify_value", ref=name, value="Ada"))["verified"] == f"{name} has 'Ada'"
    assert (
        failed(session.call("browser_verify_value", ref=name, value="Bob"))
        == f"The value of {name} is not 'Bob'; found 'Ada'."
    )
    ok(session.call("browser_verify_value", ref=subscribe, value="unchecked"))
    ok(session.click(subscribe))
    ok(session.call("browser_verify_value", ref=subscribe, value="checked"))
    error(session.call("browser_verify_value", ref="e99999", value="x"), "element_not_found", "not_started")


def test_a_secret_field_is_never_quoted(session: CheckedSession) -> None:
    page = '<label>Password <input type="password"></label>'
    ok(session.navigate("data:text/html," + quote(page)))
    snapshot = ok(session.snapshot())["snapshot"]
    field = ref_for(snapshot, "textbox")
    ok(session.type(field, "hunter2"))
    envelope = session.call("browser_verify_value", ref=field, value="wrong")
    assert failed(envelope) == f"The value of {field} differs from the expected one (a secret field: not shown)."
    passed = session.call("browser_verify_value", ref=field, value="hunter2")
    assert ok(passed)["verified"] == f"{field} has the expected value"
    assert "hunter2" not in envelope.to_json() + passed.to_json() + str(envelope) + str(passed)
