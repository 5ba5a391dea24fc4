"""Secret fields inside closed shadow roots, painted over for the length of a screenshot.

Playwright's ``mask`` (see `webmcp_nb.core.guard.redaction.secret_field_masks`) finds fields with its
CSS engine, which pierces open shadow roots only: a password field in a closed one would show
its dots, and so its length. Chromium's DevTools see every node, so on Chromium each tab (and
each out-of-process frame, which has a DevTools session of its own) is searched for the secret
field selector; every match that sits in a closed shadow root and is a secret field by
`SECRET_FIELD_JS`'s rule gets an inline style that paints it grey with transparent text, and its
own ``style`` attribute back once the capture is done. A search that fails refuses the
screenshot (`unsupported_capability`), as it cannot be told what would show. Other engines have
no such view: there closed shadow roots are not covered (docs/secrets.md says so).
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from ..call.errors import ToolFailure
from ..call.util import spawn
from .redaction import MASK_COLOR, SECRET_FIELD_CSS, SECRET_FIELD_JS

if TYPE_CHECKING:
    from playwright.async_api import CDPSession, Page

_GROUP = "webmcp-nb-closed-secrets"
# Paint `this` if it is a secret field inside a closed shadow root; its `style` attribute before,
# or false when it is left alone.
_PAINT_JS = """function (color) {
  const secret = IS_SECRET;
  let root = this.getRootNode(), closed = false;
  while (root && root.nodeType === 11 && root.host) {
    if (root.mode === "closed") { closed = true; break; }
    root = root.host.getRootNode();
  }
  if (!closed || !secret(this)) return false;
  const before = this.getAttribute("style");
  for (const [name, value] of [["background", color], ["color", "transparent"],
      ["-webkit-text-fill-color", "transparent"], ["caret-color", "transparent"], ["text-shadow", "none"],
      ["border-color", color], ["opacity", "1"]]) {
    this.style.setProperty(name, value, "important");
  }
  return {style: before};
}""".replace("IS_SECRET", SECRET_FIELD_JS)
_RESTORE_JS = """function (style) {
  if (style === null) this.removeAttribute("style"); else this.setAttribute("style", style);
}"""


@contextlib.asynccontextmanager
async def closed_secret_fields_painted(page: Page, is_chromium: bool) -> AsyncIterator[int]:
    """Within the block, every secret field in a closed shadow root of `page` is painted over
    (yields how many); afterwards each is as it was."""
    from playwright.async_api import Error

    if not is_chromium:
        yield 0
        return
    painted: list[tuple[CDPSession, str, str | None]] = []
    searches: list[tuple[CDPSession, str | None]] = []
    frames: list[CDPSession] = []
    try:
        try:
            tab = await _tab_session(page)
            try:
                painted += await _paint(tab, searches)
            except Error:  # a kept session gone stale: once more on a new one
                _TAB_SESSIONS.pop(page, None)
                spawn(_detach(tab))
                tab = await _tab_session(page)
                painted += await _paint(tab, searches)
            frames = await _frame_sessions(page)
            for session in frames:
                painted += await _paint(session, searches)
        except Error as exc:
            raise _refusal(exc) from None
        yield len(painted)
    finally:
        for session, object_id, style in painted:
            with contextlib.suppress(Exception):  # the page went away: nothing to restore
                await session.send(
                    "Runtime.callFunctionOn",
                    {"objectId": object_id, "functionDeclaration": _RESTORE_JS, "arguments": [{"value": style}]},
                )
        for session, search_id in searches:  # nothing waits for the tidying up
            if session not in frames:
                spawn(_tidy(session, search_id))
        for session in frames:  # their searches and objects go with them
            spawn(_detach(session))


_TAB_SESSIONS: weakref.WeakKeyDictionary[Page, asyncio.Future[CDPSession]] = weakref.WeakKeyDictionary()
"""Each tab's search session, opened on its first screenshot and kept (one round trip less each
time); its DOM domain is switched off between captures, so it hears of no changes meanwhile."""


async def _tab_session(page: Page) -> CDPSession:
    opening = _TAB_SESSIONS.get(page)
    if opening is None:
        opening = _TAB_SESSIONS[page] = asyncio.ensure_future(page.context.new_cdp_session(page))
    try:
        return await asyncio.shield(opening)
    except BaseException:
        if opening.done() and _TAB_SESSIONS.get(page) is opening:
            del _TAB_SESSIONS[page]
        raise


async def _frame_sessions(page: Page) -> list[CDPSession]:
    """A DevTools session for each out-of-process frame of the tab (closed once searched)."""
    from playwright.async_api import Error

    sessions = []
    for frame in page.frames[1:]:
        try:
            sessions.append(await page.context.new_cdp_session(frame))
        except Error:
            continue  # a frame of its parent's process: searched with it
    return sessions


async def _detach(session: CDPSession) -> None:
    with contextlib.suppress(Exception):
        await session.detach()


async def _tidy(session: CDPSession, search_id: str | None) -> None:
    """Leave a kept session as it was before the search: no results, no objects, no DOM domain."""
    with contextlib.suppress(Exception):
        if search_id is not None:
            await session.send("DOM.discardSearchResults", {"searchId": search_id})
        await session.send("Runtime.releaseObjectGroup", {"objectGroup": _GROUP})
        await session.send("DOM.disable")


async def _paint(
    session: CDPSession, searches: list[tuple[CDPSession, str | None]]
) -> list[tuple[CDPSession, str, str | None]]:
    """Paint the secret fields in closed shadow roots that `session` sees; the search is added to
    `searches` (to be tidied up). A failure undoes the painting and raises again."""

    painted: list[tuple[CDPSession, str, str | None]] = []
    searches.append((session, None))
    try:
        # One round trip: a session answers in order, so the search runs on the document just asked for.
        search: dict[str, Any]
        _, search = await asyncio.gather(
            session.send("DOM.getDocument", {"depth": 0}),
            session.send("DOM.performSearch", {"query": SECRET_FIELD_CSS}),
        )
        searches[-1] = (session, search["searchId"])
        count = int(search.get("resultCount", 0))
        if not count:
            return painted
        found = await session.send(
            "DOM.getSearchResults", {"searchId": search["searchId"], "fromIndex": 0, "toIndex": count}
        )
        # Every match at once (a login form's password field, outside any shadow root, is one).
        resolved = await asyncio.gather(
            *(
                session.send("DOM.resolveNode", {"nodeId": node_id, "objectGroup": _GROUP})
                for node_id in found.get("nodeIds", [])
            )
        )
        object_ids = [node["object"]["objectId"] for node in resolved]
        answers = await asyncio.gather(
            *(
                session.send(
                    "Runtime.callFunctionOn",
                    {
                        "objectId": object_id,
                        "functionDeclaration": _PAINT_JS,
                        "arguments": [{"value": MASK_COLOR}],
                        "returnByValue": True,
                    },
                )
                for object_id in object_ids
            ),
            return_exceptions=True,
        )
        for object_id, answer in zip(object_ids, answers, strict=True):
            value = answer.get("result", {}).get("value") if isinstance(answer, dict) else None
            if isinstance(value, dict):
                painted.append((session, object_id, value.get("style")))
        failure = next((answer for answer in answers if isinstance(answer, BaseException)), None)
        if failure is not None:
            raise failure
    except BaseException:
        for _, object_id, style in painted:  # undo what was done before failing
            with contextlib.suppress(Exception):
                await session.send(
                    "Runtime.callFunctionOn",
                    {"objectId": object_id, "functionDeclaration": _RESTORE_JS, "arguments": [{"value": style}]},
                )
        raise
    return painted


def _refusal(exc: Exception) -> ToolFailure:
    message = str(getattr(exc, "message", exc)).splitlines()[0]
    return ToolFailure(
        "unsupported_capability",
        "The screenshot was refused: the page's closed shadow roots could not be searched for password "
        f"fields, which would show their length ({message}). Nothing was captured; try again once the page "
        "has settled, or take a snapshot instead.",
        started=False,
    )
