"""The notebook front end: the ``%browser`` magics, the shared session, and (in `.widgets`)
the browser panel and call log.

``%load_ext webmcp_nb`` loads it (see `webmcp_nb.notebook.extension` for auto-loading).
Importing this package imports neither IPython nor Playwright.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _lazy_exports

if TYPE_CHECKING:
    from .extension import load_ipython_extension, unload_ipython_extension
    from .magics import BrowserMagics
    from .session import NotebookSession, shared_session

_LAZY = {
    "NotebookSession": ("webmcp_nb.notebook.session", "NotebookSession"),
    "shared_session": ("webmcp_nb.notebook.session", "shared_session"),
    "load_ipython_extension": ("webmcp_nb.notebook.extension", "load_ipython_extension"),
    "unload_ipython_extension": ("webmcp_nb.notebook.extension", "unload_ipython_extension"),
    "BrowserMagics": ("webmcp_nb.notebook.magics", "BrowserMagics"),
}

__all__ = [
    "BrowserMagics",
    "NotebookSession",
    "load_ipython_extension",
    "shared_session",
    "unload_ipython_extension",
]


__getattr__ = _lazy_exports(__name__, _LAZY, globals())
