"""How an API call's request leaves, behind browser_http's fetch interface (`start`, bounded `read`,
`cancel`), so its reader, SSE collection and NDJSON code apply unchanged either way.

- `via="kernel"` (`KernelFetch`): from Python, with httpx; credentials never leave the kernel.
- `via="page"` (`PageApiFetch`): the page's own `fetch` (`PageFetch`: its cookies, origin, CORS).
  The page is given the request *without* its credentials: the auth headers and the auth query
  values are put on the request by the kernel, as it leaves the browser
  (a one-shot Playwright route for that request; `Fetch.continueRequest` changes are not
  observable by the page). So no page script sees a credential, in `fetch` arguments, the URL,
  or the Performance API; what the page does see is the response (it is the page's fetch). Such a
  request does not follow redirects (Playwright would carry the added headers along).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from ..browsers.page_fetch import Chunk, FetchFailed, Head, PageFetch

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    import httpx
    from playwright.async_api import Frame, Request, Route


class KernelFetch:
    """One request through `client`; the body bytes read are also kept in `capture` (bounded by
    the reader's own limits), for the show-once values the notebook's Python may ask for."""

    sender = "The kernel's request"
    failure_note = "httpx's reason; sent from the kernel, no browser involved"

    def __init__(self, client: httpx.AsyncClient, capture: bytearray | None = None) -> None:
        self._client = client
        self._response: httpx.Response | None = None
        self._parts: AsyncIterator[bytes] | None = None
        self._buffer = bytearray()
        self._done = False
        self._capture = capture

    async def start(self, url: str, method: str, headers: dict[str, str], body: str | None) -> Head:
        import httpx

        request = self._client.build_request(method, url, headers=headers, content=body)
        try:
            response = await self._client.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise FetchFailed(f"{type(exc).__name__}: {exc}") from None
        self._response, self._parts = response, response.aiter_bytes()
        return Head(
            status=response.status_code,
            status_text=response.reason_phrase,
            url=str(response.url),
            headers={name.lower(): value for name, value in response.headers.items()},
            has_body=True,
        )

    async def read(self, max_bytes: int, *, eager: bool = False) -> Chunk:
        import httpx

        error = None
        while self._parts is not None and not self._done and len(self._buffer) < max_bytes:
            try:
                part = await anext(self._parts)
            except StopAsyncIteration:
                self._done = True
                break
            except httpx.HTTPError as exc:
                self._done, error = True, f"{type(exc).__name__}: {exc}"
                break
            self._buffer += part
            if eager:
                break
        data = bytes(self._buffer[:max_bytes])
        del self._buffer[:max_bytes]
        if self._capture is not None:
            self._capture += data
        finished = self._done and not self._buffer
        return Chunk(data, finished and error is None, error if finished else None)

    async def cancel(self) -> None:
        if self._response is not None:
            await self._response.aclose()


@dataclass(frozen=True)
class WireParts:
    """What the kernel adds to a request the page sends: the full URL (with auth query values;
    relative to the page's) and the auth headers. (Not a Cookie header: Playwright never forwards
    one, so a cookie-borne credential is refused under `via="page"`.)"""

    url: str
    headers: dict[str, str] = field(default_factory=dict)


class PageApiFetch:
    """`PageFetch` in `frame`, with `wire` applied to its one request as it leaves the browser, and
    the body bytes read kept in `capture` (as `KernelFetch` does)."""

    sender, failure_note = PageFetch.sender, PageFetch.failure_note

    def __init__(self, frame: Frame, wire: WireParts | None, capture: bytearray | None = None) -> None:
        # Playwright carries a route's header changes over to redirects: with credentials added, a
        # redirect is not followed (it could hand them to another server).
        self._fetch = PageFetch(frame, follow_redirects=wire is None)
        self._wire = wire
        self._capture = capture

    async def start(self, url: str, method: str, headers: dict[str, str], body: str | None) -> Head:
        wire = self._wire
        if wire is None:
            return await self._fetch.start(url, method, headers, body)
        page = self._fetch.frame.page
        path = urlsplit(url).path
        claimed = False

        def ours(seen: str) -> bool:
            return urlsplit(seen).path == path

        async def handle(route: Route, request: Request) -> None:
            nonlocal claimed
            if claimed or request.method != method or request.frame != self._fetch.frame:
                await route.fallback()
                return
            claimed = True
            await route.fallback(url=urljoin(request.url, wire.url), headers=await self._merged(request, wire))

        await page.route(ours, handle)
        try:
            return await self._fetch.start(url, method, headers, body)
        finally:
            with contextlib.suppress(Exception):  # the page may be gone
                await page.unroute(ours, handle)

    @staticmethod
    async def _merged(request: Request, wire: WireParts) -> dict[str, str]:
        headers: dict[str, Any] = dict(await request.all_headers())
        for name, value in wire.headers.items():
            for key in [key for key in headers if key.lower() == name.lower()]:
                del headers[key]
            headers[name] = value
        return headers

    async def read(self, max_bytes: int, *, eager: bool = False) -> Chunk:
        chunk = await self._fetch.read(max_bytes, eager=eager)
        if self._capture is not None:
            self._capture += chunk.data
        return chunk

    async def cancel(self) -> None:
        await self._fetch.cancel()
