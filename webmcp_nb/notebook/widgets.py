"""Live widgets: `BrowserPanel` (URL bar, live view, snapshot pane) and `CallLog`.

Widget callbacks may run on a subshell thread and must never block the kernel:
every action is submitted to the session's runtime (`Session.submit`) and the
widgets are updated when the envelope arrives. Frames come from the core's
`LiveView`, which caps the rate and drops stale frames, so the comm channel is
never flooded.
"""

from __future__ import annotations

import html
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anywidget
import ipywidgets as widgets
import traitlets

from ..core.browsers.live import DEFAULT_MAX_FPS
from ..core.call.approval import approval_summary as approval_summary  # re-exported: its old home
from ..core.call.approval import preview_text
from ..core.evidence.recorder import EvidenceEvent
from ..core.render.renderer import ERROR_COLOUR, PAGE_TOOL_COLOUR, SUCCESS_COLOUR, render_html, render_text
from ..core.webmcp.discovery import WebMCPEvent

if TYPE_CHECKING:
    from ..client import Session
    from ..core.browsers.live import LiveFrame
    from ..core.call.engine import ApprovalRequest, CallRecord
    from ..core.call.envelope import Envelope

PANEL_CALLER = "panel"
STATIC = Path(__file__).parent / "static"


class LiveViewWidget(anywidget.AnyWidget):
    """The page as an image; clicks, keys and the wheel go back to the page."""

    _esm = STATIC / "live_view.js"
    _css = STATIC / "live_view.css"
    frame = traitlets.Bytes(b"").tag(sync=True)
    viewport_width = traitlets.Int(0).tag(sync=True)
    viewport_height = traitlets.Int(0).tag(sync=True)
    frames_shown = traitlets.Int(0).tag(sync=True)

    def show(self, frame: LiveFrame) -> None:
        with self.hold_sync():
            self.viewport_width, self.viewport_height = frame.viewport_width, frame.viewport_height
            self.frame = frame.data
            self.frames_shown += 1


