"""Failure context: what the page did during a call that failed, and hints to act on it.

An error envelope may carry an additive ``context`` object; the text rendering shows it after
the message, in this order:

- ``warnings``: concrete hints (a locator that failed on a page with nothing in it);
- ``diagnostic``: what the browser was doing (a pending dialog, a tab that stopped answering,
  a navigation in flight);
- ``page``: only when the page moved, navigated, logged errors or opened a tab during the call;
- ``console``: the call's latest console messages (at most 20 entries and 2,500 characters);
- ``partial``: what a collecting tool had when it failed (browser_http's SSE events, with
  ``reconnects``); the text names it and its size, the structured envelope holds it.

A failure with none of these has no context. Messages are capped too (`cap_message`), keeping
their head and tail, so an error's type and its last lines always arrive.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .context import CallContext
    from .envelope import ErrorType
    from .instances import Instance
    from .pages import PageState

CONTEXT_KEYS = (
    "warnings",
    "diagnostic",
    "page",
    "console",
    "partial",
    "reconnects",
    "blocked_fields",
    "action_completed",
)
"""What an error's context may hold (see the module docstring)."""
MAX_MESSAGE_CHARS = 3000
MESSAGE_TAIL_CHARS = 1000
MAX_CONSOLE_ENTRIES = 20
MAX_CONSOLE_CHARS = 2500
CHECK_TIMEOUT_S = 0.5  # reading the page for a hint never holds a failure up longer
# Failures that mean "the element was not there": an empty page deserves a warning.
LOCATOR_FAILURES: frozenset[ErrorType] = frozenset(
    {"element_not_found", "stale_ref", "wait_timeout", "verification_failed"}
)
EMPTY_PAGE_WARNING = (
    "The page is empty (about:blank with no content): there is nothing to find yet. "
    "Navigate first with browser_navigate."
)


def cap_message(message: str) -> str:
    """`message` cut to `MAX_MESSAGE_CHARS`, keeping its head and its tail (the last frame)."""
    if len(message) <= MAX_MESSAGE_CHARS:
        return message
    marker = f"\n[... {len(message):,} characters, cut to {MAX_MESSAGE_CHARS:,}: head and tail kept ...]\n"
    head = MAX_MESSAGE_CHARS - MESSAGE_TAIL_CHARS - len(marker)
    return message[:head] + marker + message[-MESSAGE_TAIL_CHARS:]


@dataclass(frozen=True)
class CallMarks:
    """Where a call found its page, to tell afterwards what changed during it."""

    url: str
    generation: int
    console_seq: int
    page_ids: frozenset[str]


def mark(instance: Instance, page_state: PageState) -> CallMarks:
    return CallMarks(
        url=page_state.page.url,
        generation=page_state.document_generation,
        console_seq=instance.evidence.console.last_seq,
        page_ids=frozenset(instance.pages),
    )


async def failure_context(ctx: CallContext, error_type: ErrorType | None) -> dict[str, Any] | None:
    """The context of a failed call, or None when there is nothing to add."""
    instance, page_state, marks = ctx.instance, ctx.page_state, ctx.marks
    if instance is None or page_state is None:
        return None
    context: dict[str, Any] = {}
    if error_type in LOCATOR_FAILURES and await _empty_page(page_state):
        context["warnings"] = [EMPTY_PAGE_WARNING]
    diagnostic = _diagnostic(page_state)
    if diagnostic:
        context["diagnostic"] = diagnostic
    if marks is not None:
        page = _page_changes(instance, page_state, marks)
        if page:
            context["page"] = page
        console = _console(instance, page_state, marks)
        if console:
            context["console"] = console
    return context or None


async def _empty_page(page_state: PageState) -> bool:
    """The document really is empty: checked in the DOM, not by the URL (a page made with
    `set_content` keeps about:blank and has content)."""
    if page_state.closed or page_state.page.url != "about:blank" or page_state.condition != "ok":
        return False
    with contextlib.suppress(Exception):
        return bool(
            await asyncio.wait_for(
                page_state.page.evaluate("() => !document.body || document.body.childElementCount === 0"),
                CHECK_TIMEOUT_S,
            )
        )
    return False


def _diagnostic(page_state: PageState) -> str:
    found = []
    if page_state.modal is not None:
        found.append(f"the page shows {page_state.modal.summary()} (resolve it with {page_state.modal.resolved_by})")
    if page_state.condition != "ok":
        found.append(f"the tab is {page_state.condition}")
    if page_state.navigating:
        found.append("a navigation is in flight")
    return "; ".join(found)


def _page_changes(instance: Instance, page_state: PageState, marks: CallMarks) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    url = page_state.page.url if not page_state.closed else marks.url
    if url != marks.url:
        changes["moved_from"], changes["moved_to"] = marks.url, url
    navigations = page_state.document_generation - marks.generation
    if navigations > 0:
        changes["navigations"] = navigations
    errors = sum(
        1
        for record in instance.evidence.console.records
        if record.seq > marks.console_seq and record.fields["level"] == "error"
    )
    if errors:
        changes["console_errors"] = errors
    opened = [page_id for page_id in instance.pages if page_id not in marks.page_ids]
    if opened:
        changes["opened_tabs"] = opened
    return changes


def _console(instance: Instance, page_state: PageState, marks: CallMarks) -> list[str]:
    lines = [
        f"{record.fields['level']}: {record.fields['text']}"
        for record in instance.evidence.console.records
        if record.seq > marks.console_seq and record.fields["page_id"] == page_state.page_id
    ][-MAX_CONSOLE_ENTRIES:]
    kept: list[str] = []
    used = 0
    for line in reversed(lines):  # the latest first, within the character budget
        line = line if len(line) <= 500 else line[:497] + "..."
        if used + len(line) > MAX_CONSOLE_CHARS:
            break
        kept.append(line)
        used += len(line)
    return list(reversed(kept))


def context_lines(context: dict[str, Any]) -> list[str]:
    """The text rendering of a failure's context (see the module docstring for the order)."""
    lines: list[str] = []
    if context.get("warnings"):
        lines.append("Warnings:")
        lines += [f"- {warning}" for warning in context["warnings"]]
    if context.get("diagnostic"):
        lines.append(f"Diagnostic: {context['diagnostic']}")
    page = context.get("page") or {}
    if page:
        said = []
        if "moved_to" in page:
            said.append(f"moved from {page['moved_from']} to {page['moved_to']}")
        if page.get("navigations"):
            count = page["navigations"]
            said.append(f"{count} navigation{'s' if count != 1 else ''}")
        if page.get("console_errors"):
            count = page["console_errors"]
            said.append(f"{count} console error{'s' if count != 1 else ''}")
        said += [f"opened tab {page_id}" for page_id in page.get("opened_tabs", [])]
        lines.append("Page: " + "; ".join(said))
    if context.get("console"):
        lines.append("Console (latest of the call):")
        lines += [f"  {line}" for line in context["console"]]
    if "partial" in context:
        lines.append(
            f"Partial: {len(context['partial'])} items, {context.get('reconnects', 0)} reconnects, in the envelope's "
            "context.partial (incomplete; not an instruction to retry)"
        )
    return lines
