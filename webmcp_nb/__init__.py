"""webmcp_nb: a live, shared browser workbench for Jupyter.

``import webmcp_nb`` is cheap: it imports no Playwright, no IPython, and starts nothing.

In a notebook, ``%load_ext webmcp_nb`` adds the ``%browser`` magics, and ``webmcp_nb.session()``
returns the notebook's shared session (the one the magics and widgets use).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from .core.aria import find_ref
    from .core.envelope import Envelope, ToolCallError
    from .core.runtime import RuntimeThreadError
    from .notebook.extension import load_ipython_extension, unload_ipython_extension
    from .client import Session
    from .notebook.session import NotebookSession

_LAZY = {
    "Session": ("webmcp_nb.client", "Session"),
    "Envelope": ("webmcp_nb.core.envelope", "Envelope"),
    "ToolCallError": ("webmcp_nb.core.envelope", "ToolCallError"),
    "RuntimeThreadError": ("webmcp_nb.core.runtime", "RuntimeThreadError"),
    "find_ref": ("webmcp_nb.core.aria", "find_ref"),
    "load_ipython_extension": ("webmcp_nb.notebook.extension", "load_ipython_extension"),
    "unload_ipython_extension": ("webmcp_nb.notebook.extension", "unload_ipython_extension"),
}

__all__ = [
    "Envelope",
    "RuntimeThreadError",
    "Session",
    "ToolCallError",
    "__version__",
    "find_ref",
    "load_ipython_extension",
    "session",
    "unload_ipython_extension",
]


def session() -> NotebookSession:
    """The notebook's shared session: the one the magics and widgets use (created on first use)."""
    from .notebook.session import shared_session

    return shared_session()


def __getattr__(name: str) -> Any:
    try:
        module_name, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'webmcp_nb' has no attribute {name!r}") from None
    import importlib

    value = getattr(importlib.import_module(module_name), attribute)
    globals()[name] = value
    return value

