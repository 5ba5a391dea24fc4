"""Notebook cells stay lean: the whole mime bundle of any envelope is at most 1.5x its text form.

The text form is `render_text(envelope)` (what ``str()`` and an MCP client show); for a result
carrying an image it is that text plus the image as base64 (how an image travels in a notebook;
the image is the result, so it counts as its text form, and travels once, as itself).

Every kind is held to `CELL_BUDGET` (1.5x), small ones included: a small result's cell is its
text (its HTML would be a styled copy, its envelope JSON 4x a navigation's text), a big one's
is its HTML (first screenfuls rendered, the rest folded) and the first lines of its text, a
screenshot's is its text and its image. The envelopes are real (the demo site on Chromium, one
browser for the module); their bytes vary only with the printed widths of ports and timings,
far from the budget (the closest, the 300-message console, is at 1.35x). `full=True` (the notebook's
``cell_output = "full"``) keeps every view, the envelope JSON included.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from tests.helpers import error, make_operation, ok
from webmcp_nb import Envelope
from webmcp_nb.core.render.renderer import (
    CELL_BUDGET,
    ENVELOPE_MIME,
    ERROR_COLOUR,
    HTML_LIST_ROWS,
    HTML_TREE_LINES,
    JSON_FULL_BYTES,
    TEXT_HEAD_LINES,
    mimebundle,
    render_html,
    render_text,
)

pytestmark = pytest.mark.browser

TEXT = {"text/plain"}
RICH = {"text/plain", "text/html"}
# What each kind's lean cell holds.
VIEWS = {
    "navigate": TEXT,
    "evaluate (a JSON result)": TEXT,
    "snapshot (a small page)": TEXT,
    "snapshot (2,000 table rows)": RICH,
    "tabs": TEXT,
    "frames": TEXT,
    "screenshot (png)": {"text/plain", "image/png"},
    "screenshot (jpeg)": {"text/plain", "image/jpeg"},
    "console (300 messages)": RICH,
    "network (300 requests)": RICH,
    "error (element not found)": TEXT,
    "error (invalid params)": TEXT,
}


@pytest.fixture(scope="module")
def real(session, demo) -> dict[str, Envelope]:
    """One envelope of each kind, from real calls."""
    found: dict[str, Envelope] = {"navigate": session.navigate(demo.url)}
    found["evaluate (a JSON result)"] = session.evaluate("({title: document.title, sizes: [1, 2, 3]})")
    found["snapshot (a small page)"] = session.snapshot()
    found["tabs"] = session.tabs()
    found["frames"] = session.frames()
    found["screenshot (png)"] = session.screenshot()
    found["screenshot (jpeg)"] = session.screenshot(format="jpeg")
    found["error (element not found)"] = session.click("e99999")
    found["error (invalid params)"] = session.navigate("example.com")
    ok(session.navigate(demo.url_for("table.html")))
    found["snapshot (2,000 table rows)"] = session.snapshot()
    ok(session.navigate(demo.url_for("evidence.html")))
    ok(session.evaluate("Promise.all(Array.from({length: 300}, (_, i) => fetch('/api/items?i=' + i))).then(() => 1)"))
    ok(session.evaluate("for (let i = 0; i < 300; i++) (i % 7 ? console.log : console.error)('message ' + i); 1"))
    found["network (300 requests)"] = session.network(limit=500)
    found["console (300 messages)"] = session.console(limit=500)
    for name, envelope in found.items():
        if name.startswith("error"):
            error(envelope, "element_not_found" if "found" in name else "invalid_params")
        else:
            ok(envelope)
    assert found.keys() == VIEWS.keys()
    return found


def text_form(envelope: Envelope) -> int:
    """The size of the envelope's text form: its text, plus any image as base64."""
    image = (envelope.data or {}).get("image") if envelope.ok else None
    extra = len(base64.b64encode(image)) if isinstance(image, bytes) else 0
    return len(render_text(envelope).encode()) + extra


def bundle_bytes(bundle: dict[str, Any]) -> int:
    return sum(len((value if isinstance(value, str) else json.dumps(value)).encode()) for value in bundle.values())


def sizes(bundle: dict[str, Any]) -> dict[str, int]:
    return {mime: bundle_bytes({mime: value}) for mime, value in bundle.items()}


@pytest.mark.parametrize("name", list(VIEWS))
def test_every_kind_of_cell_holds_at_most_one_and_a_half_times_its_text_form(
    real: dict[str, Envelope], name: str
) -> None:
    envelope = real[name]
    data, metadata = mimebundle(envelope)
    assert bundle_bytes(data) <= CELL_BUDGET * text_form(envelope), (name, sizes(data), text_form(envelope))
    assert set(data) == VIEWS[name], (name, sizes(data), text_form(envelope))
    text = render_text(envelope)
    if "text/html" in data:  # the HTML holds everything; text/plain its first lines
        assert data["text/plain"].splitlines()[:TEXT_HEAD_LINES] == text.splitlines()[:TEXT_HEAD_LINES]
        assert data["text/html"] == render_html(envelope)
    else:  # the text is the view: whole
        assert data["text/plain"] == text
    image = (envelope.data or {}).get("image")
    if image is not None:  # once, as itself
        mime = envelope.data["mime_type"]  # type: ignore[index]
        assert data[mime] == base64.b64encode(image).decode() and metadata == {mime: {"width": 800}}
    # A full cell keeps every view: the HTML (a screenshot's only when asked for) and the JSON.
    full, _ = mimebundle(envelope, full=True)
    assert set(full) == VIEWS[name] | {ENVELOPE_MIME} | (set() if image is not None else {"text/html"})
    if len(envelope.to_json()) <= JSON_FULL_BYTES:
        assert full[ENVELOPE_MIME] == json.loads(envelope.to_json())


