"""Limits and launch defaults, read from the environment and overridable per session."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .webmcp.discovery import Mode

MIN_RESULT_BYTES = 4096


def _env_number(name: str, default: float, cast: type[int] | type[float] = int) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return cast(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not a valid {cast.__name__}") from None


@dataclass(frozen=True)
class Limits:
    """Bounds that apply to every call of a session."""

    max_result_bytes: int = 1_048_576
    max_instances: int = 10
    operation_timeout_s: float = 60.0
    action_timeout_s: float = 5.0
    navigation_timeout_s: float = 30.0
    capture_timeout_s: float = 30.0
    event_buffer_size: int = 1000  # console and network entries kept per instance and stream
    # A screenshot's budget in device pixels, checked before capture: a larger one can take the
    # renderer (and with it the instance) down.
    max_capture_pixels: int = 67_108_864
    max_capture_side: int = 65_536

    def __post_init__(self) -> None:
        if self.max_result_bytes < MIN_RESULT_BYTES:
            raise ValueError(f"max_result_bytes must be at least {MIN_RESULT_BYTES}, got {self.max_result_bytes}")
        if self.event_buffer_size < 1:
            raise ValueError(f"event_buffer_size must be at least 1, got {self.event_buffer_size}")
        if self.max_capture_pixels < 1 or self.max_capture_side < 1:
            raise ValueError("max_capture_pixels and max_capture_side must be positive")
        if self.max_instances < 1:
            raise ValueError(f"max_instances must be at least 1, got {self.max_instances}")
        for name in ("operation_timeout_s", "action_timeout_s", "navigation_timeout_s", "capture_timeout_s"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")

    @classmethod
    def from_env(cls, **overrides: float | None) -> Limits:
        """Environment values, then explicit (non-None) overrides."""
        values = {
            "max_result_bytes": _env_number("BROWSER_MCP_MAX_RESULT_BYTES", cls.max_result_bytes),
            "max_instances": _env_number("BROWSER_MCP_MAX_INSTANCES", cls.max_instances),
            "event_buffer_size": _env_number("BROWSER_MCP_EVENT_BUFFER_SIZE", cls.event_buffer_size),
            "operation_timeout_s": _env_number("BROWSER_MCP_OPERATION_TIMEOUT_SECONDS", cls.operation_timeout_s, float),
        }
        values.update({key: value for key, value in overrides.items() if value is not None})
        return cls(**values)  # type: ignore[arg-type]


@dataclass(frozen=True)
class LaunchDefaults:
    """What an implicitly created instance is launched with."""

    headless: bool = True
    executable_path: str | None = None
    args: tuple[str, ...] = field(default_factory=tuple)
    webmcp: Mode = "native"
    # A remote browser for new instances (webmcp_nb.core.backends.remote): ws(s):// a Playwright browser
    # server, http(s):// a CDP endpoint; with the headers to send (a grid's token).
    remote_endpoint: str | None = None
    remote_headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        from .backends.remote import check_default, check_default_headers

        if self.remote_endpoint is not None:
            check_default(self.remote_endpoint)
        check_default_headers(dict(self.remote_headers))
