"""The one renderer of results, shared by every front end.

Python's ``str()``, the notebook's rich display and an MCP server's text block
all come from here, so the text and the structure of a result cannot disagree:

- `render_text(envelope)`: compact plain text with everything needed to act on
  the result (it is what an MCP client reads);
- `render_html(envelope)`: static HTML (no scripts, inline styles only) that
  survives nbconvert's HTML export and GitHub's notebook viewer;
- `mimebundle(envelope)`: ``(data, metadata)`` for IPython's ``_repr_mimebundle_``;
- `ToolTable`: a displayable table of tool declarations.

Both renderings are built from the same decomposition of the envelope
(`_Parts`). Only the standard library is used: the core imports no IPython.
"""

from __future__ import annotations

import base64
import html
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..call.envelope import LIST_KEYS, RETRY_ADVICE, Envelope
from ..call.schema_fields import read_fields
from ..call.util import escape_surrogates
from ..evidence.failure import context_lines

if TYPE_CHECKING:
    from ..call.registry import ToolSpec

__all__ = [
    "DEFAULT_SCREENSHOT_WIDTH",
    "ENVELOPE_MIME",
    "ToolTable",
    "mimebundle",
    "render_html",
    "render_text",
]

ENVELOPE_MIME = "application/vnd.webmcp-nb.envelope+json"
DEFAULT_SCREENSHOT_WIDTH = 800

# Keys whose value is always shown as JSON, even when it is null (a script's result).
_JSON_KEYS = frozenset({"result"})
_IMAGE_KEYS = ("image", "mime_type", "width", "height", "source_width", "source_height", "scaled")
# Lists whose kind is the tool's (browser_console and browser_network both return "entries").
_ENTRY_KINDS = {"browser_console": "console", "browser_network": "network"}
# Keys whose JSON object or array value is shown as a collapsible tree (browser_http's body).
_TREE_KEYS = frozenset({"body"})
_TREE_OPEN_DEPTH = 2  # deeper levels start folded
# A notebook cell is lean (`mimebundle`): at most CELL_BUDGET times the text form. A big result's HTML
# renders the first screenfuls and holds the rest as plain text that unfolds on demand, its
# text/plain then shows the first lines; a full cell's envelope JSON leaves out its big values.
CELL_BUDGET = 1.5
HTML_TREE_LINES = 150  # snapshot lines rendered as a tree
HTML_LIST_ROWS = 50  # list items rendered as table rows
# A listing's paging fields (console, network): folded into one line below its table.
PAGING_KEYS = ("has_more", "next_cursor", "retained_count", "dropped_count", "retention_lost", "secrets_revealed")
ID_SHOWN = 8  # characters of a long id a table cell shows (the whole id on hover, in the text and the data)
ID_LONG = 16  # ids longer than this are shortened in tables
TEXT_HEAD_LINES = 60  # lines of text/plain in a mime bundle
JSON_FULL_BYTES = 16 * 1024  # an envelope JSON up to this size travels whole
JSON_VALUE_BYTES = 1024  # beyond it, data values larger than this are left out


# --------------------------------------------------------------------------- #
# Decomposition shared by the text and the HTML rendering
# --------------------------------------------------------------------------- #


@dataclass
class _Image:
    data: bytes
    mime_type: str
    width: int | None
    height: int | None
    source_width: int | None
    source_height: int | None

    def summary(self) -> str:
        size = f"{self.width}x{self.height}"
        source = f" (source {self.source_width}x{self.source_height})" if self.source_width is not None else ""
        return f"{self.mime_type} {size}{source}, {len(self.data):,} bytes"


@dataclass
class _Parts:
    """The pieces of a successful result, in display order."""

    modal: dict[str, Any] | None = None
    fields: list[tuple[str, Any]] = field(default_factory=list)
    image: _Image | None = None
    lists: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)
    paging: list[tuple[str, Any]] = field(default_factory=list)  # a listing's cursor and counts: one line
    snapshot: str | None = None
    saved: dict[str, Any] | None = None  # save=true: the file holding the result


def _saved_line(saved: dict[str, Any]) -> str:
    if "head" not in saved:  # a body streamed to a file (browser_http): no text preview
        return (
            f"saved: {saved.get('path')} ({saved.get('size_bytes', 0):,} bytes, {saved.get('media_type') or 'no type'})"
        )
    count = len(str(saved.get("head", "")).splitlines())
    return (
        f"saved: {saved.get('path')} ({saved.get('size_bytes', 0):,} bytes, {saved.get('lines')} lines); "
        f"the first {count} lines:"
    )


def _split(envelope: Envelope) -> _Parts:
    data = dict(envelope.data or {})
    parts = _Parts()
    modal = data.pop("modal_state", None)
    if isinstance(modal, dict):
        parts.modal = modal
    elif modal is not None:
        data["modal_state"] = modal
    if envelope.tool == "browser_snapshot" and isinstance(data.get("snapshot"), str):
        parts.snapshot = data.pop("snapshot")
    if isinstance(data.get("saved"), dict):
        parts.saved = data.pop("saved")
        if data.get("result", "") is None:
            del data["result"]  # it is in the file
    image = data.get("image")
    if isinstance(image, (bytes, bytearray)) and isinstance(data.get("mime_type"), str):
        values = {key: data.pop(key, None) for key in _IMAGE_KEYS}
        parts.image = _Image(
            data=bytes(image),
            mime_type=values["mime_type"],
            width=values["width"],
            height=values["height"],
            source_width=values["source_width"],
            source_height=values["source_height"],
        )
    for key in LIST_KEYS:
        items = data.get(key)
        kind = _ENTRY_KINDS.get(envelope.tool) if key == "entries" else key
        if kind is not None and isinstance(items, list) and all(isinstance(item, dict) for item in items):
            parts.lists.append((kind, data.pop(key)))
    # browser_create_instance: one instance, shown like a listed one.
    single = data.get("instance")
    if isinstance(single, dict) and "instance_id" in single:
        parts.lists.append(("instances", [data.pop("instance")]))
    if parts.lists:
        parts.paging = [(key, data.pop(key)) for key in PAGING_KEYS if data.get(key) is not None]
    parts.fields = [(key, value) for key, value in data.items() if value is not None or key in _JSON_KEYS]
    return parts