def test_the_cells_of_a_log_and_a_listing_render_their_first_rows_and_fold_the_rest(
    real: dict[str, Envelope],
) -> None:
    console = real["console (300 messages)"]
    entries = console.data["entries"]  # type: ignore[index]
    markup = mimebundle(console)[0]["text/html"]
    shown, rest = markup.split('<details style="margin:4px 0">', 1)
    # The console's first rows are its text lines, errors in red: they cost what the text does.
    lines = render_text(console).splitlines()[2 : 2 + HTML_LIST_ROWS]
    alert = f'<span style="color:{ERROR_COLOUR}">'
    for line, entry in zip(lines, entries, strict=False):
        escaped = line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        assert (alert + escaped + "</span>" if entry["level"] == "error" else escaped) in shown
    assert '"message 0"' in shown and f"{alert}- #" in shown and "<table" not in shown
    assert f"{len(entries) - HTML_LIST_ROWS:,} more items" in rest and '"message 299"' in rest
    network = real["network (300 requests)"]
    markup = mimebundle(network)[0]["text/html"]
    table = markup.split('<details style="margin:4px 0">', 1)[0]
    assert table.count("<tr") == HTML_LIST_ROWS + 1  # the header, then the first rows
    count = len(network.data["entries"])  # type: ignore[index]
    assert f"{count - HTML_LIST_ROWS:,} more items" in markup and "/api/items?i=299" in markup


# --------------------------------------------------------------------------- built by hand


def big_snapshot(rows: int = 2000) -> str:
    lines = ["- generic [ref=e1]:", "  - table [ref=e2]:", "    - rowgroup [ref=e3]:"]
    ref = 4
    for row in range(rows):
        lines += [
            f'      - row "Row {row} Edit {row}" [ref=e{ref}]:',
            f'        - cell "Row {row}" [ref=e{ref + 1}]:',
            f'          - link "Row {row}" [ref=e{ref + 2}] [cursor=pointer]:',
            f'            - /url: "#r{row}"',
            f'        - cell "Edit {row}" [ref=e{ref + 3}]:',
            f'          - button "Edit {row}" [ref=e{ref + 4}]',
            f"        - cell [ref=e{ref + 5}]:",
            f'          - textbox "Note {row}" [ref=e{ref + 6}]: v{row}',
        ]
        ref += 7
    return "\n".join(lines)


def snapshot_envelope(rows: int) -> Envelope:
    data = {"url": "http://127.0.0.1:8000/table.html", "title": "Big table", "snapshot": big_snapshot(rows)}
    return Envelope("success", "default", make_operation(tool="browser_snapshot"), data=data)


def test_a_big_snapshot_travels_once_with_its_first_screenfuls_rendered() -> None:
    envelope = snapshot_envelope(2000)
    snapshot = envelope.data["snapshot"]  # type: ignore[index]
    lines = snapshot.splitlines()
    data, _ = mimebundle(envelope)
    markup = data["text/html"]
    # The first screenfuls are a tree; the rest is plain text that unfolds (no script: static export).
    assert "<script" not in markup
    head, rest = markup.split('<details style="margin:4px 0">', 1)
    assert "<b>textbox</b>" in head and head.count("<details open>") > 10
    assert f"{len(lines) - HTML_TREE_LINES:,} more lines" in rest
    assert lines[-1] in rest and lines[HTML_TREE_LINES] in rest and lines[HTML_TREE_LINES - 1] not in rest
    # text/plain: the first lines and how many follow.
    plain = data["text/plain"].splitlines()
    assert len(plain) == TEXT_HEAD_LINES + 1 and plain[-1].startswith(
        f"... {len(render_text(envelope).splitlines()) - TEXT_HEAD_LINES:,} more lines"
    )
    assert ENVELOPE_MIME not in data
    # A full cell's JSON: everything but the snapshot, which the views hold.
    envelope_json = mimebundle(envelope, full=True)[0][ENVELOPE_MIME]
    assert "snapshot" not in envelope_json["data"] and envelope_json["data"]["title"] == "Big table"
    assert envelope_json["omitted"] == {"snapshot": len(json.dumps(snapshot, ensure_ascii=False))}
    assert snapshot not in json.dumps(envelope_json)


def test_a_small_result_is_its_text_and_a_full_cell_keeps_every_view() -> None:
    small = snapshot_envelope(3)
    data, metadata = mimebundle(small)
    assert data == {"text/plain": render_text(small)} and metadata == {}
    full, _ = mimebundle(small, full=True)
    assert full["text/plain"] == render_text(small) and full[ENVELOPE_MIME] == json.loads(small.to_json())
    assert full["text/html"] == render_html(small) and "more lines" not in full["text/html"]
    # A view asked for travels whatever its cost.
    assert mimebundle(small, include=["text/html"])[0]["text/html"] == render_html(small)
