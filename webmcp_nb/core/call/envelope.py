"""The result envelope: the one shape every tool call returns.

Success::

    {"status": "success", "instance": ..., "data": {...}, "operation": {...}}

Error::

    {"status": "error", "instance": ..., "error_type": ..., "message": ..., "operation": {...}}

`data` may hold ``bytes`` (screenshots); they stay bytes in Python and become
base64 strings only when the envelope is serialised.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, replace
from functools import cached_property
from types import ModuleType
from typing import Any, Literal, get_args

from ..config import Limits
from .util import escape_surrogates, random_uuid, utc_now

Status = Literal["success", "error"]
Outcome = Literal["completed", "not_started", "unknown"]
"""Whether the tool acted: it did, it did not start, or it may have acted (unknown)."""
Retry = Literal["not_needed", "after_correction", "read_only", "inspect_state"]
"""What a caller may do next (see `RETRY_ADVICE`)."""

ErrorType = Literal[
    "instance_not_found",
    "instance_already_exists",
    "instance_limit_exceeded",
    "instance_crashed",
    "profile_dir_in_use",
    "binary_not_found",
    "element_not_found",
    "stale_ref",
    "navigation_failed",
    "navigation_timeout",
    "wait_timeout",
    "dialog_not_present",
    "evaluation_failed",
    "verification_failed",
    "invalid_params",
    "modal_state_blocked",
    "internal_error",
    "operation_timeout",
    "result_too_large",
    "unsupported_capability",
    "page_not_found",
    "frame_not_found",
    "observation_timeout",
    "download_not_found",
    "download_failed",
    # Added for agents (MCP): the notebook user denied the call, or did not answer in time.
    "approval_denied",
    # A tab's renderer crashed (killed, out of memory): reload it (a fresh renderer) or close it.
    "page_crashed",
    # The caller went away before the call finished (MCP cancellation or disconnect,
    # KeyboardInterrupt); seen in call logs only, as nobody waits for the envelope.
    "cancelled",
]
"""Every `error_type` an envelope can carry: the contract's list, declared once."""

ERROR_TYPES: tuple[ErrorType, ...] = get_args(ErrorType)

LIST_KEYS = ("entries", "tabs", "frames", "instances", "tools", "downloads")
"""Data keys that hold a result's listed items (see `Envelope.rows`)."""

RETRY_ADVICE: dict[Retry, str] = {
    "not_needed": "nothing to retry",
    "after_correction": "nothing was done; correct the call before retrying",
    "read_only": "the tool changes nothing; it is safe to call again",
    "inspect_state": "the action may have taken effect; inspect the page before repeating it",
}


@dataclass(frozen=True)
class Operation:
    """Metadata about one tool call."""

    id: str
    tool: str
    instance_id: str | None
    page_id: str | None
    frame_id: str | None
    started_at: str
    finished_at: str
    duration_ms: float
    outcome: Outcome
    retry: Retry
    artifacts: tuple[str, ...] = ()
    references_omitted: bool = False

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            "id": self.id,
            "tool": self.tool,
            "instance_id": self.instance_id,
            "page_id": self.page_id,
            "frame_id": self.frame_id,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "duration_ms": self.duration_ms,
            "outcome": self.outcome,
            "retry": self.retry,
            "artifacts": list(self.artifacts),
        }
        if self.references_omitted:
            result["references_omitted"] = True
        return result


class ToolCallError(Exception):
    """Raised by `Envelope.raise_for_status()`; carries the error envelope."""

    def __init__(self, envelope: Envelope) -> None:
        super().__init__(f"{envelope.error_type}: {envelope.message}")
        self.envelope = envelope

    @property
    def error_type(self) -> ErrorType:
        return self.envelope.error_type or "internal_error"


@dataclass(frozen=True)
class Envelope:
    """The typed result of one tool call."""

    status: Status
    instance: str | None
    operation: Operation
    data: dict[str, Any] | None = None
    error_type: ErrorType | None = None
    message: str | None = None
    context: dict[str, Any] | None = None  # errors only: see webmcp_nb.core.evidence.failure

    @property
    def ok(self) -> bool:
        return self.status == "success"

    @property
    def tool(self) -> str:
        return self.operation.tool

    def to_dict(self) -> dict[str, Any]:
        """The envelope as plain Python (bytes stay bytes)."""
        result: dict[str, Any] = {"status": self.status, "instance": self.instance}
        if self.ok:
            result["data"] = self.data
        else:
            result["error_type"] = self.error_type
            result["message"] = self.message
            if self.context:
                result["context"] = self.context
        result["operation"] = self.operation.to_dict()
        return result

    def to_json_bytes(self) -> bytes:
        """UTF-8 JSON; bytes values become base64 strings, and a lone surrogate (which
        UTF-8 cannot encode) the text of its escape, ``\\ud800``."""
        return self._encoded

    @cached_property
    def _encoded(self) -> bytes:
        """`to_json_bytes`, encoded once per envelope (`dataclasses.replace` makes a new one)."""
        text = _ENCODER.encode(self.to_dict())
        try:
            return text.encode()
        except UnicodeEncodeError:
            return escape_surrogates(text, backslash="\\\\").encode()

    def to_json(self) -> str:
        return self.to_json_bytes().decode()

    def raise_for_status(self) -> Envelope:
        """Return self on success; raise `ToolCallError` on error."""
        if not self.ok:
            raise ToolCallError(self)
        return self

    def __repr__(self) -> str:
        if self.ok:
            keys = ", ".join(sorted(self.data or {}))
            return f"<Envelope success {self.tool} instance={self.instance!r} data keys: {keys}>"
        return f"<Envelope error {self.tool} {self.error_type}: {self.message}>"

    def __str__(self) -> str:
        """The plain-text rendering (`render.render_text`): what an MCP client reads."""
        text: str = _renderer().render_text(self)
        return text

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None, **kwargs: Any
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """IPython's rich display: a lean cell (`render.mimebundle`): the text, any screenshot, a
        big result's HTML view."""
        bundle: tuple[dict[str, Any], dict[str, Any]] = _renderer().mimebundle(self, include=include, exclude=exclude)
        return bundle

    def rows(self) -> list[dict[str, Any]]:
        """The listed items of a successful result (network or console entries, tabs, frames,
        instances, tools, downloads); ValueError for a result that lists nothing."""
        self.raise_for_status()
        for key in LIST_KEYS:
            items = (self.data or {}).get(key)
            if isinstance(items, list):
                return items
        raise ValueError(f"{self.tool} lists nothing: its data has none of {', '.join(LIST_KEYS)}")

    def to_pandas(self) -> Any:
        """The listed items as a pandas DataFrame (pandas must be installed)."""
        import pandas

        return pandas.DataFrame(self.rows())

    def plot(self) -> Any:
        """A `browser_network` result as a waterfall (static SVG; displays inline in a notebook)."""
        if self.tool != "browser_network":
            raise ValueError(f"plot() draws browser_network results, not {self.tool}")
        return _renderer().Waterfall(self.rows())


