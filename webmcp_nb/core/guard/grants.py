"""What an attached agent may pass: its grant.

A `Grant` decides which tool groups a caller may call, which URLs it may load, which
local files it may upload and which launch options it may choose. ``grant=None`` is
full power (the notebook's own calls). Front ends build one grant from their options
(`Grant.build`); the engine hands it to handlers as ``ctx.grant``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args
from urllib.parse import unquote, urlsplit

from ..call.errors import InvalidParams
from ..call.registry import Group, ToolSpec
from .url_policy import UrlPolicy

ALWAYS_GRANTED = ("core", "notebook")
BROWSER_CAP = "browser"
SECRETS_CAP = "secrets"
DISTRIBUTED_CAP = "distributed"
CAPS: tuple[str, ...] = (
    *(group for group in get_args(Group) if group not in ALWAYS_GRANTED),
    BROWSER_CAP,
    DISTRIBUTED_CAP,
)
"""What an operator can grant with ``--caps``: tool groups, ``browser`` (any launch option) and
``distributed`` (a fan-out over a Dask cluster, `webmcp_nb.distributed.map`, from an agent's code)."""
SERVING: ContextVar[Grant | None] = ContextVar("webmcp_nb_serving_grant", default=None)
"""The grant of the tool call being served (the engine sets it around a handler): code that an
agent's call runs sees the agent's grant here; the notebook's own code sees None (everything)."""
CREATE_INSTANCE = "browser_create_instance"
LAUNCH_OPTIONS = ("args", "executable_path", "endpoint", "cdp_endpoint", "headers")
"""Launch options only the `browser` cap admits, whatever their value (a remote endpoint makes
the session connect to a host the agent chose)."""

GATED_PARAMS: dict[str, dict[str, tuple[str, ...]]] = {
    BROWSER_CAP: {CREATE_INSTANCE: (*LAUNCH_OPTIONS, "headless")},
    SECRETS_CAP: dict.fromkeys(("browser_console", "browser_network", "browser_trace"), ("reveal_secrets",)),
    "storage": {CREATE_INSTANCE: ("storage_state",)},
}
"""The parameters of a granted tool that need one more cap, by cap and tool. Without the cap an
agent's schemas leave them out (`Grant.withheld`), and the tool refuses them naming the cap:
`LAUNCH_OPTIONS` and headless=false (`check_launch`), reveal_secrets=true (the evidence tools)."""

SCHEMES: tuple[str, ...] = ("data", "blob", "view-source", "chrome", "devtools")
"""URL schemes an operator can grant with ``--allow-scheme`` (``file:`` comes with ``--file-root``)."""
OPEN_SCHEMES = ("http", "https")  # plus exactly ``about:blank``

API_CAP = re.compile(r"^api:[A-Za-z_][A-Za-z0-9_]*$")
"""``api:NAME``: the tools of one loaded API (``api`` grants every API's)."""
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_PROFILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def as_browsers_read(url: str) -> str:
    """`url` as browsers parse it: tabs and newlines vanish, outer spaces and controls are stripped."""
    return re.sub(r"[\t\n\r]", "", url).strip("".join(map(chr, range(33))))


def is_absolute(url: str) -> bool:
    """Whether `url` names its scheme (rather than being resolved against the page's URL)."""
    return _SCHEME.match(as_browsers_read(url)) is not None


@dataclass(frozen=True)
class Grant:
    """An agent's grant. Roots are absolute, resolved directories (see `build`)."""

    groups: frozenset[str] = frozenset(ALWAYS_GRANTED)
    browser: bool = False
    distributed: bool = False
    schemes: frozenset[str] = frozenset()
    file_root: Path | None = None
    upload_roots: tuple[Path, ...] = ()
    chromium_args: tuple[str, ...] = field(default_factory=tuple)
    url_policy: UrlPolicy = field(default_factory=UrlPolicy)

    @classmethod
    def build(
        cls,
        caps: Iterable[str] = (),
        *,
        allow_schemes: Iterable[str] = (),
        file_root: str | Path | None = None,
        upload_roots: Sequence[str | Path] = (),
        chromium_args: Sequence[str] = (),
        allow_urls: Sequence[str] = (),
        block_urls: Sequence[str] = (),
    ) -> Grant:
        """A grant from an operator's options; raises ValueError naming a bad one."""
        caps, allow_schemes = list(caps), list(allow_schemes)
        unknown = sorted(cap for cap in set(caps) - set(CAPS) if not API_CAP.match(cap))
        if unknown:
            raise ValueError(f"unknown capability {', '.join(unknown)}; choose from {', '.join(CAPS)}")
        if "file" in allow_schemes:
            raise ValueError("the file: scheme is granted with a root directory: file_root (--file-root DIR)")
        unknown = sorted(set(allow_schemes) - set(SCHEMES))
        if unknown:
            raise ValueError(f"unknown scheme {', '.join(unknown)}; choose from {', '.join(SCHEMES)}")
        bad_args = [arg for arg in chromium_args if not arg.startswith("--")]
        if bad_args:
            raise ValueError(f"Chromium arguments start with '--': {', '.join(bad_args)}")
        return cls(
            groups=frozenset(caps) - {BROWSER_CAP, DISTRIBUTED_CAP} | frozenset(ALWAYS_GRANTED),
            browser=BROWSER_CAP in caps,
            distributed=DISTRIBUTED_CAP in caps,
            schemes=frozenset(allow_schemes),
            file_root=_directory(file_root, "file root") if file_root is not None else None,
            upload_roots=tuple(_directory(root, "upload root") for root in upload_roots),
            chromium_args=tuple(chromium_args),
            url_policy=UrlPolicy.build(allow_urls, block_urls),
        )

    @property
    def caps(self) -> tuple[str, ...]:
        """The grantable caps this grant holds (for reports)."""
        flags = {BROWSER_CAP: self.browser, DISTRIBUTED_CAP: self.distributed}
        held = (cap for cap in CAPS if cap in self.groups or flags.get(cap, False))
        return (*held, *sorted(group for group in self.groups if API_CAP.match(group)))

    def admits(self, spec: ToolSpec) -> bool:
        """Whether this grant lets its caller see and call `spec` (its group, or its API's own cap)."""
        return spec.group in self.groups or (spec.api is not None and f"api:{spec.api}" in self.groups)

    def withheld(self, tool: str) -> frozenset[str]:
        """The parameters of `tool` this grant does not admit (`GATED_PARAMS`)."""
        held = self.caps
        return frozenset(name for cap, tools in GATED_PARAMS.items() if cap not in held for name in tools.get(tool, ()))

    def describe(self) -> str:
        schemes = [*OPEN_SCHEMES, "about:blank", *sorted(self.schemes)]
        if self.file_root is not None:
            schemes.append(f"file: under {self.file_root}")
        uploads = ", ".join(map(str, self.upload_roots)) or "none"
        return f"URLs: {', '.join(schemes)}; uploads from: {uploads}"

    # URLs ----------------------------------------------------------------------
    def check_url(self, url: str) -> None:
        """Raise `InvalidParams` naming the grant `url` needs, unless it is granted."""
        refusal = self.refusal(url)
        if refusal is not None:
            raise InvalidParams(refusal)

    def allows_url(self, url: str) -> bool:
        return self.refusal(url) is None

    def refusal(self, url: str) -> str | None:
        """Why `url` may not be loaded under this grant, or None."""
        url = as_browsers_read(url)
        match = _SCHEME.match(url)
        scheme = match.group(1).lower() if match else ""
        if scheme in OPEN_SCHEMES:
            return self.url_policy.refusal(url)
        if url.lower() == "about:blank":
            return None
        if scheme == "file":
            return self._file_refusal(url)
        if scheme in SCHEMES:
            if scheme not in self.schemes:
                return (
                    f"{scheme}: URLs are not granted to agents here; the operator can grant them with "
                    f"`--allow-scheme {scheme}` (serve_mcp(allow_schemes=[{scheme!r}]))."
                )
            return self.refusal(url[len(scheme) + 1 :]) if scheme == "view-source" else None
        return (
            f"{url[:60]!r}: agents may load http:, https: and about:blank URLs, and the schemes the operator granted."
        )

    def _file_refusal(self, url: str) -> str | None:
        if self.file_root is None:
            return (
                "file: URLs are not granted to agents here; the operator can grant one directory with "
                "`--file-root DIR` (serve_mcp(file_root=...))."
            )
        parts = urlsplit(url)
        if parts.netloc not in ("", "localhost"):
            return f"file: URLs on another host ({parts.netloc}) are not granted."
        # Browsers read '\' as '/' in file: URLs; symlinks are followed before the check.
        path = Path(unquote(parts.path).replace("\\", "/")).resolve()
        if not path.is_relative_to(self.file_root):
            return f"{path} is outside the granted file root {self.file_root} (--file-root)."
        return None

    # files ---------------------------------------------------------------------
    def upload_path(self, path: str) -> Path:
        """The real file `path` names (symlinks resolved), if it lies under an upload root. The roots
        are judged first, and a refusal names the real path only of a link inside them: nothing
        tells whether a file outside the roots exists, or where links there lead."""
        given = Path(os.path.abspath(path))
        try:
            real: Path | None = Path(path).resolve()
        except (OSError, RuntimeError):  # a symlink loop
            real = None
        if real is None and self._uploadable(given):
            raise InvalidParams(f"Not a readable file: {path}")
        if real is None or not self._uploadable(real):
            roots = ", ".join(map(str, self.upload_roots)) or "none"
            really = f" (really {real})" if self._uploadable(given) else ""
            raise InvalidParams(
                f"{path}{really} is outside the directories agents may upload from ({roots}); "
                "the operator names them with `--upload-root DIR` (serve_mcp(upload_roots=[...]))."
            )
        if not real.is_file():
            raise InvalidParams(f"Not a readable file: {path}")
        return real

    def _uploadable(self, path: Path) -> bool:
        return any(path.is_relative_to(root) for root in self.upload_roots)

    # launch options ------------------------------------------------------------
    def check_launch(self, args: Mapping[str, Any], default_headless: bool) -> None:
        """Refuse launch options beyond the safe ones unless the `browser` cap is granted."""
        if self.browser:
            return
        widened = launch_widening(args, default_headless)
        if widened:
            raise InvalidParams(
                f"{CREATE_INSTANCE}: {', '.join(widened)} need the `browser` capability (`--caps browser`), "
                "which the operator did not grant; a profile_dir may be a plain name (kept in this session's "
                "profiles directory)."
            )


def check_serving_cap(cap: str, what: str) -> None:
    """Raise PermissionError unless the call being served (`SERVING`), if any, holds `cap`."""
    grant = SERVING.get()
    if grant is not None and cap not in grant.caps:
        raise PermissionError(
            f"{what} needs the `{cap}` capability (`--caps {cap}`), which the operator did not grant to this agent."
        )


def launch_widening(args: Any, default_headless: bool = True) -> list[str]:
    """The launch options in `args` (a create call's arguments) beyond the safe defaults."""
    if not isinstance(args, Mapping):
        return []
    widened = [name for name in LAUNCH_OPTIONS if args.get(name)]
    profile = args.get("profile_dir")
    if profile is not None and not is_profile_name(profile):
        widened.append("profile_dir as a path")
    if args.get("headless") is False and default_headless:
        widened.append("headless=false")
    return widened


def widens_grant(tool: str, args: Any, default_headless: bool) -> bool:
    """Whether a call's arguments reach beyond what a grant without `browser` allows."""
    return tool == CREATE_INSTANCE and bool(launch_widening(args, default_headless))


def profiles_dir(artifacts_dir: Path) -> Path:
    """Where an agent's profile names are kept; agents never upload from it (cookies, logins)."""
    return artifacts_dir / "profiles"


def is_profile_name(value: Any) -> bool:
    return isinstance(value, str) and bool(_PROFILE_NAME.match(value)) and ".." not in value


def _directory(path: str | Path, what: str) -> Path:
    try:
        resolved = Path(path).expanduser().resolve(strict=True)
    except (OSError, RuntimeError):
        raise ValueError(f"the {what} {path} does not exist") from None
    if not resolved.is_dir():
        raise ValueError(f"the {what} {path} is not a directory")
    return resolved
