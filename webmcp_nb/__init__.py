"""webmcp_nb: a live, shared browser workbench for Jupyter.

``import webmcp_nb`` is cheap: it imports no Playwright, no IPython, and starts nothing.

In a notebook, ``%load_ext webmcp_nb`` adds the ``%browser`` magics, and ``webmcp_nb.session()``
returns the notebook's shared session (the one the magics and widgets use).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from ._generated import FormField, Viewport
    from .client import PageToolHandle, Session
    from .core.browsers.aria import RefTarget, find_ref
    from .core.browsers.instances import InstanceState
    from .core.browsers.live import LiveFrame, LiveView
    from .core.call.engine import BinaryRenderer, CallRecord, Engine
    from .core.call.envelope import ERROR_TYPES, Envelope, ErrorType, Operation, Outcome, Retry, Status, ToolCallError
    from .core.call.registry import ToolSpec
    from .core.call.runtime import Runtime, RuntimeThreadError
    from .core.webmcp.discovery import Mode as WebMCPMode
    from .core.webmcp.discovery import WebMCPEvent
    from .core.webmcp.page_tools import PageToolRegistration
    from .demo import DemoServer
    from .mcp import ServerHandle
    from .notebook.extension import load_ipython_extension, unload_ipython_extension
    from .notebook.session import NotebookSession
    from .notebook.webmcp_tools import WebMCP
    from .notebook.widgets import BrowserPanel, CallLog
    from .published import Published, PublishedHandle

# Public name -> (module, attribute), imported on first access so that `import webmcp_nb` stays cheap.
_LAZY = {
    "BinaryRenderer": ("webmcp_nb.core.call.engine", "BinaryRenderer"),
    "BrowserPanel": ("webmcp_nb.notebook.widgets", "BrowserPanel"),
    "CallLog": ("webmcp_nb.notebook.widgets", "CallLog"),
    "CallRecord": ("webmcp_nb.core.call.engine", "CallRecord"),
    "DemoServer": ("webmcp_nb.demo", "DemoServer"),
    "ERROR_TYPES": ("webmcp_nb.core.call.envelope", "ERROR_TYPES"),
    "Engine": ("webmcp_nb.core.call.engine", "Engine"),
    "Envelope": ("webmcp_nb.core.call.envelope", "Envelope"),
    "ErrorType": ("webmcp_nb.core.call.envelope", "ErrorType"),
    "FormField": ("webmcp_nb._generated", "FormField"),
    "InstanceState": ("webmcp_nb.core.browsers.instances", "InstanceState"),
    "LiveFrame": ("webmcp_nb.core.browsers.live", "LiveFrame"),
    "LiveView": ("webmcp_nb.core.browsers.live", "LiveView"),
    "NotebookSession": ("webmcp_nb.notebook.session", "NotebookSession"),
    "Operation": ("webmcp_nb.core.call.envelope", "Operation"),
    "Outcome": ("webmcp_nb.core.call.envelope", "Outcome"),
    "PageToolHandle": ("webmcp_nb.client", "PageToolHandle"),
    "PageToolRegistration": ("webmcp_nb.core.webmcp.page_tools", "PageToolRegistration"),
    "Published": ("webmcp_nb.published", "Published"),
    "RefTarget": ("webmcp_nb.core.browsers.aria", "RefTarget"),
    "PublishedHandle": ("webmcp_nb.published", "PublishedHandle"),
    "Retry": ("webmcp_nb.core.call.envelope", "Retry"),
    "Runtime": ("webmcp_nb.core.call.runtime", "Runtime"),
    "RuntimeThreadError": ("webmcp_nb.core.call.runtime", "RuntimeThreadError"),
    "ServerHandle": ("webmcp_nb.mcp", "ServerHandle"),
    "Session": ("webmcp_nb.client", "Session"),
    "Status": ("webmcp_nb.core.call.envelope", "Status"),
    "ToolCallError": ("webmcp_nb.core.call.envelope", "ToolCallError"),
    "ToolSpec": ("webmcp_nb.core.call.registry", "ToolSpec"),
    "Viewport": ("webmcp_nb._generated", "Viewport"),
    "WebMCP": ("webmcp_nb.notebook.webmcp_tools", "WebMCP"),
    "WebMCPEvent": ("webmcp_nb.core.webmcp.discovery", "WebMCPEvent"),
    "WebMCPMode": ("webmcp_nb.core.webmcp.discovery", "Mode"),
    "find_ref": ("webmcp_nb.core.browsers.aria", "find_ref"),
    "load_ipython_extension": ("webmcp_nb.notebook.extension", "load_ipython_extension"),
    "unload_ipython_extension": ("webmcp_nb.notebook.extension", "unload_ipython_extension"),
}

# Explicit, for readers and type checkers; tests/test_api.py checks it against _LAZY.
__all__ = [
    "ERROR_TYPES",
    "BinaryRenderer",
    "BrowserPanel",
    "CallLog",
    "CallRecord",
    "DemoServer",
    "Engine",
    "Envelope",
    "ErrorType",
    "FormField",
    "InstanceState",
    "LiveFrame",
    "LiveView",
    "NotebookSession",
    "Operation",
    "Outcome",
    "PageToolHandle",
    "PageToolRegistration",
    "Published",
    "PublishedHandle",
    "RefTarget",
    "Retry",
    "Runtime",
    "RuntimeThreadError",
    "ServerHandle",
    "Session",
    "Status",
    "ToolCallError",
    "ToolSpec",
    "Viewport",
    "WebMCP",
    "WebMCPEvent",
    "WebMCPMode",
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


def _lazy_exports(package: str, table: dict[str, tuple[str, str]], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A package's `__getattr__`: each name of `table` (name -> (module, attribute)) imported on
    first access and kept in `namespace` (the package's globals). `webmcp_nb.notebook` uses it too."""

    def __getattr__(name: str) -> Any:
        try:
            module_name, attribute = table[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        import importlib

        value = getattr(importlib.import_module(module_name), attribute)
        namespace[name] = value
        return value

    return __getattr__


__getattr__ = _lazy_exports(__name__, _LAZY, globals())


def __dir__() -> list[str]:
    return list(__all__)
