"""Which pages' WebMCP tools an attached agent sees (front ends offer what this lists).

The tools of the session's current page, then of the pages pinned, whose origin is allowed:
an explicit list of origins, or by default the origins the session's own callers (not agents)
navigated to. A `PageToolVisibility` follows one server's pins and origins; the engine is
read, never changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..call.util import origin_of

if TYPE_CHECKING:
    from ..call.engine import CallRecord, Engine
    from .discovery import PageTool


@dataclass(frozen=True)
class VisiblePageTool:
    """A page tool an agent may see, with the page it lives on."""

    instance: str
    page_id: str
    tool: PageTool
    in_main_frame: bool


class PageToolVisibility:
    """The page tools visible to one attached agent (runtime loop only)."""

    def __init__(self, engine: Engine, allowed_origins: Sequence[str] | None) -> None:
        self.engine = engine
        self.explicit_origins = frozenset(o.rstrip("/") for o in allowed_origins) if allowed_origins else None
        self.navigated_origins: set[str] = set()
        self.pinned: list[tuple[str, str]] = []  # (instance, page_id)
        for record in engine.history:
            self.learn(record)

    @property
    def allowed_origins(self) -> frozenset[str]:
        return self.explicit_origins if self.explicit_origins is not None else frozenset(self.navigated_origins)

    def learn(self, record: CallRecord) -> None:
        """Remember where the session's own callers navigated (agents do not widen the set)."""
        if record.caller.startswith("agent:") or record.tool != "browser_navigate" or not record.envelope.ok:
            return
        for url in (record.args.get("url"), (record.envelope.data or {}).get("url")):
            origin = origin_of(url) if isinstance(url, str) else None
            if origin:
                self.navigated_origins.add(origin)

    def pin(self, instance: str, page_id: str) -> None:
        if (instance, page_id) not in self.pinned:
            self.pinned.append((instance, page_id))

    def unpin(self, instance: str, page_id: str) -> None:
        if (instance, page_id) in self.pinned:
            self.pinned.remove((instance, page_id))

    def pages(self) -> list[tuple[str, str]]:
        """(instance, page_id) of the current page, then of the pinned ones."""
        current = self.engine.current_page()
        targets = [current] if current is not None else []
        return targets + [pinned for pinned in self.pinned if pinned not in targets]

    def tools(self) -> list[VisiblePageTool]:
        """The visible tools: page, then frame, then registration order."""
        allowed = self.allowed_origins
        visible = []
        for instance, page_id in self.pages():
            found = self.engine.page_tools(instance, page_id)
            if found is None:
                continue
            main_frame_id, tools = found
            visible += [
                VisiblePageTool(instance, page_id, tool, tool.frame_id in (None, main_frame_id))
                for tool in tools
                if tool.origin.rstrip("/") in allowed
            ]
        return visible
