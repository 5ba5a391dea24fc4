"""The notebook's options, declared once as traits of a traitlets `Configurable` (as nbclient does):
`BrowserMagics` inherits them, so ``%config BrowserMagics`` and ``c.BrowserMagics.NAME`` in a
config file set them. Each is checked once, by its trait, before anything changes; the shared
session is created from them and follows their changes. Nothing here imports IPython.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any, cast, get_args

from traitlets import All, Bool, Dict, Float, Int, TraitError, Unicode, default, observe, validate
from traitlets.config import Configurable

from ..core.backends import BackendName
from ..core.backends.remote import HEADERS_ENV, headers_from_env, public_url
from ..core.browsers.live import DEFAULT_MAX_FPS
from ..core.config import LaunchDefaults, Limits
from . import session as shared
from .session import DEFAULT_BACKEND

MAX_LIVE_VIEW_FPS = 60.0

# How an option reaches a session (the `applies` tag of each trait): "limit" and "launch" through
# `Session.reconfigure`, "start" as an attribute until the session starts, "display" as an attribute
# of `NotebookSession`; options without the tag are read by the magics only.
APPLIES = ("limit", "launch", "start", "display")


class RemoteEndpoint(str):
    """A remote endpoint as the notebook shows it (``%config``, errors): without its userinfo, query
    and fragment, where grids put tokens. Its value is the whole URL."""

    def __repr__(self) -> str:
        return repr(public_url(self))


class RemoteHeaders(dict[str, str]):
    """Headers for a remote browser as the notebook shows them: names only (values may be tokens)."""

    def __repr__(self) -> str:
        return repr(dict.fromkeys(self, "[redacted]"))


class RemoteURL(Unicode):  # type: ignore[type-arg]
    """A trait holding a `RemoteEndpoint`."""

    def validate(self, obj: Any, value: Any) -> Any:
        return RemoteEndpoint(super().validate(obj, value))


class HeaderDict(Dict):
    """A trait holding `RemoteHeaders`."""

    def validate(self, obj: Any, value: Any) -> Any:
        return RemoteHeaders(cast("dict[str, str]", super().validate(obj, value)))


def _env_limits() -> Limits:
    try:
        return Limits.from_env()
    except ValueError:
        return Limits()


class NotebookOptions(Configurable):
    """Options of the notebook's shared session and of ``%browser``.

    Limits and launch options apply to the running session at once.
    """

    headless = Bool(True, help="Launch browsers without a window (instances created from now on).").tag(
        config=True, applies="launch"
    )
    backend = Unicode(
        DEFAULT_BACKEND, help="The browser `%browser create_instance` launches unless given --backend."
    ).tag(config=True, applies="display")
    default_instance = Unicode(
        "default", help="The instance calls go to unless told otherwise (fixed once the session has started)."
    ).tag(config=True, applies="start")
    max_result_bytes = Int(
        help="Largest result a call may return, in bytes (at least 4096; larger is result_too_large). "
        "Default: BROWSER_MCP_MAX_RESULT_BYTES or 1048576."
    ).tag(config=True, applies="limit")
    max_instances = Int(help="Most browser instances at once. Default: BROWSER_MCP_MAX_INSTANCES or 10.").tag(
        config=True, applies="limit"
    )
    operation_timeout_s = Float(
        help="Time limit of one call, queue wait included, in seconds. "
        "Default: BROWSER_MCP_OPERATION_TIMEOUT_SECONDS or 60."
    ).tag(config=True, applies="limit")
    remote_endpoint = RemoteURL(
        "",
        help="Create new instances (the default one included) on a remote browser: ws://... a Playwright browser "
        "server (launch-server, Moon, Browserless), http://... a CDP endpoint; as `webmcp-nb serve --remote`. "
        "Empty: launch a local Chromium. Shown without userinfo or query (tokens).",
    ).tag(config=True, applies="launch")
    remote_headers = HeaderDict(
        help="Headers sent when connecting to remote_endpoint (a grid's token), e.g. "
        f"{{'Authorization': os.environ['GRID_TOKEN']}}. Default: ${HEADERS_ENV} (a JSON object). Values are "
        "never shown.",
    ).tag(config=True, applies="launch")
    screenshot_width = Int(800, help="Display width of inline screenshots, in pixels.").tag(
        config=True, applies="display"
    )
    screenshot_after_actions = Bool(
        False, help="After a page action from %browser succeeds, also display a screenshot of the page."
    ).tag(config=True)
    live_view_fps = Float(DEFAULT_MAX_FPS, help="Frames per second of the live view in `%browser panel`.").tag(
        config=True, applies="display"
    )

    _attached = False

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # What a config file set reaches a session that is already open; later sessions are
        # created from `session_options()`.
        given = [name for name in self.config.get(type(self).__name__, {}) if name in self.session_traits()]
        shared.attach(self)
        self._attached = True
        for name in given:
            self._apply(name, getattr(self, name))

    def detach(self) -> None:
        """Stop being the shared session's options (on unload): later sessions take the defaults."""
        self._attached = False
        shared.detach(self)

    @classmethod
    def session_traits(cls) -> dict[str, Any]:
        return cls.class_traits(applies=lambda where: where in APPLIES)

    def session_options(self) -> dict[str, Any]:
        """The keyword arguments of a `NotebookSession` made with these options."""
        return {name: getattr(self, name) for name in self.session_traits()}

    # defaults and checks -------------------------------------------------------------------
    @default("max_result_bytes")
    def _default_max_result_bytes(self) -> int:
        return _env_limits().max_result_bytes

    @default("max_instances")
    def _default_max_instances(self) -> int:
        return _env_limits().max_instances

    @default("operation_timeout_s")
    def _default_operation_timeout_s(self) -> float:
        return _env_limits().operation_timeout_s

    @default("remote_headers")
    def _default_remote_headers(self) -> RemoteHeaders:
        try:
            headers = headers_from_env()
            LaunchDefaults(remote_headers=tuple(headers.items()))
            return RemoteHeaders(headers)
        except ValueError as exc:
            warnings.warn(f"{type(self).__name__}.remote_headers: {exc}; none are sent", stacklevel=2)
            return RemoteHeaders()

    @validate("max_result_bytes", "max_instances", "operation_timeout_s")
    def _check_limit(self, proposal: Any) -> Any:
        name, value = proposal["trait"].name, proposal["value"]
        session = shared.current_shared_session()
        base = session.limits if session is not None else _env_limits()
        return self._checked(name, value, lambda: dataclasses.replace(base, **{name: value}))

    @validate("remote_endpoint", "remote_headers")
    def _check_remote(self, proposal: Any) -> Any:
        name, value = proposal["trait"].name, proposal["value"]
        given = (
            {"remote_endpoint": value or None}
            if name == "remote_endpoint"
            else {"remote_headers": tuple(value.items())}
        )
        return self._checked(name, value, lambda: LaunchDefaults(**given))

    @validate("default_instance")
    def _check_default_instance(self, proposal: Any) -> Any:
        return self._checked("default_instance", proposal["value"], lambda: _check_default_instance(proposal["value"]))

    @validate("backend")
    def _check_backend(self, proposal: Any) -> Any:
        def check() -> None:
            choices = get_args(BackendName)
            if proposal["value"] not in choices:
                raise ValueError(f"backend must be one of {', '.join(map(repr, choices))}, got {proposal['value']!r}")

        return self._checked("backend", proposal["value"], check)

    @validate("screenshot_width")
    def _check_screenshot_width(self, proposal: Any) -> Any:
        def check() -> None:
            if proposal["value"] < 1:
                raise ValueError(f"screenshot_width must be a positive number of pixels, got {proposal['value']!r}")

        return self._checked("screenshot_width", proposal["value"], check)

    @validate("live_view_fps")
    def _check_live_view_fps(self, proposal: Any) -> Any:
        def check() -> None:
            if not 0 < proposal["value"] <= MAX_LIVE_VIEW_FPS:
                raise ValueError(
                    f"live_view_fps must be above 0 and at most {MAX_LIVE_VIEW_FPS:g}, got {proposal['value']!r}"
                )

        return self._checked("live_view_fps", proposal["value"], check)

    def _checked(self, name: str, value: Any, check: Any) -> Any:
        try:
            check()
        except ValueError as exc:
            if not self._attached:  # a config file at load: tell, keep the default, apply the others
                warnings.warn(f"{type(self).__name__}.{name} not applied: {exc}", stacklevel=2)
                return self.trait_defaults(name)
            raise TraitError(f"{type(self).__name__}.{name} = {value!r} was refused, nothing changed: {exc}") from None
        return value

    # reaching the open session ---------------------------------------------------------------
    @observe(All)
    def _push(self, change: Any) -> None:
        if not self._attached or change["name"] not in self.session_traits():
            return
        try:
            self._apply(change["name"], change["new"])
        except ValueError as exc:  # the session changed state since the value was checked
            self.set_trait(change["name"], change["old"])
            raise TraitError(f"{type(self).__name__}.{change['name']} = {change['new']!r} was refused: {exc}") from None

    def _apply(self, name: str, value: Any) -> None:
        session = shared.current_shared_session()
        if session is None:
            return
        where = self.trait_metadata(name, "applies")
        if where in ("limit", "launch"):
            session.reconfigure(**{name: value})
        elif where in ("start", "display"):
            setattr(session, name, value)


def _check_default_instance(name: str) -> None:
    from pydantic import TypeAdapter, ValidationError

    from ..core.tools.models import InstanceName

    try:
        TypeAdapter(InstanceName).validate_python(name, strict=True)
    except ValidationError:
        raise ValueError(
            f"default_instance {name!r} is not a valid instance name (letters, digits, '_', '.', '-'; "
            "at most 64, starting with a letter or digit)"
        ) from None
    session = shared.current_shared_session()
    if session is not None and session.started and name != session.default_instance:
        raise ValueError(
            f"default_instance cannot change once the notebook session has started (it is "
            f"{session.default_instance!r}); switch with `%browser create_instance {name}`, or close the "
            "session first (`webmcp_nb.session().close()`)"
        )
