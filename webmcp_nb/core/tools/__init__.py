"""Every tool module; importing this package registers them all, in this order (the order
tools are listed in: instances first)."""

# ruff: noqa: F401, I001 - imported for their registrations, in a deliberate order
from . import lifecycle, storage
from . import navigation, snapshot, input, coordinates, screenshot, wait, dialogs, evaluate, execute
from . import tabs, webmcp_calls, files, recorded, verify, http
