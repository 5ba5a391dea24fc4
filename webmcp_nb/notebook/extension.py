"""The IPython extension: ``%load_ext webmcp_nb``.

Loading registers the ``%browser`` line and cell magics, their tab completion, and the
`BrowserMagics` configurable (so ``%config BrowserMagics`` lists and sets its options). The browser itself starts only on
the first call, in the notebook's shared session (`webmcp_nb.session()`).

- ``%load_ext webmcp_nb`` twice (or ``webmcp_nb.notebook`` after ``webmcp_nb``) loads once.
- ``%unload_ext webmcp_nb`` removes the magics and the configurable and closes the shared
  session with every browser it launched; ``%reload_ext webmcp_nb`` is an unload and a load
  (call ``webmcp_nb.session()`` again afterwards: the old session object is closed).

Loading it in every kernel, with options, from ``~/.ipython/profile_default/ipython_kernel_config.py``
(or ``ipython_config.py`` for terminal IPython)::

    c.InteractiveShellApp.extensions = ["webmcp_nb"]
    c.BrowserMagics.headless = True
    c.BrowserMagics.screenshot_after_actions = True

or on a command line: ``ipython --InteractiveShellApp.extensions=webmcp_nb``.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import completion
from .session import close_shared_session

if TYPE_CHECKING:
    from .magics import BrowserMagics

MAGIC_NAME = "browser"
MAGIC_KINDS = ("line", "cell")


@dataclass
class _Loaded:
    magics: BrowserMagics
    replaced: dict[str, Any] = field(default_factory=dict)  # magics named `browser` before ours


_loaded: weakref.WeakKeyDictionary[Any, _Loaded] = weakref.WeakKeyDictionary()


def load_ipython_extension(ipython: Any) -> None:
    """Register ``%browser``/``%%browser`` and `BrowserMagics` on `ipython` (once)."""
    if ipython in _loaded:
        return
    from .magics import BrowserMagics

    tables = ipython.magics_manager.magics
    replaced = {kind: tables[kind][MAGIC_NAME] for kind in MAGIC_KINDS if MAGIC_NAME in tables[kind]}
    magics = BrowserMagics(shell=ipython)  # reads c.BrowserMagics.* and joins shell.configurables
    ipython.register_magics(magics)
    magics.show_envelopes()
    completion.install(ipython)
    _loaded[ipython] = _Loaded(magics, replaced)


def unload_ipython_extension(ipython: Any) -> None:
    """Remove what `load_ipython_extension` added and close the shared session's browsers."""
    loaded = _loaded.pop(ipython, None)
    if loaded is None:
        return
    magics = loaded.magics
    magics.detach()
    completion.uninstall(ipython)
    manager = ipython.magics_manager
    for kind in MAGIC_KINDS:
        table = manager.magics[kind]
        if getattr(table.get(MAGIC_NAME), "__self__", None) is magics:
            if kind in loaded.replaced:
                table[MAGIC_NAME] = loaded.replaced[kind]
            else:
                del table[MAGIC_NAME]
    if dict.get(manager.registry, type(magics).__name__) is magics:
        del manager.registry[type(magics).__name__]
    ipython.configurables[:] = [configurable for configurable in ipython.configurables if configurable is not magics]
    close_shared_session()


def is_loaded(ipython: Any) -> bool:
    return ipython in _loaded
