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

import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from ..call.errors import ToolFailure
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
    if not is_chromium:
        yield 0
        return
    sessions = await _sessions(page)
    painted: list[tuple[CDPSession, str, str | None]] = []
    try:
        for session in sessions:
            painted += await _paint(session)
        yield len(painted)
    finally:
        for session, object_id, style in painted:
            with contextlib.suppress(Exception):  # the page went away: nothing to restore
                await session.send(
                    "Runtime.callFunctionOn",
                    {"objectId": object_id, "functionDeclaration": _RESTORE_JS, "arguments": [{"value": style}]},
                )
        for session in sessions:
            with contextlib.suppress(Exception):
                await session.send("Runtime.releaseObjectGroup", {"objectGroup": _GROUP})
                await session.detach()


async def _sessions(page: Page) -> list[CDPSession]:
    """A DevTools session for the tab and for each of its out-of-process frames."""
    from playwright.async_api import Error

    sessions = [await _open(page)]
    for frame in page.frames[1:]:
        try:
            sessions.append(await page.context.new_cdp_session(frame))
        except Error:
            continue  # a frame of its parent's process: searched with it
    return sessions


async def _open(page: Page) -> CDPSession:
    from playwright.async_api import Error

    try:
        return await page.context.new_cdp_session(page)
    except Error as exc:
        raise _refusal(exc) from None


async def _paint(session: CDPSession) -> list[tuple[CDPSession, str, str | None]]:
    from playwright.async_api import Error

    painted: list[tuple[CDPSession, str, str | None]] = []
    try:
        await session.send("DOM.getDocument", {"depth": 0})
        search = await session.send("DOM.performSearch", {"query": SECRET_FIELD_CSS})
        count = int(search.get("resultCount", 0))
        if not count:
            return painted
        found = await session.send(
            "DOM.getSearchResults", {"searchId": search["searchId"], "fromIndex": 0, "toIndex": count}
        )
        for node_id in found.get("nodeIds", []):
            resolved: dict[str, Any] = await session.send("DOM.resolveNode", {"nodeId": node_id, "objectGroup": _GROUP})
            object_id = resolved["object"]["objectId"]
            answer = await session.send(
                "Runtime.callFunctionOn",
                {
                    "objectId": object_id,
                    "functionDeclaration": _PAINT_JS,
                    "arguments": [{"value": MASK_COLOR}],
                    "returnByValue": True,
                },
            )
            value = answer.get("result", {}).get("value")
            if isinstance(value, dict):
                painted.append((session, object_id, value.get("style")))
    except Error as exc:
        for _, object_id, style in painted:  # undo what was done before refusing
            with contextlib.suppress(Exception):
                await session.send(
                    "Runtime.callFunctionOn",
                    {"objectId": object_id, "functionDeclaration": _RESTORE_JS, "arguments": [{"value": style}]},
                )
        raise _refusal(exc) from None
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