def _paging_line(paging: list[tuple[str, Any]]) -> str:
    """A listing's paging fields on one line: `has_more no · retained_count 12 · next_cursor c:12`."""
    return " · ".join(f"{key} {_scalar_text(key, value)}" for key, value in paging)


def _header_suffix(envelope: Envelope) -> str:
    duration = f"{envelope.operation.duration_ms:.1f} ms"
    if envelope.instance is not None:
        return f" (instance {envelope.instance}, {duration})"
    return f" ({duration})"


def _json(value: Any, *, indent: int | None = None) -> str:
    return json.dumps(value, ensure_ascii=False, indent=indent, default=_json_default)


def _json_default(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return f"<{len(value):,} bytes>"
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return repr(value)


_PLAIN_UNSAFE = re.compile(r"[\x00-\x1f\x7f]")


def _scalar_text(key: str, value: Any) -> str:
    """A field value on one line: strings as they are, anything else as JSON."""
    if isinstance(value, (bytes, bytearray)):
        return f"<{len(value):,} bytes>"
    if (
        isinstance(value, str)
        and key not in _JSON_KEYS
        and value
        and value == value.strip()
        and not _PLAIN_UNSAFE.search(value)
    ):
        return value
    return _json(value)


def _modal_line(modal: dict[str, Any]) -> str:
    resolver = modal.get("resolved_by") or "the tool that resolves it"
    if modal.get("kind") == "dialog":
        text = f"{modal.get('dialog_type') or 'unknown'} dialog {_json(modal.get('message') or '')}"
        if modal.get("default_value"):
            text += f" (default {_json(modal['default_value'])})"
    elif modal.get("kind") == "file_chooser":
        text = "file chooser" + (" (multiple files)" if modal.get("multiple") else " (one file)")
    else:
        text = _json({key: value for key, value in modal.items() if key != "resolved_by"})
    return f"MODAL: {text} - resolve with {resolver}"


def _retry_line(envelope: Envelope) -> str:
    op = envelope.operation
    advice = RETRY_ADVICE.get(op.retry, "")
    return f"outcome: {op.outcome}; retry: {op.retry}" + (f" - {advice}" if advice else "")


# --------------------------------------------------------------------------- #
# Plain text
# --------------------------------------------------------------------------- #


def _hints(annotations: Any) -> list[str]:
    """The annotations that are set (true or a value), hints without their ``Hint`` suffix."""
    if not isinstance(annotations, dict):
        return []
    return [
        key.removesuffix("Hint") + ("" if value is True else f"={_json(value)}")
        for key, value in annotations.items()
        if value not in (False, None)
    ]


def _page_tool_text(tool: dict[str, Any]) -> str:
    """A page's WebMCP tool: what an agent needs to call it, schema included."""
    title = f" {_json(tool['title'])}" if tool.get("title") else ""
    hints = _hints(tool.get("annotations"))
    where = f"{tool.get('kind', '?')}; frame {tool.get('frame_id')}; origin {tool.get('origin', '?')}"
    lines = [
        f"- {tool.get('name', '?')}{title} ({where}){'; hints: ' + ', '.join(hints) if hints else ''}",
        f"  {tool.get('description', '')}",
        f"  input: {_json(tool.get('input_schema'))}",
    ]
    if tool.get("output_schema") is not None:
        lines.append(f"  output: {_json(tool['output_schema'])}")
    return "\n".join(lines)


def _inputs_html(schema: Any) -> str:
    """The inputs of a schema, one per line: name (required marked *), type and description."""
    rows = []
    for one in read_fields(schema):
        mark = "*" if one.required else ""
        note = f" — {_e(one.description)}" if one.description else ""
        rows.append(f'{_code(one.name + mark)} <span style="{_MUTED}">{_e(one.type_label)}</span>{note}')
    return "<br>".join(rows)


def render_text(envelope: Envelope) -> str:
    """Compact plain text carrying everything needed to act on the result (lone surrogates
    written as their escapes, so that it always encodes)."""
    op = envelope.operation
    if not envelope.ok:
        lines = [
            f"{envelope.tool}: error {envelope.error_type}{_header_suffix(envelope)}",
            envelope.message or "(no message)",
            *context_lines(envelope.context or {}),
            _retry_line(envelope),
            f"operation: {op.id}",
        ]
    else:
        lines = [f"{envelope.tool}: success{_header_suffix(envelope)}"]
        parts = _split(envelope)
        if parts.modal is not None:
            lines.append(_modal_line(parts.modal))
        current = next((value for key, value in parts.fields if key == "current_instance"), None)
        for kind, items in parts.lists:  # a listing's table first, its paging on one line below
            lines += LIST_KINDS[kind].text(kind, items, current)
        if parts.paging:
            lines.append(_paging_line(parts.paging))
        lines += [f"{key}: {_scalar_text(key, value)}" for key, value in parts.fields]
        if parts.image is not None:
            lines.append(f"image: {parts.image.summary()}")
        if parts.snapshot is not None:
            lines.append(parts.snapshot)
        if parts.saved is not None:
            lines += [_saved_line(parts.saved), str(parts.saved.get("head", ""))]
    lines += [f"artifact: {path}" for path in op.artifacts]
    if op.references_omitted:
        lines.append("artifact references omitted (too large)")
    return escape_surrogates("\n".join(lines))


# --------------------------------------------------------------------------- #
# HTML
# --------------------------------------------------------------------------- #

# The markup is lean: the notebook's own fonts, <code> for monospace, and an inline style only
# where a look carries meaning (a status colour, a fold, an indentation), so that a small result's
# HTML is about its text's size (no per-cell stylesheet; a static export needs none either).
_MONO = "font-family:monospace"
_MUTED = "opacity:.7"
SUCCESS_COLOUR = "#1a7f37"
ERROR_COLOUR = "#cf222e"
WARN_COLOUR = "#bf8700"
PAGE_TOOL_COLOUR = "#8250df"
_TABLE = "border-collapse:collapse;border-color:rgba(127,127,127,.3);margin:4px 0;font-size:12px"
# Short: a snapshot has one chip per ref.
_CHIP = "background:#8883"


def tint(colour: str, alpha: float) -> str:
    """`colour` (``#rrggbb``) as a translucent ``rgba()``, for backgrounds."""
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red},{green},{blue},{alpha:g})"


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _t(value: str) -> str:
    """Text content (not an attribute value): quotes stay as they are."""
    return html.escape(value, quote=False)


