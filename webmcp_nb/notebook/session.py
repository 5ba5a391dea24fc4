"""The notebook's shared session: one `NotebookSession` per kernel, used by magics and widgets.

`shared_session()` (also `webmcp_nb.session()`) creates it on first use with the options of the
loaded extension (`options.NotebookOptions`, attached here), and returns the same object until it
is closed (then a new one is made). Nothing here imports IPython.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..client import Session
from ..core.browsers.live import DEFAULT_MAX_FPS
from ..serve_options import ServeOptions

if TYPE_CHECKING:
    from ..core.backends import BackendName
    from ..core.call.engine import Approval
    from ..mcp import ServerHandle
    from ..serve_options import ApprovePolicy
    from .options import NotebookOptions
    from .webmcp_tools import WebMCP
    from .widgets import BrowserPanel, CallLog

CALLER = "notebook"
DEFAULT_BACKEND: BackendName = "chromium"
"""What ``%browser create_instance`` launches unless configured otherwise; then a remote default
endpoint of the session, if any, decides instead (see `browser_create_instance`)."""


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
        backend: BackendName = DEFAULT_BACKEND,
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
        from .webmcp_tools import WebMCP

        return WebMCP(self)

    def log(self) -> CallLog:
        """A live log of every call on this session, whoever made it (an ipywidget)."""
        from .widgets import CallLog

        return CallLog(self)

    def serve_mcp(
        self,
        options: ServeOptions | None = None,
        *,
        approve: ApprovePolicy | None = None,
        approver: Approval | None = None,
        new: bool = False,
        **fields: Any,
    ) -> ServerHandle:
        """`Session.serve_mcp`, approving consequential calls in the notebook by default:
        the prompts appear in an approval panel displayed in this cell.

        Serving again in this kernel keeps the URL and token of the last server served on that
        host (a running one is stopped first), so a client configured for it keeps working;
        an explicit `port` or `token`, or `new=True`, asks for others."""
        given = ServeOptions.of(options, **fields)
        approve = approve or (given.approve if options is not None else "consequential")
        chosen = dataclasses.asdict(given) | {"approve": approve}
        host = chosen["host"]
        kept = None if new else _served.get(host)
        if kept is not None:
            chosen["port"] = chosen["port"] or kept[0]
            chosen["token"] = chosen["token"] or kept[1]
            for server in self.servers:
                if server.url == kept[2]:
                    server.stop()
        panel = None
        if approve != "none" and approver is None:
            from .widgets import ApprovalPanel

            panel = ApprovalPanel()
            approver = panel.approve
        handle = super().serve_mcp(ServeOptions(**chosen), approver=approver)
        _served[host] = (urlsplit(handle.url).port or 0, handle.token, handle.url)
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
_served: dict[str, tuple[int, str, str]] = {}  # host -> (port, token, url) of this kernel's last server there
_options: NotebookOptions | None = None


def attach(options: NotebookOptions) -> None:
    """Create shared sessions from `options` (the loaded extension's `BrowserMagics`) from now on."""
    global _options
    with _lock:
        _options = options


def detach(options: NotebookOptions) -> None:
    """Stop using `options`: later shared sessions take the defaults."""
    global _options
    with _lock:
        if _options is options:
            _options = None


def shared_session() -> NotebookSession:
    """The notebook's shared session, created on first use (again after it was closed)."""
    global _shared
    with _lock:
        if _shared is None or _shared.closed:
            _shared = NotebookSession(**(_options.session_options() if _options is not None else {}))
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
