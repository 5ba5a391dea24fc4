"""Backends: how an instance's browser is had, behind one interface (`Backend`).

Each backend (a module here) declares its own launch options (`own_type`), checks a create
call's options, composes an instance's `LaunchOptions` from the session's defaults and the call,
and starts the browser. The engine and the instance manager look a backend up (`get`) and call
it; neither knows one backend from another.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..call.errors import InvalidParams
from . import camoufox, chromium, remote
from .camoufox import CamoufoxOptions
from .remote import RemoteOptions

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Playwright

    from ..browsers.instances import Instance
    from ..call.errors import ToolFailure
    from ..config import LaunchDefaults
    from ..guard.grants import Grant
    from ..webmcp.discovery import Mode

BackendName = Literal["chromium", "camoufox", "remote"]
"""How an instance's browser is had: launched here (Chromium, Camoufox) or on a remote grid."""

OwnOptions = CamoufoxOptions | RemoteOptions
"""A backend's own launch options (chromium has none)."""


@dataclass(frozen=True)
class LaunchOptions:
    """An instance's launch options: those every backend reads, and its backend's own (`own`)."""

    name: str
    backend: BackendName = "chromium"
    headless: bool = True
    profile_dir: str | None = None
    viewport: dict[str, int] | None = None
    locale: str | None = None
    user_agent: str | None = None
    executable_path: str | None = None
    args: tuple[str, ...] = ()
    webmcp: Mode = "native"
    own: OwnOptions | None = None

    @property
    def is_chromium(self) -> bool:
        """The browser is a Chromium (launched here or remote): CDP, Chromium's own WebMCP."""
        return get(self.backend).drives_chromium


class Launcher(Protocol):
    """What a backend needs of the instance manager to start a browser."""

    async def playwright(self) -> Playwright: ...

    def playwright_managed_chromium(self) -> str | None: ...


class Backend(Protocol):
    """One way of having a browser."""

    name: BackendName
    drives_chromium: bool
    shared_browser: bool
    """The browser is not the instance's alone: on close, its context goes before the connection."""

    @property
    def own_type(self) -> type[OwnOptions] | None:
        """The dataclass of this backend's own launch options (`LaunchOptions.own`), or None."""
        ...

    def check(self, args: Mapping[str, Any], chosen: BackendName, default_remote: bool) -> None:
        """Refuse a create call's options (`args`, unset ones absent) that do not fit, before
        anything launches (`InvalidParams`): this backend's own given to the `chosen` other one,
        or, when chosen, values it cannot use. `default_remote`: the session has a remote default."""
        ...

    def launch_values(
        self, name: str, defaults: LaunchDefaults, overrides: Mapping[str, Any], grant: Grant | None
    ) -> dict[str, Any]:
        """The `LaunchOptions` fields (own ones included, flat) of an instance `name`: the
        session's defaults, then the call's `overrides` and what an agent's `grant` adds."""
        ...

    async def start(self, launcher: Launcher, instance: Instance, deadline: float | None) -> BrowserContext:
        """Launch or reach `instance`'s browser, setting its browser (as soon as there is one, for
        cleanup), executable and pid; its context. `deadline`: the call's end (`time.monotonic()`)."""
        ...

    def endpoint(self, options: LaunchOptions) -> str | None:
        """Where the browser is reached, without credentials (remote), or None."""
        ...

    def lost_detail(self, options: LaunchOptions) -> str:
        """Why an instance's browser went away (for `instance_crashed`)."""
        ...

    def refusal(self, options: LaunchOptions, exc: Exception) -> ToolFailure | None:
        """A browser's error opening a page, read as the call's bad input (a locale it refuses), or None."""
        ...


BACKENDS: dict[str, Backend] = {
    "chromium": chromium.BACKEND,
    "camoufox": camoufox.BACKEND,
    "remote": remote.BACKEND,
}


def get(name: str) -> Backend:
    """The backend `name`; `InvalidParams` naming the choices when there is none."""
    backend = BACKENDS.get(name)
    if backend is None:
        raise InvalidParams(f"No backend {name!r}: choose one of {', '.join(BACKENDS)}.")
    return backend


def default_name(default_remote: bool) -> BackendName:
    """A session's backend where a call names none: remote if it has a remote default, else chromium."""
    return "remote" if default_remote else "chromium"


def check(args: Mapping[str, Any], default_remote: bool) -> None:
    """Refuse a create call's options (`args`, unset ones absent) that no backend can use as given."""
    chosen = get(args.get("backend") or default_name(default_remote)).name
    for backend in reversed(BACKENDS.values()):  # remote's first: a too-long endpoint or header before all else
        backend.check(args, chosen, default_remote)


def launch_options(
    name: str, defaults: LaunchDefaults, overrides: Mapping[str, Any], grant: Grant | None = None
) -> LaunchOptions:
    """The options for launching `name`: its backend's (`overrides["backend"]`, else the session's
    default) composition of the session's defaults, the call's `overrides` (set ones) and `grant`."""
    backend = get(overrides.get("backend") or default_name(defaults.remote_endpoint is not None))
    values = {**backend.launch_values(name, defaults, overrides, grant), "backend": backend.name}
    if backend.own_type is None:
        return LaunchOptions(**values)
    own = {field.name: values.pop(field.name) for field in fields(backend.own_type) if field.name in values}
    return LaunchOptions(**values, own=backend.own_type(**own))
