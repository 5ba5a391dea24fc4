"""Action observations: a condition armed before an action starts and awaited after it.

An acting tool called with ``observe={kind, ..., timeout_ms}`` returns only once what the caller
expects happened (a response, a URL, a text, a new tab...), so nothing that happens during the
action is missed and no snapshot polling is needed. Events (requests, responses, console
messages, popups, downloads) are listened for from before the action; states (URL, text,
element) are checked after it, from the state the action left.

A condition that does not hold in time is `observation_timeout` with outcome ``completed``: the
action ran; only its expected consequence was not seen.
"""

from __future__ import annotations

import asyncio
import fnmatch
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from ..call.errors import ToolFailure

if TYPE_CHECKING:
    from playwright.async_api import ConsoleMessage, Download, Page, Request, Response

    from ..call.context import CallContext

Kind = Literal["response", "request", "url", "text", "text_gone", "element", "popup", "download", "console"]
Pattern = Annotated[str, StringConstraints(min_length=1, max_length=4096)]
_NEEDS: dict[str, tuple[str, ...]] = {
    "response": ("url",),
    "request": ("url",),
    "url": ("url",),
    "text": ("text",),
    "text_gone": ("text",),
    "element": ("role", "name"),
    "popup": (),
    "download": (),
    "console": (),
}
_ALLOWED: dict[str, frozenset[str]] = {
    "response": frozenset({"url", "method", "status"}),
    "request": frozenset({"url", "method"}),
    "url": frozenset({"url"}),
    "text": frozenset({"text"}),
    "text_gone": frozenset({"text"}),
    "element": frozenset({"role", "name"}),
    "popup": frozenset(),
    "download": frozenset(),
    "console": frozenset({"text", "level"}),
}


class Observe(BaseModel):
    """What an action is expected to cause, and how long to wait for it."""

    model_config = ConfigDict(extra="forbid", strict=True)

    kind: Kind
    url: Pattern | None = None
    method: Annotated[str, StringConstraints(pattern=r"^[A-Za-z]{1,16}$")] | None = None
    status: int | None = Field(None, ge=100, le=599)
    text: Annotated[str, StringConstraints(min_length=1, max_length=10_000)] | None = None
    role: Annotated[str, StringConstraints(pattern=r"^[a-z]{2,40}$")] | None = None
    name: Annotated[str, StringConstraints(min_length=1, max_length=1000)] | None = None
    level: Annotated[str, StringConstraints(pattern=r"^[a-z]{2,16}$")] | None = None
    timeout_ms: int = Field(5000, ge=1, le=60_000)

    @model_validator(mode="after")
    def _fits_kind(self) -> Observe:
        given = {
            key
            for key in ("url", "method", "status", "text", "role", "name", "level")
            if getattr(self, key) is not None
        }
        missing = [key for key in _NEEDS[self.kind] if key not in given]
        if missing:
            raise ValueError(f"observe kind {self.kind!r} needs {', '.join(missing)}")
        extra = sorted(given - _ALLOWED[self.kind])
        if extra:
            raise ValueError(f"observe kind {self.kind!r} does not take {', '.join(extra)}")
        return self

    def describe(self) -> str:
        detail = {key: getattr(self, key) for key in ("url", "method", "status", "text", "role", "name", "level")}
        said = ", ".join(f"{key} {value!r}" for key, value in detail.items() if value is not None)
        return f"{self.kind}" + (f" ({said})" if said else "")


def _kinds() -> str:
    """Each kind with the fields it takes (from `_ALLOWED`), kinds that take the same ones together."""
    groups: dict[frozenset[str], list[str]] = {}
    for kind, allowed in _ALLOWED.items():
        groups.setdefault(allowed, []).append(kind)
    order = ("url", "method", "status", "text", "role", "name", "level")
    return ", ".join(
        "/".join(kinds) + (f" ({', '.join(key for key in order if key in allowed)})" if allowed else "")
        for allowed, kinds in groups.items()
    )


OBSERVE_DESCRIPTION = (
    f"Wait for what the action causes, armed before it: {_kinds()} (url: a substring or * glob), "
    f"for timeout_ms ({Observe.model_fields['timeout_ms'].default}); seen: data.observation."
)
ObserveField = Field(None, description=OBSERVE_DESCRIPTION)


def url_matches(pattern: str, url: str) -> bool:
    return fnmatch.fnmatchcase(url, pattern) if "*" in pattern else pattern in url


