"""The MCP front end: a session's tools for an attached agent (`Session.serve_mcp`,
`%browser serve`, `webmcp-nb serve` / `attach`). Needs the `mcp` extra."""

from .server import AgentServer
from .streamable_http import ServerHandle, serve_http

__all__ = ["AgentServer", "ServerHandle", "serve_http"]
