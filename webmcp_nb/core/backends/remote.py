"""Remote browsers (``backend="remote"``): a Chromium on a grid, reached over the network.

Two protocols: Playwright's browser-server protocol (``endpoint="ws://..."``: Playwright's
``launch-server``, Moon, Browserless) and the Chrome DevTools Protocol (``cdp_endpoint=
"http://host:9222"``: any Chrome with ``--remote-debugging-port``). The instance opens a context
of its own in the remote browser and, when destroyed, closes only that context and its
connection: the remote browser and the contexts others opened in it stay.

An endpoint that cannot be reached is ``binary_not_found``: as with a missing local binary, no
browser can be reached there, and the fix is the same kind (start one, or point elsewhere).
Headers carry a grid's token: they are recorded as ``[redacted]`` (``ToolSpec.secret_args``) and
an endpoint is shown without its userinfo and query (`public_url`).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from ..call.errors import InvalidParams, ToolFailure
from ..call.util import first_lines
from .chromium import context_kwargs, unknown_locale

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Playwright

    from ..browsers.instances import Instance
    from ..config import LaunchDefaults
    from ..guard.grants import Grant
    from . import BackendName, Launcher, LaunchOptions

MAX_URL_CHARS = 4096
MAX_HEADER_CHARS = 8192
MAX_HEADERS = 32
HEADER_NAME = r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$"  # an HTTP token (RFC 9110)
CONNECT_TIMEOUT_S = 10.0
CONNECT_SHARE = 0.8
"""A connection attempt gives up by this share of its call's time left (the rest: the context and page)."""
MAX_CONNECT_TIMEOUT_S = 120.0
ENDPOINT_SCHEMES = ("ws", "wss")
CDP_SCHEMES = ("http", "https", "ws", "wss")
LOCAL_ONLY = ("executable_path", "args", "profile_dir", "headless")
"""Options that configure a browser this machine launches; a remote browser was launched elsewhere."""
SUPPORTS = (
    "A Chromium on a grid, over Playwright's browser-server protocol (endpoint) or CDP (cdp_endpoint): every "
    "tool; WebMCP mode 'page' by default (native where the remote browser has it on); no local profile or flags."
)
REMOTE_ONLY = ("endpoint", "cdp_endpoint", "headers", "connect_timeout_s")
HEADERS_ENV = "WEBMCP_NB_REMOTE_HEADERS"
"""Headers for a session's remote default, as a JSON object (keeps a token off command lines and notebooks)."""


@dataclass(frozen=True)
class RemoteOptions:
    """Where the remote browser is: exactly one endpoint; headers may carry a token."""

    endpoint: str | None = None
    cdp_endpoint: str | None = None
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    connect_timeout_s: float = CONNECT_TIMEOUT_S


def own(options: LaunchOptions) -> RemoteOptions:
    """`options`' remote options (none set where none were given)."""
    return options.own if isinstance(options.own, RemoteOptions) else RemoteOptions()


def check_options(args: Mapping[str, Any], backend: str, default_remote: bool) -> None:
    """Refuse remote options that cannot work, before anything connects (`InvalidParams`).
    `args` are a create call's arguments (unset ones absent), for `backend`; `default_remote`:
    the session creates remote instances by default."""
    too_long = [name for name in ("endpoint", "cdp_endpoint") if len(args.get(name) or "") > MAX_URL_CHARS]
    too_long += [
        f"headers.{name}" for name, value in (args.get("headers") or {}).items() if len(value) > MAX_HEADER_CHARS
    ]
    if too_long:  # named here, never echoed: a token may be in it
        limits = f"{MAX_URL_CHARS} characters for an endpoint, {MAX_HEADER_CHARS} for a header"
        raise InvalidParams(f"parameter '{too_long[0]}' is too long (at most {limits}).")
    given = [name for name in REMOTE_ONLY if args.get(name) is not None]
    if backend != "remote":
        if given:
            raise InvalidParams(f"{', '.join(given)} need backend='remote' (the backend here is {backend!r}).")
        return
    local = [name for name in LOCAL_ONLY if args.get(name) not in (None, (), [], "")]
    if local:
        raise InvalidParams(
            f"{', '.join(local)} configure a browser launched on this machine; a remote browser was launched "
            "by its server (set them there), so backend='remote' takes none of them."
        )
    endpoints = [name for name in ("endpoint", "cdp_endpoint") if args.get(name) is not None]
    if len(endpoints) > 1:
        raise InvalidParams("Give exactly one of endpoint (Playwright's browser server) and cdp_endpoint (CDP).")
    if not endpoints and not default_remote:
        raise InvalidParams(
            "backend='remote' needs endpoint='ws://host:port/path' (a Playwright browser server) or "
            "cdp_endpoint='http://host:9222' (a Chrome with --remote-debugging-port)."
        )
    for name in endpoints:
        check_url(name, args[name])


