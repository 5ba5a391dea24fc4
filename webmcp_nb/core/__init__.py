"""The tool core: envelopes, the registry, the runtime and the engine.

It imports neither IPython nor mcp; front ends are thin adapters over it.
Playwright is imported only when the engine starts.
"""

from .envelope import ERROR_TYPES, Envelope, Operation, ToolCallError
from .registry import REGISTRY, ToolSpec

__all__ = ["ERROR_TYPES", "REGISTRY", "Envelope", "Operation", "ToolCallError", "ToolSpec"]
