"""Failure context: what the page did during a call that failed, and hints to act on it.

An error envelope may carry an additive ``context`` object; the text rendering shows it after
the message, in this order:

- ``warnings``: concrete hints (a locator that failed on a page with nothing in it);
- ``diagnostic``: what the browser was doing (a pending dialog, the element's actionability
  state, a tab that stopped answering, a navigation in flight);
- ``page``: only when the page moved, navigated, logged errors or opened a tab during the call;
- ``console``: the call's latest console messages (at most 20 entries and 2,500 characters);
- ``partial``: what a collecting tool had when it failed (browser_http's SSE events, with
  ``reconnects``); the text names it and its size, the structured envelope holds it;
- ``logs``: instead of ``console``, a tool's own log of the call (browser_execute: what the
  snippet printed and the page logged, in order), its latest within the same bounds; it ends the text.

A failure with none of these has no context. Messages are capped too (`cap_message`), keeping
their head and tail, so an error's type and its last lines always arrive. Every part of the text
is bounded so that the whole error text stays under `MAX_TEXT_CHARS`: the message 3,000, the
diagnostic `MAX_DIAGNOSTIC_CHARS`, the page line's URLs `MAX_URL_CHARS` each and its tabs
`MAX_TABS_LISTED` (the structured context keeps them all), the console 2,500.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..browsers.instances import Instance
    from ..browsers.pages import PageState
    from ..call.context import CallContext
    from ..call.envelope import ErrorType

MAX_TEXT_CHARS = 8000
"""An error's whole text stays under this: some clients cut error text at 10,000 characters."""
CONTEXT_KEYS = (
    "warnings",
    "diagnostic",
    "page",
    "console",
    "partial",
    "reconnects",
    "blocked_fields",
    "action_completed",
    "logs",
)
"""What an error's context may hold (see the module docstring)."""
MAX_MESSAGE_CHARS = 3000
MESSAGE_TAIL_CHARS = 1000
MAX_CONSOLE_ENTRIES = 20
MAX_CONSOLE_CHARS = 2500
MAX_DIAGNOSTIC_CHARS = 400
MAX_URL_CHARS = 160
MAX_TABS_LISTED = 3
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


def clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, saying how long it was."""
    if len(text) <= limit:
        return text
    marker = f"... [{len(text):,} characters]"
    return text[: limit - len(marker)] + marker


# The lines of Playwright's call log that say why an element was not actionable.
_ACTIONABILITY = re.compile(
    r"^\s*- (element is not \w.*|element is outside of the viewport|element was detached.*|.+ intercepts pointer events)$",
    re.MULTILINE,
)


def actionability(playwright_message: str, *, secret: bool = False) -> dict[str, Any] | None:
    """The context of an action that timed out: the element's state at Playwright's last
    actionability check (from its call log), or None when the log does not say. On a `secret`
    field only the state is told, never an element's HTML."""
    found = [line for line in _ACTIONABILITY.findall(playwright_message) if not secret or line.startswith("element ")]
    if not found:
        return None
    state = f"the {found[-1]}" if found[-1].startswith("element ") else found[-1]
    return {"diagnostic": clip(f"{state} (Playwright's last actionability check)", MAX_DIAGNOSTIC_CHARS)}


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


async def failure_context(
    ctx: CallContext, error_type: ErrorType | None, known: dict[str, Any] | None = None
) -> dict[str, Any] | None:
    """The context of a failed call (joined to what the tool `known`), or None when there is none."""
    instance, page_state, marks = ctx.instance, ctx.page_state, ctx.marks
    context: dict[str, Any] = dict(known or {})
    logs = context.pop("logs", None)
    if logs:
        context["logs"] = latest(logs)  # last, as in the text
    if instance is None or page_state is None:
        return context or None
    if (error_type in LOCATOR_FAILURES or ctx.element_failed) and await _empty_page(page_state):
        context["warnings"] = [EMPTY_PAGE_WARNING]
    diagnostic = "; ".join(filter(None, (context.get("diagnostic"), _diagnostic(page_state))))
    if diagnostic:
        context["diagnostic"] = clip(diagnostic, MAX_DIAGNOSTIC_CHARS)
    if marks is not None:
        page = _page_changes(instance, page_state, marks)
        if page:
            context["page"] = page
        console = [] if logs else _console(instance, page_state, marks)
        if console:
            context["console"] = console
    if logs:
        context["logs"] = context.pop("logs")
    return context or None


async def _empty_page(page_state: PageState) -> bool:
    """The document really is empty: checked in the DOM, not by the URL (a page made with
    `set_content` keeps about:blank and has content)."""
    if page_state.closed or page_state.page.url != "about:blank" or page_state.condition != "ok":
        return False
    with contextlib.suppress(Exception):
        return bool(
            await asyncio.wait_for(
                page_state.page.evaluate(
                    "() => !document.body || (document.body.childElementCount === 0 && !document.body.textContent.trim())"
                ),
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
        if record.seq > marks.console_seq
        and record.fields["level"] == "error"
        and record.fields["page_id"] == page_state.page_id  # the tab's own, as in the console lines
    )
    if errors:
        changes["console_errors"] = errors
    opened = [page_id for page_id in instance.pages if page_id not in marks.page_ids]
    if opened:
        changes["opened_tabs"] = opened
    return changes


def _console(instance: Instance, page_state: PageState, marks: CallMarks) -> list[str]:
    return latest(
        [
            f"{record.fields['level']}: {record.fields['text']}"
            for record in instance.evidence.console.records
            if record.seq > marks.console_seq and record.fields["page_id"] == page_state.page_id
        ]
    )


def latest(lines: list[str]) -> list[str]:
    """The latest of `lines`, in order: at most `MAX_CONSOLE_ENTRIES`, `MAX_CONSOLE_CHARS` in all."""
    lines = lines[-MAX_CONSOLE_ENTRIES:]
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
            moved_from, moved_to = clip(page["moved_from"], MAX_URL_CHARS), clip(page["moved_to"], MAX_URL_CHARS)
            said.append(f"moved from {moved_from} to {moved_to}")
        if page.get("navigations"):
            count = page["navigations"]
            said.append(f"{count} navigation{'s' if count != 1 else ''}")
        if page.get("console_errors"):
            count = page["console_errors"]
            said.append(f"{count} console error{'s' if count != 1 else ''}")
        opened = page.get("opened_tabs", [])
        said += [f"opened tab {page_id}" for page_id in opened[:MAX_TABS_LISTED]]
        if len(opened) > MAX_TABS_LISTED:
            said.append(f"{len(opened) - MAX_TABS_LISTED} more tabs opened (browser_tabs lists them)")
        lines.append("Page: " + "; ".join(said))
    if context.get("console"):
        lines.append("Console (latest of the call):")
        lines += [f"  {line}" for line in context["console"]]
    if "partial" in context:
        lines.append(
            f"Partial: {len(context['partial'])} items, {context.get('reconnects', 0)} reconnects, in the envelope's "
            "context.partial (incomplete; not an instruction to retry)"
        )
    if context.get("logs"):
        lines.append("Logs (latest of the call):")
        lines += [f"  {line}" for line in context["logs"]]
    return lines
