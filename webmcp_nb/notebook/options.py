"""The notebook's options, declared once as traits of a traitlets `Configurable` (as nbclient does):
`BrowserMagics` inherits them, so ``%config BrowserMagics`` and ``c.BrowserMagics.NAME`` in a
config file set them; the limits' traits are derived from their declaration (`core.config.Limits`).
Each is checked once, by its trait, before anything changes; the shared session is created from
them (with each limit's source) and follows their changes. Nothing here imports IPython.
"""

from __future__ import annotations

import warnings
from typing import Any, cast, get_args

from traitlets import All, Bool, Dict, Float, Int, TraitError, Undefined, Unicode, default, observe, validate
from traitlets.config import Configurable

from ..core.backends import BackendName
from ..core.backends.remote import HEADERS_ENV, headers_from_env, public_url
from ..core.browsers.live import DEFAULT_MAX_FPS
from ..core.config import LIMIT_OPTIONS, LaunchDefaults
from ..core.options import DEFAULT, Option
from . import session as shared
from .session import DEFAULT_BACKEND

MAX_LIVE_VIEW_FPS = 60.0
CELL_OUTPUTS = ("lean", "full")  # `cell_output`: see `core.render.mimebundle`

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


# What messages say a value set here came from.
SOURCE = "%config BrowserMagics.NAME"


class _LimitTrait:
    """A limit's trait: its default is its environment variable's value, else the declared one. A
    bad variable is warned about (naming it, its value and bound) and the default kept, as a bad
    config-file value is; a bad value given to %config is refused."""

    name: str

    def make_dynamic_default(self) -> Any:
        spec = LIMIT_OPTIONS[self.name]
        try:
            found = spec.from_env()
            if found is not None:
                spec.check(*found)
                return found[0]
        except ValueError as exc:
            warnings.warn(f"BrowserMagics.{self.name} not applied: {exc}", stacklevel=2)
        return spec.default


def _limit_trait(spec: Option) -> Any:
    base = Int if spec.type is int else Float
    trait = type(f"Limit{base.__name__}", (_LimitTrait, base), {"default_value": Undefined})
    help = f"{spec.help} It {spec.bound}. Default: {spec.env} or {spec.default:g}."
    return trait(help=help).tag(config=True, applies="limit")


# One trait per limit, derived from its declaration (`core.config.Limits`).
_LimitTraits: type[Configurable] = type(
    "_LimitTraits", (Configurable,), {name: _limit_trait(spec) for name, spec in LIMIT_OPTIONS.items()}
)


class NotebookOptions(_LimitTraits):  # type: ignore[misc,valid-type]
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
    cell_output = Unicode(
        "lean",
        help='What a result\'s cell output holds. "lean": at most 1.5x its text (a small result shows as its text, '
        "a big one as its HTML view, first screenfuls rendered and the rest folded, a screenshot as its image); "
        '"full": also every result\'s HTML and its envelope JSON (application/vnd.webmcp-nb.envelope+json), for '
        "programs that read outputs.",
    ).tag(config=True)
    live_view_fps = Float(DEFAULT_MAX_FPS, help="Frames per second of the live view in `%browser panel`.").tag(
        config=True, applies="display"
    )

    _attached = False
    _given: set[str]  # the limits set here (config file, %config), not left to the environment

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # What a config file set reaches a session that is already open; later sessions are
        # created from `session_options()`.
        configured = self.config.get(type(self).__name__, {})
        given = [name for name in configured if name in self.session_traits()]
        self._given = {name for name in given if name in LIMIT_OPTIONS and configured[name] == getattr(self, name)}
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
        return dict(cls.class_traits(applies=lambda where: where in APPLIES))

    def session_options(self) -> dict[str, Any]:
        """The keyword arguments of a `NotebookSession` made with these options, with the limits'
        sources."""
        return {name: getattr(self, name) for name in self.session_traits()} | {"option_source": self._sources()}

    def _sources(self) -> dict[str, str]:
        """Where each limit's value came from: set here, its environment variable, or the default
        (a bad variable was warned about and left out)."""
        sources = {}
        for name, spec in LIMIT_OPTIONS.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    found = spec.from_env()
                except ValueError:
                    found = None
            if name in self._given:
                sources[name] = SOURCE.replace("NAME", name)
            elif found is not None and found[0] == getattr(self, name):
                sources[name] = found[1]
            else:
                sources[name] = DEFAULT
        return sources

    # defaults and checks -------------------------------------------------------------------
    @default("remote_headers")
    def _default_remote_headers(self) -> RemoteHeaders:
        try:
            headers = headers_from_env()
            LaunchDefaults(remote_headers=tuple(headers.items()))
            return RemoteHeaders(headers)
        except ValueError as exc:
            warnings.warn(f"{type(self).__name__}.remote_headers: {exc}; none are sent", stacklevel=2)
            return RemoteHeaders()

    @validate(*LIMIT_OPTIONS)
    def _check_limit(self, proposal: Any) -> Any:
        name, value = proposal["trait"].name, proposal["value"]
        return self._checked(name, value, lambda: LIMIT_OPTIONS[name].check(value, SOURCE.replace("NAME", name)))

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

    @validate("cell_output")
    def _check_cell_output(self, proposal: Any) -> Any:
        def check() -> None:
            if proposal["value"] not in CELL_OUTPUTS:
                raise ValueError(
                    f"cell_output must be one of {', '.join(map(repr, CELL_OUTPUTS))}, got {proposal['value']!r}"
                )

        return self._checked("cell_output", proposal["value"], check)

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
            if change["name"] in LIMIT_OPTIONS:
                self._given.add(change["name"])
        except ValueError as exc:  # the session changed state since the value was checked
            self.set_trait(change["name"], change["old"])
            raise TraitError(f"{type(self).__name__}.{change['name']} = {change['new']!r} was refused: {exc}") from None

    def _apply(self, name: str, value: Any) -> None:
        session = shared.current_shared_session()
        if session is None:
            return
        where = self.trait_metadata(name, "applies")
        if where in ("limit", "launch"):
            session.reconfigure(source=SOURCE, **{name: value})
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
