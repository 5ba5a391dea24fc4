"""The failures a tool handler raises; the engine turns them into error envelopes.

Kept apart from the registry so that pages, instances and the other core modules can
raise them without importing the registry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .envelope import ErrorType


class ToolFailure(Exception):
    """Raised by a handler to end a call with an error envelope.

    `started` says whether the tool may have changed anything: False gives
    ``not_started`` / ``after_correction``; True gives ``unknown`` and
    ``inspect_state`` (or ``read_only`` for a read-only tool). `read_only` overrides the
    tool's own flag when what ran is known better (a page's read-only WebMCP tool).
    `completed` says the call itself did everything it does, and what failed is the condition
    it checked (a verification, an observation): outcome ``completed``. `context` joins the error
    envelope's context (see `webmcp_nb.core.evidence.failure`: an SSE collection's partial events).
    """

    def __init__(
        self,
        error_type: ErrorType,
        message: str,
        *,
        started: bool = True,
        read_only: bool | None = None,
        completed: bool = False,
        context: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.context = context
        self.error_type = error_type
        self.message = message
        self.started = started
        self.read_only = read_only
        self.completed = completed


class InvalidParams(ToolFailure):
    """Bad arguments: refused before anything ran (``not_started`` / ``after_correction``)."""

    def __init__(self, message: str) -> None:
        super().__init__("invalid_params", message, started=False)
