"""The one listener helper every fan-out uses (engine calls, WebMCP events, registries, evidence)."""

from __future__ import annotations

import logging

import pytest
from pydantic import BaseModel

from webmcp_nb.core.call.listeners import Listeners
from webmcp_nb.core.call.registry import Registry, ToolSpec


def test_a_failing_listener_is_logged_and_the_others_still_hear(caplog: pytest.LogCaptureFixture) -> None:
    heard: list[tuple[str, int]] = []
    listeners: Listeners[[str, int]] = Listeners()

    def broken(name: str, value: int) -> None:
        raise RuntimeError("listener broke")

    listeners.add(lambda name, value: heard.append(("first", value)))
    listeners.add(broken)
    listeners.add(lambda name, value: heard.append((name, value)))
    with caplog.at_level(logging.ERROR, logger="webmcp_nb.core.call.listeners"):
        listeners.emit("second", 7)
    assert heard == [("first", 7), ("second", 7)]
    assert "listener broke" in caplog.text


def test_add_returns_a_remover_that_is_safe_to_call_twice() -> None:
    heard: list[int] = []
    listeners: Listeners[[int]] = Listeners()
    remove = listeners.add(heard.append)
    listeners.emit(1)
    remove()
    remove()
    listeners.emit(2)
    assert heard == [1]
    assert len(listeners) == 0


def test_a_listener_may_remove_itself_while_the_others_are_told() -> None:
    heard: list[str] = []
    listeners: Listeners[[]] = Listeners()
    removers: list = []
    removers.append(listeners.add(lambda: (heard.append("once"), removers[0]())))
    listeners.add(lambda: heard.append("always"))
    listeners.emit()
    listeners.emit()
    assert heard == ["once", "always", "always"]


class Nothing(BaseModel):
    pass


async def noop(ctx: object, params: Nothing) -> Nothing:
    return Nothing()


SPEC = ToolSpec(name="noop", title="Noop", description="Does nothing.", params=Nothing, data=Nothing,
                handler=noop, target="server", read_only=True)  # fmt: skip


def test_a_registry_tells_its_listeners_and_survives_a_broken_one() -> None:
    registry = Registry()
    changes: list[str] = []
    registry.listeners.add(lambda: 1 / 0)
    remove = registry.listeners.add(lambda: changes.append("changed"))
    registry.add(SPEC)
    registry.remove(SPEC.name)
    remove()
    registry.add(SPEC)
    assert changes == ["changed", "changed"]
    assert SPEC.name in registry
