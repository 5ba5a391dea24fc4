"""The notebook's shared session: one `NotebookSession` per kernel, used by magics and widgets.

`shared_session()` (also `webmcp_nb.session()`) creates it on first use with the options the
`BrowserMagics` configuration pushed here through `configure()`, and returns the same object
until it is closed (then a new one is made). Nothing here imports IPython.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import TYPE_CHECKING, Any

from ..client import Session
from ..core.config import Limits
from ..core.live import DEFAULT_MAX_FPS

if TYPE_CHECKING:
    from ..core.engine import Approval
    from ..mcp import ServerHandle
    from .webmcp import WebMCP
    from .widgets import BrowserPanel, CallLog

CALLER = "notebook"

# Options the notebook configuration can set, by how they reach a session.
LIMIT_OPTIONS = ("max_result_bytes", "max_instances", "operation_timeout_s")
LAUNCH_OPTIONS = ("headless",)
START_OPTIONS = ("default_instance",)  # fixed once the session has started
DISPLAY_OPTIONS = ("backend", "screenshot_width", "live_view_fps")  # attributes read by magics and widgets
OPTIONS = LIMIT_OPTIONS + LAUNCH_OPTIONS + START_OPTIONS + DISPLAY_OPTIONS

MAX_LIVE_VIEW_FPS = 60.0


class NotebookSession(Session):
    """The session a notebook's magics and widgets share (caller name ``"notebook"``).

    A `Session` with display preferences for the notebook front end:
    `backend` (what ``%browser create_instance`` launches unless told otherwise),
    `screenshot_width` (display width of inline screenshots, in CSS pixels) and
    `live_view_fps` (frame rate of the live view in `panel()`).
    """

    def __init__(
        self,
        *,
        backend: str = "chromium",
        screenshot_width: int = 800,
        live_view_fps: float = DEFAULT_MAX_FPS,
        caller: str = CALLER,
        **options: Any,
    ) -> None:
        super().__init__(caller=caller, **options)
        self.backend = backend
        self.screenshot_width = screenshot_width
        self.live_view_fps = live_view_fps

    def panel(self) -> BrowserPanel:
        """A live view of the current page with controls (an ipywidget)."""
        from .widgets import BrowserPanel

        return BrowserPanel(self, max_fps=self.live_view_fps)

    @property
    def webmcp(self) -> WebMCP:
        """The page's WebMCP tools: ``nb.webmcp.tools()`` are callables whose display is a form."""
        from .webmcp import WebMCP

        return WebMCP(self)

    def log(self) -> CallLog:
        """A live log of every call on this session, whoever made it (an ipywidget)."""
        from .widgets import CallLog

        return CallLog(self)

    def serve_mcp(  # type: ignore[override]
        self, *, approve: str = "consequential", approver: Approval | None = None, **options: Any
    ) -> ServerHandle:
        """`Session.serve_mcp`, approving consequential calls in the notebook by default:
        the prompts appear in an approval panel displayed in this cell."""
        panel = None
        if approve != "none" and approver is None:
            from .widgets import ApprovalPanel

            panel = ApprovalPanel()
            approver = panel.approve
        handle = super().serve_mcp(approve=approve, approver=approver, **options)
        handle.approvals = panel
        if panel is not None:
            from IPython.display import display

            display(panel)
        return handle

    def __repr__(self) -> str:
        state = "closed" if self.closed else ("running" if self.started else "idle")
        return f"<webmcp_nb.NotebookSession {state}>"


_lock = threading.RLock()
_shared: NotebookSession | None = None
_options: dict[str, Any] = {}


def shared_session() -> NotebookSession:
    """The notebook's shared session, created on first use (again after it was closed)."""
    global _shared
    with _lock:
        if _shared is None or _shared.closed:
            _shared = NotebookSession(**_options)
        return _shared


def current_shared_session() -> NotebookSession | None:
    """The shared session if one is open, without creating one."""
    with _lock:
        return _shared if _shared is not None and not _shared.closed else None


