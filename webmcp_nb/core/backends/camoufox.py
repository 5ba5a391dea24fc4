"""Camoufox (``backend="camoufox"``): a Firefox build that varies its fingerprint, launched here.

The optional ``camoufox`` package (``pip install 'webmcp_nb[camoufox]'``) brings the launch-option
builder (`camoufox.utils.launch_options`); the browser itself, fpgen's fingerprint model and the
default add-on are downloads, which only ``webmcp-nb install camoufox`` makes. A tool call never
downloads: it looks for what is installed (`locate`, `model_problem`), answers ``binary_not_found``
naming where it looked and the install command when something is missing, and hands the builder
only what it can use without the network (an installed binary, add-ons already on disk, no GeoIP).
A missing package is ``binary_not_found`` too: the fix is the same kind (install, then retry).

Firefox has no native WebMCP: the default mode is ``page``; ``native`` is ``unsupported_capability``.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..call.errors import InvalidParams, ToolFailure
from .chromium import Candidate, check_display, check_path, launch_error

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Playwright

    from ..browsers.instances import Instance
    from ..config import LaunchDefaults
    from ..guard.grants import Grant
    from . import BackendName, Launcher, LaunchOptions

OsName = Literal["windows", "macos", "linux"]
MAX_HUMANIZE_S = 10.0
PIP_INSTALL = "pip install 'webmcp_nb[camoufox]'"
INSTALL_COMMAND = "webmcp-nb install camoufox"
ENV_VAR = "CAMOUFOX_EXECUTABLE_PATH"  # camoufox's own variable, honoured the same way here
ONLY = ("os", "humanize", "block_webrtc", "geoip")
"""Options only the camoufox backend takes (geoip is checked, never kept: only false is allowed)."""
SUPPORTS = (
    "A Camoufox (Firefox) launched here, with a fingerprint camoufox draws (os, locale, humanize, "
    "block_webrtc): snapshot, actions and screenshots through the same tools, persistent profiles, WebMCP "
    "'page' (default) / 'polyfill' / 'off' (Firefox has no native WebMCP), the live view by screenshots "
    "(no CDP screencast)."
)


def package_version() -> str | None:
    """The installed camoufox package's version, found without importing it."""
    if importlib.util.find_spec("camoufox") is None:
        return None
    try:
        return version("camoufox")
    except PackageNotFoundError:
        return None


@dataclass(frozen=True)
class CamoufoxOptions:
    """The fingerprint camoufox draws: the OSes it may claim, a human-like cursor, WebRTC off."""

    os: tuple[str, ...] = ()
    humanize: bool | float = False
    block_webrtc: bool = False


def own(options: LaunchOptions) -> CamoufoxOptions:
    """`options`' Camoufox options (the defaults where none were given)."""
    return options.own if isinstance(options.own, CamoufoxOptions) else CamoufoxOptions()


def check_options(args: Mapping[str, Any], backend: str) -> None:
    """Refuse options that do not fit `backend` before anything launches (`InvalidParams`).
    `args` are a create call's arguments, unset ones absent."""
    if backend != "camoufox":
        given = [name for name in ONLY if args.get(name) is not None]
        if given:
            verb = "needs" if len(given) == 1 else "need"
            raise InvalidParams(f"{', '.join(given)} {verb} backend='camoufox' (the backend here is {backend!r}).")
        return
    chosen = args.get("os")
    if isinstance(chosen, list) and len(set(chosen)) < len(chosen):
        raise InvalidParams(f"os lists an OS twice ({', '.join(chosen)}); name each at most once.")
    if args.get("user_agent") is not None:  # (remote options are refused by webmcp_nb.core.backends.remote)
        raise InvalidParams(
            "backend='camoufox' takes no user_agent: Camoufox draws it with the rest of its fingerprint "
            "(choose os and locale instead)."
        )
    if args.get("geoip"):
        raise InvalidParams(
            "geoip=true is not available: it looks up this machine's public IP address on the web and may "
            "download a GeoIP database, and a tool call never reaches the network. Set locale (and the "
            "timezone your pages need) instead."
        )
    if args.get("webmcp") == "native":
        raise ToolFailure(
            "unsupported_capability",
            "Firefox (Camoufox) has no native WebMCP; use webmcp='page' (the default: what the page brings "
            "itself), 'polyfill' or 'off'.",
            started=False,
        )