def check_url(name: str, url: str) -> None:
    """Refuse an endpoint URL with the wrong scheme or no host (`InvalidParams`)."""
    schemes = ENDPOINT_SCHEMES if name == "endpoint" else CDP_SCHEMES
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        host, parts = None, None
    if parts is None or parts.scheme.lower() not in schemes or not host:
        raise InvalidParams(
            f"{name} must be a {' or '.join(f'{scheme}://' for scheme in schemes)} URL with a host, "
            f"not {public_url(url)!r}."
        )


def default_endpoint(url: str) -> dict[str, str]:
    """A session's remote default as a create option: ws(s):// is a Playwright browser server,
    http(s):// a CDP endpoint."""
    return {"endpoint" if urlsplit(url).scheme.lower() in ENDPOINT_SCHEMES else "cdp_endpoint": url}


def check_default(url: str) -> None:
    """Refuse a session's remote default that cannot work (ValueError)."""
    try:
        check_url(next(iter(default_endpoint(url))), url)
    except InvalidParams as exc:
        raise ValueError(f"remote_endpoint: {exc.message}") from None


def check_default_headers(headers: Mapping[str, str]) -> None:
    """Refuse a session's remote headers that cannot be sent (ValueError; never showing a value:
    it may be a token)."""
    if len(headers) > MAX_HEADERS:
        raise ValueError(f"remote_headers: at most {MAX_HEADERS} headers, got {len(headers)}")
    for name, value in headers.items():
        if not isinstance(name, str) or not re.fullmatch(HEADER_NAME, name):
            raise ValueError(
                f"remote_headers: {name!r} is not an HTTP header name (1-256 letters, digits or !#$%&'*+-.^_`|~)"
            )
        if not isinstance(value, str) or len(value) > MAX_HEADER_CHARS or "\n" in value or "\r" in value:
            raise ValueError(
                f"remote_headers: the value of {name!r} must be one line of text of at most {MAX_HEADER_CHARS} "
                "characters"
            )


def headers_from_env() -> dict[str, str]:
    """The headers in $WEBMCP_NB_REMOTE_HEADERS (none when unset); ValueError when it is not a JSON
    object of strings (the message never shows it)."""
    try:
        headers = json.loads(os.environ.get(HEADERS_ENV) or "{}")
    except ValueError:
        headers = None
    if not isinstance(headers, dict) or not all(isinstance(value, str) for value in headers.values()):
        raise ValueError(f"${HEADERS_ENV} must be a JSON object of strings")
    return headers


def launch_values(name: str, defaults: LaunchDefaults, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The `LaunchOptions` fields of a remote instance: the session's remote default (endpoint and
    headers) unless the call names an endpoint, then the call's options. WebMCP defaults to 'page'
    (the remote server's launch flags decide whether Chromium's own is on)."""
    values: dict[str, Any] = {"name": name, "headless": defaults.headless, "webmcp": "page"}
    if not (overrides.get("endpoint") or overrides.get("cdp_endpoint")) and defaults.remote_endpoint:
        values.update(default_endpoint(defaults.remote_endpoint), headers=defaults.remote_headers)
    values.update(overrides)
    return values


def public_url(url: str) -> str:
    """`url` without userinfo, query and fragment (where grids put tokens)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "[unparsable URL]"
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def url_secrets(url: str) -> list[str]:
    """The parts of `url` that `public_url` leaves out (to scrub them from messages)."""
    try:
        parts = urlsplit(url)
        secrets = [parts.password, parts.username, parts.query, parts.fragment]
    except ValueError:
        return [url]
    return [secret for secret in secrets if secret]


