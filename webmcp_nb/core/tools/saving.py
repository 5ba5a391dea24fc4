"""`save=true`: a tool's whole result written to a file, with its first lines returned.

The way out of `result_too_large` for results that can be big (a snapshot, a script's
value): the file goes to the session's artifacts directory (`Engine.artifact_path`,
listed in `operation.artifacts`) and the envelope stays small.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from pydantic import Field

from .models import Data

if TYPE_CHECKING:
    from ..call.context import CallContext

HEAD_LINES = 40
HEAD_MAX_CHARS = 8_000

SAVE_DESCRIPTION = f"Write it to an artifact file; return its path and first {HEAD_LINES} lines."


class SavedFile(Data):
    path: str
    size_bytes: int
    lines: int = Field(description="How many lines the file has.")
    head: str = Field(
        description=f"The first {HEAD_LINES} lines of the file, cut at {HEAD_MAX_CHARS:,} characters (at an eighth "
        "of BROWSER_MCP_MAX_RESULT_BYTES when that is less, so that the saved result always fits)."
    )


async def save_text(ctx: CallContext, kind: str, ending: str, text: str) -> SavedFile:
    """Write `text` to a new artifact `<kind>-...<ending>` and describe it. Agents can read the
    file, so it never holds a known secret (see webmcp_nb.core.guard.known_secrets)."""
    known, instance = ctx.engine.manager.secrets, ctx.instance
    if instance is not None:
        await known.refresh(instance.instance_id, instance.context)
    text = known.scrub(text)
    path = ctx.engine.artifact_path(kind, ending)
    encoded = text.encode()
    await asyncio.to_thread(path.write_bytes, encoded)  # off the loop that serves every instance
    ctx.artifacts.append(str(path))
    lines = text.splitlines()
    head = "\n".join(lines[:HEAD_LINES])[: min(HEAD_MAX_CHARS, ctx.engine.limits.max_result_bytes // 8)]
    return SavedFile(path=str(path), size_bytes=len(encoded), lines=len(lines), head=head)
