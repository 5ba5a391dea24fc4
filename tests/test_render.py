"""The shared result renderer: plain text, static HTML and mime bundles.

Realistic envelopes come from real Chromium (the `session` fixture); hand-built
ones cover cases a page cannot easily produce.
"""

from __future__ import annotations

import base64
import html
import io
import json
import subprocess
import sys
import urllib.parse
from html.parser import HTMLParser
from typing import ClassVar

from PIL import Image

from tests import helpers
from tests.helpers import error, ok, ref_for
from webmcp_nb import Envelope
from webmcp_nb.core.call.envelope import RETRY_ADVICE, Operation
from webmcp_nb.core.call.registry import REGISTRY
from webmcp_nb.core.render.renderer import ENVELOPE_MIME, ToolTable, mimebundle, render_html, render_text

HOSTILE_TITLE = "<img src=x onerror=alert(1)>"
HOSTILE_BODY = "<script>alert(2)</script>"


def make_operation(**changes: object) -> Operation:
    defaults = {"tool": "browser_click", "duration_ms": 12.34, "finished_at": "2026-11-30T00:00:00.012+00:00"}
    return helpers.make_operation(**{**defaults, **changes})


class TagChecker(HTMLParser):
    """Fails on a <script> and on tags that do not nest properly."""

    VOID: ClassVar[frozenset[str]] = frozenset({"img", "br", "hr", "meta", "input", "link", "wbr"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        assert tag != "script"
        assert not any(name.startswith("on") for name, _ in attrs), attrs
        self.tags.append(tag)
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, (tag, self.stack[-5:])
        self.stack.pop()


def check_html(markup: str) -> TagChecker:
    assert "<script" not in markup.lower()
    checker = TagChecker()
    checker.feed(markup)
    checker.close()
    assert checker.stack == [], checker.stack
    return checker


def header(envelope: Envelope) -> str:
    where = f"instance {envelope.instance}, " if envelope.instance else ""
    outcome = "success" if envelope.ok else f"error {envelope.error_type}"
    return f"{envelope.tool}: {outcome} ({where}{envelope.operation.duration_ms:.1f} ms)"


# --------------------------------------------------------------------------- text


def test_snapshot_text_carries_url_title_and_the_yaml_verbatim(session, demo) -> None:
    ok(session.navigate(demo.url))
    envelope = session.snapshot()
    data = ok(envelope)
    text = render_text(envelope)
    assert str(envelope) == text
    lines = text.splitlines()
    assert lines[0] == header(envelope)
    assert lines[1] == f"url: {data['url']}"
    assert lines[2] == "title: Demo Shop"
    assert text.endswith(data["snapshot"])
    banana = ref_for(data["snapshot"], "Add Banana")
    assert f'button "Add Banana" [ref={banana}]' in text
    # repr stays the short developer form.
    assert repr(envelope).startswith("<Envelope success browser_snapshot")


def test_error_text_carries_type_message_retry_advice_and_operation(session, demo) -> None:
    ok(session.navigate(demo.url))
    envelope = session.click("e99999")
    message = error(envelope, "element_not_found", "not_started", "after_correction")
    lines = str(envelope).splitlines()
    assert lines[0] == header(envelope)
    assert lines[0].startswith("browser_click: error element_not_found (instance default, ")
    assert lines[1] == message
    assert lines[2] == f"outcome: not_started; retry: after_correction - {RETRY_ADVICE['after_correction']}"
    assert lines[3] == f"operation: {envelope.operation.id}"

    # invalid_params has no instance: the header says only the duration.
    bad = session.call("browser_click", bogus=1)
    error(bad, "invalid_params")
    assert str(bad).splitlines()[0] == f"browser_click: error invalid_params ({bad.operation.duration_ms:.1f} ms)"
    assert bad.message in str(bad)


def test_error_text_for_an_action_that_may_have_happened() -> None:
    envelope = Envelope(
        "error",
        "work",
        make_operation(outcome="unknown", retry="inspect_state", artifacts=("/tmp/a.png",)),
        error_type="operation_timeout",
        message="browser_click did not finish within 60 s.",
    )
    assert render_text(envelope).splitlines() == [
        "browser_click: error operation_timeout (instance work, 12.3 ms)",
        "browser_click did not finish within 60 s.",
        f"outcome: unknown; retry: inspect_state - {RETRY_ADVICE['inspect_state']}",
        "operation: 00000000-0000-4000-8000-000000000001",
        "artifact: /tmp/a.png",
    ]


def test_a_modal_gets_a_prominent_line(session, demo) -> None:
    ok(session.navigate(demo.url + "dialog.html"))
    snapshot = ok(session.snapshot())["snapshot"]
    envelope = session.click(ref_for(snapshot, "Show alert"))
    try:
        data = ok(envelope)
        assert data["modal_state"]["kind"] == "dialog"
        lines = str(envelope).splitlines()
        expected = 'MODAL: alert dialog "Hello from alert" - resolve with browser_handle_dialog'
        assert lines[1] == expected
        assert "modal_state" not in str(envelope)
        markup = render_html(envelope)
        check_html(markup)
        assert expected.replace('"', "&quot;") in markup
    finally:
        ok(session.handle_dialog(True))


def test_modal_lines_for_prompt_and_file_chooser() -> None:
    prompt = Envelope(
        "success",
        "default",
        make_operation(),
        data={
            "url": "http://x/",
            "modal_state": {
                "kind": "dialog",
                "resolved_by": "browser_handle_dialog",
                "dialog_type": "prompt",
                "message": "Your name?",
                "default_value": "Ada",
            },
        },
    )
    assert render_text(prompt).splitlines()[1] == (
        'MODAL: prompt dialog "Your name?" (default "Ada") - resolve with browser_handle_dialog'
    )
    chooser = Envelope(
        "success",
        "default",
        make_operation(),
        data={
            "url": "http://x/",
            "modal_state": {"kind": "file_chooser", "resolved_by": "browser_file_upload", "multiple": True},
        },
    )
    assert (
        render_text(chooser).splitlines()[1]
        == "MODAL: file chooser (multiple files) - resolve with browser_file_upload"
    )


def test_generic_data_as_key_value_lines() -> None:
    envelope = Envelope(
        "success",
        "default",
        make_operation(tool="browser_evaluate"),
        data={
            "url": "http://x/",
            "modal_state": None,
            "result": None,
            "nested": {"a": [1, "<b>"]},
            "multi": "two\nlines",
            "flag": True,
            "skipped": None,
        },
    )
    assert render_text(envelope).splitlines() == [
        "browser_evaluate: success (instance default, 12.3 ms)",
        "url: http://x/",
        "result: null",
        'nested: {"a": [1, "<b>"]}',
        'multi: "two\\nlines"',
        "flag: true",
    ]
    markup = render_html(envelope)
    check_html(markup)
    assert "<dl" in markup and "&lt;b&gt;" in markup and "<b>" not in markup
    assert ">two\nlines</pre>" in markup


def test_tabs_frames_and_instances_one_line_each(session, demo) -> None:
    ok(session.navigate(demo.url + "frames.html"))
    tabs = session.tabs()
    tab = next(t for t in ok(tabs)["tabs"] if t["current"])
    assert f'* {tab["page_id"]} "Frames" {tab["url"]}' in str(tabs).splitlines()

    frames = session.frames()
    listed = ok(frames)["frames"]
    assert len(listed) >= 3
    lines = str(frames).splitlines()
    assert lines[1] == f"frames: {len(listed)}"
    assert lines[2] == f"- {listed[0]['frame_id']} main {listed[0]['url']}"
    for frame in listed[1:]:
        assert any(
            line.startswith(f"- {frame['frame_id']} name ") and frame["parent_frame_id"] in line for line in lines
        ), lines

    instances = session.list_instances()
    data = ok(instances)
    text = str(instances)
    current = next(i for i in data["instances"] if i["name"] == data["current_instance"])
    assert f"* {current['name']}: {current['state']}, chromium" in text
    assert current["instance_id"] in text

    for envelope, ids in (
        (tabs, [tab["page_id"]]),
        (frames, [f["frame_id"] for f in listed]),
        (instances, [current["instance_id"]]),
    ):
        markup = render_html(envelope)
        check_html(markup)
        assert "<table" in markup
        assert all(identifier in markup for identifier in ids)


def test_downloads_one_line_each() -> None:
    done = {
        "download_id": "d1",
        "page_id": "p1",
        "url": "blob:http://x/1",
        "suggested_filename": "report.csv",
        "started_at": "2026-11-30T08:00:00.000+00:00",
        "state": "completed",
        "path": "/tmp/a/report.csv",
        "size_bytes": 31,
        "error": None,
    }
    failed = {
        **done,
        "download_id": "d2",
        "suggested_filename": "<b>.bin",
        "state": "failed",
        "path": None,
        "size_bytes": None,
        "error": "network failed",
    }
    envelope = Envelope(
        "success", "default", make_operation(tool="browser_downloads"), data={"downloads": [done, failed]}
    )
    lines = render_text(envelope).splitlines()
    assert lines[1:3] == [
        "downloads: 2",
        (
            '- d1 completed "report.csv" -> /tmp/a/report.csv (31 bytes); '
            "page_id p1, url blob:http://x/1, started_at 2026-11-30T08:00:00.000+00:00"
        ),
    ]
    assert lines[3].startswith('- d2 failed "<b>.bin"; ') and "error network failed" in lines[3]
    markup = render_html(envelope)
    check_html(markup)
    assert "<table" in markup and "/tmp/a/report.csv" in markup and "&lt;b&gt;.bin" in markup
    assert "network failed" in markup


# --------------------------------------------------------------------------- screenshots


def test_screenshot_bundle_text_and_width_metadata(session, demo) -> None:
    ok(session.navigate(demo.url))
    envelope = session.screenshot()
    data = ok(envelope)
    encoded = base64.b64encode(data["image"]).decode()

    text = render_text(envelope)
    assert (
        f"image: image/png {data['width']}x{data['height']} "
        f"(source {data['source_width']}x{data['source_height']}), {len(data['image']):,} bytes"
    ) in text.splitlines()
    assert encoded[:40] not in text and len(text) < 1000

    # The image travels once: as image/png (the HTML, which would repeat it, only when asked for).
    bundle, metadata = envelope._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "image/png"}
    assert metadata == {"image/png": {"width": min(data["width"], 800)}}
    assert bundle["text/plain"] == text
    with Image.open(io.BytesIO(base64.b64decode(bundle["image/png"]))) as picture:
        assert picture.format == "PNG"
        assert picture.size == (data["width"], data["height"])
    # A full cell adds the envelope JSON, without the image it shows as itself.
    full = mimebundle(envelope, full=True)[0]
    assert set(full) == {"text/plain", ENVELOPE_MIME, "image/png"} and full["image/png"] == bundle["image/png"]
    expected = json.loads(envelope.to_json())
    del expected["data"]["image"]
    assert full[ENVELOPE_MIME] == {**expected, "omitted": {"image": len(encoded) + 2}}
    markup = mimebundle(envelope, include=["text/html"])[0]["text/html"]
    check_html(markup)
    assert f'<img src="data:image/png;base64,{encoded}"' in markup
    assert "max-width: 100%" in markup

    assert mimebundle(envelope, screenshot_width=None)[1] == {"image/png": {"width": data["width"]}}
    assert mimebundle(envelope, screenshot_width=300)[1] == {"image/png": {"width": 300}}
    assert mimebundle(envelope, screenshot_width=10_000)[1] == {"image/png": {"width": data["width"]}}


def test_small_jpeg_screenshot_keeps_its_own_width(session, demo) -> None:
    ok(session.navigate(demo.url))
    ref = ref_for(ok(session.snapshot())["snapshot"], "Add Banana")
    envelope = session.screenshot(format="jpeg", ref=ref)
    data = ok(envelope)
    assert data["width"] < 800
    bundle, metadata = mimebundle(envelope)
    assert "image/png" not in bundle
    assert metadata == {"image/jpeg": {"width": data["width"]}}
    with Image.open(io.BytesIO(base64.b64decode(bundle["image/jpeg"]))) as picture:
        assert picture.format == "JPEG" and picture.size == (data["width"], data["height"])
    assert "data:image/jpeg;base64," in render_html(envelope)
    assert f"image: image/jpeg {data['width']}x{data['height']}" in bundle["text/plain"]


# --------------------------------------------------------------------------- HTML


def test_hostile_page_text_is_escaped(session) -> None:
    # A <title> holds text only; in the body the markup is written as entities, so it is text too.
    page = f"<title>{HOSTILE_TITLE}</title><h1>{html.escape(HOSTILE_BODY)}</h1><button>{html.escape(HOSTILE_TITLE)}</button>"
    navigated = session.navigate("data:text/html," + urllib.parse.quote(page))
    assert ok(navigated)["title"] == HOSTILE_TITLE
    snapshot = session.snapshot()
    assert HOSTILE_BODY in ok(snapshot)["snapshot"]
    tabs = session.tabs()
    for envelope in (navigated, snapshot, tabs):
        for markup in (render_html(envelope), mimebundle(envelope, full=True)[0]["text/html"]):
            check_html(markup)
            assert "<img src=x" not in markup
            assert "&lt;img src=x onerror=alert(1)&gt;" in markup
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in render_html(snapshot)
    # The plain text is plain: the title verbatim.
    assert f"title: {HOSTILE_TITLE}" in str(navigated)


def test_snapshot_html_is_a_collapsible_tree_with_ref_chips(session, demo) -> None:
    ok(session.navigate(demo.url))
    envelope = session.snapshot()
    yaml = ok(envelope)["snapshot"]
    markup = render_html(envelope)
    checker = check_html(markup)
    lines = [line for line in yaml.splitlines() if line.strip()]
    indents = [len(line) - len(line.lstrip()) for line in lines]
    parents = sum(1 for i in range(len(lines) - 1) if indents[i + 1] > indents[i])
    assert markup.count("<details open>") == parents
    assert checker.tags.count("details") == parents + 1  # + the folded operation
    assert checker.tags.count("summary") == parents + 1
    refs = [ref_for(line, "[ref=") for line in lines if "[ref=" in line]
    assert len(refs) > 20
    for ref in refs:
        assert f">{ref}</code>" in markup
    assert "[ref=" not in markup
    assert '"Add Banana"' in markup
    # The operation is folded away (closed) and complete.
    folded = markup[markup.rindex("<details") :]
    assert folded.startswith("<details style=") and " open" not in folded.split(">", 1)[0]
    assert envelope.operation.id in folded and envelope.operation.page_id in folded
    assert '<strong style="color:#1a7f37">success</strong>' in markup


def test_error_html_has_badge_type_message_and_advice(session, demo) -> None:
    ok(session.navigate(demo.url))
    envelope = session.click("e99999")
    error(envelope, "element_not_found")
    markup = render_html(envelope)
    check_html(markup)
    assert '<strong style="color:#cf222e">error · element_not_found</strong>' in markup
    assert "<div><strong>element_not_found</strong></div>" in markup
    assert (envelope.message or "") in markup  # nothing to escape in this message
    assert "retry: after_correction" in markup and RETRY_ADVICE["after_correction"] in markup
    assert "outcome: not_started" in markup
    assert envelope.operation.id in markup

    hostile = Envelope(
        "error",
        "x",
        make_operation(outcome="not_started", retry="after_correction"),
        error_type="invalid_params",
        message=f"bad {HOSTILE_TITLE}",
    )
    markup = render_html(hostile)
    check_html(markup)
    assert "bad &lt;img src=x onerror=alert(1)&gt;" in markup


# --------------------------------------------------------------------------- bundles


def test_include_and_exclude() -> None:
    envelope = Envelope(
        "success",
        "default",
        make_operation(tool="browser_screenshot"),
        data={
            "image": b"\x89PNG fake",
            "mime_type": "image/png",
            "width": 1000,
            "height": 500,
            "source_width": 2000,
            "source_height": 1000,
            "scaled": True,
            "url": "http://x/",
        },
    )
    everything, metadata = envelope._repr_mimebundle_()
    assert set(everything) == {"text/plain", "image/png"}
    assert mimebundle(envelope, full=True)[0].keys() == {"text/plain", ENVELOPE_MIME, "image/png"}
    assert metadata == {"image/png": {"width": 800}}
    assert "image: image/png 1000x500 (source 2000x1000), 9 bytes" in everything["text/plain"]

    data, metadata = envelope._repr_mimebundle_(include={"text/html"})
    assert set(data) == {"text/plain", "text/html"} and metadata == {}
    data, metadata = envelope._repr_mimebundle_(exclude={"image/png", "text/plain", ENVELOPE_MIME})
    assert set(data) == {"text/plain"} and metadata == {}  # without its image, a small result: its text
    data, metadata = mimebundle(envelope, full=True, exclude={"image/png", ENVELOPE_MIME})
    assert set(data) == {"text/plain", "text/html"} and metadata == {}  # full: the HTML carries the image
    assert 'src="data:image/png;base64,' in data["text/html"]
    data, metadata = mimebundle(envelope, include=["image/png", ENVELOPE_MIME])
    assert set(data) == {"text/plain", "image/png", ENVELOPE_MIME}
    assert metadata == {"image/png": {"width": 800}}
    data, _ = mimebundle(envelope, include=["text/html"], exclude=["text/html"])
    assert set(data) == {"text/plain"}

    # An error has no image, whatever is asked.
    failed = Envelope(
        "error",
        None,
        make_operation(outcome="not_started", retry="after_correction"),
        error_type="invalid_params",
        message="bad",
    )
    assert set(mimebundle(failed)[0]) == {"text/plain"}  # a small result shows as its text
    assert set(mimebundle(failed, full=True)[0]) == {"text/plain", "text/html", ENVELOPE_MIME}
    assert mimebundle(failed, full=True)[0][ENVELOPE_MIME] == json.loads(failed.to_json())
    assert set(mimebundle(failed, full=True, exclude=[ENVELOPE_MIME])[0]) == {"text/plain", "text/html"}


def test_ipython_display_uses_the_bundle() -> None:
    from IPython.core.formatters import DisplayFormatter

    envelope = Envelope("success", "default", make_operation(), data={"url": "http://x/"})
    data, metadata = DisplayFormatter().format(envelope)
    assert data == mimebundle(envelope)[0] and metadata == {}
    assert set(data) == {"text/plain"}
    data, _ = DisplayFormatter().format(envelope, include={"text/plain", "text/html", ENVELOPE_MIME})
    assert set(data) == {"text/plain", "text/html", ENVELOPE_MIME}  # views asked for travel
    data, _ = DisplayFormatter().format(envelope, exclude={"text/html"})
    assert set(data) == {"text/plain"}


def test_rendering_imports_no_ipython() -> None:
    code = (
        "import sys\n"
        "from webmcp_nb.core.call.envelope import Envelope, Operation\n"
        "op = Operation('i', 't', None, None, None, 'a', 'b', 1.0, 'completed', 'not_needed')\n"
        "e = Envelope('success', None, op, data={'k': 1})\n"
        "str(e); e._repr_mimebundle_()\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'IPython', 'ipykernel', 'ipywidgets', 'mcp'}))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


# --------------------------------------------------------------------------- tool table


def test_tool_table_lists_every_registry_tool(session) -> None:
    table = ToolTable(session.tools)
    assert len(table) == len(REGISTRY) > 20
    text = str(table)
    lines = text.splitlines()
    assert lines[0].split() == ["name", "title", "group", "flags", "description"]
    for spec in REGISTRY:
        row = next(line for line in lines if line.startswith(spec.name + " "))
        assert spec.title in row and spec.description in row
        flags = {"ro": spec.read_only, "destr": spec.destructive, "idem": spec.idempotent, "open": spec.open_world}
        for flag, on in flags.items():
            assert (f" {flag} " in row.replace(spec.description, "")) == on, (flag, row)
    assert lines[-1].startswith(f"{len(REGISTRY)} tools; flags: ro = read-only")

    data, metadata = table._repr_mimebundle_()
    assert set(data) == {"text/plain", "text/html"} and metadata == {}
    assert data["text/plain"] == text
    markup = data["text/html"]
    check_html(markup)
    assert markup.count("<tr>") == len(REGISTRY) + 1
    for spec in REGISTRY:
        assert f">{spec.name}</code>" in markup
    assert "&lt;select&gt;" in markup  # browser_select_option's description, escaped
    assert set(table._repr_mimebundle_(exclude={"text/html"})[0]) == {"text/plain"}


# --------------------------------------------------------------------------- static export


def test_outputs_stay_readable_in_nbconvert_html(session, demo) -> None:
    """A notebook of lean cells exports to static HTML that shows every result: a big tree as a
    tree, a small result and an error as their text, a screenshot as its image."""
    import nbconvert
    import nbformat

    ok(session.navigate(demo.url_for("table.html")))
    big = session.snapshot()
    ok(session.navigate(demo.url))
    small, screenshot, failed = session.snapshot(), session.screenshot(), session.click("e99999")
    ok(big), ok(small), ok(screenshot), error(failed, "element_not_found")
    notebook = nbformat.v4.new_notebook()
    for envelope in (big, small, screenshot, failed):
        data, metadata = envelope._repr_mimebundle_()
        cell = nbformat.v4.new_code_cell("s.snapshot()", execution_count=1)
        cell.outputs = [nbformat.v4.new_output("display_data", data=data, metadata=metadata)]
        notebook.cells.append(cell)
    nbformat.validate(notebook)
    assert "widgets" not in notebook.metadata

    body, _ = nbconvert.HTMLExporter().from_notebook_node(notebook)
    # nbconvert re-serialises the HTML a little; the big tree survives whole (it writes <details open="">).
    tree = render_html(big)
    assert body.count("<details open") == tree.count("<details open") > 10
    assert body.count("</details>") == tree.count("</details>")  # the others have no HTML
    assert f">{ref_for(big.data['snapshot'], 'Back to index')}</code>" in body
    # The small snapshot and the error read as their text, whole.
    for envelope in (small, failed):
        for line in render_text(envelope).splitlines():
            assert html.escape(line, quote=False) in body, line
    assert "<img" in body
    assert f'src="data:image/png;base64,{base64.b64encode(screenshot.data["image"]).decode()}"' in body


def test_a_listing_shows_its_table_first_and_its_paging_on_one_line(session, demo) -> None:
    ok(session.navigate(demo.url + "frames.html"))
    network = session.network()
    data = ok(network)
    lines = str(network).splitlines()
    entries = data["entries"]
    assert lines[1] == f"network: {len(entries)}"
    paging = next(line for line in lines if line.startswith("has_more "))
    assert lines.index(paging) > 1 + len(entries)  # below every entry's line
    assert paging == (
        f"has_more {'true' if data['has_more'] else 'false'} · next_cursor {data['next_cursor']} · "
        f"retained_count {data['retained_count']} · dropped_count {data['dropped_count']} · "
        f"retention_lost {'true' if data['retention_lost'] else 'false'} · "
        f"secrets_revealed {'true' if data['secrets_revealed'] else 'false'}"
    ), lines
    assert not any(line.startswith(("next_cursor:", "has_more:")) for line in lines)
    markup = render_html(network)
    check_html(markup)
    assert "<dt>next_cursor</dt>" not in markup and "<dt>has_more</dt>" not in markup
    assert markup.index("<table") < markup.index('class="webmcp-nb-paging"')
    assert html.escape(data["next_cursor"]) in markup


def test_long_ids_are_shortened_in_tables_and_whole_on_hover(session, demo) -> None:
    ok(session.navigate(demo.url + "frames.html"))
    frames = session.frames()
    listed = ok(frames)["frames"]
    frame_id = listed[0]["frame_id"]
    assert len(frame_id) == 36  # a UUID
    markup = render_html(frames)
    check_html(markup)
    assert f'<code title="{frame_id}">{frame_id[:8]}…</code>' in markup
    assert f"<code>{frame_id}</code>" not in markup
    assert f"- {frame_id} main" in str(frames)  # the text and the data keep the whole id