def _frame(colour: str) -> str:
    """A result's frame: a bar of its status colour down its left side."""
    return f"border-left:3px solid {colour};padding:2px 8px;margin:4px 0"


def _badge(text: str, colour: str) -> str:
    return f'<strong style="color:{colour}">{_e(text)}</strong>'


def _pre(text: str) -> str:
    return f'<pre style="margin:2px 0;white-space:pre-wrap">{_e(text)}</pre>'


def _value_html(key: str, value: Any) -> str:
    if isinstance(value, (dict, list)) and key in _TREE_KEYS:
        return json_tree_html(value)
    if isinstance(value, (dict, list)) or key in _JSON_KEYS:
        return _pre(_json(value, indent=2))
    if isinstance(value, str) and "\n" in value:
        return _pre(value)
    return f"<code>{_e(_scalar_text(key, value))}</code>"


def _fields_html(fields: list[tuple[str, Any]]) -> str:
    if not fields:
        return ""
    rows = "".join(f"<dt>{_e(key)}</dt><dd>{_value_html(key, value)}</dd>" for key, value in fields)
    return f'<dl style="margin:4px 0">{rows}</dl>'


def _is_flat_rows(value: Any) -> bool:
    """An array of objects whose values are all scalars: shown as a table."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(
            isinstance(item, dict) and not any(isinstance(v, (dict, list)) for v in item.values()) for item in value
        )
    )


def json_tree_html(value: Any) -> str:
    """Parsed JSON as static HTML: objects and arrays fold (`<details>`), arrays of flat objects
    are tables, and scalars are JSON. No scripts; every string escaped."""
    return f'<div style="{_MONO}">{_tree(value, 0)}</div>'


_TREE_LIST = '<ul style="margin:0;padding-left:16px;list-style:none">'


def _tree(value: Any, depth: int) -> str:
    if _is_flat_rows(value):
        columns = list(dict.fromkeys(key for item in value for key in item))
        rows = [[_e(_scalar_text(key, item[key])) if key in item else "" for key in columns] for item in value]
        return _table(columns, rows)
    if isinstance(value, (dict, list)) and value:
        pairs = value.items() if isinstance(value, dict) else enumerate(value)
        opened = " open" if depth < _TREE_OPEN_DEPTH else ""
        kind = f"{{{len(value)} keys}}" if isinstance(value, dict) else f"[{len(value)} items]"
        items = "".join(f"<li><b>{_e(key)}</b>: {_tree(child, depth + 1)}</li>" for key, child in pairs)
        return f'<details{opened}><summary style="cursor:pointer;{_MUTED}">{kind}</summary>{_TREE_LIST}{items}</ul></details>'
    return _e(_json(value))


def _table(headers: list[str], rows: list[list[str]], alerts: list[bool] | None = None) -> str:
    """A table; cells are HTML already escaped by the caller. Rows with a true `alerts` entry are red.
    Cells take their look from the table's attributes (no style per cell: long lists stay lean)."""
    head = "".join(f'<th align="left">{_e(header)}</th>' for header in headers)
    marks = alerts or [False] * len(rows)
    alert_row = f'<tr style="color:{ERROR_COLOUR};background:{tint(ERROR_COLOUR, 0.06)}">'
    body = "".join(
        (alert_row if alert else "<tr>") + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>"
        for row, alert in zip(rows, marks, strict=False)
    )
    return (
        f'<table border="1" cellpadding="3" style="{_TABLE}"><thead><tr>{head}</tr></thead>'
        f'<tbody valign="top">{body}</tbody></table>'
    )


def _code(value: Any) -> str:
    return f"<code>{_e(value)}</code>" if value not in (None, "") else ""


# --------------------------------------------------------------------------- #
# Lists: one declaration per kind, for the text lines and the HTML table alike
# --------------------------------------------------------------------------- #

Cell = Callable[[dict[str, Any], "str | None"], str]
"""An HTML table cell (already escaped) from an item and the current instance's name."""


