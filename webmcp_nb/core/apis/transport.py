"""`via="kernel"`: the request leaves from Python (httpx), behind browser_http's fetch interface
(`start`, bounded `read`, `cancel`), so its reader, SSE collection and NDJSON code apply unchanged."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..browsers.page_fetch import Chunk, FetchFailed, Head

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    import httpx


class KernelFetch:
    """One request through `client`; the body bytes read are also kept in `capture` (bounded by
    the reader's own limits), for the show-once values the notebook's Python may ask for."""

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