def launch_values(name: str, defaults: LaunchDefaults, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The `LaunchOptions` fields of a Camoufox instance: the session's headless and WebMCP
    defaults ('page' where the session's is 'native'), then the call's options. The session's
    Chromium binary and flags do not apply."""
    webmcp = "page" if defaults.webmcp == "native" else defaults.webmcp
    return {"name": name, "headless": defaults.headless, "webmcp": webmcp, **overrides}


# finding what is installed ---------------------------------------------------------------
# Read from camoufox's files on disk, without importing the package: its import takes seconds
# (numpy, Playwright's sync API, ...), and a missing binary must be answered within 2 s.
LAUNCH_FILE = "camoufox-bin"  # Linux builds, the only ones this backend is used with


def _package_dir() -> Path:
    spec = importlib.util.find_spec("camoufox")
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations)))


def install_dir() -> Path:
    """camoufox's cache directory (its browsers, add-ons and config), as camoufox computes it."""
    from platformdirs import user_cache_dir  # a dependency of camoufox

    return Path(user_cache_dir("camoufox"))


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def candidates(explicit: str | None) -> list[Candidate]:
    """Every place a Camoufox binary is looked for, in order: the call's executable_path,
    $CAMOUFOX_EXECUTABLE_PATH, then camoufox's own install (read only: nothing is fetched)."""
    found = [
        check_path("executable_path", explicit)
        if explicit
        else Candidate("executable_path", None, "missing", "not given"),
        check_path(f"${ENV_VAR}", os.environ.get(ENV_VAR, "").strip() or None),
    ]
    if package_version() is None:
        return [*found, Candidate("camoufox install", None, "missing", "the camoufox package is not installed")]
    return [*found, _managed_install()]


def _managed_install() -> Candidate:
    """The build `camoufox fetch` installed: the one this camoufox release pairs with unless the
    user chose a channel or build (then the active one), else the newest."""
    browsers = install_dir() / "browsers"
    config = _read_json(install_dir() / "config.json") or {}
    installs = sorted(browsers.glob("*/*/version.json"), reverse=True)
    pin = _read_json(_package_dir() / "browser-pin.json") or {}
    if pin.get("tag") and not (config.get("channel") or config.get("pinned")):
        spec = f"{pin['version']}-{pin['build']}"
        wanted = f"the build this camoufox release pairs with ({pin['repo_name'].lower()} {spec})"
        chosen = [path for path in installs if path.parent.parent.name.lower() == pin["repo_name"].lower()]
        chosen = [path for path in chosen if f"{path.parent.name}-".startswith(f"{spec}-")]  # <spec>[-<sha8>]
    else:
        active = install_dir() / str(config.get("active_version", "")) / "version.json"
        chosen, wanted = [active] if active in installs else installs, "an installed build"
    if not chosen:
        return Candidate("camoufox install", str(browsers), "missing", f"{wanted} is not installed")
    return check_path("camoufox install", str(chosen[0].parent / LAUNCH_FILE))


def locate(explicit: str | None) -> tuple[str | None, list[Candidate]]:
    """The Camoufox binary to launch and every place looked at. An explicit path that is
    unusable is the answer (no silent fallback to another build)."""
    tried = candidates(explicit)
    for candidate in tried:
        if candidate.status == "found":
            return candidate.path, tried
        if candidate.source != "camoufox install" and candidate.reason not in ("not set", "not given"):
            return None, tried
    return None, tried


def model_problem() -> str | None:
    """Why camoufox cannot draw a fingerprint without the network (the fpgen model it pins is not
    installed: camoufox would download it), or None."""
    pin = _read_json(_package_dir() / "fpgen-model.json") or {}
    spec = importlib.util.find_spec("fpgen")
    if spec is None or spec.origin is None:
        return "the fpgen package is not installed"
    data = Path(spec.origin).parent / "data"
    for name, digest in (pin.get("file_sha256") or {}).items():
        try:
            if hashlib.sha256((data / name).read_bytes()).hexdigest() == digest:
                continue
        except OSError:
            pass
        return f"fpgen's fingerprint model {pin.get('tag')} is not installed in {data}"
    return None


def looked_in(tried: list[Candidate]) -> str:
    """Where a binary was looked for, as a sentence ('' when nowhere)."""
    places = "; ".join(f"{c.source}{f' ({c.path})' if c.path else ''}: {c.reason or c.status}" for c in tried)
    return f" Looked in: {places}." if places else ""


def missing(what: str, tried: list[Candidate] | None = None) -> ToolFailure:
    """``binary_not_found`` for something not installed, naming where it was looked for and the fix."""
    return ToolFailure(
        "binary_not_found",
        f"{what}.{looked_in(tried or [])} Install it with `{INSTALL_COMMAND}` (it downloads the browser, its "
        "fingerprint model and add-on; tool calls never download), or point executable_path / "
        "$CAMOUFOX_EXECUTABLE_PATH at a Camoufox binary.",
        started=False,
    )


def resolve(explicit: str | None) -> str:
    """The binary to launch, once everything a launch needs is known to be installed;
    ``binary_not_found`` (fast, no network) when something is not."""
    if package_version() is None:
        raise ToolFailure(
            "binary_not_found",
            f"backend='camoufox' needs the camoufox package, which is not installed: `{PIP_INSTALL}`, then "
            f"`{INSTALL_COMMAND}` for the browser.{looked_in(candidates(explicit))}",
            started=False,
        )
    executable, tried = locate(explicit)
    if executable is None:
        raise missing("No Camoufox browser was found", tried)
    problem = model_problem()
    if problem is not None:
        raise missing(f"Camoufox cannot draw a fingerprint: {problem}")
    return executable


def browser_version(executable: str) -> str | None:
    """A Camoufox build's version (its application.ini, else camoufox's version.json), read from disk."""
    folder = Path(executable).parent
    try:
        for line in (folder / "application.ini").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("Version="):
                return line.split("=", 1)[1].strip() or None
    except OSError:
        pass
    data = _read_json(folder / "version.json") or {}
    return "-".join(str(data[key]) for key in ("version", "build") if data.get(key)) or None


def status() -> dict[str, Any]:
    """The backend's state for health, found without launching or downloading anything:
    ``available``, ``package_missing``, ``binary_missing`` or ``model_missing``."""
    package = package_version()
    report: dict[str, Any] = {
        "backend": "camoufox",
        "package": package,
        "browser": None,
        "executable": None,
        "tried": [],
        "supports": SUPPORTS,
        "install": INSTALL_COMMAND if package else f"{PIP_INSTALL}, then {INSTALL_COMMAND}",
    }
    if package is None:
        return {**report, "state": "package_missing", "problem": "the camoufox package is not installed"}
    executable, tried = locate(None)
    report.update(executable=executable, tried=[candidate.to_dict() for candidate in tried])
    if executable is None:
        return {**report, "state": "binary_missing", "problem": "no Camoufox browser is installed"}
    report["browser"] = browser_version(executable)
    problem = model_problem()
    if problem is not None:
        return {**report, "state": "model_missing", "problem": problem}
    return {**report, "state": "available", "problem": None}


# launching -------------------------------------------------------------------------------
def missing_addons() -> list[Any]:
    """camoufox's default add-ons that are not on disk (left out: adding them would download them)."""
    from camoufox.addons import DefaultAddons, get_addon_path

    return [addon for addon in DefaultAddons if not (Path(get_addon_path(addon.name)) / "manifest.json").is_file()]


def builder_kwargs(options: LaunchOptions, executable: str) -> dict[str, Any]:
    """The arguments for camoufox's launch-option builder: the instance's options, the binary
    found here, and nothing that would make it reach the network."""
    fingerprint = own(options)
    kwargs: dict[str, Any] = {
        "executable_path": executable,
        "headless": options.headless,
        "block_webrtc": fingerprint.block_webrtc,
        "geoip": False,
        "exclude_addons": missing_addons(),
    }
    if fingerprint.os:
        kwargs["os"] = fingerprint.os[0] if len(fingerprint.os) == 1 else list(fingerprint.os)
    if options.locale:
        kwargs["locale"] = options.locale
    if fingerprint.humanize is not False:
        kwargs["humanize"] = fingerprint.humanize
    if options.args:
        kwargs["args"] = list(options.args)
    return kwargs


def build(options: LaunchOptions, executable: str) -> dict[str, Any]:
    """Playwright launch options from camoufox's builder; its refusals of our values are
    ``invalid_params``."""
    from camoufox.exceptions import InvalidLocale, InvalidOS
    from camoufox.utils import launch_options

    try:
        built: dict[str, Any] = launch_options(**builder_kwargs(options, executable))
    except (InvalidLocale, InvalidOS) as exc:
        raise ToolFailure("invalid_params", f"Camoufox refused an option: {exc}", started=False) from None
    return built


async def launch(
    playwright: Playwright, options: LaunchOptions, built: dict[str, Any], context_kwargs: dict[str, Any]
) -> tuple[Browser | None, BrowserContext]:
    """Launch Camoufox with options `build` made, through camoufox's own launcher (it applies its
    viewport and media defaults); `options.profile_dir` makes it a persistent context."""
    from camoufox.async_api import AsyncNewBrowser  # imported by `build` already (a worker thread)

    if options.profile_dir:
        persistent = {**built, **context_kwargs, "user_data_dir": options.profile_dir}
        context = await AsyncNewBrowser(playwright, from_options=persistent, persistent_context=True)
        return context.browser, context
    browser = await AsyncNewBrowser(playwright, from_options=built)
    return browser, await browser.new_context(**context_kwargs)


class Camoufox:
    """The `Backend` that launches a Camoufox here."""

    name: BackendName = "camoufox"
    own_type = CamoufoxOptions
    drives_chromium = False
    shared_browser = False

    def check(self, args: Mapping[str, Any], chosen: BackendName, default_remote: bool) -> None:
        check_options(args, chosen)

    def launch_values(
        self, name: str, defaults: LaunchDefaults, overrides: Mapping[str, Any], grant: Grant | None
    ) -> dict[str, Any]:
        """See `launch_values` (a grant's Chromium arguments do not apply)."""
        return launch_values(name, defaults, overrides)

    async def start(self, launcher: Launcher, instance: Instance, deadline: float | None) -> BrowserContext:
        from playwright.async_api import Error as PlaywrightError

        options = instance.options
        check_display(options)
        executable = resolve(options.executable_path)  # before the driver: fails fast
        instance.executable = executable
        context_kwargs = {"viewport": options.viewport} if options.viewport else {}
        # camoufox's builder (and its import) takes seconds: off the event loop, which serves every instance.
        built = await asyncio.to_thread(build, options, executable)
        try:
            browser, context = await launch(await launcher.playwright(), options, built, context_kwargs)
        except PlaywrightError as exc:
            raise ToolFailure(
                "internal_error",
                f"Camoufox at {executable} failed to launch: {launch_error(exc.message)}",
                started=False,
            ) from None
        instance.browser = browser
        return context

    def endpoint(self, options: LaunchOptions) -> str | None:
        return None

    def lost_detail(self, options: LaunchOptions) -> str:
        return "the browser process exited unexpectedly"

    def refusal(self, options: LaunchOptions, exc: Exception) -> ToolFailure | None:
        return None


BACKEND = Camoufox()