@dataclass(frozen=True)
class ListKind:
    """How a list of one kind (tabs, frames, instances, tools, downloads, console or network
    entries) is shown: `line` is an item's text line, `columns` its HTML row (header, keys the
    cell shows, cell). Keys no column shows follow as extra columns and as `key value` text;
    `alert` marks items shown in red (errors, failures). A kind without columns (a log: the
    console) shows its first rows in HTML as their text lines, so they cost no more than the
    text does; `line_keys` are then the keys its line shows."""

    line: Callable[[dict[str, Any], str | None], str]
    columns: tuple[tuple[str, tuple[str, ...], Cell], ...]
    legend: str = ""
    hidden: frozenset[str] = frozenset()  # keys shown by neither rendering
    alert: Callable[[dict[str, Any]], bool] = lambda item: False
    line_keys: frozenset[str] = frozenset()

    def text(self, kind: str, items: list[dict[str, Any]], current: str | None) -> list[str]:
        legend = self.legend if self.legend and (kind == "tabs" or current) else ""
        lines = [f"{kind}: {len(items)}{legend}"]
        shown = self.shown()
        for item in items:
            extras = [
                f"{key} {_scalar_text(key, value)}"
                for key, value in item.items()
                if key not in shown and value is not None
            ]
            lines.append(self.line(item, current) + ("; " + ", ".join(extras) if extras else ""))
        return lines

    def html(self, kind: str, items: list[dict[str, Any]], current: str | None) -> str:
        title = f"<div><strong>{_e(kind)} ({len(items)})</strong></div>"
        rest = items[HTML_LIST_ROWS:]
        more = _more_html(self.text(kind, rest, current)[1:], "items") if rest else ""
        shown = items[:HTML_LIST_ROWS]
        return title + (self._table(shown, current) if self.columns else self._lines(shown, current)) + more

    def _lines(self, items: list[dict[str, Any]], current: str | None) -> str:
        """The items' text lines, preformatted, alerts in red: no more than the text costs."""
        alert = f'<span style="color:{ERROR_COLOUR}">'
        lines = self.text("", items, current)[1:]
        body = "\n".join(
            f"{alert}{_t(line)}</span>" if self.alert(item) else _t(line)
            for line, item in zip(lines, items, strict=True)
        )
        return f'<pre style="margin:2px 0">{body}</pre>'

    def _table(self, items: list[dict[str, Any]], current: str | None) -> str:
        shown = self.shown()
        extra = sorted({key for item in items for key in item} - shown)
        headers = [header for header, _, _ in self.columns] + extra
        rows = [
            [cell(item, current) for _, _, cell in self.columns]
            + [_e(_scalar_text(key, item[key])) if item.get(key) is not None else "" for key in extra]
            for item in items
        ]
        kept = [column for column in range(len(headers)) if any(row[column] for row in rows)]  # no empty columns
        alerts = [self.alert(item) for item in items]
        return _table([headers[c] for c in kept], [[row[c] for c in kept] for row in rows], alerts)

    def shown(self) -> frozenset[str]:
        return frozenset(key for _, keys, _ in self.columns for key in keys) | self.line_keys | self.hidden


def _tab_status(item: dict[str, Any]) -> str:
    """A tab's status when it is not ok (`unresponsive`, `crashed`)."""
    status = item.get("status", "ok")
    return f" [{status}]" if status != "ok" else ""


def _text_cell(key: str) -> Cell:
    return lambda item, current: _e(item.get(key) if item.get(key) is not None else "")


def _code_cell(key: str) -> Cell:
    return lambda item, current: _code(item.get(key))


def _id_cell(key: str) -> Cell:
    """A long id (a 36-character frame id) shortened to its start; the whole id is its hover title."""
    return lambda item, current: _short_id(item.get(key))


def _short_id(value: Any) -> str:
    if not isinstance(value, str) or len(value) <= ID_LONG:
        return _code(value)
    return f'<code title="{_e(value)}">{_e(value[:ID_SHOWN])}…</code>'


def _instance_line(item: dict[str, Any], current: str | None) -> str:
    name = item.get("name", "?")
    words = [str(item.get("state", "?")), str(item.get("backend", "?"))]
    if item.get("headless"):
        words.append("headless")
    if item.get("browser_pid") is not None:
        words.append(f"pid {item['browser_pid']}")
    pages = item.get("pages")
    if pages is not None:
        words.append(f"{pages} page" + ("" if pages == 1 else "s"))
    words.append(f"instance_id {item.get('instance_id', '?')}")
    if item.get("current_page_id"):
        words.append(f"current_page_id {item['current_page_id']}")
    mark = "*" if current is not None and name == current else "-"
    return f"{mark} {name}: " + ", ".join(words)


def _frame_line(item: dict[str, Any], current: str | None) -> str:
    where = (
        "main" if item.get("is_main") else f"name {_json(item.get('name', ''))}, parent {item.get('parent_frame_id')}"
    )
    return f"- {item.get('frame_id', '?')} {where} {item.get('url', '')}"


def _download_line(item: dict[str, Any], current: str | None) -> str:
    saved = f" -> {item['path']} ({item.get('size_bytes')} bytes)" if item.get("path") else ""
    return (
        f"- {item.get('download_id', '?')} {item.get('state', '?')} {_json(item.get('suggested_filename', ''))}{saved}"
    )


def _where(item: dict[str, Any]) -> str:
    url = item.get("url") or ""
    return f"{url}:{item['line']}" if url and item.get("line") is not None else url


def _console_line(item: dict[str, Any], current: str | None) -> str:
    kind = " (uncaught)" if item.get("kind") == "pageerror" else ""
    where = f" at {_where(item)}" if _where(item) else ""
    return f"- #{item.get('seq')} {item.get('level')}{kind}: {_json(item.get('text', ''))}{where}"


