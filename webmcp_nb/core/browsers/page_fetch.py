"""A request made by the page's own `fetch`, its body pulled in bounded chunks.

The page keeps, per request, its `AbortController` and the body's `ReadableStream` reader.
Python starts the request (`PageFetch.start` returns once the headers are in), then pulls
the body chunk by chunk (`read`, at most `max_bytes` a pull, as base64 through
`evaluate`), so neither side ever holds more than the caller allows; `cancel` aborts the
fetch and cancels the reader, which ends any pull that is waiting.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from playwright.async_api import Frame

KEY = "__webmcp_nb_http"
CANCEL_TIMEOUT_S = 5.0

INSTALL_JS = """(key) => {
  if (window[key]) return;
  const streams = new Map();
  const encode = (parts, size) => {
    const all = new Uint8Array(size);
    let at = 0;
    for (const part of parts) { all.set(part, at); at += part.length; }
    let text = "";
    for (let i = 0; i < all.length; i += 0x8000) text += String.fromCharCode.apply(null, all.subarray(i, i + 0x8000));
    return btoa(text);
  };
  const reason = (e) => (e && (e.message || e.name)) ? `${e.name || "Error"}: ${e.message || ""}` : String(e);
  Object.defineProperty(window, key, { value: {
    async start(id, req) {
      const controller = new AbortController();
      const entry = { controller, reader: null, leftover: null };
      streams.set(id, entry);
      let response;
      try {
        const init = { method: req.method, headers: req.headers, signal: controller.signal, cache: "no-store" };
        if (req.body !== null) init.body = req.body;
        if (req.redirect) init.redirect = req.redirect;
        response = await fetch(new URL(req.url, document.baseURI).href, init);
      } catch (e) {
        streams.delete(id);
        return { error: reason(e), aborted: controller.signal.aborted };
      }
      if (response.type === "opaqueredirect") {
        streams.delete(id);
        return { error: "Redirected: the answer is a redirect, which this request does not follow", aborted: false };
      }
      if (!streams.has(id)) return { error: "AbortError: cancelled", aborted: true };
      entry.reader = response.body ? response.body.getReader() : null;
      return { status: response.status, status_text: response.statusText, url: response.url,
               headers: [...response.headers], has_body: entry.reader !== null };
    },
    async read(id, max, eager) {
      const entry = streams.get(id);
      if (!entry || !entry.reader) return { data: "", done: true };
      const parts = [];
      let size = 0;
      if (entry.leftover) { parts.push(entry.leftover); size = entry.leftover.length; entry.leftover = null; }
      let done = false, error = null;
      while (size < max && !(eager && size > 0)) {
        let chunk;
        try { chunk = await entry.reader.read(); }
        catch (e) { error = reason(e); streams.delete(id); break; }
        if (chunk.done) { done = true; streams.delete(id); break; }
        parts.push(chunk.value);
        size += chunk.value.length;
      }
      if (size > max) {
        const last = parts.pop();
        const keep = last.length - (size - max);
        entry.leftover = last.subarray(keep);
        parts.push(last.subarray(0, keep));
        size = max;
      }
      return { data: encode(parts, size), done, error };
    },
    cancel(id) {
      const entry = streams.get(id);
      streams.delete(id);
      if (!entry) return false;
      entry.controller.abort();
      if (entry.reader) entry.reader.cancel().catch(() => {});
      return true;
    },
  } });
}"""


@dataclass(frozen=True)
class Head:
    """What the response said before its body: status line, final URL and headers."""

    status: int
    status_text: str
    url: str
    headers: dict[str, str]
    has_body: bool

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")

    @property
    def media_type(self) -> str:
        return media_type_of(self.content_type)

    @property
    def content_length(self) -> int | None:
        raw = self.headers.get("content-length", "")
        return int(raw) if raw.isdigit() else None


def media_type_of(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


class FetchFailed(Exception):
    """The page's fetch failed (network error, CORS, abort); `reason` is the browser's."""

    def __init__(self, reason: str, *, aborted: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.aborted = aborted


@dataclass(frozen=True)
class Chunk:
    data: bytes
    done: bool
    error: str | None = None


class Fetch(Protocol):
    """What browser_http's reader needs of a request: `PageFetch`, or an API's kernel client.
    `sender` and `failure_note` word its failures ("{sender} of URL failed: REASON (NOTE)")."""

    sender: str
    failure_note: str

    async def start(self, url: str, method: str, headers: dict[str, str], body: str | None) -> Head: ...

    async def read(self, max_bytes: int, *, eager: bool = False) -> Chunk: ...

    async def cancel(self) -> None: ...


class PageFetch:
    """One request made by the page's `fetch` in `frame` (see the module docstring)."""

    sender = "The page's fetch"
    failure_note = "the browser's reason; CORS refusals and network errors look alike to the page"

    def __init__(self, frame: Frame, *, follow_redirects: bool = True) -> None:
        self.frame = frame
        self.follow_redirects = follow_redirects  # False: a redirect fails the request (FetchFailed)
        self.id = uuid.uuid4().hex
        self.sent = False  # True once the page was asked to fetch: the request may have gone out

    async def start(self, url: str, method: str, headers: dict[str, str], body: str | None) -> Head:
        await self.frame.evaluate(INSTALL_JS, KEY)
        self.sent = True
        answer: dict[str, Any] = await self.frame.evaluate(
            f"([id, req]) => window[{KEY!r}].start(id, req)",
            [
                self.id,
                {"url": url, "method": method, "headers": headers, "body": body}
                | ({} if self.follow_redirects else {"redirect": "manual"}),
            ],
        )
        if "error" in answer:
            raise FetchFailed(answer["error"], aborted=answer["aborted"])
        return Head(
            status=answer["status"],
            status_text=answer["status_text"],
            url=answer["url"],
            headers={name.lower(): value for name, value in answer["headers"]},
            has_body=answer["has_body"],
        )

    async def read(self, max_bytes: int, *, eager: bool = False) -> Chunk:
        """The next at most `max_bytes` bytes (with `eager`, whatever arrived first)."""
        answer: dict[str, Any] = await self.frame.evaluate(
            f"([id, max, eager]) => window[{KEY!r}].read(id, max, eager)", [self.id, max(1, max_bytes), eager]
        )
        return Chunk(base64.b64decode(answer["data"]), answer["done"], answer.get("error"))

    async def cancel(self) -> None:
        """Abort the fetch and cancel the body's reader in the page (best effort: the page may be gone)."""
        if not self.sent:
            return
        with contextlib.suppress(Exception):
            async with asyncio.timeout(CANCEL_TIMEOUT_S):
                await self.frame.evaluate(f"(id) => window[{KEY!r}] && window[{KEY!r}].cancel(id)", self.id)
