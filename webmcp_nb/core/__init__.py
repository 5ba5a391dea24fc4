"""The tool core: envelopes, the registry, the runtime and the engine.

It imports neither IPython nor mcp; front ends are thin adapters over it.
Playwright is imported only when the engine starts, pydantic only with the registry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .call.envelope import ERROR_TYPES, Envelope, Operation, ToolCallError
    from .call.registry import REGISTRY, ToolSpec

_LAZY = {
    "ERROR_TYPES": "call.envelope",
    "Envelope": "call.envelope",
    "Operation": "call.envelope",
    "ToolCallError": "call.envelope",
    "REGISTRY": "call.registry",
    "ToolSpec": "call.registry",
}

__all__ = ["ERROR_TYPES", "REGISTRY", "Envelope", "Operation", "ToolCallError", "ToolSpec"]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'webmcp_nb.core' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
