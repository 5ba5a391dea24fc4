"""webmcp_nb: a live, shared browser workbench for Jupyter.

``import webmcp_nb`` is cheap: it imports no Playwright, no IPython, and starts nothing.

In a notebook, ``%load_ext webmcp_nb`` adds the ``%browser`` magics, and ``webmcp_nb.session()``
returns the notebook's shared session (the one the magics and widgets use).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the public names, re-exported for type checkers (at run time, `_LAZY` imports each)
    from ._generated import FormField as FormField
    from ._generated import Viewport as Viewport
    from .apis import ApiHandle as ApiHandle
    from .client import PageToolHandle as PageToolHandle
    from .client import Session as Session
    from .core.apis.spec import ApiSpecError as ApiSpecError
    from .core.browsers.aria import RefTarget as RefTarget
    from .core.browsers.instances import InstanceState as InstanceState
    from .core.browsers.live import LiveFrame as LiveFrame
    from .core.browsers.live import LiveView as LiveView
    from .core.call.engine import BinaryRenderer as BinaryRenderer
    from .core.call.engine import CallRecord as CallRecord
    from .core.call.engine import Engine as Engine
    from .core.call.envelope import ERROR_TYPES as ERROR_TYPES
    from .core.call.envelope import Envelope as Envelope
    from .core.call.envelope import ErrorType as ErrorType
    from .core.call.envelope import Operation as Operation
    from .core.call.envelope import Outcome as Outcome
    from .core.call.envelope import Retry as Retry
    from .core.call.envelope import Status as Status
    from .core.call.envelope import ToolCallError as ToolCallError
    from .core.call.registry import ToolSpec as ToolSpec
    from .core.call.runtime import Runtime as Runtime
    from .core.call.runtime import RuntimeThreadError as RuntimeThreadError
    from .core.version import VERSION as __version__  # noqa: F401 - re-exported under its public name
    from .core.webmcp.discovery import Mode as WebMCPMode  # noqa: F401 - re-exported under its public name
    from .core.webmcp.discovery import WebMCPEvent as WebMCPEvent
    from .core.webmcp.page_tools import PageToolRegistration as PageToolRegistration
    from .demo import DemoServer as DemoServer
    from .mcp import ServerHandle as ServerHandle
    from .notebook.extension import load_ipython_extension as load_ipython_extension
    from .notebook.extension import unload_ipython_extension as unload_ipython_extension
    from .notebook.session import NotebookSession as NotebookSession
    from .notebook.webmcp_tools import WebMCP as WebMCP
    from .notebook.widgets import BrowserPanel as BrowserPanel
    from .notebook.widgets import CallLog as CallLog
    from .published import Published as Published
    from .published import PublishedHandle as PublishedHandle


# The public names: name -> (module, attribute), imported on first access so that `import webmcp_nb`
# stays cheap. `__all__` is derived from it.
_LAZY = {
    "ApiHandle": ("webmcp_nb.apis", "ApiHandle"),  # what Session.api returns
    "ApiSpecError": ("webmcp_nb.core.apis.spec", "ApiSpecError"),  # an invalid OpenAPI document
    "BinaryRenderer": ("webmcp_nb.core.call.engine", "BinaryRenderer"),
    "BrowserPanel": ("webmcp_nb.notebook.widgets", "BrowserPanel"),
    "CallLog": ("webmcp_nb.notebook.widgets", "CallLog"),
    "CallRecord": ("webmcp_nb.core.call.engine", "CallRecord"),
    "DemoServer": ("webmcp_nb.demo", "DemoServer"),
    "Engine": ("webmcp_nb.core.call.engine", "Engine"),  # what Session.engine returns
    "ERROR_TYPES": ("webmcp_nb.core.call.envelope", "ERROR_TYPES"),
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
    "PublishedHandle": ("webmcp_nb.published", "PublishedHandle"),
    "RefTarget": ("webmcp_nb.core.browsers.aria", "RefTarget"),
    "Retry": ("webmcp_nb.core.call.envelope", "Retry"),
    "Runtime": ("webmcp_nb.core.call.runtime", "Runtime"),  # what Session.runtime returns
    "RuntimeThreadError": ("webmcp_nb.core.call.runtime", "RuntimeThreadError"),
    "ServerHandle": ("webmcp_nb.mcp", "ServerHandle"),
    "Session": ("webmcp_nb.client", "Session"),
    "Status": ("webmcp_nb.core.call.envelope", "Status"),
    "ToolCallError": ("webmcp_nb.core.call.envelope", "ToolCallError"),
    "ToolSpec": ("webmcp_nb.core.call.registry", "ToolSpec"),  # what Session.tools lists
    "Viewport": ("webmcp_nb._generated", "Viewport"),
    "WebMCP": ("webmcp_nb.notebook.webmcp_tools", "WebMCP"),
    "WebMCPEvent": ("webmcp_nb.core.webmcp.discovery", "WebMCPEvent"),
    "WebMCPMode": ("webmcp_nb.core.webmcp.discovery", "Mode"),
    "__version__": ("webmcp_nb.core.version", "VERSION"),
    "load_ipython_extension": ("webmcp_nb.notebook.extension", "load_ipython_extension"),
    "unload_ipython_extension": ("webmcp_nb.notebook.extension", "unload_ipython_extension"),
}

__all__ = [*_LAZY, "session"]


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
