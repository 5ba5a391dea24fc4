"""Every tool module; importing this package registers them all, in this order."""

from . import (
    coordinates,
    dialogs,
    evaluate,
    evidence,
    execute,
    files,
    input,
    instances,  # noqa: F401  (instances first: the order tools are listed in)
    navigation,
    screenshot,
    snapshot,
    tabs,
    verify,
    wait,
    webmcp,
)
