"""`expose_to_page=[origins]`: an API's tools registered into pages as WebMCP tools.

Every document of a listed origin, in any tab of any instance, gets the API's tools (those agents
get: one per operation, or search/describe/call for a large API) through the Python page-tool
binding (`webmcp_nb.core.webmcp.page_tools`), which enforces seed 003's ``exposedTo`` and fails
closed: a document of another origin gets no tool, and a call from a frame whose real origin is not
listed is refused. A call runs through the engine like any other (caller ``page:ORIGIN``), so the
page receives the same envelope under the same result policy: secret fields blocked, show-once
values never revealed (only the notebook's own Python can ask for those). Under `via="page"` the
request is sent by the calling tab's own fetch.

Documents are registered as they load (each tab's ``load``; tabs and instances that appear are
found after each call), and `close()` unregisters every one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..call.util import origin_of, spawn
from ..webmcp.page_tools import PageToolRegistration, register
from .calls import REVEAL

if TYPE_CHECKING:
    from collections.abc import Callable

    from playwright.async_api import Page

    from ..browsers.instances import Instance
    from ..browsers.pages import PageState
    from ..call.engine import CallRecord, Engine
    from ..call.registry import ToolSpec

PLACE = ("instance", "page_id", "frame_id")  # set by the registration, not by the page


@dataclass(frozen=True)
class OperationPageTool:
    """One API tool as a page tool (`webmcp_nb.core.webmcp.page_tools.PageToolSource`)."""

    spec: ToolSpec
    engine: Engine
    origin: str
    place: dict[str, str] | None  # via="page": the tab whose fetch sends the request

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def description(self) -> str:
        return self.spec.description

    @property
    def read_only(self) -> bool:
        return self.spec.read_only

    @property
    def consequential(self) -> bool:
        return self.spec.destructive

    @property
    def input_schema(self) -> dict[str, Any]:
        schema = dict(self.spec.input_schema)
        schema["properties"] = {k: v for k, v in schema.get("properties", {}).items() if k not in PLACE}
        schema.pop("title", None)
        return schema

    async def run(self, arguments: Any) -> Any:
        """The call's envelope, as JSON-safe data (bad input included: an invalid_params envelope)."""
        REVEAL.set(None)  # this task's: nothing a page calls reveals a show-once value
        if isinstance(arguments, dict) and self.place is not None:
            arguments = {key: value for key, value in arguments.items() if key not in PLACE} | self.place
        envelope = await self.engine.execute(self.spec.name, arguments, caller=f"page:{self.origin}")
        return json.loads(envelope.to_json())


class PageExposure:
    """Keeps `specs` registered in every document of `origins` until `close()` (runtime loop only)."""

    def __init__(self, engine: Engine, specs: list[ToolSpec], origins: frozenset[str], via_page: bool) -> None:
        self.engine = engine
        self.specs = specs
        self.origins = origins
        self.via_page = via_page
        self.registrations: dict[tuple[str, str], list[PageToolRegistration]] = {}
        self.closed = False
        self._lock = asyncio.Lock()
        self._hooked: weakref.WeakSet[Any] = weakref.WeakSet()  # the contexts and pages listened to
        self._unhooks: list[Callable[[], None]] = []

    async def start(self) -> None:
        self._unhooks.append(self.engine.listeners.add(self._after_call))
        await self._hook_all()

    def _after_call(self, record: CallRecord) -> None:
        if not self.closed:
            spawn(self._hook_all())

    async def _hook_all(self) -> None:
        """Listen to every live instance's new tabs and every tab's loads; register in the tabs not yet seen."""
        for instance in list(self.engine.manager.instances.values()):
            context = instance.context
            if instance.state != "live" or context is None:
                continue
            if context not in self._hooked:
                self._hooked.add(context)
                self._listen(context, "page", self._on_new_page(instance))
            for state in list(instance.pages.values()):
                if state.page not in self._hooked:
                    self._hook_page(instance, state.page)
                    await self.sync(instance, state)

    def _on_new_page(self, instance: Instance) -> Callable[[Page], None]:
        return lambda page: self._hook_page(instance, page)

    def _hook_page(self, instance: Instance, page: Page) -> None:
        if page in self._hooked:
            return
        self._hooked.add(page)

        def loaded(_page: Page) -> None:
            state = next((s for s in list(instance.pages.values()) if s.page is page), None)
            if state is not None and not self.closed:
                spawn(self.sync(instance, state))

        self._listen(page, "load", loaded)

    def _listen(self, emitter: Any, event: str, listener: Callable[..., None]) -> None:
        emitter.on(event, listener)
        self._unhooks.append(lambda: emitter.remove_listener(event, listener))

    async def sync(self, instance: Instance, state: PageState) -> None:
        """Register the tools in `state`'s document if its origin is listed and they are not there yet."""
        async with self._lock:
            if self.closed or state.closed:
                return
            key = (instance.name, state.page_id)
            earlier = self.registrations.get(key, [])
            if earlier and earlier[0].active and await earlier[0].document_alive():
                return
            for registration in earlier:
                registration.end()
            self.registrations.pop(key, None)
            origin = origin_of(state.page.main_frame.url)
            if origin is None or origin not in self.origins:
                return  # fail closed: another origin's document gets no tool
            place = {"instance": instance.name, "page_id": state.page_id} if self.via_page else None
            made = []
            async with instance.lock:
                for spec in self.specs:
                    tool = OperationPageTool(spec, self.engine, origin, place)
                    with contextlib.suppress(Exception):  # the page navigated meanwhile: its next load
                        made.append(await register(instance, state, tool, self.origins))
            self.registrations[key] = made

    async def close(self) -> int:
        """Unregister every page tool and stop listening; how many registrations there were."""
        async with self._lock:
            self.closed = True
            for unhook in self._unhooks:
                with contextlib.suppress(Exception):
                    unhook()
            made = [registration for found in self.registrations.values() for registration in found]
            self.registrations.clear()
            for registration in made:
                await registration.unregister()
            return len(made)