class BrowserPanel(widgets.VBox):
    """A small browser in the notebook, on the session's current instance."""

    def __init__(self, session: Session, *, max_fps: float = DEFAULT_MAX_FPS, instance: str | None = None) -> None:
        self.session = session
        self.instance = instance
        self.url = widgets.Text(placeholder="https://...", layout=widgets.Layout(flex="1"))
        self.back = _button("◀", "Back")
        self.forward = _button("▶", "Forward")
        self.reload = _button("⟳", "Reload")
        self.go = _button("Go", "Navigate to the URL")
        self.instances = widgets.Dropdown(description="Instance", layout=widgets.Layout(width="30%"))
        self.tabs = widgets.Dropdown(description="Tab", layout=widgets.Layout(width="45%"))
        self.snapshot_button = _button("Snapshot", "Show the accessibility snapshot")
        self.status = widgets.HTML()
        self.live = LiveViewWidget(layout=widgets.Layout(width="100%"))
        self.snapshot_pane = widgets.HTML()
        toolbar = widgets.HBox([self.back, self.forward, self.reload, self.url, self.go])
        selectors = widgets.HBox([self.instances, self.tabs, self.snapshot_button])
        snapshot_box = widgets.Accordion(children=[self.snapshot_pane], titles=("Snapshot",))
        super().__init__([toolbar, selectors, self.live, self.status, snapshot_box])

        self.go.on_click(lambda _: self._call("browser_navigate", url=self.url.value.strip()))
        self.url.continuous_update = False
        self.url.observe(lambda change: self._call("browser_navigate", url=change["new"].strip()), "value")
        self.back.on_click(lambda _: self._call("browser_navigate_back"))
        self.forward.on_click(lambda _: self._call("browser_navigate_forward"))
        self.reload.on_click(lambda _: self._call("browser_reload"))
        self.snapshot_button.on_click(lambda _: self._call("browser_snapshot", on_done=self._show_snapshot))
        self.tabs.observe(self._select_tab, "value")
        self.instances.observe(self._select_instance, "value")
        self.live.on_msg(self._on_live_event)
        self._updating = False
        self._remove_listener = session.add_listener(self._on_call)
        self._refresh()
        self._max_fps = max_fps
        self.view = session.live_view(self.live.show, instance=instance, max_fps=max_fps)
        self._remove_close_listener = session.add_close_listener(self._session_closed)

    def close(self) -> None:
        self._detach()
        super().close()

    def _detach(self) -> None:
        self.view.stop()
        self._remove_listener()
        self._remove_close_listener()

    def _session_closed(self) -> None:
        """The session closed: the panel says so and stops taking input (the last frame stays)."""
        self._detach()
        for control in (self.back, self.forward, self.reload, self.go, self.snapshot_button):
            control.disabled = True
        for control in (self.url, self.instances, self.tabs):
            control.disabled = True
        self.status.value = closed_html("the browser session was closed")

    # actions -------------------------------------------------------------------
    def _call(self, tool: str, on_done: Callable[[Envelope], None] | None = None, **args: Any) -> None:
        """Submit a call without blocking this (kernel or subshell) thread."""
        if tool == "browser_navigate" and (self._updating or not args.get("url")):
            return
        if self.instance:
            args["instance"] = self.instance
        future = self.session.submit(tool, args, caller=PANEL_CALLER)
        future.add_done_callback(lambda done: self._finished(done, on_done))

    def _finished(self, future: Future[Envelope], on_done: Callable[[Envelope], None] | None) -> None:
        envelope = future.result()
        self.status.value = _status_html(envelope)
        if on_done is not None and envelope.ok:
            on_done(envelope)

    def _on_live_event(self, _widget: Any, content: dict[str, Any], _buffers: Any) -> None:
        event = content.get("event")
        if event == "click":
            self._call(
                "browser_mouse_click_xy",
                x=float(content["x"]),
                y=float(content["y"]),
                button=content.get("button", "left"),
            )
        elif event == "type":
            self._call("browser_keyboard_type", text=str(content["text"]))
        elif event == "key":
            self._call("browser_press_key", key=str(content["key"]))
        elif event == "scroll":
            self._call("browser_scroll", delta_y=float(content["dy"]))

    def _select_instance(self, change: dict[str, Any]) -> None:
        """Show and drive another instance: the live view and the panel's calls follow it."""
        if self._updating or not change["new"] or change["new"] == self.instance:
            return
        self.instance = change["new"]
        self.view.stop()
        self.view = self.session.live_view(self.live.show, instance=self.instance, max_fps=self._max_fps)
        self._refresh()

    def _select_tab(self, change: dict[str, Any]) -> None:
        if not self._updating and change["new"]:
            self._call("browser_tabs", action="select", page_id=change["new"])

    def _show_snapshot(self, envelope: Envelope) -> None:
        self.snapshot_pane.value = render_html(envelope)

    # following every front end's calls ---------------------------------------------
    def _on_call(self, record: CallRecord) -> None:
        """Keep the URL bar and the selectors in step with calls from any front end."""
        self._refresh()

    def _refresh(self) -> None:
        overview = self.session.overview()
        name = self.instance or overview["current_instance"]
        instance = overview["instances"].get(name)
        pages = instance["pages"] if instance else []
        current = instance["current_page_id"] if instance else None
        self._updating = True
        try:
            self.instances.options = list(overview["instances"])
            self.instances.value = name if name in overview["instances"] else None
            self.tabs.options = [(_short(page["url"]), page["page_id"]) for page in pages]
            self.tabs.value = current
            url = next((page["url"] for page in pages if page["page_id"] == current), "")
            if url != self.url.value:
                self.url.value = url
        finally:
            self._updating = False