def _network_status(item: dict[str, Any]) -> str:
    if item.get("state") == "failed":
        return f"failed {item.get('failure') or ''}".strip()
    return str(item["status"]) if item.get("status") is not None else str(item.get("state", ""))


def _network_ms(item: dict[str, Any]) -> str:
    timing = item.get("timing") or {}
    end = timing.get("response_end")
    return f"{end:.0f} ms" if isinstance(end, (int, float)) else ""


def _network_line(item: dict[str, Any], current: str | None) -> str:
    words = [
        f"- #{item.get('seq')} {item.get('request_id')} {item.get('method')} {_network_status(item)}",
        str(item.get("url", "")),
        str(item.get("resource_type", "")),
    ]
    if _network_ms(item):
        words.append(_network_ms(item))
    if item.get("encoded_size") is not None:
        words.append(f"{item['encoded_size']} B")
    line = " ".join(words)
    for key in ("request_headers", "response_headers"):
        if item.get(key):
            line += f"\n    {key.replace('_', ' ')}: {_json(item[key])}"
    return line


LIST_KINDS: dict[str, ListKind] = {
    "tabs": ListKind(
        line=lambda item, current: (
            f"{'*' if item.get('current') else '-'} {item.get('page_id', '?')} "
            f"{_json(item.get('title', ''))} {item.get('url', '')}" + _tab_status(item)
        ),
        columns=(
            ("", ("current",), lambda item, current: "●" if item.get("current") else ""),
            ("page_id", ("page_id",), _id_cell("page_id")),
            ("title", ("title", "status"), lambda item, current: _e(item.get("title", "")) + _tab_status(item)),
            ("url", ("url",), _code_cell("url")),
        ),
        legend=" (* = current)",
        alert=lambda item: item.get("status", "ok") != "ok",
    ),
    "frames": ListKind(
        line=_frame_line,
        columns=(
            ("frame_id", ("frame_id",), _id_cell("frame_id")),
            ("main", ("is_main",), lambda item, current: "yes" if item.get("is_main") else ""),
            ("name", ("name",), _text_cell("name")),
            ("parent_frame_id", ("parent_frame_id",), _id_cell("parent_frame_id")),
            ("url", ("url",), _code_cell("url")),
        ),
    ),
    "tools": ListKind(
        line=lambda item, current: _page_tool_text(item),
        columns=(
            (
                "name",
                ("name", "title"),
                lambda item, current: (
                    _code(item.get("name")) + (f"<br>{_e(item['title'])}" if item.get("title") else "")
                ),
            ),
            ("kind", ("kind",), _text_cell("kind")),
            ("description", ("description",), _text_cell("description")),
            ("inputs (* required)", ("input_schema",), lambda item, current: _inputs_html(item.get("input_schema"))),
            ("hints", ("annotations",), lambda item, current: _e(", ".join(_hints(item.get("annotations"))))),
            ("frame_id", ("frame_id",), _id_cell("frame_id")),
        ),
        hidden=frozenset({"origin"}),
    ),
    "downloads": ListKind(
        line=_download_line,
        columns=(
            ("download_id", ("download_id",), _id_cell("download_id")),
            ("file", ("suggested_filename",), _text_cell("suggested_filename")),
            ("state", ("state",), _text_cell("state")),
            ("bytes", ("size_bytes",), _text_cell("size_bytes")),
            ("path", ("path",), _code_cell("path")),
        ),
        alert=lambda item: item.get("state") == "failed",
    ),
    "instances": ListKind(
        line=_instance_line,
        columns=(
            ("", (), lambda item, current: "●" if current is not None and item.get("name") == current else ""),
            ("name", ("name",), _code_cell("name")),
            ("state", ("state",), _text_cell("state")),
            ("backend", ("backend",), _text_cell("backend")),
            ("headless", ("headless",), lambda item, current: "yes" if item.get("headless") else ""),
            ("pid", ("browser_pid",), _text_cell("browser_pid")),
            ("pages", ("pages",), _text_cell("pages")),
            ("instance_id", ("instance_id",), _id_cell("instance_id")),
            ("current_page_id", ("current_page_id",), _id_cell("current_page_id")),
        ),
        legend=" (* = current)",
    ),
    "console": ListKind(
        line=_console_line,
        columns=(),  # a log: its HTML rows are its text lines
        line_keys=frozenset({"seq", "level", "kind", "text", "url", "line"}),
        hidden=frozenset({"at", "page_id", "frame_id", "column", "stack", "truncated_fields"}),
        alert=lambda item: item.get("level") == "error",
    ),
    "network": ListKind(
        line=_network_line,
        columns=(
            ("#", ("seq",), _text_cell("seq")),
            ("id", ("request_id",), _id_cell("request_id")),
            ("method", ("method",), _text_cell("method")),
            ("status", ("status", "state", "failure"), lambda item, current: _e(_network_status(item))),
            ("url", ("url",), _code_cell("url")),
            ("type", ("resource_type",), _text_cell("resource_type")),
            ("time", ("timing",), lambda item, current: _e(_network_ms(item))),
            ("size", ("encoded_size",), _text_cell("encoded_size")),
        ),
        hidden=frozenset(
            {
                "at",
                "page_id",
                "frame_id",
                "status_text",
                "redirected_from",
                "redirect_chain",
                "request_headers",
                "response_headers",
                "mime_type",
                "truncated_fields",
            }
        ),
        alert=lambda item: item.get("state") == "failed" or (item.get("status") or 0) >= 400,
    ),
}


# A snapshot line: quoted strings stay text, [ref=...] becomes a chip, other [...] are muted.
_SNAPSHOT_TOKEN = re.compile(r'(?P<quoted>"(?:[^"\\]|\\.)*")|\[ref=(?P<ref>[^\]\s]+)\]|(?P<attr>\[[^\]]*\])')


