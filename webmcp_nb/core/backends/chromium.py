"""backend="chromium": a Chromium or Chrome launched here; how it is found, the flags it gets.

Also the launch steps other backends share: the context options, a locale Chromium refuses
read as bad input, the display a headed browser needs, Playwright's launch error made readable.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..call.errors import ToolFailure
from ..call.util import first_lines

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext

    from ..browsers.instances import Instance
    from ..config import LaunchDefaults
    from ..guard.grants import Grant
    from ..webmcp.discovery import Mode
    from . import BackendName, Launcher, LaunchOptions

ENV_VAR = "WEBMCP_NB_CHROMIUM"
# Paths the user gave: when one does not work, that is the answer (no silent fallback).
EXPLICIT_SOURCES = ("executable_path", f"${ENV_VAR}")

# Quiet on a closed network.
LAUNCH_ARGS = (
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--no-first-run",
)
# Chromium's own WebMCP (document.modelContext and the DevTools WebMCP domain): webmcp="native".
WEBMCP_FEATURE = "WebMCP"


def launch_args(webmcp: Mode, extra: Sequence[str] = ()) -> list[str]:
    """The flags for a launch: ours, the caller's, and one merged ``--enable-features``
    (Chromium keeps only the last such flag, so a caller's features and WebMCP must share it)."""
    features = [WEBMCP_FEATURE] if webmcp == "native" else []
    rest = []
    for arg in extra:
        if arg.startswith("--enable-features="):
            features += [name for name in arg.split("=", 1)[1].split(",") if name and name not in features]
        else:
            rest.append(arg)
    return [*LAUNCH_ARGS, *rest, *([f"--enable-features={','.join(features)}"] if features else [])]


SUPPORTS = (
    "A Chromium or Chrome launched here: every tool, native WebMCP (the default mode), the live view over "
    "CDP's screencast, persistent profiles, extra flags."
)
INSTALL_HELP = (
    "Install one: on Debian/Ubuntu as root `apt-get install -y chromium`; without root "
    "`python -m playwright install chromium`; or point WEBMCP_NB_CHROMIUM (or executable_path) "
    "at an existing Chromium or Chrome binary."
)


@dataclass(frozen=True)
class Candidate:
    """One place a Chromium was looked for."""

    source: str
    path: str | None
    status: str  # "found" | "missing" | "rejected"
    reason: str = ""

    def to_dict(self) -> dict[str, str | None]:
        return {"source": self.source, "path": self.path, "status": self.status, "reason": self.reason}


def check_path(source: str, path: str | None, absent: str = "not set") -> Candidate:
    if not path:
        return Candidate(source, None, "missing", absent)
    resolved = Path(path)
    if not resolved.exists():
        return Candidate(source, path, "missing", "no such file")
    if not os.access(resolved, os.X_OK) or resolved.is_dir():
        return Candidate(source, path, "rejected", "not an executable file")
    if _is_snap_stub(resolved):
        return Candidate(source, path, "rejected", "a snap launcher stub, which does not run in containers")
    return Candidate(source, str(resolved), "found")


def _is_snap_stub(path: Path) -> bool:
    try:
        real = path.resolve()
        if str(real).startswith("/snap/") or real.name == "snap":
            return True
        with open(real, "rb") as handle:
            head = handle.read(4096)
        return head.startswith(b"#!") and b"snap" in head
    except OSError:
        return False


def playwright_cache_chromium() -> str | None:
    """The newest Chromium in Playwright's browser cache, found without starting Playwright."""
    roots = [os.environ.get("PLAYWRIGHT_BROWSERS_PATH"), str(Path.home() / ".cache" / "ms-playwright")]
    for root in filter(None, roots):
        builds = sorted(Path(root).glob("chromium-*/chrome-linux*/chrome"), reverse=True)
        if builds:
            return str(builds[0])
    return None


def candidates(explicit: str | None, playwright_managed: str | None) -> list[Candidate]:
    """Every place looked at, in resolution order."""
    found = [
        check_path("executable_path", explicit)
        if explicit
        else Candidate("executable_path", None, "missing", "not given"),
        check_path(f"${ENV_VAR}", os.environ.get(ENV_VAR)),
        check_path("playwright-managed", playwright_managed, "not installed"),
        check_path("/usr/bin/chromium", "/usr/bin/chromium"),
    ]
    for name in ("chromium-browser", "google-chrome", "google-chrome-stable"):
        found.append(check_path(f"PATH: {name}", shutil.which(name), "not on PATH"))
    return found


def resolve(explicit: str | None, playwright_managed: str | None) -> tuple[str | None, list[Candidate]]:
    """The first usable Chromium and the report of every place tried.

    An explicit path (argument or environment variable) that is unusable is an
    answer in itself: falling back silently to another browser would hide a typo.
    """
    tried = candidates(explicit, playwright_managed)
    for candidate in tried:
        if candidate.status == "found":
            return candidate.path, tried
        if candidate.source in EXPLICIT_SOURCES and candidate.reason not in ("not set", "not given"):
            return None, tried
    return None, tried


_recent: dict[tuple[str | None, ...], tuple[float, tuple[str | None, list[Candidate]]]] = {}


def resolve_recent(
    explicit: str | None, playwright_managed: Callable[[], str | None], max_age_s: float = 2.0
) -> tuple[str | None, list[Candidate]]:
    """`resolve`, reusing an answer at most `max_age_s` old for the same settings (for reports
    such as health; a launch always looks afresh). `playwright_managed` looks that one up."""
    key = (explicit, *(os.environ.get(name) for name in (ENV_VAR, "PATH", "PLAYWRIGHT_BROWSERS_PATH")))
    now = time.monotonic()
    cached = _recent.get(key)
    if cached is None or now - cached[0] > max_age_s:
        _recent.clear()
        cached = _recent[key] = (now, resolve(explicit, playwright_managed()))
    return cached[1]


def describe_failure(tried: list[Candidate]) -> str:
    """Why no Chromium was launched. An explicit path that does not work is named first, with
    how to fix it, and the places after it (not used, since an explicit path is an answer) are
    left out so that a usable browser found there does not read as the one that failed."""
    chosen = next((c for c in tried if c.source in EXPLICIT_SOURCES and c.path), None)
    if chosen is not None and chosen.status != "found":
        shown = tried[: tried.index(chosen) + 1]
        fallback = next((c.path for c in tried[len(shown) :] if c.status == "found"), None)
        fix = (
            f"Set {ENV_VAR} to a Chromium or Chrome binary, or unset it "
            f"(`unset {ENV_VAR}` in the shell, `del os.environ['{ENV_VAR}']` in Python)"
            if chosen.source == f"${ENV_VAR}"
            else "Pass executable_path= a Chromium or Chrome binary, or leave it out"
        )
        found = f" to use the Chromium found at {fallback}" if fallback else ""
        return (
            f"The {chosen.source} path {chosen.path} cannot be used: {chosen.reason or chosen.status}. "
            f"{fix}{found}. Tried: {_places(shown)}."
        )
    return f"No usable Chromium found. Tried: {_places(tried)}. {INSTALL_HELP}"


def _places(tried: list[Candidate]) -> str:
    return "; ".join(f"{c.source}{f' ({c.path})' if c.path else ''}: {c.reason or c.status}" for c in tried)


class Chromium:
    """The `Backend` that launches a Chromium here."""

    name: BackendName = "chromium"
    own_type = None
    drives_chromium = True
    shared_browser = False

    def check(self, args: Mapping[str, Any], chosen: BackendName, default_remote: bool) -> None:
        """Chromium takes every option the others do not own: nothing to refuse."""

    def launch_values(
        self, name: str, defaults: LaunchDefaults, overrides: Mapping[str, Any], grant: Grant | None
    ) -> dict[str, Any]:
        """The session's defaults (binary and flags included), the call's options, then the
        Chromium arguments the operator added to an agent's `grant`."""
        values: dict[str, Any] = {
            "name": name,
            "headless": defaults.headless,
            "executable_path": defaults.executable_path,
            "args": tuple(defaults.args),
            "webmcp": defaults.webmcp,
            **overrides,
        }
        if grant is not None:
            values["args"] = (*values["args"], *grant.chromium_args)
        return values

    async def start(self, launcher: Launcher, instance: Instance, deadline: float | None) -> BrowserContext:
        from playwright.async_api import Error as PlaywrightError

        options = instance.options
        check_display(options)
        playwright = await launcher.playwright()
        executable, tried = resolve(options.executable_path, launcher.playwright_managed_chromium())
        if executable is None:
            raise ToolFailure("binary_not_found", describe_failure(tried), started=False)
        instance.executable = executable
        launch_kwargs: dict[str, Any] = {
            "executable_path": executable,
            "headless": options.headless,
            "args": launch_args(options.webmcp, options.args),
        }
        try:
            if options.profile_dir:
                context = await playwright.chromium.launch_persistent_context(
                    options.profile_dir, **launch_kwargs, **context_kwargs(options)
                )
                browser = context.browser
            else:
                browser = await playwright.chromium.launch(**launch_kwargs)
                context = await browser.new_context(**context_kwargs(options))
        except PlaywrightError as exc:
            raise unknown_locale(options, exc) or ToolFailure(
                "internal_error",
                f"Chromium at {executable} failed to launch: {launch_error(exc.message)}",
                started=False,
            ) from None
        instance.browser = browser
        if browser is not None:
            instance.browser_pid = await _browser_pid(browser)
        return context

    def endpoint(self, options: LaunchOptions) -> str | None:
        return None

    def lost_detail(self, options: LaunchOptions) -> str:
        return "the browser process exited unexpectedly"

    def refusal(self, options: LaunchOptions, exc: Exception) -> ToolFailure | None:
        return unknown_locale(options, exc)


BACKEND = Chromium()


async def _browser_pid(browser: Browser) -> int | None:
    try:
        session = await browser.new_browser_cdp_session()
        info = await session.send("SystemInfo.getProcessInfo")
        await session.detach()
    except Exception:  # noqa: BLE001 - the pid is informative only
        return None
    for process in info.get("processInfo", []):
        if process.get("type") == "browser":
            return int(process["id"])
    return None


# shared launch steps ------------------------------------------------------------------------
def check_display(options: LaunchOptions) -> None:
    """A headed browser launched here needs a display (`unsupported_capability` without one)."""
    if not options.headless and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        raise ToolFailure(
            "unsupported_capability",
            "A headed browser needs a display, and neither DISPLAY nor WAYLAND_DISPLAY is set. "
            "Use headless=True, or start the kernel under a virtual display (xvfb-run).",
            started=False,
        )


def context_kwargs(options: LaunchOptions) -> dict[str, Any]:
    """A Chromium context's options: the viewport (1280x720 by default), locale and user agent."""
    kwargs: dict[str, Any] = {"viewport": options.viewport or {"width": 1280, "height": 720}}
    if options.locale:
        kwargs["locale"] = options.locale
    if options.user_agent:
        kwargs["user_agent"] = options.user_agent
    return kwargs


def unknown_locale(options: LaunchOptions, exc: Exception) -> ToolFailure | None:
    """Chromium (ICU) refusing `options.locale`, which our pattern cannot foresee, as bad input."""
    if options.locale and "Invalid locale name" in str(exc):
        return ToolFailure(
            "invalid_params",
            f"Chromium does not accept the locale {options.locale!r}; use a tag such as 'en-US' or 'fr-FR'.",
            started=False,
        )
    return None


def launch_error(message: str) -> str:
    """Playwright's launch error without its decorative boxes."""
    lines = [line.strip(" ║╔╗╚╝═") for line in message.splitlines()]
    return first_lines("\n".join(line for line in lines if line and not line.startswith("<3")), 10)
