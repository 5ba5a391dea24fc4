"""Navigation, snapshots, tabs and frames on real Chromium against the demo site.

Each test checks the envelope exactly (status, instance, error_type and the
operation's outcome, retry, page_id and frame_id) and then reads the page back
to see what really happened. The module shares one session (one Chromium);
tests that need other limits start a session of their own.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.helpers import error, ok, ref_for, wait_until
from webmcp_nb import Envelope, Session

pytestmark = pytest.mark.playwright_sensitive  # see tests/test_compat_scope.py

REF = re.compile(r"^(f\d+)?e\d+$")
SNAPSHOT_REF = re.compile(r"\[ref=((?:f\d+)?e\d+)\]")


# helpers -----------------------------------------------------------------------
def completed(envelope: Envelope) -> dict[str, Any]:
    """The data of a successful envelope whose operation completed."""
    data = ok(envelope)
    assert envelope.status == "success"
    assert envelope.instance == "default"
    assert (envelope.operation.outcome, envelope.operation.retry) == ("completed", "not_needed")
    return data


def goto(session: Session, url: str, **args: Any) -> dict[str, Any]:
    return completed(session.navigate(url, **args))


def cart_text(session: Session, **args: Any) -> str:
    return ok(session.evaluate("document.getElementById('cart').textContent", **args))["result"]


def tabs(session: Session) -> dict[str, Any]:
    return ok(session.tabs("list"))


def main_frame_id(session: Session, **args: Any) -> str:
    frames = ok(session.frames(**args))["frames"]
    assert frames[0]["is_main"] is True
    return frames[0]["frame_id"]


def wait_for_tabs(
    session: Session, done: Callable[[list[dict[str, Any]]], bool], timeout_s: float = 5.0
) -> dict[str, Any]:
    """The tab list once `done(tabs)` holds (a popup's tab is reported and loads asynchronously)."""
    seen: list[dict[str, Any]] = []

    def listing_if_done() -> dict[str, Any] | None:
        seen[:] = [tabs(session)]
        return seen[0] if done(seen[0]["tabs"]) else None

    return wait_until(listing_if_done, message=lambda: f"tabs: {seen[0]['tabs']}")


@pytest.fixture
def one_tab(session: Session):
    """Start and end with exactly one tab, current, so tab tests do not leak into each other."""

    def reset() -> str:
        listing = tabs(session)
        first = listing["tabs"][0]["page_id"]
        for tab in listing["tabs"][1:]:
            ok(session.tabs("close", page_id=tab["page_id"]))
        ok(session.tabs("select", page_id=first))
        listing = tabs(session)
        assert [t["page_id"] for t in listing["tabs"]] == [first]
        return first

    yield reset()
    reset()


# browser_navigate ----------------------------------------------------------------
def test_navigate_returns_url_title_and_status(session, demo):
    envelope = session.navigate(demo.url_for("index.html"))
    data = completed(envelope)
    assert data == {
        "url": demo.url_for("index.html"),
        "title": "Demo Shop",
        "status": 200,
        "moved": None,
        "modal_state": None,
        "observation": None,
    }
    assert envelope.operation.tool == "browser_navigate"
    assert envelope.operation.page_id is not None and envelope.operation.frame_id is not None
    assert cart_text(session) == "Cart: 0 items"


def test_navigate_to_an_http_error_page_succeeds_with_its_status(session, demo):
    data = goto(session, demo.url_for("status?code=404"))
    assert data["status"] == 404
    assert data["title"] == "Status 404"
    assert data["url"] == demo.url_for("status?code=404")
    data = goto(session, demo.url_for("status?code=503"))
    assert (data["status"], data["title"]) == (503, "Status 503")


def test_navigate_follows_redirects_to_the_final_url(session, demo):
    data = goto(session, demo.url_for("redirect?to=/help.html"))
    assert data["url"] == demo.url_for("help.html")
    assert (data["title"], data["status"]) == ("Help", 200)


def test_navigate_to_a_data_url_has_no_http_status(session):
    data = goto(session, "data:text/html,<title>Inline</title><p>hi</p>")
    assert data["title"] == "Inline"
    assert data["status"] is None
    assert data["url"].startswith("data:text/html,")


def test_navigate_to_a_closed_port_fails_with_unknown_outcome(session, demo):
    goto(session, demo.url_for("index.html"))
    envelope = session.navigate("http://127.0.0.1:9/")
    message = error(envelope, "navigation_failed", outcome="unknown", retry="inspect_state")
    assert envelope.instance == "default"
    assert "http://127.0.0.1:9/" in message
    assert "net::" in message
    assert envelope.operation.page_id is not None


def test_navigation_timeout(fresh_session, demo):
    s = fresh_session(navigation_timeout_s=1)
    goto(s, "about:blank")  # launch Chromium first: only the navigation is timed
    started = time.monotonic()
    envelope = s.navigate(demo.url_for("slow?ms=30000"))
    elapsed = time.monotonic() - started
    message = error(envelope, "navigation_timeout", outcome="unknown", retry="inspect_state")
    assert envelope.instance == "default"
    assert "1 s" in message
    # Reported at the timeout, not when the page finally answers (30 s); generous for slow machines.
    assert elapsed < 15, f"the 1 s navigation timeout took {elapsed:.1f} s to report"
    # The tab is still usable afterwards.
    assert goto(s, demo.url_for("help.html"))["title"] == "Help"


@pytest.mark.parametrize("load_state", ["commit", "domcontentloaded", "load", "networkidle"])
def test_navigate_wait_until_variants(session, demo, load_state):
    data = goto(session, demo.url_for(f"help.html?w={load_state}"), wait_until=load_state)
    assert data["url"] == demo.url_for(f"help.html?w={load_state}")
    assert data["status"] == 200
    ok(session.wait_for(text="This is the demo site"))
    assert ok(session.evaluate("document.title"))["result"] == "Help"


def test_navigate_with_an_unknown_wait_until_is_invalid(session):
    envelope = session.navigate("about:blank", wait_until="idle")
    message = error(envelope, "invalid_params", outcome="not_started", retry="after_correction")
    assert "wait_until" in message


@pytest.mark.parametrize("url", ["example.com", "127.0.0.1:8000/index.html", "/index.html", "www.example.com/a?b=c"])
def test_navigate_without_a_scheme_is_invalid_and_does_nothing(session, demo, url):
    goto(session, demo.url_for("help.html"))
    envelope = session.navigate(url)
    message = error(envelope, "invalid_params", outcome="not_started", retry="after_correction")
    assert envelope.instance is None
    assert "'url'" in message
    assert "scheme" in message
    assert ok(session.evaluate("location.href"))["result"] == demo.url_for("help.html")


# back / forward / reload -----------------------------------------------------------
def test_back_and_forward_move_through_history(session, demo, one_tab):
    goto(session, demo.url_for("index.html"))
    goto(session, demo.url_for("help.html"))
    back = completed(session.navigate_back())
    assert (back["url"], back["title"], back["moved"]) == (demo.url_for("index.html"), "Demo Shop", True)
    forward = completed(session.navigate_forward())
    assert (forward["url"], forward["title"], forward["moved"]) == (demo.url_for("help.html"), "Help", True)
    assert forward["status"] == 200
    again = completed(session.navigate_forward())
    assert (again["url"], again["moved"], again["status"]) == (demo.url_for("help.html"), False, None)
    assert ok(session.evaluate("location.href"))["result"] == demo.url_for("help.html")


def test_back_across_a_same_document_navigation_moves(session, demo, one_tab):
    goto(session, demo.url_for("frame-nested.html"))
    ok(session.evaluate("location.hash = 'deep'"))
    back = completed(session.navigate_back())
    assert (back["url"], back["moved"]) == (demo.url_for("frame-nested.html"), True)


def test_back_with_no_history_does_not_move(session, demo, one_tab):
    new = ok(session.tabs("new"))
    page_id = new["current_page_id"]
    envelope = session.navigate_back()
    back = completed(envelope)
    assert envelope.operation.page_id == page_id
    assert (back["url"], back["moved"], back["status"]) == ("about:blank", False, None)
    forward = completed(session.navigate_forward())
    assert (forward["url"], forward["moved"]) == ("about:blank", False)


def test_reload_reloads_the_page_and_resets_its_state(session, demo):
    goto(session, demo.url_for("index.html"))
    ref = ref_for(ok(session.snapshot())["snapshot"], 'button "Add Apple"')
    ok(session.click(ref))
    assert cart_text(session) == "Cart: 1 item: Apple"
    data = completed(session.reload())
    assert data == {
        "url": demo.url_for("index.html"),
        "title": "Demo Shop",
        "status": 200,
        "moved": None,
        "modal_state": None,
        "observation": None,
    }
    assert cart_text(session) == "Cart: 0 items"
    # The reload made a new document: refs from before it are stale.
    error(session.click(ref), "stale_ref", outcome="not_started", retry="after_correction")


# operation ids -------------------------------------------------------------------------
def test_operation_ids_are_stable_per_instance_tab_and_frame(session, demo, one_tab):
    calls = [
        session.navigate(demo.url_for("index.html")),
        session.snapshot(),
        session.navigate(demo.url_for("help.html")),
        session.reload(),
        session.navigate_back(),
        session.frames(),
    ]
    for envelope in calls:
        completed(envelope)
    instance_ids = {e.operation.instance_id for e in calls}
    page_ids = {e.operation.page_id for e in calls}
    frame_ids = {e.operation.frame_id for e in calls}
    assert len(instance_ids) == 1 and None not in instance_ids
    assert page_ids == {one_tab}
    assert frame_ids == {main_frame_id(session)}
    assert len({e.operation.id for e in calls}) == len(calls)

    new = session.tabs("new", url=demo.url_for("help.html"))
    new_page_id = ok(new)["current_page_id"]
    assert new_page_id not in (one_tab, None)
    assert new.operation.page_id == new_page_id
    assert new.operation.instance_id in instance_ids
    on_new_tab = session.snapshot()
    completed(on_new_tab)
    assert on_new_tab.operation.page_id == new_page_id
    assert on_new_tab.operation.frame_id == main_frame_id(session)
    assert on_new_tab.operation.frame_id not in frame_ids
    assert on_new_tab.operation.instance_id in instance_ids

    listing = session.tabs("list")
    assert listing.operation.instance_id in instance_ids
    assert listing.operation.page_id is None and listing.operation.frame_id is None
    listed = session.list_instances()
    assert [i["instance_id"] for i in ok(listed)["instances"]] == list(instance_ids)


# browser_snapshot ---------------------------------------------------------------------------
def test_snapshot_has_refs_url_and_title(session, demo):
    goto(session, demo.url_for("index.html"))
    envelope = session.snapshot()
    data = completed(envelope)
    assert set(data) == {"url", "title", "snapshot", "saved"} and data["saved"] is None
    assert (data["url"], data["title"]) == (demo.url_for("index.html"), "Demo Shop")
    refs = SNAPSHOT_REF.findall(data["snapshot"])
    assert len(refs) > 40
    assert len(refs) == len(set(refs))
    assert all(REF.match(ref) for ref in refs)
    assert 'heading "Demo Shop"' in data["snapshot"]
    assert re.search(r'button "Add Grape" \[ref=(f\d+)?e\d+\]', data["snapshot"])
    assert "status [ref=" in data["snapshot"] and "Cart: 0 items" in data["snapshot"]


def test_snapshot_depth_is_shorter_than_the_full_tree(session, demo):
    goto(session, demo.url_for("index.html"))
    full = ok(session.snapshot())["snapshot"]
    shallow = ok(session.snapshot(depth=1))["snapshot"]
    assert len(shallow) < len(full)
    assert len(shallow.splitlines()) < len(full.splitlines())
    assert 'navigation "Demo pages"' in shallow
    assert "Add Apple" not in shallow
    assert max(len(line) - len(line.lstrip()) for line in shallow.splitlines()) <= 2
    deeper = ok(session.snapshot(depth=3))["snapshot"]
    assert len(shallow) < len(deeper) < len(full)


def test_refs_from_a_full_snapshot_still_work_after_a_shallow_one(session, demo):
    goto(session, demo.url_for("index.html"))
    full = ok(session.snapshot())["snapshot"]
    apple = ref_for(full, 'button "Add Apple"')
    shallow = ok(session.snapshot(depth=1))["snapshot"]
    assert apple not in shallow
    completed(session.click(apple))
    assert cart_text(session) == "Cart: 1 item: Apple"


def test_snapshot_of_one_ref_returns_its_subtree_and_keeps_other_refs(session, demo):
    goto(session, demo.url_for("index.html"))
    full = ok(session.snapshot())["snapshot"]
    products = ref_for(full, "- region")  # the Products section (unnamed before Playwright 1.6x)
    clear = ref_for(full, 'button "Clear cart"')
    apple = ref_for(full, 'button "Add Apple"')
    hover = ref_for(full, 'button "Hover me"')
    envelope = session.snapshot(ref=products)
    data = completed(envelope)
    lines = data["snapshot"].splitlines()
    assert f"[ref={products}]" in lines[0]
    assert lines[0].startswith("- region")
    assert all(line.startswith("  ") for line in lines[1:])
    assert f"[ref={apple}]" in data["snapshot"] and f"[ref={clear}]" in data["snapshot"]
    assert "Hover me" not in data["snapshot"] and 'heading "Demo Shop"' not in data["snapshot"]
    assert (data["url"], data["title"]) == (demo.url_for("index.html"), "Demo Shop")
    # Regression: a Playwright snapshot scoped to an element would have replaced the
    # ref table, so a ref from outside the subtree would no longer resolve.
    completed(session.hover(hover))
    completed(session.click(apple))
    assert cart_text(session) == "Cart: 1 item: Apple"


def test_snapshot_of_a_ref_with_depth(session, demo):
    goto(session, demo.url_for("index.html"))
    full = ok(session.snapshot())["snapshot"]
    products = ref_for(full, "- region")  # the Products section (unnamed before Playwright 1.6x)
    whole = ok(session.snapshot(ref=products))["snapshot"]
    shallow = ok(session.snapshot(ref=products, depth=1))["snapshot"]
    assert f"[ref={products}]" in shallow.splitlines()[0]
    assert len(shallow.splitlines()) < len(whole.splitlines())
    assert "Add Apple" not in shallow


def test_snapshot_of_an_unknown_ref(session, demo):
    goto(session, demo.url_for("index.html"))
    ok(session.snapshot())
    envelope = session.snapshot(ref="e99999")
    error(envelope, "element_not_found", outcome="not_started", retry="after_correction")


def test_snapshot_refs_inside_iframes(session, demo):
    goto(session, demo.url_for("frames.html"))
    data = completed(session.snapshot())
    snapshot = data["snapshot"]
    assert (data["url"], data["title"]) == (demo.url_for("frames.html"), "Frames")
    main_ref = ref_for(snapshot, 'heading "Frames"')
    inner_ref = ref_for(snapshot, 'button "Inner button"')
    nested_ref = ref_for(snapshot, 'heading "Nested frame"')
    assert re.fullmatch(r"f\d+e\d+", inner_ref) and re.fullmatch(r"f\d+e\d+", nested_ref)
    prefix = lambda ref: ref.rsplit("e", 1)[0]  # noqa: E731
    assert len({prefix(main_ref), prefix(inner_ref), prefix(nested_ref)}) == 3
    envelope = session.click(inner_ref)
    completed(envelope)
    assert envelope.operation.frame_id == main_frame_id(session)
    inner = ok(session.frames())["frames"][1]["frame_id"]
    status = ok(session.evaluate("document.getElementById('inner-status').textContent", frame_id=inner))
    assert status["result"] == "Inner clicked"


def test_snapshot_of_one_frame(session, demo):
    goto(session, demo.url_for("frames.html"))
    full = ok(session.snapshot())["snapshot"]
    back_link = ref_for(full, 'link "Back to index"')  # in the main frame
    frames = ok(session.frames())["frames"]
    inner, nested = frames[1]["frame_id"], frames[2]["frame_id"]

    envelope = session.snapshot(frame_id=inner)
    data = completed(envelope)
    assert envelope.operation.frame_id == inner
    assert envelope.operation.page_id == session.snapshot().operation.page_id
    assert (data["url"], data["title"]) == (demo.url_for("frames.html"), "Frames")
    assert 'heading "Inner frame"' in data["snapshot"] and "Nested content" in data["snapshot"]
    assert 'heading "Frames"' not in data["snapshot"]

    only_nested = completed(session.snapshot(frame_id=nested))["snapshot"]
    assert "Nested content" in only_nested and "Inner button" not in only_nested

    button = ref_for(completed(session.snapshot(frame_id=inner))["snapshot"], 'button "Inner button"')
    completed(session.click(button))
    result = ok(session.evaluate("document.getElementById('inner-status').textContent", frame_id=inner))["result"]
    assert result == "Inner clicked"
    # A frame's snapshot leaves the refs of the main frame usable.
    href = ok(session.evaluate("el => el.getAttribute('href')", ref=back_link))["result"]
    assert href == "index.html"


def test_snapshot_of_an_unknown_frame_or_page(session, demo):
    goto(session, demo.url_for("frames.html"))
    envelope = session.snapshot(frame_id="no-such-frame")
    message = error(envelope, "frame_not_found", outcome="not_started", retry="after_correction")
    assert "no-such-frame" in message
    assert envelope.instance == "default"
    assert envelope.operation.page_id is not None and envelope.operation.frame_id is None  # reached no frame

    envelope = session.snapshot(page_id="no-such-page")
    message = error(envelope, "page_not_found", outcome="not_started", retry="after_correction")
    assert "no-such-page" in message
    assert envelope.instance == "default"
    assert envelope.operation.page_id is None and envelope.operation.frame_id is None


def test_big_table_snapshot_fits_the_default_limit(session, demo):
    goto(session, demo.url_for("table.html"))
    envelope = session.snapshot()
    data = completed(envelope)
    assert len(envelope.to_json_bytes()) > 100_000
    assert len(data["snapshot"]) > 100_000
    assert 'cell "Item 2000"' in data["snapshot"]
    assert data["title"] == "Big Table"


def test_big_table_snapshot_over_a_small_limit_is_result_too_large(fresh_session, demo):
    s = fresh_session(max_result_bytes=50_000)
    goto(s, demo.url_for("table.html"))
    envelope = s.snapshot()
    message = error(envelope, "result_too_large", outcome="completed", retry="read_only")
    assert envelope.instance == "default"
    assert envelope.data is None
    assert "50000 bytes" in message
    assert "ref= (one element's subtree), depth= (fewer levels), frame_id= (one frame), or save=true" in message
    assert len(envelope.to_json_bytes()) <= 50_000
    assert envelope.operation.page_id is not None
    # Narrowing as the hint says fits.
    narrow = completed(s.snapshot(depth=2))
    assert "Big Table" in narrow["snapshot"]
    assert len(s.snapshot(depth=2).to_json_bytes()) <= 50_000


# browser_tabs -----------------------------------------------------------------------------
def test_tabs_list_has_the_current_tab(session, demo, one_tab):
    goto(session, demo.url_for("index.html"))
    envelope = session.tabs("list")
    data = completed(envelope)
    assert data == {
        "tabs": [
            {
                "page_id": one_tab,
                "url": demo.url_for("index.html"),
                "title": "Demo Shop",
                "current": True,
                "status": "ok",
            }
        ],
        "current_page_id": one_tab,
    }
    assert envelope.operation.page_id is None


def test_a_target_blank_link_opens_a_second_tab(session, demo, one_tab):
    goto(session, demo.url_for("index.html"))
    link = ref_for(ok(session.snapshot())["snapshot"], 'link "Open help in new tab"')
    envelope = session.click(link)
    completed(envelope)
    assert envelope.operation.page_id == one_tab
    listing = wait_for_tabs(session, lambda tabs: len(tabs) > 1 and tabs[1]["title"] == "Help")
    assert next(t["page_id"] for t in listing["tabs"]) == one_tab
    assert len(listing["tabs"]) == 2
    popup = listing["tabs"][1]
    assert popup["page_id"] != one_tab
    assert popup["url"] == demo.url_for("help.html")
    assert popup["title"] == "Help"
    assert [t["current"] for t in listing["tabs"]].count(True) == 1
    current = next(t["page_id"] for t in listing["tabs"] if t["current"])
    assert listing["current_page_id"] == current
    # The opener is untouched.
    assert ok(session.evaluate("location.href", page_id=one_tab))["result"] == demo.url_for("index.html")


def test_tabs_new_with_a_url_and_select(session, demo, one_tab):
    goto(session, demo.url_for("index.html"))
    envelope = session.tabs("new", url=demo.url_for("help.html"))
    data = completed(envelope)
    new = data["current_page_id"]
    assert [(t["page_id"], t["current"]) for t in data["tabs"]] == [(one_tab, False), (new, True)]
    assert data["tabs"][1]["url"] == demo.url_for("help.html")
    assert data["tabs"][1]["title"] == "Help"
    assert envelope.operation.page_id == new

    # Tools act on the current tab...
    snap = session.snapshot()
    assert completed(snap)["title"] == "Help" and snap.operation.page_id == new
    # ...until another one is selected.
    selected = completed(session.tabs("select", page_id=one_tab))
    assert selected["current_page_id"] == one_tab
    assert [(t["page_id"], t["current"]) for t in selected["tabs"]] == [(one_tab, True), (new, False)]
    snap = session.snapshot()
    assert completed(snap)["title"] == "Demo Shop" and snap.operation.page_id == one_tab
    ok(session.click(ref_for(snap.data["snapshot"], 'button "Add Fig"')))
    assert cart_text(session) == "Cart: 1 item: Fig"
    # An explicit page_id acts on that tab without selecting it.
    other = session.navigate(demo.url_for("frames.html"), page_id=new)
    assert completed(other)["title"] == "Frames" and other.operation.page_id == new
    assert tabs(session)["current_page_id"] == one_tab
    assert cart_text(session) == "Cart: 1 item: Fig"


def test_tabs_new_without_url_is_blank(session, one_tab):
    data = completed(session.tabs("new"))
    assert len(data["tabs"]) == 2
    assert data["tabs"][1] == {
        "page_id": data["current_page_id"],
        "url": "about:blank",
        "title": "",
        "current": True,
        "status": "ok",
    }


def test_tabs_new_with_a_url_without_scheme_is_invalid_and_opens_nothing(session, one_tab):
    envelope = session.tabs("new", url="example.com")
    message = error(envelope, "invalid_params", outcome="not_started", retry="after_correction")
    assert "'url'" in message and "scheme" in message
    assert [t["page_id"] for t in tabs(session)["tabs"]] == [one_tab]


def test_tabs_close(session, demo, one_tab):
    second = completed(session.tabs("new", url=demo.url_for("help.html")))["current_page_id"]
    third = completed(session.tabs("new", url=demo.url_for("frames.html")))["current_page_id"]
    # close by page_id: a tab that is not current
    envelope = session.tabs("close", page_id=second)
    data = completed(envelope)
    assert envelope.operation.page_id == second
    assert [t["page_id"] for t in data["tabs"]] == [one_tab, third]
    assert data["current_page_id"] == third
    # close without page_id: the current tab
    data = completed(session.tabs("close"))
    assert [t["page_id"] for t in data["tabs"]] == [one_tab]
    assert data["current_page_id"] == one_tab
    assert data["tabs"][0]["current"] is True
    # a closed tab is gone for good
    for envelope in (session.snapshot(page_id=second), session.tabs("select", page_id=third)):
        message = error(envelope, "page_not_found", outcome="not_started", retry="after_correction")
        assert second in message or third in message


def test_an_unknown_page_id_never_falls_back_to_another_tab(session, demo, one_tab):
    goto(session, demo.url_for("index.html"))
    ok(session.click(ref_for(ok(session.snapshot())["snapshot"], 'button "Add Date"')))
    before = tabs(session)
    calls = [
        session.navigate(demo.url_for("help.html"), page_id="no-such-page"),
        session.reload(page_id="no-such-page"),
        session.navigate_back(page_id="no-such-page"),
        session.evaluate("document.body.innerHTML = ''", page_id="no-such-page"),
        session.frames(page_id="no-such-page"),
        session.tabs("select", page_id="no-such-page"),
        session.tabs("close", page_id="no-such-page"),
    ]
    for envelope in calls:
        message = error(envelope, "page_not_found", outcome="not_started", retry="after_correction")
        assert "no-such-page" in message
        assert envelope.operation.page_id is None
    assert tabs(session) == before
    assert cart_text(session) == "Cart: 1 item: Date"
    assert ok(session.evaluate("location.href"))["result"] == demo.url_for("index.html")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ({"action": "select"}, ["select", "page_id"]),
        ({"action": "list", "page_id": "abc"}, ["page_id", "list"]),
        ({"action": "new", "page_id": "abc"}, ["page_id", "new"]),
        ({"action": "list", "url": "http://127.0.0.1/"}, ["url", "new"]),
        ({"action": "close", "url": "http://127.0.0.1/"}, ["url", "new"]),
        ({"action": "open"}, ["action"]),
        ({"action": "select", "page_id": ""}, ["page_id"]),
    ],
)
def test_tabs_invalid_combinations(session, one_tab, args, words):
    envelope = session.call("browser_tabs", **args)
    message = error(envelope, "invalid_params", outcome="not_started", retry="after_correction")
    for word in words:
        assert word in message
    assert [t["page_id"] for t in tabs(session)["tabs"]] == [one_tab]