class CallLog(widgets.VBox):
    """Every tool call from every front end (cells, widgets, agents), live, bounded and filterable,
    with the pages' WebMCP events (tool-list changes, invocations, also by agents inside a page)
    and, as they happen, the pages' console errors and failed requests."""

    def __init__(self, session: Session, *, limit: int = 200, refresh_s: float = 0.2) -> None:
        self.session = session
        self.limit = limit
        self.filter = widgets.Text(placeholder="filter: tool or caller", layout=widgets.Layout(width="40%"))
        self.status_filter = widgets.Dropdown(
            options=["all", "success", "error"], value="all", layout=widgets.Layout(width="120px")
        )
        self.table = widgets.HTML()
        super().__init__([widgets.HBox([self.filter, self.status_filter]), self.table])
        self._records: list[CallRecord] = list(session.history)[-limit:]
        self._events: list[WebMCPEvent] = list(session.webmcp_history)[-limit:]
        self._evidence: list[EvidenceEvent] = []
        self._lock = threading.Lock()
        self._dirty = threading.Event()
        self._refresh_s = refresh_s
        self._closed = False
        self.filter.observe(lambda _: self.render(), "value")
        self.status_filter.observe(lambda _: self.render(), "value")
        self._remove_listener = session.add_listener(self._on_call)
        self._remove_webmcp_listener = session.add_webmcp_listener(self._on_webmcp)
        self._remove_evidence_listener = session.add_evidence_listener(self._on_evidence)
        self._remove_close_listener = session.add_close_listener(self._session_closed)
        threading.Thread(target=self._refresher, name="webmcp_nb-calllog", daemon=True).start()
        self.render()

    @property
    def records(self) -> list[CallRecord]:
        with self._lock:
            return list(self._records)

    @property
    def events(self) -> list[WebMCPEvent]:
        """The WebMCP events shown (oldest first)."""
        with self._lock:
            return list(self._events)

    def close(self) -> None:
        self._detach()
        super().close()

    def _detach(self) -> None:
        self._closed = True
        self._dirty.set()
        self._remove_listener()
        self._remove_webmcp_listener()
        self._remove_evidence_listener()
        self._remove_close_listener()

    def _session_closed(self) -> None:
        """The session closed: the log keeps its calls and says it is closed above them."""
        self._detach()
        self.render()
        self.table.value = closed_html("the session was closed; these are its last calls") + self.table.value

    def _on_webmcp(self, event: WebMCPEvent) -> None:
        with self._lock:
            self._events.append(event)
            del self._events[: -self.limit]
        self._dirty.set()

    @property
    def evidence(self) -> list[EvidenceEvent]:
        """The console errors and failed requests shown (oldest first)."""
        with self._lock:
            return list(self._evidence)

    def _on_evidence(self, event: EvidenceEvent) -> None:
        if not event.notable:
            return
        with self._lock:
            self._evidence.append(event)
            del self._evidence[: -self.limit]
        self._dirty.set()

    def _on_call(self, record: CallRecord) -> None:
        with self._lock:
            self._records.append(record)
            del self._records[: -self.limit]
        self._dirty.set()

    def _refresher(self) -> None:
        """Re-render at most every `refresh_s`, off the runtime and kernel threads."""
        while True:  # close() sets _dirty, so a closing panel wakes here
            self._dirty.wait()
            if self._closed:
                return
            self._dirty.clear()
            self.render()
            time.sleep(self._refresh_s)

    def render(self) -> None:
        needle = self.filter.value.strip().lower()
        wanted = self.status_filter.value
        entries: list[tuple[str, CallRecord | WebMCPEvent | EvidenceEvent]] = [
            (record.envelope.operation.started_at, record)
            for record in self.records
            if (not needle or needle in record.tool.lower() or needle in record.caller.lower())
            and (wanted == "all" or record.envelope.status == wanted)
        ]
        entries += [
            (event.at, event)
            for event in self.events
            if (not needle or needle in f"webmcp {event.caller or ''} {event.summary()}".lower())
            and (wanted == "all" or wanted == ("error" if event.status == "error" else "success"))
        ]
        entries += [
            (event.entry["at"], event)
            for event in self.evidence
            if (not needle or needle in f"{event.stream} {event.summary()}".lower()) and wanted in ("all", "error")
        ]
        entries.sort(key=lambda entry: entry[0], reverse=True)
        self.table.value = _log_html([entry for _, entry in entries])