def _snapshot_line_html(content: str) -> str:
    out: list[str] = []
    position = 0
    first = True
    for match in _SNAPSHOT_TOKEN.finditer(content):
        before = content[position : match.start()]
        out.append(_role_html(before) if first else _t(before))
        first = False
        if match.group("ref") is not None:
            out.append(f"<code>{_t(match.group('ref'))}</code>")
        elif match.group("attr") is not None:
            out.append(f"<i>{_t(match.group('attr'))}</i>")
        else:
            out.append(_t(match.group("quoted")))
        position = match.end()
    tail = content[position:]
    out.append(_role_html(tail) if first else _t(tail))
    return "".join(out)


def _role_html(text: str) -> str:
    """The start of a snapshot line, its role (the first word) in bold."""
    if not text:
        return ""
    role, space, rest = text.partition(" ")
    return f"<b>{_t(role)}</b>{space}{_t(rest)}"


def _more_html(lines: list[str], what: str) -> str:
    """The rest of a big result as plain text, folded: it unfolds on demand, and costs no layout
    (nor a tree of elements) until then."""
    return (
        f'<details style="margin:4px 0"><summary style="{_MUTED}">{len(lines):,} more {what}'
        f'</summary><pre style="margin:2px 0">{html.escape(chr(10).join(lines), quote=False)}</pre></details>'
    )


def _snapshot_html(yaml: str) -> str:
    """The snapshot YAML as nested <details open>, following its indentation: its first
    `HTML_TREE_LINES` lines, then the rest as folded text."""
    lines = [line for line in yaml.splitlines() if line.strip()]
    rest = _more_html(lines[HTML_TREE_LINES:], "lines") if len(lines) > HTML_TREE_LINES else ""
    lines = lines[:HTML_TREE_LINES]
    indents = [len(line) - len(line.lstrip(" ")) for line in lines]
    out: list[str] = []
    open_indents: list[int] = []
    for index, line in enumerate(lines):
        indent = indents[index]
        while open_indents and open_indents[-1] >= indent:
            open_indents.pop()
            out.append("</details>")
        content = line.strip().removeprefix("- ")
        has_children = index + 1 < len(lines) and indents[index + 1] > indent
        # The text's own indentation indents the tree (white-space: pre); a fold's marker takes
        # the place of its line's "- ".
        if has_children:
            out.append(
                f"<details open><summary>{' ' * indent}{_snapshot_line_html(content.removesuffix(':'))}</summary>"
            )
            open_indents.append(indent)
        else:
            out.append(f"<div>{' ' * indent}- {_snapshot_line_html(content)}</div>")
    out.extend("</details>" for _ in open_indents)
    return f'<div style="{_MONO};white-space:pre;margin:4px 0">{"".join(out)}</div>{rest}'


def _image_html(image: _Image, screenshot_width: int | None) -> str:
    width = _display_width(image.width, screenshot_width)
    size = f' width="{width}"' if width else ""
    encoded = base64.b64encode(image.data).decode("ascii")
    return (
        f'<div><img src="data:{_e(image.mime_type)};base64,{encoded}"{size} '
        f'alt="screenshot" style="max-width: 100%; height: auto; border: 1px solid rgba(127,127,127,0.35);">'
        f'<div style="{_MUTED}">{_e(image.summary())}</div></div>'
    )


def _display_width(width: int | None, screenshot_width: int | None) -> int | None:
    if width is None:
        return screenshot_width
    return width if screenshot_width is None else min(width, screenshot_width)


def _operation_html(envelope: Envelope) -> str:
    """The operation, folded under its id: a ``key: value`` line for each other field that has a
    value (the tool is in the header)."""
    lines = [
        f"{key}: {_scalar_text(key, value)}"
        for key, value in envelope.operation.to_dict().items()
        if value not in (None, []) and key not in ("id", "tool")
    ]
    return (
        f'<details style="margin-top:4px"><summary style="{_MUTED}">operation {_e(envelope.operation.id)}</summary>'
        f"{_pre(chr(10).join(lines))}</details>"
    )


def render_html(envelope: Envelope, *, screenshot_width: int | None = DEFAULT_SCREENSHOT_WIDTH) -> str:
    """Static HTML for the result: no scripts, a few inline styles, every page string escaped."""
    op = envelope.operation
    instance = f" · instance <code>{_e(envelope.instance)}</code>" if envelope.instance else ""
    if envelope.ok:
        badge = _badge("success", SUCCESS_COLOUR)
    else:
        badge = _badge(f"error · {envelope.error_type}", ERROR_COLOUR)
    body = [
        (
            f"<div>{badge} <code><strong>{_e(envelope.tool)}</strong></code>{instance}"
            f' · <span style="{_MUTED}">{op.duration_ms:.1f} ms</span></div>'
        )
    ]
    if not envelope.ok:
        advice = RETRY_ADVICE.get(op.retry, "")
        body.append(
            f'<div style="background:{tint(ERROR_COLOUR, 0.08)};padding:4px 8px;margin:4px 0">'
            f"<div><strong>{_e(envelope.error_type)}</strong></div>"
            f'<div style="white-space:pre-wrap">{_e(envelope.message or "")}</div>'
            + (_pre("\n".join(context_lines(envelope.context))) if envelope.context else "")
            + f"<div><b>retry: {_e(op.retry)}</b> — {_e(advice)} "
            f'<span style="{_MUTED}">(outcome: {_e(op.outcome)})</span></div></div>'
        )
    else:
        parts = _split(envelope)
        if parts.modal is not None:
            body.append(
                f'<div style="background:{tint(WARN_COLOUR, 0.12)};padding:4px 8px;margin:4px 0">'
                f"<strong>{_e(_modal_line(parts.modal))}</strong></div>"
            )
        current = next((value for key, value in parts.fields if key == "current_instance"), None)
        body += [LIST_KINDS[kind].html(kind, items, current) for kind, items in parts.lists]
        if parts.paging:
            body.append(f'<div class="webmcp-nb-paging" style="{_MUTED}">{_e(_paging_line(parts.paging))}</div>')
        body.append(_fields_html(parts.fields))
        if parts.image is not None:
            body.append(_image_html(parts.image, screenshot_width))
        if parts.snapshot is not None:
            body.append(_snapshot_html(parts.snapshot))
        if parts.saved is not None:
            body.append(f"<div>{_e(_saved_line(parts.saved))}</div>" + _pre(str(parts.saved.get("head", ""))))
    if op.artifacts:
        body.append("<div>artifacts: " + ", ".join(_code(path) for path in op.artifacts) + "</div>")
    body.append(_operation_html(envelope))
    colour = SUCCESS_COLOUR if envelope.ok else ERROR_COLOUR
    return escape_surrogates(f'<div class="webmcp-nb-envelope" style="{_frame(colour)}">{"".join(body)}</div>')


