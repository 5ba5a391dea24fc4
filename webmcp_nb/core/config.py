"""Limits and launch defaults, read from the environment and overridable per session (the limits' options
are declared here, with `core.options.option`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .options import DEFAULT, option, options_of, resolve

if TYPE_CHECKING:
    from .webmcp.discovery import Mode

MIN_RESULT_BYTES = 4096


@dataclass(frozen=True)
class Limits:
    """Bounds that apply to every call of a session, each declared once (`core.options`); `sources`
    says where each value came from (absent: the default)."""

    max_result_bytes: int = option(
        1_048_576, minimum=MIN_RESULT_BYTES, env="BROWSER_MCP_MAX_RESULT_BYTES", label="result size (bytes)",
        help="Largest result a call may return, in bytes; a larger one is result_too_large, never clipped.",
    )  # fmt: skip
    max_instances: int = option(
        10, minimum=1, env="BROWSER_MCP_MAX_INSTANCES", label="instances", help="Most browser instances at once."
    )
    operation_timeout_s: float = option(
        60.0, minimum=0, exclusive=True, env="BROWSER_MCP_OPERATION_TIMEOUT_SECONDS",
        label="operation timeout (s, queue wait included)",
        help="Time limit of one call, queue wait included, in seconds.",
    )  # fmt: skip
    action_timeout_s: float = option(
        5.0, minimum=0, exclusive=True, env="WEBMCP_NB_ACTION_TIMEOUT_SECONDS", label="action timeout (s)",
        help="How long a page action (click, type, ...) waits for its element, in seconds.",
    )  # fmt: skip
    navigation_timeout_s: float = option(
        30.0, minimum=0, exclusive=True, env="WEBMCP_NB_NAVIGATION_TIMEOUT_SECONDS", label="navigation timeout (s)",
        help="How long a navigation waits for its page to load, in seconds.",
    )  # fmt: skip
    capture_timeout_s: float = option(
        30.0, minimum=0, exclusive=True, env="WEBMCP_NB_CAPTURE_TIMEOUT_SECONDS", label="capture timeout (s)",
        help="How long a screenshot or PDF may take, in seconds.",
    )  # fmt: skip
    event_buffer_size: int = option(
        1000, minimum=1, env="WEBMCP_NB_EVENT_BUFFER_SIZE", deprecated_env="BROWSER_MCP_EVENT_BUFFER_SIZE",
        label="evidence buffer (entries)",
        help="Console and network entries kept per instance and stream (instances created from now on).",
    )  # fmt: skip
    # A screenshot's budget in device pixels, checked before capture: a larger one can take the
    # renderer (and with it the instance) down.
    max_capture_pixels: int = option(
        67_108_864, minimum=1, env="WEBMCP_NB_MAX_CAPTURE_PIXELS", label="screenshot size (device pixels)",
        help="Largest screenshot, in device pixels, checked before capture.",
    )  # fmt: skip
    max_capture_side: int = option(
        65_536, minimum=1, env="WEBMCP_NB_MAX_CAPTURE_SIDE", label="screenshot side (device pixels)",
        help="Longest side of a screenshot, in device pixels, checked before capture.",
    )  # fmt: skip
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for name, spec in LIMIT_OPTIONS.items():
            spec.check(getattr(self, name), self.source(name))

    def source(self, name: str) -> str:
        """Where the value of option `name` came from, for messages."""
        return LIMIT_OPTIONS[name].describe(self.sources.get(name, DEFAULT))

    @classmethod
    def from_env(
        cls, given: Mapping[str, Any] | None = None, *, source: str | Mapping[str, str] = "Session(NAME=...)"
    ) -> Limits:
        """`given` (non-None) values, else the environment's, else the defaults; ValueError naming a
        bad one and its source."""
        values, sources = resolve(LIMIT_OPTIONS, given or {}, source)
        return cls(**values, sources=sources)

    def updated(self, given: Mapping[str, Any], *, source: str) -> Limits:
        """These limits with `given` (non-None) values from `source` (``NAME`` is replaced by each name)."""
        unknown = sorted(set(given) - set(LIMIT_OPTIONS))
        if unknown:
            raise TypeError(f"unknown option{'s' * (len(unknown) > 1)} {', '.join(unknown)}")
        changed = {name: value for name, value in given.items() if value is not None}
        sources = {**self.sources, **{name: source.replace("NAME", name) for name in changed}}
        return dataclasses.replace(self, **changed, sources=sources)


LIMIT_OPTIONS = options_of(Limits)


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