# HTML ---------------------------------------------------------------------------
def _event_html(event: WebMCPEvent) -> str:
    colour = ERROR_COLOUR if event.status == "error" else PAGE_TOOL_COLOUR
    by = f" <span style='color:#555'>by {html.escape(event.caller)}</span>" if event.caller else ""
    return (
        "<div class='webmcp-nb-event' style='border-bottom:1px solid #ddd;padding:2px 0 2px 14px'>"
        f"<code>{html.escape(event.at[11:23])}</code> <b style='color:{colour}'>webmcp {html.escape(event.kind)}</b>"
        f"{by} <span style='color:#555'>page {html.escape(event.page_id[:8])}</span> "
        f"{html.escape(event.summary())}</div>"
    )


def _evidence_html(event: EvidenceEvent) -> str:
    page = event.entry.get("page_id") or ""
    return (
        "<div class='webmcp-nb-evidence' style='border-bottom:1px solid #ddd;padding:2px 0 2px 14px'>"
        f"<code>{html.escape(event.entry['at'][11:23])}</code> <b style='color:{ERROR_COLOUR}'>"
        f"{html.escape(event.stream)}</b> <span style='color:#555'>page {html.escape(page[:8])}</span> "
        f"{html.escape(event.summary())}</div>"
    )


def _log_html(entries: list[CallRecord | WebMCPEvent | EvidenceEvent]) -> str:
    if not entries:
        return "<div style='color:#666'>No calls yet.</div>"
    rows = []
    for record in entries:
        if isinstance(record, WebMCPEvent):
            rows.append(_event_html(record))
            continue
        if isinstance(record, EvidenceEvent):
            rows.append(_evidence_html(record))
            continue
        envelope = record.envelope
        op = envelope.operation
        colour = SUCCESS_COLOUR if envelope.ok else ERROR_COLOUR
        label = "success" if envelope.ok else envelope.error_type
        rows.append(
            "<details style='border-bottom:1px solid #ddd;padding:2px 0'><summary>"
            f"<code>{html.escape(op.started_at[11:23])}</code> <b>{html.escape(record.tool)}</b> "
            f"<span style='color:#555'>by {html.escape(record.caller)}</span> "
            f"<span style='color:{colour};font-weight:600'>{html.escape(str(label))}</span> "
            f"<span style='color:#555'>{op.duration_ms:.0f} ms</span></summary>"
            f"<pre style='white-space:pre-wrap;margin:4px 0 4px 16px'>{html.escape(render_text(envelope))}</pre>"
            "</details>"
        )
    return "<div class='webmcp-nb-calllog'>" + "".join(rows) + "</div>"


def _status_html(envelope: Envelope) -> str:
    colour = SUCCESS_COLOUR if envelope.ok else ERROR_COLOUR
    first, _, rest = render_text(envelope).partition("\n")
    detail = html.escape(rest.strip().splitlines()[0]) if rest.strip() else ""
    return f"<span style='color:{colour}'>{html.escape(first)}</span> <span style='color:#555'>{detail}</span>"


def closed_html(what: str) -> str:
    """The label of a widget whose session has closed."""
    return f"<div class='webmcp-nb-closed' style='color:{ERROR_COLOUR}'><b>Closed</b>: {html.escape(what)}.</div>"


def _button(label: str, tooltip: str) -> widgets.Button:
    return widgets.Button(description=label, tooltip=tooltip, layout=widgets.Layout(width="auto"))


def _short(url: str, limit: int = 60) -> str:
    return url if len(url) <= limit else url[: limit - 1] + "…"