class Observer:
    """One armed observation on a page; `result()` waits for it after the action."""

    def __init__(self, ctx: CallContext, spec: Observe) -> None:
        self.ctx, self.spec = ctx, spec
        self.page: Page = ctx.page
        self.started = time.monotonic()
        self.found: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._off: list[Callable[[], None]] = []
        event = {
            "response": "response",
            "request": "request",
            "console": "console",
            "popup": "popup",
            "download": "download",
        }.get(spec.kind)
        if event is not None:
            handler = getattr(self, f"_on_{spec.kind}")
            page: Any = self.page  # the event name is chosen at run time, past Playwright's overloads
            page.on(event, handler)
            self._off.append(lambda: page.remove_listener(event, handler))

    def close(self) -> None:
        for off in self._off:
            off()
        self._off.clear()

    def _hit(self, details: dict[str, Any]) -> None:
        if not self.found.done():
            self.found.set_result(details)

    # events ---------------------------------------------------------------------
    def _on_response(self, response: Response) -> None:
        spec = self.spec
        request = response.request
        if (
            url_matches(spec.url or "", response.url)
            and (spec.method is None or request.method == spec.method.upper())
            and (spec.status is None or response.status == spec.status)
        ):
            self._hit(
                {
                    "url": response.url,
                    "method": request.method,
                    "status": response.status,
                    "request_id": self._request_id(request),
                }
            )

    def _on_request(self, request: Request) -> None:
        spec = self.spec
        if url_matches(spec.url or "", request.url) and (spec.method is None or request.method == spec.method.upper()):
            self._hit({"url": request.url, "method": request.method, "request_id": self._request_id(request)})

    def _on_console(self, message: ConsoleMessage) -> None:
        spec = self.spec
        if (spec.level is None or message.type == spec.level) and (spec.text is None or spec.text in message.text):
            self._hit({"level": message.type, "text": message.text})

    def _on_popup(self, popup: Page) -> None:
        instance = self.ctx.instance
        assert instance is not None
        self._hit({"page_id": instance.track(popup).page_id, "url": popup.url})

    def _on_download(self, download: Download) -> None:
        instance = self.ctx.instance
        assert instance is not None
        ids = [r.download_id for r in instance.downloads.records.values() if r.download is download]
        self._hit(
            {
                "download_id": ids[0] if ids else None,
                "url": download.url,
                "suggested_filename": download.suggested_filename,
            }
        )

    def _request_id(self, request: Request) -> str:
        instance = self.ctx.instance
        assert instance is not None
        return instance.evidence.request_id(request)

    # waiting --------------------------------------------------------------------
    async def result(self) -> dict[str, Any]:
        """The observation, or `observation_timeout` (outcome completed) once its time is up."""
        from playwright.async_api import TimeoutError as PlaywrightTimeout

        spec = self.spec
        remaining_ms = max(1.0, spec.timeout_ms - (time.monotonic() - self.started) * 1000)
        timeout_ms = self.ctx.timeout_ms(remaining_ms / 1000)
        try:
            if self._off:  # an event: it may have come already
                async with asyncio.timeout(timeout_ms / 1000):
                    details = await asyncio.shield(self.found)
            else:
                details = await self._state(timeout_ms)
        except (TimeoutError, PlaywrightTimeout):
            raise ToolFailure(
                "observation_timeout",
                f"The action completed, but the expected {spec.describe()} was not observed within "
                f"{spec.timeout_ms} ms. Inspect the page (browser_snapshot, browser_network) before repeating "
                "the action: it did take effect.",
                completed=True,
                context={"action_completed": True},
            ) from None
        finally:
            self.close()
        return {"kind": spec.kind, "elapsed_ms": round((time.monotonic() - self.started) * 1000, 1), **details}

    async def _state(self, timeout_ms: float) -> dict[str, Any]:
        spec, page = self.spec, self.page
        if spec.kind == "url":
            pattern = spec.url or ""
            await page.wait_for_url(lambda url: url_matches(pattern, url), timeout=timeout_ms, wait_until="commit")
            return {"url": page.url}
        if spec.kind in ("text", "text_gone"):
            visible = page.get_by_text(spec.text or "").filter(visible=True).first
            await visible.wait_for(state="attached" if spec.kind == "text" else "detached", timeout=timeout_ms)
            return {"text": spec.text}
        element = page.get_by_role(spec.role, name=spec.name, exact=True).filter(visible=True).first  # type: ignore[arg-type]
        await element.wait_for(state="attached", timeout=timeout_ms)
        return {"role": spec.role, "name": spec.name}
