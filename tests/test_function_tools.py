"""One builder turns a Python function into a tool, for published tools and for page tools alike."""

from __future__ import annotations

import asyncio
import threading
from typing import Literal

import pytest

from webmcp_nb.core.webmcp.page_tools import PythonTool
from webmcp_nb.published import tool_spec


def rate(item: str, stars: Literal[1, 2, 3] = 2, note: str | None = None) -> str:
    """Rate an item.

    The details are not part of the description."""
    return f"{item}: {stars}"


def test_published_and_page_tools_read_a_function_the_same_way() -> None:
    published = tool_spec(rate)
    page = PythonTool.from_function(rate)
    assert published.description == page.description == "Rate an item."
    page_schema = page.input_schema
    assert page_schema == {k: v for k, v in published.input_schema.items() if k != "title"}
    assert page_schema["required"] == ["item"]
    assert page_schema["additionalProperties"] is False
    assert page_schema["properties"]["stars"] == {"default": 2, "enum": [1, 2, 3], "title": "Stars", "type": "integer"}


def star_args(*items: str) -> None:
    """Takes *args."""


def slash(item: str, /) -> None:
    """Positional-only."""


def unresolved(item: NoSuchType) -> None:  # type: ignore[name-defined]  # noqa: F821
    """A hint that does not resolve."""


@pytest.mark.parametrize(
    ("function", "message"),
    [
        (star_args, "star_args: *args and **kwargs cannot be described to an agent"),
        (slash, "slash: positional-only parameters cannot be named by an agent"),
        (unresolved, "unresolved: a type hint does not resolve (name 'NoSuchType' is not defined)"),
    ],
)
def test_both_refuse_what_an_agent_cannot_call_with_the_same_error(function, message: str) -> None:
    for build in (tool_spec, PythonTool.from_function):
        with pytest.raises(TypeError) as raised:
            build(function)
        assert str(raised.value) == message


def test_a_plain_function_runs_on_a_worker_thread_and_a_coroutine_on_the_loop() -> None:
    asyncio.run(run_both())


async def run_both() -> None:

    seen: list[bool] = []

    def plain(x: int) -> int:
        seen.append(threading.current_thread() is threading.main_thread())
        return x + 1

    async def coroutine(x: int) -> int:
        seen.append(threading.current_thread() is threading.main_thread())
        return x * 2

    assert await PythonTool.from_function(plain).run({"x": 1}) == 2
    assert await PythonTool.from_function(coroutine).run({"x": 4}) == 8
    assert seen == [False, True]
    with pytest.raises(ValueError, match="invalid input for plain"):
        await PythonTool.from_function(plain).run({"x": 1, "y": 2})