class ApprovalPanel(widgets.VBox):
    """Where agents' consequential calls wait for the notebook user: one row per
    request, with the tool, its arguments and the target page (and, for an API operation, the
    exact request it would send: `ApprovalRequest.preview`), Approve and Deny.

    `approve` is the `Approval` the MCP server calls on the runtime loop; button
    clicks (kernel or subshell thread) resolve it thread-safely. No answer within
    `timeout_s` denies.
    """

    children: tuple[Any, ...]  # VBox's trait: the heading, then one row per pending request

    def __init__(self, *, timeout_s: float = 45.0) -> None:
        self.timeout_s = timeout_s
        self.heading = widgets.HTML("<b>Agent approvals</b>: none pending")
        super().__init__([self.heading])
        self.add_class("webmcp-nb-approvals")
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._pending: list[PendingApproval] = []
        self.decided: list[tuple[str, str]] = []  # (summary, "approved" | "denied" | "timed out")

    @property
    def pending(self) -> list[PendingApproval]:
        """The requests on show, oldest first (each has `approve()` and `deny()`,
        what its buttons do)."""
        with self._lock:
            return list(self._pending)

    def next_request(self, timeout_s: float = 30.0) -> PendingApproval:
        """Wait for a request nobody has answered yet and return the oldest (TimeoutError if none comes)."""
        with self._changed:

            def waiting() -> list[PendingApproval]:
                return [pending for pending in self._pending if not pending.answered]

            if not self._changed.wait_for(waiting, timeout_s):
                raise TimeoutError(f"no approval request within {timeout_s:g} s")
            return waiting()[0]

    async def approve(self, request: ApprovalRequest) -> str | None:
        import asyncio

        loop = asyncio.get_running_loop()
        decision: asyncio.Future[bool] = loop.create_future()

        def decide(approved: bool) -> None:
            def settle() -> None:  # on the loop: the first answer wins
                if not decision.done():
                    decision.set_result(approved)

            loop.call_soon_threadsafe(settle)

        row = self._add_row(request, decide)
        try:
            approved = await asyncio.wait_for(decision, self.timeout_s)
            verdict = "approved" if approved else "denied"
        except TimeoutError:
            approved, verdict = False, "timed out"
        except asyncio.CancelledError as cancelled:  # answered elsewhere (the MCP App): it says how
            if cancelled.args:
                self.decided.append((approval_summary(request), str(cancelled.args[0])))
                self.heading.value = f"<b>Agent approvals</b>: {html.escape(str(cancelled.args[0]))}"
            raise
        finally:
            self._remove_row(row)
        self.decided.append((approval_summary(request), verdict))
        if approved:
            return None
        if verdict == "timed out":
            return (
                f"The notebook user did not approve {request.tool} within {self.timeout_s:g} s; "
                "it was not run. Ask them to approve in the notebook, then call again."
            )
        return f"The notebook user denied {request.tool}; it was not run. Do not repeat it unless they ask."

    def _add_row(self, request: ApprovalRequest, decide: Callable[[bool], None]) -> widgets.Widget:
        shown = f"<code>{html.escape(approval_summary(request))}</code>"
        if request.preview:  # the exact request it would send (secret headers redacted by the core)
            shown += f"<pre class='webmcp-nb-approval-preview'>{html.escape(preview_text(request))}</pre>"
        text = widgets.HTML(shown)
        approve, deny = _button("Approve", "Run this call"), _button("Deny", "Refuse this call")
        approve.button_style, deny.button_style = "success", "danger"
        pending = PendingApproval(request, approval_summary(request), decide)
        approve.on_click(lambda _button: pending.approve())
        deny.on_click(lambda _button: pending.deny())
        row = widgets.HBox([text, approve, deny])
        with self._lock:
            self.children = (*self.children, row)
            self._pending.append(pending)
            pending.row = row
            self._update_heading()
            self._changed.notify_all()
        return row

    def _remove_row(self, row: widgets.Widget) -> None:
        with self._lock:
            self.children = tuple(child for child in self.children if child is not row)
            self._pending = [pending for pending in self._pending if pending.row is not row]
            self._update_heading()
        row.close()

    def _update_heading(self) -> None:
        pending = len(self.children) - 1
        self.heading.value = f"<b>Agent approvals</b>: {pending or 'none'} pending"


class PendingApproval:
    """One request in an `ApprovalPanel`: answer it with `approve()` or `deny()` (its buttons)."""

    def __init__(self, request: ApprovalRequest, summary: str, decide: Callable[[bool], None]) -> None:
        self.request, self.summary, self._decide = request, summary, decide
        self.row: widgets.Widget | None = None
        self.answered = False

    def approve(self) -> None:
        self.answered = True
        self._decide(True)

    def deny(self) -> None:
        self.answered = True
        self._decide(False)

    def __repr__(self) -> str:
        return f"<PendingApproval {self.summary}>"
