"""Every tool module; importing this package registers them all, in this order."""

from . import instances  # noqa: F401  (instances first: the order tools are listed in)
from . import navigation, snapshot, input, coordinates, screenshot, wait, dialogs, evaluate, execute, tabs, webmcp, files, evidence, verify, http  # noqa: F401,I001
