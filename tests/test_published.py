"""What a session publishes to agents: each resource and prompt once, each change announced."""

from __future__ import annotations

import pytest

from webmcp_nb import Session


def test_a_resource_or_prompt_is_published_once_and_each_change_is_announced() -> None:
    with Session() as s:
        kinds: list[str] = []
        s.published.listeners.add(kinds.append)
        s.resource("notes://today", "hello")
        with pytest.raises(ValueError, match=r"^resource 'notes://today' is already published$"):
            s.resource("notes://today", "again")

        @s.prompt
        def review(topic: str) -> str:
            """Review a topic."""
            return f"Review {topic}"

        with pytest.raises(ValueError, match=r"^prompt 'review' is already published$"):
            s.prompt(lambda topic: topic, name="review")
        assert kinds == ["resources", "prompts"]
        assert s.published.resources["notes://today"].read() == "hello"
        assert list(s.published.prompts) == ["review"]