def close_shared_session() -> None:
    """Close the shared session and its browsers (a later `shared_session()` makes a new one)."""
    global _shared
    with _lock:
        session, _shared = _shared, None
    if session is not None:
        session.close()


def configured_options() -> dict[str, Any]:
    """The options a new shared session would be created with."""
    with _lock:
        return dict(_options)


def reset_options() -> None:
    """Forget every configured option (new sessions take the environment's defaults)."""
    with _lock:
        _options.clear()


def check_options(options: dict[str, Any]) -> None:
    """Raise ValueError if `options` cannot be applied now; change nothing."""
    with _lock:
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise ValueError(f"unknown option(s) {', '.join(unknown)}; known: {', '.join(OPTIONS)}")
        _limits_after(options)
        if "headless" in options and not isinstance(options["headless"], bool):
            raise ValueError(f"headless must be True or False, got {options['headless']!r}")
        if "default_instance" in options:
            _check_default_instance(options["default_instance"])
        if "backend" in options:
            _check_backend(options["backend"])
        if "screenshot_width" in options:
            width = options["screenshot_width"]
            if isinstance(width, bool) or not isinstance(width, int) or width < 1:
                raise ValueError(f"screenshot_width must be a positive number of pixels, got {width!r}")
        if "live_view_fps" in options:
            fps = options["live_view_fps"]
            if isinstance(fps, bool) or not isinstance(fps, int | float) or not 0 < fps <= MAX_LIVE_VIEW_FPS:
                raise ValueError(f"live_view_fps must be above 0 and at most {MAX_LIVE_VIEW_FPS:g}, got {fps!r}")


def configure(**options: Any) -> None:
    """Set options for the shared session: checked first (ValueError, nothing changed), then
    remembered for sessions created later and pushed to the open one (`Session.reconfigure`
    for limits and launch options; display options as attributes)."""
    with _lock:
        check_options(options)
        _options.update(options)
        session = current_shared_session()
        if session is None:
            return
        reconfigure = {key: options[key] for key in LIMIT_OPTIONS + LAUNCH_OPTIONS if key in options}
        if reconfigure:
            session.reconfigure(**reconfigure)
        if "default_instance" in options:
            session.default_instance = options["default_instance"]  # checked: not started yet
        for key in DISPLAY_OPTIONS:
            if key in options:
                setattr(session, key, options[key])


def _limits_after(options: dict[str, Any]) -> Limits:
    changes = {key: options[key] for key in LIMIT_OPTIONS if key in options}
    session = current_shared_session()
    if session is not None:
        base = session.limits
    else:
        base = Limits.from_env(**{key: _options.get(key) for key in LIMIT_OPTIONS})
    return dataclasses.replace(base, **changes)


def _check_default_instance(name: Any) -> None:
    from pydantic import TypeAdapter, ValidationError

    from ..core.tools.models import InstanceName

    try:
        TypeAdapter(InstanceName).validate_python(name, strict=True)
    except ValidationError:
        raise ValueError(
            f"default_instance {name!r} is not a valid instance name (letters, digits, '_', '.', '-'; "
            "at most 64, starting with a letter or digit)"
        ) from None
    session = current_shared_session()
    if session is not None and session.started and name != session.default_instance:
        raise ValueError(
            f"default_instance cannot change once the notebook session has started (it is "
            f"{session.default_instance!r}); switch with `%browser create_instance {name}`, or close the "
            "session first (`webmcp_nb.session().close()`)"
        )


def backend_choices() -> list[str]:
    """The backends `browser_create_instance` accepts, read from its input schema."""
    from ..client import tool_registry

    schema = tool_registry().get("browser_create_instance").input_schema["properties"]["backend"]
    if "const" in schema:
        return [schema["const"]]
    return list(schema.get("enum", []))


def _check_backend(backend: Any) -> None:
    choices = backend_choices()
    if backend not in choices:
        raise ValueError(f"backend must be one of {', '.join(map(repr, choices))}, got {backend!r}")
