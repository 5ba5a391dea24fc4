"""Notebook cells stay lean: the whole mime bundle of an envelope is at most 1.5x its text form.

The text form is `render_text(envelope)` (what ``str()`` and an MCP client show); for a result
carrying an image it is that text plus the image as base64 (how an image travels in a notebook;
the image is the result, so it counts as its text form, and travels once, as itself).

Big results are held to 1.5x exactly: each part travels once. A small one travels whole in all
three forms, text/plain (the text form itself), the envelope JSON (whole up to `JSON_FULL_BYTES`:
a kernel's readers take it) and the HTML, so 1.5x its text alone is out of reach: the JSON's
operation record alone is 3.6x a navigation's text. It is held to 1.5x its text plus its JSON,
plus `FRAME_BYTES` once (the HTML's frame, header and folded operation) and `TREE_LINE_BYTES`
per snapshot line its HTML renders as a tree: no per-cell stylesheet, no cost that does not
grow with what the cell shows. Bytes are deterministic: envelopes are built by hand, as the
tools build them.
"""

from __future__ import annotations

import base64
import io
import json
from typing import Any

import pytest
from PIL import Image

from tests.helpers import make_operation
from webmcp_nb import Envelope
from webmcp_nb.core.render import (
    ENVELOPE_MIME,
    HTML_LIST_ROWS,
    HTML_TREE_LINES,
    JSON_FULL_BYTES,
    TEXT_HEAD_LINES,
    mimebundle,
    render_text,
)

BUDGET = 1.5
FRAME_BYTES = 1536  # measured: 0.9 KB (a navigation's HTML, whole)
TREE_LINE_BYTES = 56  # measured: 46 (a line's fold or element, its indentation, role in bold and ref as code)
BIG = ("big snapshot", "network list", "console", "screenshot")


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


def network_entries(count: int = 600) -> list[dict[str, Any]]:
    return [
        {
            "seq": index,
            "request_id": f"r{index}",
            "method": "GET",
            "url": f"http://127.0.0.1:8000/api/items?page={index}",
            "resource_type": "fetch",
            "status": 200 if index % 9 else 404,
            "status_text": "OK",
            "state": "finished",
            "timing": {"start_ms": index * 3.0, "response_end_ms": index * 3.0 + 12.5},
            "encoded_size": 1200 + index,
            "mime_type": "application/json",
            "request_headers": {"accept": "*/*", "user-agent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/156"},
            "response_headers": {"content-type": "application/json", "content-length": str(1200 + index)},
            "at": "2026-11-30T00:00:00.000+00:00",
            "page_id": "00000000-0000-4000-8000-000000000003",
            "frame_id": "00000000-0000-4000-8000-000000000004",
        }
        for index in range(count)
    ]


def console_entries(count: int = 600) -> list[dict[str, Any]]:
    return [
        {
            "seq": index,
            "level": "error" if index % 7 == 0 else "log",
            "text": f"message {index}: the item list refreshed with {index * 3} rows",
            "url": "http://127.0.0.1:8000/app.js",
            "line": 10 + index,
            "column": 4,
            "at": "2026-11-30T00:00:00.000+00:00",
            "page_id": "00000000-0000-4000-8000-000000000003",
            "frame_id": "00000000-0000-4000-8000-000000000004",
        }
        for index in range(count)
    ]


def png(width: int, height: int) -> bytes:
    image = Image.new("RGB", (width, height))
    image.putdata([((x * 7) % 256, (y * 5) % 256, (x * y) % 256) for y in range(height) for x in range(width)])
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def success(tool: str, data: dict[str, Any]) -> Envelope:
    return Envelope("success", "default", make_operation(tool=tool), data=data)


def envelopes() -> dict[str, Envelope]:
    image = png(320, 200)
    page = {"url": "http://127.0.0.1:8000/table.html", "title": "Big table"}
    return {
        "big snapshot": success("browser_snapshot", {**page, "snapshot": big_snapshot()}),
        "small snapshot": success("browser_snapshot", {**page, "snapshot": big_snapshot(3)}),
        "network list": success("browser_network", {"entries": network_entries(), "total": 600, "dropped": 0}),
        "console": success("browser_console", {"entries": console_entries(), "total": 600, "dropped": 0}),
        "screenshot": success(
            "browser_screenshot",
            {
                "image": image,
                "mime_type": "image/png",
                "width": 320,
                "height": 200,
                "source_width": 320,
                "source_height": 200,
                "scaled": False,
                "url": page["url"],
            },
        ),
        "error": Envelope(
            "error",
            "default",
            make_operation(tool="browser_click", outcome="not_started", retry="after_correction"),
            error_type="stale_ref",
            message="Ref e12 is from an earlier snapshot and no longer matches an element on the page.",
        ),
        "navigate": success("browser_navigate", {**page, "status": 200}),
    }


