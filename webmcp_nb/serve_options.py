"""How a session is served to agents over MCP, declared once.

`ServeOptions` is what `Session.serve_mcp`, `mcp.serve_http` / `serve_stdio`, ``%browser serve``
and ``webmcp-nb serve`` take; each field's metadata gives its command-line flag and help, so the
two command lines are built from it (`add_arguments`) and cannot drift apart; `Session.serve_mcp`'s
keywords are its fields (`parameters`). `HttpLimits` is declared as the session limits are
(`core.options.option`). Nothing here imports the MCP SDK or IPython.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, get_args

from .core.call.approval import Policy
from .core.guard.grants import CAPS, SCHEMES, Grant
from .core.guard.url_policy import own_servers
from .core.options import option, options_of, resolve

ApprovePolicy = Policy


def _option(default: Any, flag: str, help: str, **argparse_options: Any) -> Any:
    """A field with its command-line flag; `argparse_options` go to `add_argument`."""
    metadata = {"flag": flag, "help": help, "argparse": argparse_options}
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=metadata)
    return field(default=default, metadata=metadata)


@dataclass
class ServeOptions:
    """The options of an MCP server over a session. See the threat model (docs/mcp.md) before
    granting anything to an agent you do not trust."""

    host: str = _option("127.0.0.1", "--host", "address to bind (default: loopback)")
    port: int = _option(0, "--port", "TCP port (default: a free one)", type=int)
    allow_remote: bool = _option(False, "--allow-remote", "allow a non-loopback --host", action="store_true")
    token: str | None = _option(
        None, "--token", "HTTP bearer token (default: $WEBMCP_NB_TOKEN for webmcp-nb serve, else a fresh random one)"
    )
    caps: list[str] = _option(
        [], "--caps",
        f"extra grants for agents: tool groups {', '.join(c for c in CAPS if c not in ('browser', 'distributed'))}, "
        "browser (any launch option: Chromium flags, binary, profile path, a visible window) and distributed "
        "(with code: a fan-out over a Dask cluster) (default: core tools only)",
        nargs="+", metavar="CAP",
    )  # fmt: skip
    approve: ApprovePolicy = _option(
        "none", "--approve",
        "which agent calls wait for the operator's approval: consequential (destructive tools), all (every tool "
        "that is not read-only) or none (default: consequential in a notebook, none elsewhere)",
        choices=list(get_args(ApprovePolicy)),
    )  # fmt: skip
    allowed_origins: list[str] | None = _option(
        None, "--allow-origin",
        "mirror the WebMCP tools of pages from these origins (default: the origins the session's own callers "
        "navigated to; agents' navigations do not count)",
        nargs="+", metavar="ORIGIN",
    )  # fmt: skip
    file_root: str | None = _option(None, "--file-root", "agents may load file: URLs under DIR (default: none)",
                                    metavar="DIR")  # fmt: skip
    upload_roots: list[str] = _option(
        [], "--upload-root", "agents may upload files under DIR (repeatable; default: the artifacts directory)",
        action="append", metavar="DIR",
    )  # fmt: skip
    allow_schemes: list[str] = _option(
        [], "--allow-scheme", f"more URL schemes for agents: {' '.join(SCHEMES)} (default: http, https, about:blank)",
        nargs="+", metavar="SCHEME",
    )  # fmt: skip
    app: bool = _option(
        True, "--no-app",
        "do not offer the live view, call log and approval prompt as an MCP App to hosts that render apps "
        "(default: offered)",
        action="store_false",
    )  # fmt: skip
    chromium_args: list[str] = _option(
        [], "--chromium-arg", "a Chromium flag for every browser agents launch, as --chromium-arg=--flag (repeatable)",
        action="append", metavar="FLAG",
    )  # fmt: skip

    allow_urls: list[str] = _option(
        [], "--allow-url",
        "agents' browsers may load only URLs matching these globs: https://shop.example/*, *.example.com, "
        "127.0.0.1:8000 (default: any)",
        nargs="+", metavar="PATTERN",
    )  # fmt: skip
    block_urls: list[str] = _option(
        [], "--block-url", "agents' browsers may not load URLs matching these globs (as --allow-url; they win)",
        nargs="+", metavar="PATTERN",
    )  # fmt: skip
    allow_own_servers: bool = _option(
        False, "--allow-own-servers",
        "lift the SSRF guard: let agents' browsers reach this session's own servers (its MCP and Jupyter ports)",
        action="store_true",
    )  # fmt: skip

    def grant(self, default_upload_root: str) -> Grant:
        """The agents' grant (ValueError naming a bad option); uploads default to `default_upload_root`."""
        if self.approve not in get_args(ApprovePolicy):
            raise ValueError(f"approve must be one of {', '.join(get_args(ApprovePolicy))}, not {self.approve!r}")
        return Grant.build(
            self.caps, allow_schemes=self.allow_schemes, file_root=self.file_root,
            upload_roots=self.upload_roots or [default_upload_root], chromium_args=self.chromium_args,
            allow_urls=self.allow_urls, block_urls=self.block_urls,
        )  # fmt: skip

    def guarded(self, grant: Grant, mcp: tuple[str, int] | None = None) -> Grant:
        """`grant` with the SSRF guard: the session's own servers (`mcp`, the Jupyter servers) refused,
        unless --allow-own-servers."""
        if self.allow_own_servers:
            return grant
        return dataclasses.replace(grant, url_policy=grant.url_policy.with_own(own_servers(mcp)))

    @classmethod
    def of(cls, options: ServeOptions | None = None, **fields: Any) -> ServeOptions:
        """`options` (else the defaults) with `fields` over them (tuples become lists); TypeError
        naming a field that is not one."""
        unknown = sorted(set(fields) - {f.name for f in dataclasses.fields(cls)})
        if unknown:
            raise TypeError(f"unknown serve option{'s' * (len(unknown) > 1)} {', '.join(unknown)}")
        given: dict[str, Any] = {name: list(v) if isinstance(v, tuple) else v for name, v in fields.items()}
        return dataclasses.replace(options if options is not None else cls(), **given)

    @classmethod
    def parameters(cls) -> list[inspect.Parameter]:
        """The fields as keyword-only parameters (`Session.serve_mcp`'s keywords)."""
        return [
            inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=_own_default(f), annotation=f.type)
            for f in dataclasses.fields(cls)
        ]

    @classmethod
    def from_namespace(cls, namespace: argparse.Namespace) -> ServeOptions:
        """The options a parser built by `add_arguments` read (the others keep their defaults)."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{name: value for name, value in vars(namespace).items() if name in names})


@dataclass(frozen=True)
class HttpLimits:
    """What the MCP HTTP server holds for its clients at once, and for how long, each declared once
    (`core.options`; its environment variable overrides it). Token or not, a client reaches no
    further than these."""

    max_body_bytes: int = option(
        4_194_304, minimum=0, exclusive=True, env="WEBMCP_NB_HTTP_MAX_BODY_BYTES", label="request body (bytes)",
        help="largest request body, and largest request head (413 / 400); counted while reading, so no more is held",
    )  # fmt: skip
    max_requests: int = option(
        16, minimum=0, exclusive=True, env="WEBMCP_NB_HTTP_MAX_REQUESTS", label="requests at once",
        help="POST requests read or handled at once (until each answer starts); beyond, 503",
    )  # fmt: skip
    max_connections: int = option(
        64, minimum=0, exclusive=True, env="WEBMCP_NB_HTTP_MAX_CONNECTIONS", label="open connections",
        help="open connections; one more is closed as soon as it is accepted",
    )  # fmt: skip
    # Longer than the idle pools of common clients (Node's undici drops its sockets after 4 s, httpx
    # after 5 s): a server that closes first races the client's next request on that socket, which
    # then fails with "other side closed".
    idle_timeout_s: float = option(
        15.0, minimum=0, exclusive=True, env="WEBMCP_NB_HTTP_IDLE_TIMEOUT_SECONDS", label="idle timeout (s)",
        help="a connection with no request on it is closed after this",
    )  # fmt: skip
    request_timeout_s: float = option(
        30.0, minimum=0, exclusive=True, env="WEBMCP_NB_HTTP_REQUEST_TIMEOUT_SECONDS", label="request timeout (s)",
        help="a request's head and body must have arrived within this of its first byte, else its connection is closed",
    )  # fmt: skip

    def __post_init__(self) -> None:
        for name, spec in HTTP_OPTIONS.items():
            spec.check(getattr(self, name), f"HttpLimits({name}=...)")

    @classmethod
    def from_env(cls) -> HttpLimits:
        """The defaults, overridden by the environment (ValueError naming a bad variable)."""
        values, sources = resolve(HTTP_OPTIONS, {}, "")
        for name, spec in HTTP_OPTIONS.items():
            spec.check(values[name], spec.describe(sources[name]))
        return cls(**values)


HTTP_OPTIONS = options_of(HttpLimits)


def _own_default(option: dataclasses.Field[Any]) -> Any:
    return option.default_factory() if callable(option.default_factory) else option.default


def add_arguments(
    parser: argparse.ArgumentParser, *, exclude: Iterable[str] = (), defaults: dict[str, Any] | None = None
) -> None:
    """Add a flag for each option (but those in `exclude`), with `defaults` in place of the options' own."""
    defaults, excluded = defaults or {}, set(exclude)
    for declared in dataclasses.fields(ServeOptions):
        if declared.name in excluded:
            continue
        parser.add_argument(
            declared.metadata["flag"],
            dest=declared.name,
            default=defaults.get(declared.name, _own_default(declared)),
            help=declared.metadata["help"].replace("%", "%%"),
            **declared.metadata["argparse"],
        )