def test_closing_the_last_tab_leaves_no_current_page(session, demo, one_tab):
    data = completed(session.tabs("close"))
    assert data == {"tabs": [], "current_page_id": None}
    envelope = session.snapshot()
    error(envelope, "page_not_found", outcome="not_started", retry="after_correction")
    reopened = completed(session.tabs("new", url=demo.url_for("index.html")))
    assert len(reopened["tabs"]) == 1 and reopened["tabs"][0]["current"] is True
    assert completed(session.snapshot())["title"] == "Demo Shop"


# browser_frames ----------------------------------------------------------------------------
def test_frames_lists_main_frame_first_with_parents(session, demo):
    goto(session, demo.url_for("frames.html"))
    envelope = session.frames()
    frames = completed(envelope)["frames"]
    assert len(frames) == 3
    main, inner, nested = frames
    assert main == {
        "frame_id": envelope.operation.frame_id,
        "parent_frame_id": None,
        "name": "",
        "url": demo.url_for("frames.html"),
        "is_main": True,
    }
    assert inner == {
        "frame_id": inner["frame_id"],
        "parent_frame_id": main["frame_id"],
        "name": "inner",
        "url": demo.url_for("frame-inner.html"),
        "is_main": False,
    }
    assert nested == {
        "frame_id": nested["frame_id"],
        "parent_frame_id": inner["frame_id"],
        "name": "nested",
        "url": demo.url_for("frame-nested.html"),
        "is_main": False,
    }
    assert len({main["frame_id"], inner["frame_id"], nested["frame_id"]}) == 3
    # Ids are stable from call to call.
    assert ok(session.frames())["frames"] == frames
    # A page without iframes has only its main frame, with the same id as before.
    goto(session, demo.url_for("help.html"))
    only = ok(session.frames())["frames"]
    assert [(f["frame_id"], f["is_main"], f["parent_frame_id"]) for f in only] == [(main["frame_id"], True, None)]
