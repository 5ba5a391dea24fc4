"""webmcp_nb: a live, shared browser workbench for Jupyter.

``import webmcp_nb`` is cheap: it imports no Playwright and starts nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from .core.aria import find_ref
    from .core.envelope import Envelope, ToolCallError
    from .core.runtime import RuntimeThreadError
    from .session import Session

_LAZY = {
    "Session": ("webmcp_nb.session", "Session"),
    "Envelope": ("webmcp_nb.core.envelope", "Envelope"),
    "ToolCallError": ("webmcp_nb.core.envelope", "ToolCallError"),
    "RuntimeThreadError": ("webmcp_nb.core.runtime", "RuntimeThreadError"),
    "find_ref": ("webmcp_nb.core.aria", "find_ref"),
}

__all__ = ["Envelope", "RuntimeThreadError", "Session", "ToolCallError", "__version__", "find_ref"]


def __getattr__(name: str) -> Any:
    try:
        module_name, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'webmcp_nb' has no attribute {name!r}") from None
    import importlib

    value = getattr(importlib.import_module(module_name), attribute)
    globals()[name] = value
    return value
