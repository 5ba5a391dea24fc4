"""Page actions on real Chromium against the bundled demo site.

Every test checks the envelope (status, error_type, outcome, retry, data) and
then reads the page back (``browser_evaluate`` or a new snapshot) to see what
the action really did. The module shares one session; the ``open_page``
fixture navigates the current tab and returns a fresh snapshot.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.helpers import error, ok, ref_for
from webmcp_nb import Envelope, Session

pytestmark = pytest.mark.playwright_sensitive  # see tests/test_compat_scope.py

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
JPEG_MAGIC = b"\xff\xd8\xff"
MAX_SIDE = 1568
VIEWPORT = (1280, 720)
ALERT_MODAL = {
    "kind": "dialog",
    "dialog_type": "alert",
    "message": "Hello from alert",
    "default_value": "",
    "resolved_by": "browser_handle_dialog",
    "multiple": None,
}


# helpers -----------------------------------------------------------------------
def snapshot_text(session: Session) -> str:
    return ok(session.snapshot())["snapshot"]


def js(session: Session, expression: str, **args: Any) -> Any:
    """The result of `expression` in the page (the call must succeed)."""
    return ok(session.evaluate(expression, **args))["result"]


def text_of(session: Session, selector: str) -> str:
    return js(session, f"document.querySelector({json.dumps(selector)}).textContent")


def value_of(session: Session, selector: str) -> Any:
    return js(session, f"document.querySelector({json.dumps(selector)}).value")


def not_started(envelope: Envelope, error_type: str) -> str:
    """Assert a refused call: nothing was done, correct it before retrying."""
    return error(envelope, error_type, outcome="not_started", retry="after_correction")


def record_events(session: Session, selector: str, *types: str) -> None:
    """Make the page log `types` events on `selector` into `window.__events`."""
    js(
        session,
        f"""() => {{
          window.__events = [];
          const el = document.querySelector({json.dumps(selector)});
          for (const type of {json.dumps(list(types))}) {{
            el.addEventListener(type, (e) => window.__events.push({{
              type: e.type, key: e.key, button: e.button,
              shift: e.shiftKey, alt: e.altKey, ctrl: e.ctrlKey, meta: e.metaKey,
            }}));
          }}
        }}""",
    )


def recorded_events(session: Session) -> list[dict[str, Any]]:
    return js(session, "window.__events")


def image_size(data: dict[str, Any]) -> tuple[int, int]:
    """The pixel size of the screenshot in `data`, decoded."""
    with Image.open(io.BytesIO(data["image"])) as picture:
        return picture.size


def open_chooser(session: Session, page: str) -> dict[str, Any]:
    """Click the file input of upload.html; return the modal state it reports."""
    return ok(session.click(ref_for(page, 'button "Choose file"')))["modal_state"]


def resolve_any_modal(session: Session) -> None:
    """Close a dialog or file chooser a failed test may have left open."""
    if session.handle_dialog(False).error_type == "modal_state_blocked":
        session.file_upload([])


# fixtures ------------------------------------------------------------------------
@pytest.fixture
def open_page(session: Session, demo: Any) -> Callable[[str], str]:
    """`open_page("form.html")` loads a demo page and returns its snapshot text."""

    def go(path: str) -> str:
        envelope = session.navigate(demo.url_for(path))
        if envelope.error_type == "modal_state_blocked":
            resolve_any_modal(session)
            envelope = session.navigate(demo.url_for(path))
        assert ok(envelope)["url"] == demo.url_for(path)
        return snapshot_text(session)

    return go


@pytest.fixture
def shop(open_page: Callable[[str], str]) -> str:
    return open_page("index.html")


@pytest.fixture
def form(open_page: Callable[[str], str]) -> str:
    return open_page("form.html")


@pytest.fixture
def dialogs(open_page: Callable[[str], str]) -> str:
    return open_page("dialog.html")


@pytest.fixture
def upload(open_page: Callable[[str], str]) -> str:
    return open_page("upload.html")


@pytest.fixture
def files(tmp_path: Path) -> list[Path]:
    made = []
    for name, content in (("notes.txt", "hello"), ("data.csv", "a,b\n1,2\n")):
        path = tmp_path / name
        path.write_text(content)
        made.append(path)
    return made


# browser_click ---------------------------------------------------------------------
def test_click_adds_to_cart(session, shop):
    assert text_of(session, "#cart") == "Cart: 0 items"
    data = ok(session.click(ref_for(shop, 'button "Add Banana"')))
    assert data["url"].endswith("/index.html")
    assert data["modal_state"] is None
    assert text_of(session, "#cart") == "Cart: 1 item: Banana"
    assert re.search(r'status \[ref=(?:f\d+)?e\d+\]: "?Cart: 1 item: Banana', snapshot_text(session))


def test_a_click_that_navigates_returns_once_the_new_document_is_parsed(session, shop):
    # The page's parser waits 600 ms on a script: the click's answer must wait for it too,
    # although the click itself returns as soon as the navigation has started.
    js(session, "document.body.insertAdjacentHTML('beforeend', '<a href=\"slow-parse.html\">Slow page</a>')")
    link = ref_for(snapshot_text(session), 'link "Slow page"')
    data = ok(session.click(link))
    assert data["url"].endswith("/slow-parse.html")
    assert js(session, "document.readyState") != "loading"
    assert text_of(session, "#after") == "Parsed after the slow script."
    # and back to a page that parses at once
    ok(session.click(ref_for(snapshot_text(session), 'link "Back to index"')))
    assert ok(session.call("browser_evaluate", expression="location.pathname"))["result"] == "/index.html"


def test_double_click_clicks_twice(session, shop):
    record_events(session, "#products", "click", "dblclick")
    ok(session.click(ref_for(shop, 'button "Add Banana"'), double=True))
    assert text_of(session, "#cart") == "Cart: 2 items: Banana, Banana"
    assert [event["type"] for event in recorded_events(session)] == ["click", "click", "dblclick"]


def test_right_click_opens_the_context_menu_without_clicking(session, shop):
    record_events(session, "#products", "click", "contextmenu")
    ok(session.click(ref_for(shop, 'button "Add Apple"'), button="right"))
    events = recorded_events(session)
    assert [(event["type"], event["button"]) for event in events] == [("contextmenu", 2)]
    assert text_of(session, "#cart") == "Cart: 0 items"


def test_click_holds_modifiers(session, shop):
    record_events(session, "#products", "click")
    ok(session.click(ref_for(shop, 'button "Add Cherry"'), modifiers=["Shift", "Alt", "ControlOrMeta"]))
    [event] = recorded_events(session)
    assert (event["shift"], event["alt"], event["ctrl"] or event["meta"]) == (True, True, True)
    assert text_of(session, "#cart") == "Cart: 1 item: Cherry"


@pytest.mark.parametrize(
    "args",
    [{"button": "centre"}, {"modifiers": ["Hyper"]}, {"double": "yes"}, {"force": True}],
    ids=["button", "modifier", "double", "unknown-param"],
)
def test_click_rejects_bad_arguments(session, shop, args):
    # Through `call`: the typed `session.click` has no `force` parameter, so Python itself
    # refuses that keyword with a TypeError (tests/test_api.py); wrong values are envelopes either way.
    apple = ref_for(shop, 'button "Add Apple"')
    message = not_started(session.call("browser_click", ref=apple, **args), "invalid_params")
    assert "browser_click" in message
    assert text_of(session, "#cart") == "Cart: 0 items"


def test_click_on_a_removed_element_is_a_stale_ref(session, shop):
    remove_me = ref_for(shop, 'button "Remove me"')
    ok(session.click(remove_me))
    assert js(session, "document.getElementById('remove-me')") is None
    message = not_started(session.click(remove_me), "stale_ref")
    assert remove_me in message and "browser_snapshot" in message


def test_click_on_a_never_seen_ref_is_element_not_found(session, shop):
    message = not_started(session.click("e99999"), "element_not_found")
    assert "e99999" in message
    assert text_of(session, "#cart") == "Cart: 0 items"


def test_refs_from_before_a_navigation_are_stale(session, demo, shop):
    banana = ref_for(shop, 'button "Add Banana"')
    ok(session.reload())
    not_started(session.click(banana), "stale_ref")
    assert text_of(session, "#cart") == "Cart: 0 items"
    ok(session.navigate(demo.url_for("form.html")))
    not_started(session.click(banana), "stale_ref")
    not_started(session.hover(banana), "stale_ref")
    not_started(session.evaluate("el => el.textContent", ref=banana), "stale_ref")


# browser_type ----------------------------------------------------------------------
def test_type_replaces_the_value(session, form):
    name = ref_for(form, 'textbox "Name"')
    assert ok(session.type(name, "Ada Lovelace"))["modal_state"] is None
    assert value_of(session, "#name") == "Ada Lovelace"
    ok(session.type(name, "Grace"))
    assert value_of(session, "#name") == "Grace"
    ok(session.type(name, ""))
    assert value_of(session, "#name") == ""


def test_type_with_submit_presses_enter(session, form):
    ok(session.type(ref_for(form, 'searchbox "Search"'), "kiwi", submit=True))
    assert value_of(session, "#search") == "kiwi"
    assert text_of(session, "#search-status") == "Searched for: kiwi"


def test_type_slowly_sends_one_key_at_a_time(session, form):
    name = ref_for(form, 'textbox "Name"')
    record_events(session, "#name", "keydown")
    ok(session.type(name, "fast"))
    assert recorded_events(session) == []  # a plain type fills the value at once
    ok(session.type(name, "abc", slowly=True))
    assert value_of(session, "#name") == "abc"
    typed = [event["key"] for event in recorded_events(session) if len(event["key"]) == 1]
    assert typed == ["a", "b", "c"]


def test_type_beyond_maxlength_fails_verification(session, form):
    code = ref_for(form, 'textbox "Short code"')
    for slowly in (False, True):
        envelope = session.type(code, "12345", slowly=slowly)
        message = error(envelope, "verification_failed", "unknown", "inspect_state")
        assert "'1234'" in message and code in message
        assert value_of(session, "#code") == "1234"


def test_type_submit_is_not_pressed_after_a_failed_verification(session, form):
    record_events(session, "#code", "keydown")
    error(session.type(ref_for(form, 'textbox "Short code"'), "123456", submit=True), "verification_failed")
    assert recorded_events(session) == []


def test_type_into_a_non_editable_element_changes_nothing(session, shop):
    message = not_started(session.type(ref_for(shop, 'button "Add Banana"'), "x"), "element_not_found")
    assert "editable" in message
    assert text_of(session, "#cart") == "Cart: 0 items"


# browser_fill_form -----------------------------------------------------------------
def test_fill_form_sets_every_kind_of_field(session, form):
    fields = [
        {"ref": ref_for(form, 'textbox "Name"'), "type": "textbox", "value": "Ada", "name": "Name"},
        {"ref": ref_for(form, 'textbox "Email"'), "type": "textbox", "value": "ada@example.org"},
        {"ref": ref_for(form, 'checkbox "Subscribe"'), "type": "checkbox", "value": True},
        {"ref": ref_for(form, 'radio "Pro"'), "type": "radio", "value": True},
        {"ref": ref_for(form, 'combobox "Country"'), "type": "combobox", "value": "Japan"},
        {"ref": ref_for(form, 'textbox "Notes"'), "type": "textbox", "value": "line 1\nline 2"},
    ]
    data = ok(session.fill_form(fields))
    assert data["filled"] == 6 and data["modal_state"] is None
    ok(session.click(ref_for(form, 'button "Submit"')))
    assert json.loads(text_of(session, "#result")) == {
        "name": "Ada",
        "email": "ada@example.org",
        "code": "",
        "subscribe": True,
        "plan": "pro",
        "country": "jp",
        "colors": [],
        "notes": "line 1\nline 2",
    }
    ok(session.fill_form([{"ref": ref_for(form, 'checkbox "Subscribe"'), "type": "checkbox", "value": False}]))
    assert js(session, "document.getElementById('subscribe').checked") is False


def test_fill_form_checks_every_ref_before_changing_anything(session, form):
    name, subscribe = ref_for(form, 'textbox "Name"'), ref_for(form, 'checkbox "Subscribe"')
    ok(session.type(name, "Before"))
    fields = [
        {"ref": name, "type": "textbox", "value": "After"},
        {"ref": subscribe, "type": "checkbox", "value": True},
        {"ref": "e99999", "type": "textbox", "value": "nowhere"},
    ]
    assert "e99999" in not_started(session.fill_form(fields), "element_not_found")
    assert value_of(session, "#name") == "Before"
    assert js(session, "document.getElementById('subscribe').checked") is False


def test_fill_form_failing_after_the_first_field_reports_unknown(session, form):
    fields = [
        {"ref": ref_for(form, 'textbox "Name"'), "type": "textbox", "value": "Set"},
        {"ref": ref_for(form, 'combobox "Country"'), "type": "combobox", "value": "Atlantis"},
    ]
    error(session.fill_form(fields), "element_not_found", "unknown", "inspect_state")
    assert value_of(session, "#name") == "Set"  # the first field was filled: the outcome is not "not_started"
    assert value_of(session, "#country") == "fr"


@pytest.mark.parametrize(
    ("field_type", "value"),
    [("checkbox", "yes"), ("radio", "on"), ("textbox", True), ("combobox", False)],
)
def test_fill_form_value_must_match_the_field_type(session, form, field_type, value):
    ref = ref_for(form, 'checkbox "Subscribe"' if field_type in ("checkbox", "radio") else 'textbox "Name"')
    message = not_started(session.fill_form([{"ref": ref, "type": field_type, "value": value}]), "invalid_params")
    assert f"a {field_type} field takes" in message
    assert js(session, "document.getElementById('subscribe').checked") is False
    assert value_of(session, "#name") == ""


def test_fill_form_refuses_a_field_of_the_wrong_kind(session, form):
    name, pro = ref_for(form, 'textbox "Name"'), ref_for(form, 'radio "Pro"')
    message = not_started(session.fill_form([{"ref": name, "type": "checkbox", "value": True}]), "element_not_found")
    assert "not a checkbox or radio button" in message
    assert "not an editable field" in not_started(
        session.fill_form([{"ref": ref_for(form, 'button "Submit"'), "type": "textbox", "value": "x"}]),
        "element_not_found",
    )
    ok(session.fill_form([{"ref": pro, "type": "radio", "value": True}]))
    message = not_started(session.fill_form([{"ref": pro, "type": "radio", "value": False}]), "invalid_params")
    assert "radio button cannot be unchecked" in message
    assert js(session, "document.querySelector('input[value=pro]').checked") is True
    assert value_of(session, "#name") == ""


# browser_select_option -------------------------------------------------------------
def test_select_single_option_by_label_and_by_value(session, form):
    country = ref_for(form, 'combobox "Country"')
    assert ok(session.select_option(country, ["Germany"]))["selected"] == ["de"]
    assert value_of(session, "#country") == "de"
    assert ok(session.select_option(country, ["jp"]))["selected"] == ["jp"]
    assert value_of(session, "#country") == "jp"


def test_select_several_options_of_a_multiple_select(session, form):
    colors = ref_for(form, 'listbox "Colors"')
    assert ok(session.select_option(colors, ["red", "Blue"]))["selected"] == ["red", "blue"]
    selected = "[...document.getElementById('colors').selectedOptions].map(o => o.value)"
    assert js(session, selected) == ["red", "blue"]
    assert ok(session.select_option(colors, ["Green"]))["selected"] == ["green"]
    assert js(session, selected) == ["green"]


def test_select_a_missing_option_lists_the_options(session, form):
    country = ref_for(form, 'combobox "Country"')
    ok(session.select_option(country, ["de"]))
    message = not_started(session.select_option(country, ["Narnia"]), "element_not_found")
    assert "'Narnia'" in message
    assert "'fr' (France), 'de' (Germany), 'jp' (Japan)" in message
    assert value_of(session, "#country") == "de"


def test_select_two_values_on_a_single_select_is_invalid(session, form):
    country = ref_for(form, 'combobox "Country"')
    assert "one value" in not_started(session.select_option(country, ["de", "jp"]), "invalid_params")
    assert value_of(session, "#country") == "fr"


def test_select_an_option_whose_value_is_empty(session, form):
    country = ref_for(form, 'combobox "Country"')
    js(session, "document.getElementById('country').add(new Option('(none)', ''), 0)")
    ok(session.select_option(country, ["Japan"]))
    assert ok(session.select_option(country, [""]))["selected"] == [""]
    assert js(session, "document.getElementById('country').selectedIndex") == 0
    ok(session.select_option(country, ["Japan"]))
    assert ok(session.select_option(country, ["(none)"]))["selected"] == [""]
    assert js(session, "document.getElementById('country').selectedIndex") == 0


def test_select_on_something_else_than_a_select(session, form):
    name = ref_for(form, 'textbox "Name"')
    assert "<input>" in not_started(session.select_option(name, ["x"]), "element_not_found")
    not_started(session.select_option(name, []), "invalid_params")


# browser_hover, browser_press_key, browser_drag ------------------------------------
def test_hover_shows_the_tooltip(session, shop):
    assert js(session, "document.getElementById('tooltip')") is None
    assert "tooltip" not in snapshot_text(session)
    ok(session.hover(ref_for(shop, 'button "Hover me"')))
    assert text_of(session, "#tooltip") == "Tooltip shown"
    assert re.search(r'tooltip "Tooltip shown"', snapshot_text(session))


def test_press_key_types_into_the_focused_field_and_submits(session, form):
    ok(session.click(ref_for(form, 'searchbox "Search"')))
    for key in ("p", "e", "a", "r"):
        ok(session.press_key(key))
    assert value_of(session, "#search") == "pear"
    ok(session.press_key("Backspace"))
    ok(session.press_key("Shift+S"))
    assert value_of(session, "#search") == "peaS"
    assert text_of(session, "#search-status") == ""
    assert ok(session.press_key("Enter"))["modal_state"] is None
    assert text_of(session, "#search-status") == "Searched for: peaS"


def test_press_an_unknown_key_is_invalid(session, form):
    ok(session.click(ref_for(form, 'textbox "Name"')))
    record_events(session, "#name", "keydown", "keyup")
    assert "'NotAKey'" in not_started(session.press_key("NotAKey"), "invalid_params")
    assert "'Nope+a'" in not_started(session.press_key("Nope+a"), "invalid_params")
    not_started(session.press_key(""), "invalid_params")
    assert recorded_events(session) == []
    assert value_of(session, "#name") == ""


def test_an_unknown_key_in_a_chord_leaves_no_key_held(session, form):
    ok(session.click(ref_for(form, 'textbox "Name"')))
    record_events(session, "#name", "keydown", "keyup")
    # Control went down before "Nope" was found unknown: the page saw it, so the outcome is unknown.
    message = error(session.press_key("Control+Shift+Nope"), "invalid_params", "unknown", "inspect_state")
    assert "'Nope'" in message and "Control+Shift had been pressed and was released" in message
    assert [(event["type"], event["key"]) for event in recorded_events(session)] == [
        ("keydown", "Control"),
        ("keydown", "Shift"),
        ("keyup", "Shift"),
        ("keyup", "Control"),
    ]
    js(session, "window.__events = []")
    ok(session.press_key("x"))  # typed as a plain x: no modifier is still held
    assert [(e["type"], e["key"], e["ctrl"], e["shift"]) for e in recorded_events(session)] == [
        ("keydown", "x", False, False),
        ("keyup", "x", False, False),
    ]
    assert value_of(session, "#name") == "x"


def test_drag_moves_the_task_to_done(session, open_page):
    page = open_page("drag.html")
    # The second region is "Done" (Playwright before 1.6x does not name regions).
    done_region = [line for line in page.splitlines() if "- region" in line][1]
    ok(session.drag(ref_for(page, "listitem"), ref_for(done_region, "region")))
    assert text_of(session, "#drag-status") == "Task A is in Done"
    assert js(session, "document.getElementById('task-a').closest('section').id") == "done"


def test_drag_with_an_unknown_ref_moves_nothing(session, open_page):
    page = open_page("drag.html")
    not_started(session.drag(ref_for(page, "listitem"), "e99999"), "element_not_found")
    assert text_of(session, "#drag-status") == "Task A is in Todo"


# browser_wait_for ------------------------------------------------------------------
def test_wait_for_text_to_appear(session, shop):
    ok(session.click(ref_for(shop, 'button "Slow button"')))
    data = ok(session.wait_for(text="Slow result ready"))
    assert data["condition"] == "text 'Slow result ready' appeared"
    assert 0 <= data["waited_ms"] < 5000
    assert data["url"].endswith("/index.html")
    assert text_of(session, "#output") == "Slow result ready"


def test_wait_for_text_that_is_not_there_yet(session, shop):
    ok(session.click(ref_for(shop, 'button "Add later"')))  # the text comes 1.5 s later
    assert text_of(session, "#output") == ""
    data = ok(session.wait_for(text="Late text", time_s=10))
    assert data["waited_ms"] > 0
    assert text_of(session, "#output") == "Late text"


def test_wait_for_text_to_go(session, shop):
    js(session, "setTimeout(() => document.getElementById('remove-me').remove(), 300)")
    data = ok(session.wait_for(text_gone="Remove me"))
    assert data["condition"] == "text 'Remove me' is gone"
    assert js(session, "document.getElementById('remove-me')") is None


def test_wait_for_a_fixed_time(session, shop):
    envelope = session.wait_for(time_s=0.3)
    data = ok(envelope)
    assert data["condition"] == "0.3 s elapsed"
    assert 300 <= data["waited_ms"] < 10_000  # time_s, not the 10 s default limit
    assert envelope.operation.duration_ms >= 300


def test_wait_for_times_out(session, shop):
    envelope = session.wait_for(text="Never shown", time_s=0.5)
    message = error(envelope, "wait_timeout", "unknown", "read_only")
    assert "0.5 s" in message and "'Never shown'" in message
    assert 500 <= envelope.operation.duration_ms < 10_000  # time_s, not the 10 s default limit
    message = error(session.wait_for(text_gone="Add Banana", time_s=0.3), "wait_timeout", "unknown", "read_only")
    assert "still visible" in message


def test_wait_for_looks_past_hidden_copies_of_the_text(session, shop):
    js(
        session,
        """() => {
          const ghost = document.createElement('p');
          ghost.hidden = true;
          ghost.textContent = 'Ghost line';
          document.body.prepend(ghost);
          setTimeout(() => {
            const shown = document.createElement('p');
            shown.id = 'shown-ghost';
            shown.textContent = 'Ghost line';
            document.body.append(shown);
          }, 200);
        }""",
    )
    ok(session.wait_for(text="Ghost line", time_s=5))
    assert js(session, "document.getElementById('shown-ghost').checkVisibility()") is True
    # A hidden copy does not make visible text "gone".
    error(session.wait_for(text_gone="Ghost line", time_s=0.3), "wait_timeout", "unknown", "read_only")


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"text": "a", "text_gone": "b"},
        {"time_s": 0},
        {"time_s": 31},
        {"text": ""},
        {"text": "a", "timeout": 1},
    ],
    ids=["nothing", "text-and-text_gone", "zero-time", "too-long", "empty-text", "unknown-param"],
)
def test_wait_for_rejects_invalid_combinations(session, shop, args):
    envelope = session.call("browser_wait_for", **args)  # the generated method refuses unknown names itself
    assert "browser_wait_for" in not_started(envelope, "invalid_params")
    assert envelope.operation.duration_ms < 5000  # refused before any waiting


# browser_evaluate ------------------------------------------------------------------
def test_evaluate_returns_values(session, shop):
    assert js(session, "1 + 2") == 3
    assert js(session, "document.title") == "Demo Shop"
    assert js(session, "({a: [1, 'x', null], b: true})") == {"a": [1, "x", None], "b": True}
    assert js(session, "undefined") is None


def test_evaluate_calls_a_function(session, shop):
    assert js(session, "() => document.querySelectorAll('#products button').length") == 7
    assert js(session, "async () => { await new Promise(r => setTimeout(r, 10)); return location.pathname; }") == (
        "/index.html"
    )


def test_evaluate_on_an_element(session, shop):
    banana = ref_for(shop, 'button "Add Banana"')
    assert js(session, "el => el.textContent", ref=banana) == "Add Banana"
    assert js(session, "el => el.dataset.item", ref=banana) == "Banana"
    not_started(session.evaluate("el => el.id", ref="e99999"), "element_not_found")


def test_evaluate_can_change_the_page(session, shop):
    js(session, "() => { document.getElementById('cart').textContent = 'changed'; }")
    assert re.search(r"status \[ref=(?:f\d+)?e\d+\]: changed", snapshot_text(session))


def test_evaluate_reports_what_the_page_raised(session, shop):
    thrown = session.evaluate("() => { throw new Error('boom from page'); }")
    message = error(thrown, "evaluation_failed", "unknown", "inspect_state")
    assert "boom from page" in message
    assert "ReferenceError" in error(session.evaluate("noSuchVariable + 1"), "evaluation_failed")
    assert "SyntaxError" in error(session.evaluate("this is not javascript"), "evaluation_failed")
    assert js(session, "document.title") == "Demo Shop"  # the page is still usable


# browser_screenshot ----------------------------------------------------------------
def test_screenshot_png_of_the_viewport(session, shop):
    data = ok(session.screenshot())
    assert data["image"].startswith(PNG_MAGIC)
    assert data["mime_type"] == "image/png"
    viewport = tuple(js(session, "[innerWidth, innerHeight]"))
    assert viewport == VIEWPORT
    assert (data["width"], data["height"]) == (data["source_width"], data["source_height"]) == viewport
    assert data["scaled"] is False
    assert image_size(data) == viewport
    assert data["url"].endswith("/index.html")


def test_screenshot_shows_the_current_pixels(session, shop):
    js(session, "document.body.innerHTML = ''; document.documentElement.style.background = 'rgb(255, 0, 0)'")
    for args in ({}, {"format": "jpeg", "quality": 95}, {"full_page": True}):
        data = ok(session.screenshot(**args))
        with Image.open(io.BytesIO(data["image"])) as picture:
            red, green, blue = picture.convert("RGB").getpixel((data["width"] // 2, data["height"] // 2))
        assert red > 240 and green < 15 and blue < 15, (args, (red, green, blue))


def test_screenshot_leaves_the_page_as_it_is(session, shop):
    """A read-only capture neither finishes running animations nor hides anything."""
    js(session, "window.fade = document.body.animate([{opacity: 1}, {opacity: 0.5}], {duration: 60000}); 0")
    ok(session.screenshot())
    ok(session.screenshot(full_page=True))
    ok(session.screenshot(ref=ref_for(shop, 'button "Add Banana"')))
    assert js(session, "[fade.playState, fade.currentTime < 60000]") == ["running", True]


def test_screenshot_jpeg(session, shop):
    data = ok(session.screenshot(format="jpeg"))
    assert data["image"].startswith(JPEG_MAGIC)
    assert data["mime_type"] == "image/jpeg"
    assert (data["width"], data["height"]) == VIEWPORT and data["scaled"] is False
    assert image_size(data) == VIEWPORT
    small = ok(session.screenshot(format="jpeg", quality=5))
    assert small["image"].startswith(JPEG_MAGIC)
    assert len(small["image"]) < len(data["image"])


def test_full_page_screenshot_is_downscaled(session, demo):
    ok(session.navigate(demo.url_for("table.html")))  # no snapshot: 2000 rows make a slow one
    page_height = js(session, "document.documentElement.scrollHeight")
    assert page_height > MAX_SIDE
    data = ok(session.screenshot(full_page=True))
    assert data["scaled"] is True
    assert (data["source_width"], data["source_height"]) == (VIEWPORT[0], page_height)
    assert max(data["width"], data["height"]) == data["height"] == MAX_SIDE
    assert data["width"] == round(VIEWPORT[0] * MAX_SIDE / page_height)
    assert image_size(data) == (data["width"], data["height"])


def test_original_screenshot_keeps_the_source_size(session, shop):
    js(session, "document.body.style.minHeight = '2000px'")
    page_height = js(session, "document.documentElement.scrollHeight")
    assert page_height > MAX_SIDE
    data = ok(session.screenshot(full_page=True, original=True))
    assert data["scaled"] is False
    assert (data["width"], data["height"]) == (VIEWPORT[0], page_height)
    assert (data["source_width"], data["source_height"]) == (VIEWPORT[0], page_height)
    assert image_size(data) == (VIEWPORT[0], page_height)
    scaled = ok(session.screenshot(full_page=True, format="jpeg"))
    assert scaled["scaled"] is True and scaled["height"] == MAX_SIDE
    assert scaled["image"].startswith(JPEG_MAGIC) and image_size(scaled) == (scaled["width"], MAX_SIDE)


def test_screenshot_of_one_element(session, shop):
    banana = ref_for(shop, 'button "Add Banana"')
    box = js(session, "el => { const r = el.getBoundingClientRect(); return [r.width, r.height]; }", ref=banana)
    data = ok(session.screenshot(ref=banana))
    assert data["image"].startswith(PNG_MAGIC) and data["scaled"] is False
    assert abs(data["width"] - box[0]) <= 1 and abs(data["height"] - box[1]) <= 1
    assert image_size(data) == (data["width"], data["height"])
    not_started(session.screenshot(ref="e99999"), "element_not_found")


def test_screenshot_save_writes_an_artifact(session, shop):
    envelopes = [session.screenshot(save=True), session.screenshot(save=True, format="jpeg")]
    paths = [envelope.operation.artifacts for envelope in envelopes]
    try:
        assert [len(artifacts) for artifacts in paths] == [1, 1]
        assert paths[0] != paths[1]
        for envelope, (path,) in zip(envelopes, paths, strict=False):
            saved = Path(path)
            assert saved.is_file() and saved.suffix == "." + envelope.data["mime_type"].split("/")[1]
            assert saved.read_bytes() == ok(envelope)["image"]
        assert session.screenshot().operation.artifacts == ()
    finally:
        for artifacts in paths:
            for path in artifacts:
                Path(path).unlink(missing_ok=True)


def test_screenshot_time_limits(fresh_session, demo):
    """A page capture is not bound by the (short) action timeout; an element still must become visible."""
    quick = fresh_session(action_timeout_s=1)
    ok(quick.navigate(demo.url_for("table.html")))
    data = ok(quick.screenshot(full_page=True, format="jpeg"))
    assert data["scaled"] is True and data["source_height"] > 20 * MAX_SIDE
    ok(quick.navigate(demo.url_for("index.html")))
    banana = ref_for(ok(quick.snapshot())["snapshot"], 'button "Add Banana"')
    ok(quick.evaluate("el => { el.style.visibility = 'hidden'; }", ref=banana))
    envelope = quick.screenshot(ref=banana)
    message = error(envelope, "operation_timeout", "unknown", "read_only")
    assert banana in message and "after 1 s" in message  # the action timeout, not the 30 s capture one
    assert 1000 <= envelope.operation.duration_ms < 20_000


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ({"ref": "e1", "full_page": True}, "full_page and ref"),
        ({"quality": 50}, "quality"),
        ({"format": "gif"}, "format"),
    ],
    ids=["ref-and-full_page", "quality-on-png", "format"],
)
def test_screenshot_rejects_bad_arguments(session, shop, args, words):
    envelope = session.screenshot(**args)
    assert words in not_started(envelope, "invalid_params")
    assert envelope.operation.artifacts == ()


# dialogs -----------------------------------------------------------------------------
def test_alert_blocks_the_page_until_handled(session, dialogs):
    data = ok(session.click(ref_for(dialogs, 'button "Show alert"')))
    assert data["modal_state"] == ALERT_MODAL
    for envelope in (session.snapshot(), session.click(ref_for(dialogs, 'button "Show confirm"'))):
        message = not_started(envelope, "modal_state_blocked")
        assert "browser_handle_dialog" in message and "Hello from alert" in message
    handled = ok(session.handle_dialog(accept=True))
    assert handled["dialog_type"] == "alert"
    assert handled["message"] == "Hello from alert"
    assert handled["accepted"] is True and handled["modal_state"] is None
    assert text_of(session, "#dialog-status") == "Alert: closed"
    not_started(session.handle_dialog(accept=True), "modal_state_blocked")


@pytest.mark.parametrize(("accept", "shown"), [(True, "Confirm: true"), (False, "Confirm: false")])
def test_confirm_accepted_or_dismissed(session, dialogs, accept, shown):
    modal = ok(session.click(ref_for(dialogs, 'button "Show confirm"')))["modal_state"]
    assert (modal["kind"], modal["dialog_type"], modal["message"]) == ("dialog", "confirm", "Proceed?")
    handled = ok(session.handle_dialog(accept=accept))
    assert (handled["dialog_type"], handled["accepted"]) == ("confirm", accept)
    assert text_of(session, "#dialog-status") == shown


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        ({"accept": True, "prompt_text": "Grace"}, "Prompt: Grace"),
        ({"accept": True}, "Prompt: Ada"),
        ({"accept": False}, "Prompt: null"),
    ],
    ids=["answered", "default", "dismissed"],
)
def test_prompt(session, dialogs, args, shown):
    modal = ok(session.click(ref_for(dialogs, 'button "Show prompt"')))["modal_state"]
    assert (modal["dialog_type"], modal["message"], modal["default_value"]) == ("prompt", "Your name?", "Ada")
    ok(session.call("browser_handle_dialog", **args))
    assert text_of(session, "#dialog-status") == shown


def test_prompt_text_only_answers_a_prompt(session, dialogs):
    ok(session.click(ref_for(dialogs, 'button "Show confirm"')))
    assert "prompt_text" in not_started(session.handle_dialog(True, prompt_text="x"), "invalid_params")
    not_started(session.snapshot(), "modal_state_blocked")  # still open
    ok(session.handle_dialog(False))
    assert text_of(session, "#dialog-status") == "Confirm: false"


def test_a_key_press_that_opens_a_dialog_reports_it(session, dialogs):
    js(session, "document.getElementById('alert').focus()")
    assert ok(session.press_key("Enter"))["modal_state"] == ALERT_MODAL
    ok(session.handle_dialog(accept=False))
    assert text_of(session, "#dialog-status") == "Alert: closed"


def test_an_evaluate_that_opens_a_dialog_reports_it(session, dialogs):
    data = ok(session.evaluate("() => { document.title = String(confirm('From script?')); }"))
    assert data["result"] is None
    assert (data["modal_state"]["dialog_type"], data["modal_state"]["message"]) == ("confirm", "From script?")
    ok(session.handle_dialog(accept=True))
    assert js(session, "document.title") == "true"


def test_handle_dialog_without_a_dialog(session, dialogs):
    message = not_started(session.handle_dialog(accept=True), "modal_state_blocked")
    assert "No dialog" in message
    assert text_of(session, "#dialog-status") == "No dialog yet"


def test_alert_on_load_returns_promptly(session, demo, shop):
    envelope = session.navigate(demo.url_for("alert-on-load.html"))
    data = ok(envelope)
    assert envelope.operation.duration_ms < 15_000  # not held until the 30 s navigation timeout
    assert data["url"] == demo.url_for("alert-on-load.html")
    assert data["modal_state"] == {**ALERT_MODAL, "message": "Loaded with alert"}
    assert "browser_handle_dialog" in not_started(session.snapshot(), "modal_state_blocked")
    assert ok(session.handle_dialog(accept=True))["message"] == "Loaded with alert"
    page = snapshot_text(session)
    assert "After alert" in page
    assert js(session, "document.title") == "Alert on load"


# file chooser ------------------------------------------------------------------------
def test_file_chooser_upload(session, upload, files):
    assert open_chooser(session, upload) == {
        "kind": "file_chooser",
        "multiple": True,
        "resolved_by": "browser_file_upload",
        "dialog_type": None,
        "message": None,
        "default_value": None,
    }
    assert "browser_file_upload" in not_started(session.snapshot(), "modal_state_blocked")
    data = ok(session.file_upload([str(files[0])]))
    assert data["files"] == [str(files[0].resolve())]
    assert data["modal_state"] is None
    assert text_of(session, "#upload-status") == "Selected: notes.txt"
    assert js(session, "[...document.getElementById('file').files].map(f => [f.name, f.size])") == [["notes.txt", 5]]


def test_clicking_the_label_of_a_file_input_opens_the_chooser(session, upload, files):
    lines = upload.splitlines()
    label_line = lines[next(i for i, line in enumerate(lines) if "text: Choose file" in line) - 1]
    modal = ok(session.click(ref_for(label_line, "generic")))["modal_state"]
    assert (modal["kind"], modal["resolved_by"]) == ("file_chooser", "browser_file_upload")
    ok(session.file_upload([str(files[1])]))
    assert text_of(session, "#upload-status") == "Selected: data.csv"


def test_file_chooser_takes_several_files(session, upload, files):
    open_chooser(session, upload)
    ok(session.file_upload([str(path) for path in files]))
    assert text_of(session, "#upload-status") == "Selected: notes.txt, data.csv"


def test_file_chooser_rejects_a_missing_file_and_stays_open(session, upload, files, tmp_path):
    open_chooser(session, upload)
    missing = str(tmp_path / "no-such-file.txt")
    assert missing in not_started(session.file_upload([str(files[0]), missing]), "invalid_params")
    assert "a file chooser" in not_started(session.snapshot(), "modal_state_blocked")
    assert "browser_file_upload" in not_started(session.handle_dialog(True), "modal_state_blocked")
    ok(session.file_upload([str(files[1])]))
    assert text_of(session, "#upload-status") == "Selected: data.csv"


def test_a_single_file_chooser_takes_one_file(session, upload, files):
    js(session, "document.getElementById('file').multiple = false")
    assert open_chooser(session, upload)["multiple"] is False
    assert "takes one file" in not_started(session.file_upload([str(path) for path in files]), "invalid_params")
    assert "a file chooser" in not_started(session.snapshot(), "modal_state_blocked")
    ok(session.file_upload([str(files[0])]))
    assert text_of(session, "#upload-status") == "Selected: notes.txt"


def test_upload_answered_by_a_dialog_reports_it(fresh_session, demo, files):
    s = fresh_session(action_timeout_s=30)  # a long action timeout, so waiting for it would show
    ok(s.navigate(demo.url_for("upload.html")))
    js(s, "document.getElementById('file').addEventListener('change', () => alert('Got it'))")
    open_chooser(s, snapshot_text(s))
    envelope = s.file_upload([str(files[0])])
    assert envelope.operation.duration_ms < 15_000  # not held until the action timeout by the open alert
    assert ok(envelope)["modal_state"] == {**ALERT_MODAL, "message": "Got it"}
    assert "browser_handle_dialog" in not_started(s.snapshot(), "modal_state_blocked")
    ok(s.handle_dialog(True))
    assert text_of(s, "#upload-status") == "Selected: notes.txt"


def test_a_prevented_click_on_a_file_input_opens_no_chooser(session, upload):
    js(session, "document.getElementById('file').addEventListener('click', (e) => e.preventDefault())")
    assert ok(session.click(ref_for(upload, 'button "Choose file"')))["modal_state"] is None
    assert "Selected: none" in snapshot_text(session)
    not_started(session.file_upload([]), "modal_state_blocked")


def test_file_chooser_cancelled_with_no_paths(session, upload):
    open_chooser(session, upload)
    assert ok(session.file_upload([]))["files"] == []
    assert text_of(session, "#upload-status") == "Selected: none"
    not_started(session.file_upload([]), "modal_state_blocked")


def test_upload_without_a_file_chooser(session, upload, files):
    message = not_started(session.file_upload([str(files[0])]), "modal_state_blocked")
    assert "No file chooser" in message
    assert text_of(session, "#upload-status") == "Selected: none"


def test_upload_while_a_dialog_is_open(session, dialogs, files):
    ok(session.click(ref_for(dialogs, 'button "Show alert"')))
    not_started(session.file_upload([str(files[0])]), "modal_state_blocked")
    ok(session.handle_dialog(True))
    assert text_of(session, "#dialog-status") == "Alert: closed"