# --------------------------------------------------------------------------- #
# Mime bundles
# --------------------------------------------------------------------------- #


def _wanted(mime: str, include: Iterable[str] | None, exclude: Iterable[str] | None) -> bool:
    if mime == "text/plain":
        return True
    if include is not None and mime not in include:
        return False
    return not (exclude is not None and mime in exclude)


def mimebundle(
    envelope: Envelope,
    include: Iterable[str] | None = None,
    exclude: Iterable[str] | None = None,
    *,
    full: bool = False,
    screenshot_width: int | None = DEFAULT_SCREENSHOT_WIDTH,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(data, metadata)`` as IPython's ``_repr_mimebundle_`` returns them.

    A cell is lean: its bundle is at most `CELL_BUDGET` times the result's text form (its
    text, plus its image as base64), each part of the result travels once, and nothing a
    reader needs is left out:

    - text/plain always: the whole text (`render_text`, what an MCP client reads and a
      terminal, nbconvert's text exports and a kernel's readers show);
    - a screenshot: its image, once, as itself (image/png or image/jpeg, base64, with a
      display width of at most `screenshot_width`);
    - text/html only where the HTML view pays for itself within the budget: a big result's
      folded tree or long table (its first screenfuls rendered, the rest folded as text),
      text/plain then holding the first `TEXT_HEAD_LINES` lines. A small result's HTML is a
      styled copy of its text, and the text plus any copy of it is already 2x the text: it
      shows as its text (a navigation's frame and folded operation record alone are 8x its
      text);
    - the envelope JSON (`ENVELOPE_MIME`) not at all: its operation record alone (ids and
      times) is 4x a navigation's text and a saved notebook's reader never sees it, while the
      live `Envelope` (``Out[n]``, ``_``) holds it whole for code in the kernel.

    `full=True` (the notebook's ``BrowserMagics.cell_output = "full"``, for programs that read
    outputs, or to see every small result's HTML) adds the HTML of every result but a
    screenshot and the envelope JSON (leaving out data values over `JSON_VALUE_BYTES` once it
    passes `JSON_FULL_BYTES`, see `lean_envelope_json`). A view `include` names travels
    whatever its cost; `exclude` leaves views out (text/plain always stays).
    """
    include = set(include) if include is not None else None
    exclude = set(exclude) if exclude is not None else None
    asked = include or set()
    text = render_text(envelope)
    data: dict[str, Any] = {"text/plain": text}
    metadata: dict[str, Any] = {}
    image = _split(envelope).image if envelope.ok else None
    if image is not None and (
        image.mime_type not in ("image/png", "image/jpeg") or not _wanted(image.mime_type, include, exclude)
    ):
        image = None
    if _wanted("text/html", include, exclude):
        markup = render_html(envelope, screenshot_width=screenshot_width)
        head = _text_head(text)
        fits = len(head.encode()) + len(markup.encode()) <= CELL_BUDGET * len(text.encode())
        if "text/html" in asked or (image is None and (full or fits)):
            data["text/plain"] = head  # the HTML unfolds the rest
            data["text/html"] = markup
    if (full or ENVELOPE_MIME in asked) and _wanted(ENVELOPE_MIME, include, exclude):
        data[ENVELOPE_MIME] = lean_envelope_json(envelope)
    if image is not None:
        data[image.mime_type] = base64.b64encode(image.data).decode("ascii")
        width = _display_width(image.width, screenshot_width)
        if width is not None:
            metadata[image.mime_type] = {"width": width}
    return data, metadata


def _text_head(text: str) -> str:
    """`text`, or its first `TEXT_HEAD_LINES` lines and how many follow."""
    lines = text.split("\n", TEXT_HEAD_LINES)
    if len(lines) <= TEXT_HEAD_LINES:
        return text
    more = lines.pop().count("\n") + 1
    return "\n".join([*lines, f"... {more:,} more lines (the HTML view unfolds them; print(envelope) shows them all)"])


def lean_envelope_json(envelope: Envelope) -> dict[str, Any]:
    """The envelope as JSON for a mime bundle: whole up to `JSON_FULL_BYTES`; beyond, without the
    data values over `JSON_VALUE_BYTES` (named with their sizes under ``omitted``: the views and
    the live `Envelope` hold them)."""
    text = envelope.to_json()
    value: dict[str, Any] = json.loads(text)
    if len(text) <= JSON_FULL_BYTES or not isinstance(value.get("data"), dict):
        return value
    omitted: dict[str, int] = {}
    for key, item in list(value["data"].items()):
        size = len(json.dumps(item, ensure_ascii=False))
        if size > JSON_VALUE_BYTES:
            omitted[key] = size
            del value["data"][key]
    if omitted:
        value["omitted"] = omitted
    return value


# --------------------------------------------------------------------------- #
# Tool lists
# --------------------------------------------------------------------------- #

_FLAGS = (
    ("read_only", "ro", "read-only"),
    ("destructive", "destr", "destructive"),
    ("idempotent", "idem", "idempotent"),
    ("open_world", "open", "open-world"),
)


class ToolTable:
    """A list of `ToolSpec` shown as a table (text and HTML).

    Flags: ro = read-only, destr = destructive, idem = idempotent, open = open-world.
    """

    def __init__(self, specs: Iterable[ToolSpec]) -> None:
        self.specs: list[ToolSpec] = list(specs)

    def __len__(self) -> int:
        return len(self.specs)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.specs)

    @staticmethod
    def flags(spec: ToolSpec) -> list[str]:
        return [short for attribute, short, _ in _FLAGS if getattr(spec, attribute)]

    def render_text(self) -> str:
        rows = [["name", "title", "group", "flags", "description"]]
        rows += [
            [spec.name, spec.title, spec.group, " ".join(self.flags(spec)) or "-", spec.description]
            for spec in self.specs
        ]
        widths = [max(len(row[column]) for row in rows) for column in range(4)]
        lines = [
            "  ".join(cell.ljust(width) for cell, width in zip(row[:4], widths, strict=False)) + "  " + row[4]
            for row in rows
        ]
        legend = ", ".join(f"{short} = {long}" for _, short, long in _FLAGS)
        lines.append(f"{len(self.specs)} tools; flags: {legend}")
        return "\n".join(lines)

    def render_html(self) -> str:
        rows = []
        for spec in self.specs:
            chips = " ".join(
                f'<span style="{_CHIP}" title="{_e(long)}">{_e(short)}</span>'
                for attribute, short, long in _FLAGS
                if getattr(spec, attribute)
            )
            rows.append(
                [
                    f'<code style="white-space:nowrap">{_e(spec.name)}</code>',
                    _e(spec.title),
                    _e(spec.group),
                    f'<span style="white-space: nowrap;">{chips}</span>',
                    _e(spec.description),
                ]
            )
        legend = ", ".join(f"{short} = {long}" for _, short, long in _FLAGS)
        return (
            '<div class="webmcp-nb-tools">'
            + _table(["name", "title", "group", "flags", "description"], rows)
            + f'<div style="{_MUTED}; font-size: 12px;">{len(self.specs)} tools; flags: {_e(legend)}</div></div>'
        )

    def __str__(self) -> str:
        return self.render_text()

    def __repr__(self) -> str:
        return f"<ToolTable {len(self.specs)} tools>"

    def _repr_mimebundle_(
        self, include: Iterable[str] | None = None, exclude: Iterable[str] | None = None, **kwargs: Any
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        include = set(include) if include is not None else None
        exclude = set(exclude) if exclude is not None else None
        data: dict[str, Any] = {"text/plain": self.render_text()}
        if _wanted("text/html", include, exclude):
            data["text/html"] = self.render_html()
        return data, {}


# --------------------------------------------------------------------------- #
# Progress of a streaming call
# --------------------------------------------------------------------------- #

PROGRESS_SHOWN = 20  # the latest events a live display shows


def progress_bundle(tool: str, updates: list[dict[str, Any]]) -> dict[str, str]:
    """A live view of what a streaming call (browser_http's SSE) has collected so far, from the
    updates it sent its progress hook: text/plain and static text/html."""
    last = updates[-1] if updates else {}
    events = [update["event"] for update in updates if "event" in update][-PROGRESS_SHOWN:]
    summary = f"{tool}: receiving… {last.get('count', 0)} events, {last.get('reconnects', 0)} reconnects"
    lines = [summary] + [
        f"{event.get('id') or '-'} {event.get('event')}: {_json(event.get('data'))}" for event in events
    ]
    rows = [[_e(event.get("id") or ""), _e(event.get("event")), _e(_json(event.get("data")))] for event in events]
    html_text = (
        f'<div class="webmcp-nb-progress" style="{_frame(WARN_COLOUR)}"><div>{_badge("receiving", WARN_COLOUR)} '
        f"<code>{_e(tool)}</code> · {last.get('count', 0)} events · {last.get('reconnects', 0)} "
        f"reconnects</div>{_table(['id', 'event', 'data'], rows) if rows else ''}</div>"
    )
    return {"text/plain": "\n".join(lines), "text/html": html_text}


STAGE_COLOURS = {"ready": SUCCESS_COLOUR, "failed": ERROR_COLOUR}


def stage_bundle(tool: str, update: dict[str, Any]) -> dict[str, str]:
    """One line for where a call's long step stands (`CallContext.report_progress`): "launching
    Chromium…", then in place "launching Chromium… ready in 1.2 s"; text/plain and static HTML."""
    stage, message = str(update.get("stage", "")), str(update.get("message", ""))
    colour = STAGE_COLOURS.get(stage, WARN_COLOUR)
    return {
        "text/plain": f"{tool}: {message}",
        "text/html": (
            f'<div class="webmcp-nb-stage" data-stage="{_e(stage)}" style="{_MUTED}">'
            f"{_badge(stage, colour)} <code>{_e(tool)}</code> {_e(message)}</div>"
        ),
    }