def _renderer() -> ModuleType:
    """The renderer (`core.render`), the one hook from envelopes to their display: imported on
    first use, since the renderer imports this module."""
    from .. import render

    return render


def _json_default(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


_ENCODER = json.JSONEncoder(default=_json_default, ensure_ascii=False, separators=(",", ":"))
"""The envelope's JSON (one encoder for every envelope: `json.dumps` with options builds one per call)."""


def refusal(tool: str, message: str, error_type: ErrorType = "invalid_params") -> Envelope:
    """The envelope of a call refused before anything ran, by a front end's own tool (that runs
    outside the engine): outcome ``not_started``, retry ``after_correction``, as the engine's."""
    now = utc_now()
    operation = Operation(random_uuid(), tool, None, None, None, now, now, 0.0, "not_started", "after_correction")
    return Envelope("error", None, operation, error_type=error_type, message=message)


def enforce_size_limit(
    envelope: Envelope,
    limit: int,
    *,
    read_only: bool,
    hint: str,
    size: int | None = None,
    what: str = "JSON",
    source: str | None = None,
) -> Envelope:
    """Replace an envelope whose JSON exceeds `limit` bytes by `result_too_large`.

    `size` and `what` measure something else that carries the envelope (an MCP
    result). The outcome of the action is kept; nothing is clipped. If even the
    artifact references do not fit, they are dropped and `references_omitted` is set.
    """
    size = len(envelope.to_json_bytes()) if size is None else size
    if size <= limit:
        return envelope
    if not envelope.ok and what == "JSON":
        return _shortened_error(envelope, limit)
    op = envelope.operation
    did = {
        "completed": "The action completed",
        "not_started": "Nothing was done",
        "unknown": "The action may have taken effect",
    }[op.outcome]
    retry: Retry = (
        "read_only" if read_only else ("after_correction" if op.outcome == "not_started" else "inspect_state")
    )
    message = (
        f"The result of {op.tool} is {size} bytes of {what}, over the limit of {limit} bytes "
        f"({source or Limits().source('max_result_bytes')}); it was not returned and nothing was clipped. {did}; "
        f"inspect the state before repeating it. {hint}"
    ).strip()
    replacement = Envelope(
        status="error",
        instance=envelope.instance,
        operation=replace(op, retry=retry),
        error_type="result_too_large",
        message=message,
    )
    if len(replacement.to_json_bytes()) <= limit:
        return replacement
    return Envelope(
        status="error",
        instance=None,
        operation=replace(op, retry=retry, artifacts=(), references_omitted=True),
        error_type="result_too_large",
        message=message,
    )


def _shortened_error(envelope: Envelope, limit: int) -> Envelope:
    """An error over the limit keeps its type: its context goes first, then its message is cut
    to the longest head and tail (two thirds, one third) that fit, whatever bytes its characters take."""
    shorter = replace(envelope, context=None)
    message = shorter.message or ""

    def cut_to(keep: int) -> Envelope:
        head, tail = message[: keep * 2 // 3], message[len(message) - keep // 3 :]
        cut = len(message) - len(head) - len(tail)
        return replace(shorter, message=f"{head}\n[... {cut:,} characters cut to fit the limit ...]\n{tail}")

    if len(shorter.to_json_bytes()) > limit:
        fits, over = 0, len(message)  # cut_to(over) does not fit; the longest that does is searched
        while over - fits > 1:
            middle = (fits + over) // 2
            fits, over = (middle, over) if len(cut_to(middle).to_json_bytes()) <= limit else (fits, middle)
        shorter = cut_to(fits)
    if len(shorter.to_json_bytes()) > limit:  # even the bare envelope does not fit: drop the references
        shorter = replace(shorter, operation=replace(shorter.operation, artifacts=(), references_omitted=True))
    return shorter
