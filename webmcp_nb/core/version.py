"""The package's version, read from its installed metadata (pyproject.toml is its one source)."""

from importlib.metadata import version

VERSION = version("webmcp_nb")