def public_endpoint(options: LaunchOptions) -> str | None:
    url = own(options).endpoint or own(options).cdp_endpoint
    return public_url(url) if url else None


def connect_deadline(time_left_s: float) -> float:
    """When a connection attempt for a call with `time_left_s` left gives up (`time.monotonic()`), so an
    endpoint that never answers is `binary_not_found`, not the call's `operation_timeout`."""
    return time.monotonic() + time_left_s * CONNECT_SHARE


async def connect(playwright: Playwright, options: RemoteOptions, deadline: float | None = None) -> Browser:
    """Connect to the remote browser `options` name, within `options.connect_timeout_s` and by
    `deadline` (see `connect_deadline`)."""
    from playwright.async_api import Error as PlaywrightError

    headers = dict(options.headers)
    sent = headers or None  # Playwright 1.62 sends an empty dict unserialized, which its driver refuses
    timeout_s = options.connect_timeout_s
    if deadline is not None:  # to a tenth of a second, never 0 (Playwright's "no timeout")
        timeout_s = max(0.1, round(min(timeout_s, deadline - time.monotonic()), 1))
    timeout_ms = timeout_s * 1000
    url = options.endpoint or options.cdp_endpoint
    assert url is not None
    try:
        if options.endpoint:
            return await playwright.chromium.connect(options.endpoint, timeout=timeout_ms, headers=sent)
        return await playwright.chromium.connect_over_cdp(url, timeout=timeout_ms, headers=sent)
    except PlaywrightError as exc:
        reason = first_lines(exc.message, 6)
        secrets = {url, *url_secrets(url), *headers.values()}
        for secret in sorted((secret for secret in secrets if len(secret) >= 3), key=len, reverse=True):
            reason = reason.replace(secret, public_url(url) if secret == url else "[redacted]")
        protocol = "Playwright browser server" if options.endpoint else "CDP endpoint"
        raise ToolFailure(
            "binary_not_found",
            f"No browser could be reached at the {protocol} {public_url(url)} within "
            f"{timeout_s:g} s: {reason}. Start the server (for example `python -m playwright "
            "launch-server --browser chromium --config cfg.json`), check the address and token, or raise "
            "connect_timeout_s.",
            started=False,
        ) from None


class Remote:
    """The `Backend` that reaches a Chromium on a grid."""

    name: BackendName = "remote"
    own_type = RemoteOptions
    drives_chromium = True
    shared_browser = True

    def check(self, args: Mapping[str, Any], chosen: BackendName, default_remote: bool) -> None:
        check_options(args, chosen, default_remote)

    def launch_values(
        self, name: str, defaults: LaunchDefaults, overrides: Mapping[str, Any], grant: Grant | None
    ) -> dict[str, Any]:
        """See `launch_values` (a grant's Chromium arguments do not apply: no flags reach a remote browser)."""
        return launch_values(name, defaults, overrides)

    async def start(self, launcher: Launcher, instance: Instance, deadline: float | None) -> BrowserContext:
        """Connect (giving up in time to say why: `connect_deadline`) and open a context of the instance's own."""
        connect_by = connect_deadline(deadline - time.monotonic()) if deadline is not None else None
        options = instance.options
        instance.browser = await connect(await launcher.playwright(), own(options), connect_by)
        return await instance.browser.new_context(**context_kwargs(options))

    def endpoint(self, options: LaunchOptions) -> str | None:
        return public_endpoint(options)

    def lost_detail(self, options: LaunchOptions) -> str:
        return f"the connection to the remote browser at {public_endpoint(options)} was lost"

    def refusal(self, options: LaunchOptions, exc: Exception) -> ToolFailure | None:
        return unknown_locale(options, exc)


BACKEND = Remote()
