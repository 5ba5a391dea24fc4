"""browser_http's binary bodies: base64 in the result, or handed to the session's renderer."""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from typing import Any
from urllib.parse import urlsplit

from ..call.errors import ToolFailure
from .http_models import BinaryOptions, HttpCall


async def binary_body(call: HttpCall, data: bytes, media_type: str) -> dict[str, Any]:
    options = call.p.binary or BinaryOptions(mode="base64", max_bytes=None)
    if options.mode == "base64":
        # bytes stay bytes in Python; JSON carries them as base64 (and MCP sends images as image blocks)
        return {
            "kind": "binary",
            "encoding": "base64",
            "media_type": media_type,
            "byte_length": len(data),
            "data": data,
        }
    renderer = call.ctx.engine.binary_renderer
    assert renderer is not None
    cancelled = threading.Event()
    operation = {"tool": call.ctx.spec.name, "method": call.p.method, "url": call.p.url, "caller": call.ctx.caller}
    try:
        if inspect.iscoroutinefunction(renderer):
            rendered = await renderer(data, media_type, operation, cancelled)
        else:
            rendered = await asyncio.to_thread(renderer, data, media_type, operation, cancelled)
    except asyncio.CancelledError:
        cancelled.set()
        raise
    except Exception as exc:  # noqa: BLE001 - the renderer is the user's code
        raise render_failure(call, f"the binary_renderer raised {type(exc).__name__}: {exc}") from None
    problem = check_rendered(rendered)
    if problem:
        raise render_failure(call, problem)
    return {
        "kind": "download",
        "media_type": media_type,
        "byte_length": len(data),
        "url": rendered["url"],
        "expires_at": rendered["expires_at"],
    }


def check_rendered(rendered: Any) -> str | None:
    """Why a renderer's answer is unacceptable (None if it is fine)."""
    if not isinstance(rendered, dict):
        return f"the binary_renderer returned {type(rendered).__name__}, not a dict with url and expires_at"
    url, expires = rendered.get("url"), rendered.get("expires_at")
    if not isinstance(url, str):
        return "the binary_renderer returned no url"
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        return f"the binary_renderer's url must be https:// (got {url[:60]!r})"
    if parts.username is not None or parts.password is not None:
        return "the binary_renderer's url embeds credentials"
    if not isinstance(expires, int) or isinstance(expires, bool) or expires <= time.time() * 1000:
        return f"expires_at must be a future integer (epoch ms), got {expires!r}"
    return None


def render_failure(call: HttpCall, problem: str) -> ToolFailure:
    return call.failure(
        "download_failed",
        f"The body arrived but could not be handed out: {problem}. The request itself may already have had effects.",
    )