def text_form(envelope: Envelope) -> int:
    """The size of the envelope's text form: its text, plus any image as base64."""
    image = (envelope.data or {}).get("image") if envelope.ok else None
    extra = len(base64.b64encode(image)) if isinstance(image, bytes) else 0
    return len(render_text(envelope).encode()) + extra


def bundle_bytes(bundle: dict[str, Any]) -> int:
    return sum(len((value if isinstance(value, str) else json.dumps(value)).encode()) for value in bundle.values())


@pytest.mark.parametrize("name", BIG)
def test_a_big_cell_holds_at_most_one_and_a_half_times_the_text_form(name: str) -> None:
    envelope = envelopes()[name]
    data, _ = mimebundle(envelope)
    assert bundle_bytes(data) <= BUDGET * text_form(envelope), (
        name,
        {mime: bundle_bytes({mime: value}) for mime, value in data.items()},
        text_form(envelope),
    )


@pytest.mark.parametrize("name", [name for name in envelopes() if name not in BIG])
def test_a_small_cell_costs_its_forms_and_a_small_frame(name: str) -> None:
    envelope = envelopes()[name]
    data, _ = mimebundle(envelope)
    assert len(envelope.to_json()) <= JSON_FULL_BYTES and data[ENVELOPE_MIME] == json.loads(envelope.to_json())
    tree_lines = len((envelope.data or {}).get("snapshot", "").splitlines())
    budget = BUDGET * text_form(envelope) + bundle_bytes({ENVELOPE_MIME: data[ENVELOPE_MIME]})
    assert bundle_bytes(data) <= budget + FRAME_BYTES + TREE_LINE_BYTES * tree_lines, (
        name,
        {mime: bundle_bytes({mime: value}) for mime, value in data.items()},
        text_form(envelope),
    )
    # Before the lean markup, the frame alone (styles on every element) was ~3.3 KB.
    assert bundle_bytes({"text/html": data["text/html"]}) < 3 * text_form(envelope) + FRAME_BYTES


def test_a_big_snapshot_travels_once_with_its_first_screenfuls_rendered() -> None:
    envelope = envelopes()["big snapshot"]
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
    # text/plain: the first lines and how many follow; the JSON: everything but the snapshot.
    plain = data["text/plain"].splitlines()
    assert len(plain) == TEXT_HEAD_LINES + 1 and plain[-1].startswith(
        f"... {len(render_text(envelope).splitlines()) - TEXT_HEAD_LINES:,} more lines"
    )
    envelope_json = data[ENVELOPE_MIME]
    assert "snapshot" not in envelope_json["data"] and envelope_json["data"]["title"] == "Big table"
    assert envelope_json["omitted"] == {"snapshot": len(json.dumps(snapshot, ensure_ascii=False))}
    assert snapshot not in json.dumps(envelope_json)


def test_a_long_list_renders_its_first_rows_and_folds_the_rest() -> None:
    envelope = envelopes()["network list"]
    data, _ = mimebundle(envelope)
    markup = data["text/html"]
    table = markup.split('<details style="margin:4px 0">', 1)[0]
    assert table.count("<tr") == HTML_LIST_ROWS + 1  # the header, then the first rows
    assert f"{600 - HTML_LIST_ROWS:,} more items" in markup
    assert "api/items?page=599" in markup.split("more items", 1)[1]


def test_small_results_and_screenshots_keep_every_view() -> None:
    small = envelopes()["small snapshot"]
    data, _ = mimebundle(small)
    assert data["text/plain"] == render_text(small) and data[ENVELOPE_MIME] == json.loads(small.to_json())
    assert "more lines" not in data["text/html"]
    shot = envelopes()["screenshot"]
    data, metadata = mimebundle(shot)
    encoded = base64.b64encode(shot.data["image"]).decode()  # type: ignore[index]
    assert set(data) == {"text/plain", "image/png", ENVELOPE_MIME}  # the image once, as itself
    assert data["image/png"] == encoded and metadata == {"image/png": {"width": 320}}
    assert "image" not in data[ENVELOPE_MIME]["data"]
    assert encoded in mimebundle(shot, include=["text/html"])[0]["text/html"]
