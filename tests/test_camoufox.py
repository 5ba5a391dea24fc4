"""backend='camoufox': options checked before launch, no network inside a tool call, the launch
options camoufox's own builder makes from ours, profile reservation, health and the install command.

No Camoufox browser exists on this machine and none can be downloaded, so nothing here launches
one. Tests marked `camoufox` need the camoufox package (the extra, installed by make test-compat
with Playwright 1.62); tests marked `no_camoufox` check the answer where it is missing (the main
venv). Where a test stands in for the binary, its docstring says so. Tests that must see the
network blocked or an empty camoufox cache run in a subprocess (see `run_isolated`).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from webmcp_nb.client import tool_registry
from webmcp_nb.core.backends import camoufox as camoufox_backend
from webmcp_nb.core.config import LaunchDefaults
from webmcp_nb.core.guard.grants import Grant

from .helpers import error, free_port, ok

pytestmark = pytest.mark.playwright_sensitive  # see tests/test_compat_scope.py

ROOT = Path(__file__).resolve().parent.parent
HAS_CAMOUFOX = importlib.util.find_spec("camoufox") is not None

# Every way a process can start a connection, replaced by one that records the attempt and fails.
BLOCK_NETWORK = """
import socket
ATTEMPTS = []
def _refuse(kind):
    def refuse(*args, **kwargs):
        ATTEMPTS.append(f"{kind}{args[1:] if kind.startswith('socket.') else args}"[:300])
        raise OSError(101, "network blocked by the test")
    return refuse
socket.socket.connect = _refuse("socket.connect")
socket.socket.connect_ex = _refuse("socket.connect_ex")
socket.create_connection = _refuse("create_connection")
socket.getaddrinfo = _refuse("getaddrinfo")
"""


def run_isolated(tmp_path: Path, code: str, env: dict[str, str] | None = None, block: bool = True) -> Any:
    """Run `code` (which ends by printing one JSON line) in a fresh interpreter with camoufox's
    cache and HOME in `tmp_path` (an empty install), the network blocked (`ATTEMPTS` lists every
    connection it tried), and this checkout first on the path."""
    environ = {key: value for key, value in os.environ.items() if key != camoufox_backend.ENV_VAR}
    environ.update(
        HOME=str(tmp_path / "home"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        PYTHONPATH=str(ROOT),
        **(env or {}),
    )
    (tmp_path / "home").mkdir(exist_ok=True)
    script = (BLOCK_NETWORK if block else "") + textwrap.dedent(code)
    done = subprocess.run(
        [sys.executable, "-c", script], env=environ, capture_output=True, text=True, timeout=240, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


CREATE = """
import json, sys
from webmcp_nb import Session
with Session(executable_path="/usr/bin/chromium", args=["--no-sandbox"]) as s:  # Chromium's: not camoufox's
    envelope = s.call("browser_create_instance", name="fox", backend="camoufox", {args})
    listed = s.call("browser_list_instances").data["instances"]
print(json.dumps({{"envelope": envelope.to_dict(), "attempts": ATTEMPTS, "listed": listed,
                  "imported": "camoufox" in sys.modules}}))
"""


@pytest.fixture
def standin_binary(tmp_path: Path) -> Path:
    """A stand-in for a Camoufox build: the files camoufox's builder reads beside the binary
    (application.ini, version.json, properties.json, fontconfig) and a binary that cannot run."""
    bundle = tmp_path / "camoufox-build"
    bundle.mkdir()
    binary = bundle / "camoufox-bin"
    binary.write_text("#!/bin/sh\necho 'a stand-in, not a browser' >&2\nexit 1\n")
    binary.chmod(0o755)
    (bundle / "application.ini").write_text("[App]\nVersion=156.0.1\n")
    (bundle / "version.json").write_text('{"version": "156.0.1", "build": "beta.36"}')
    (bundle / "properties.json").write_text("[]")
    for system in ("linux", "macos", "windows"):
        (bundle / "fontconfig" / system).mkdir(parents=True)
        (bundle / "fontconfig" / system / "fonts.conf").write_text(
            '<fontconfig><dir prefix="cwd">fonts</dir></fontconfig>'
        )
    return binary


# options: checked before anything launches (any venv) ----------------------------------------
@pytest.mark.parametrize(
    ("args", "fact"),
    [
        ({"os": "linux"}, "os needs backend='camoufox'"),
        ({"humanize": True, "block_webrtc": True}, "humanize, block_webrtc need backend='camoufox'"),
        ({"backend": "remote", "endpoint": "ws://127.0.0.1:9/x", "os": "linux"}, "os needs backend='camoufox'"),
        ({"backend": "camoufox", "geoip": True}, "public IP address"),
        ({"backend": "camoufox", "user_agent": "Bot/1.0"}, "takes no user_agent"),
        ({"backend": "camoufox", "endpoint": "ws://127.0.0.1:9/x"}, "endpoint"),
        ({"backend": "camoufox", "os": ["linux", "linux"]}, "lists an OS twice"),
        ({"backend": "camoufox", "os": "solaris"}, "parameter 'os"),
        ({"backend": "camoufox", "humanize": 11}, "less than or equal to 10"),
        ({"backend": "camoufox", "humanize": 0}, "greater than 0"),
    ],
)
def test_options_are_checked_before_launch(fresh_session: Any, args: dict[str, Any], fact: str) -> None:
    s = fresh_session()
    message = error(
        s.call("browser_create_instance", name="fox", **args), "invalid_params", "not_started", "after_correction"
    )
    assert fact in message
    assert ok(s.call("browser_list_instances"))["instances"] == []


def test_native_webmcp_is_unsupported_on_firefox(fresh_session: Any) -> None:
    """Refused before the package or a binary is looked for: the same answer in every venv."""
    s = fresh_session()
    envelope = s.call("browser_create_instance", name="fox", backend="camoufox", webmcp="native")
    message = error(envelope, "unsupported_capability", "not_started", "after_correction")
    assert "no native WebMCP" in message and "'page'" in message
    assert ok(s.call("browser_list_instances"))["instances"] == []


def test_schema_declares_the_backends_and_options_once() -> None:
    schema = tool_registry().get("browser_create_instance").input_schema
    props = schema["properties"]
    backend = props["backend"]  # optional: left out, the session decides (chromium, or its remote endpoint)
    assert [o["enum"] for o in backend["anyOf"] if "enum" in o] == [["chromium", "camoufox", "remote"]]
    assert backend["default"] is None
    assert {"os", "humanize", "block_webrtc", "geoip", "locale", "profile_dir", "headless"} <= set(props)
    os_choices = json.dumps(props["os"])
    assert all(name in os_choices for name in ("windows", "macos", "linux"))
    assert camoufox_backend.INSTALL_COMMAND in props["backend"]["description"]


def test_session_defaults_for_camoufox() -> None:
    """The session's Chromium binary and flags do not apply to Camoufox; its WebMCP default does,
    except 'native' (Firefox has none), which becomes 'page'."""
    chromium_session = LaunchDefaults(headless=False, executable_path="/usr/bin/chromium", args=("--no-sandbox",))
    assert camoufox_backend.launch_values("fox", chromium_session, {"locale": "fr-FR"}) == {
        "name": "fox",
        "headless": False,
        "webmcp": "page",
        "locale": "fr-FR",
    }
    quiet = LaunchDefaults(webmcp="off")
    assert camoufox_backend.launch_values("fox", quiet, {})["webmcp"] == "off"
    assert camoufox_backend.launch_values("fox", quiet, {"webmcp": "polyfill"})["webmcp"] == "polyfill"


def test_agent_grant_applies_to_camoufox(fresh_session: Any, tmp_path: Path) -> None:
    """Without the `browser` capability an agent may not name a profile path, show a window or
    pick the binary, whatever the backend."""
    s = fresh_session()
    grant = Grant.build(caps=[])
    for args, fact in [
        ({"profile_dir": str(tmp_path / "profile")}, "profile_dir as a path"),
        ({"headless": False}, "headless=false"),
        ({"executable_path": "/opt/camoufox/camoufox-bin"}, "executable_path"),
    ]:
        call = s.acall_as(
            "agent:test", "browser_create_instance", {"name": "fox", "backend": "camoufox", **args}, grant=grant
        )
        message = error(asyncio.run(call), "invalid_params", "not_started", "after_correction")
        assert fact in message and "`browser` capability" in message


def test_profile_reservation(fresh_session: Any, tmp_path: Path) -> None:
    """A profile a live Chromium instance holds is refused to camoufox before anything else is
    looked at; a Firefox profile lock (a `lock` symlink to `<address>:+<pid>` of a live process,
    here this test's own: a stand-in for a running Camoufox) is refused too; a camoufox launch
    that fails frees its name and profile."""
    s = fresh_session()
    held = tmp_path / "held"
    ok(s.call("browser_create_instance", name="chrome", profile_dir=str(held)))
    message = error(
        s.call("browser_create_instance", name="fox", backend="camoufox", profile_dir=str(held)),
        "profile_dir_in_use",
        "not_started",
    )
    assert "'chrome'" in message
    locked = tmp_path / "locked"
    locked.mkdir()
    os.symlink(f"127.0.0.1:+{os.getpid()}", locked / "lock")
    message = error(
        s.call("browser_create_instance", name="fox", backend="camoufox", profile_dir=str(locked)),
        "profile_dir_in_use",
    )
    assert f"pid {os.getpid()}" in message
    free = tmp_path / "free"
    first = s.call("browser_create_instance", name="fox", backend="camoufox", profile_dir=str(free))
    error(first, "binary_not_found", "not_started")  # no package (main venv) or no browser (compat venv)
    again = s.call("browser_create_instance", name="fox", backend="camoufox", profile_dir=str(free))
    assert again.error_type == "binary_not_found", again.message
    assert [item["name"] for item in ok(s.call("browser_list_instances"))["instances"]] == ["chrome"]
    health = ok(s.call("browser_health"))
    assert [entry["name"] for entry in health["failed_launches"]][-2:] == ["fox", "fox"]


@pytest.mark.browser  # a Chromium must be found (none is launched)
def test_health_lists_the_three_backends(tmp_path: Path) -> None:
    """With the network blocked and an empty camoufox cache: nothing is launched (the driver
    never started) and no connection is tried."""
    result = run_isolated(
        tmp_path,
        """
        import json
        from webmcp_nb import Session
        with Session() as s:
            health = s.call("browser_health").data
        print(json.dumps({"health": health, "attempts": ATTEMPTS}))
        """,
    )
    health = result["health"]
    assert result["attempts"] == []
    assert health["driver"]["state"] == "not_started"
    backends = {entry["backend"]: entry for entry in health["backends"]}
    assert list(backends) == ["chromium", "camoufox", "remote"]
    assert backends["chromium"]["state"] == "available" and backends["chromium"]["executable"] == health["chromium"]
    assert backends["remote"]["state"] == "available"
    assert backends["remote"]["playwright"] == health["versions"]["playwright"]
    fox = backends["camoufox"]
    assert "no native WebMCP" in fox["supports"] and "native WebMCP" in backends["chromium"]["supports"]
    if HAS_CAMOUFOX:
        assert (fox["state"], fox["package"], fox["install"]) == (
            "binary_missing",
            "0.5.8",
            camoufox_backend.INSTALL_COMMAND,
        )
        assert fox["tried"][-1]["path"] == str(tmp_path / "cache" / "camoufox" / "browsers")
    else:
        assert (fox["state"], fox["package"]) == ("package_missing", None)
        assert camoufox_backend.PIP_INSTALL in fox["install"]
    assert not (tmp_path / "cache" / "camoufox").exists()  # nothing written either


# without the package (the main venv) ----------------------------------------------------------
@pytest.mark.no_camoufox
def test_missing_package_is_binary_not_found(fresh_session: Any) -> None:
    s = fresh_session()
    envelope = s.call("browser_create_instance", name="fox", backend="camoufox", os="linux", locale="fr-FR")
    message = error(envelope, "binary_not_found", "not_started", "after_correction")
    assert camoufox_backend.PIP_INSTALL in message and camoufox_backend.INSTALL_COMMAND in message
    assert "Looked in: executable_path: not given; $CAMOUFOX_EXECUTABLE_PATH" in message
    assert "camoufox install: the camoufox package is not installed." in message
    assert envelope.operation.duration_ms < 2000


@pytest.mark.no_camoufox
def test_install_command_without_package() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "webmcp_nb.cli", "install", "camoufox"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"webmcp-nb install camoufox: the camoufox package is not installed; run {camoufox_backend.PIP_INSTALL} first."
    ]


# with the package (make test-compat) ----------------------------------------------------------
@pytest.mark.camoufox
def test_binary_not_found_fast_with_network_blocked(tmp_path: Path) -> None:
    result = run_isolated(tmp_path, CREATE.format(args='os="linux", locale="fr-FR", humanize=True, block_webrtc=True'))
    envelope = result["envelope"]
    assert (envelope["status"], envelope["error_type"]) == ("error", "binary_not_found")
    assert (envelope["operation"]["outcome"], envelope["operation"]["retry"]) == ("not_started", "after_correction")
    # No download is tried (`attempts` below records every connection): the bound is for a hang,
    # not a speed (a fresh interpreter starting the driver took 4 s on 4 busy workers).
    assert envelope["operation"]["duration_ms"] < 20_000
    browsers = tmp_path / "cache" / "camoufox" / "browsers"
    message = envelope["message"]
    assert f"camoufox install ({browsers})" in message and "$CAMOUFOX_EXECUTABLE_PATH: not set" in message
    assert "executable_path: not given" in message  # the session's Chromium binary is not looked at
    assert f"`{camoufox_backend.INSTALL_COMMAND}`" in message
    assert result["attempts"] == []
    assert result["imported"] is False  # camoufox's code (and its downloads) never ran
    assert result["listed"] == []
    assert not (tmp_path / "cache" / "camoufox").exists()


@pytest.mark.camoufox
def test_missing_model_with_standin_binary(tmp_path: Path, standin_binary: Path) -> None:
    """The binary is a stand-in (see `standin_binary`); fpgen's model is really missing here, and
    camoufox would download it: binary_not_found, naming it and the install command."""
    result = run_isolated(tmp_path, CREATE.format(args=f"executable_path={str(standin_binary)!r}"))
    envelope = result["envelope"]
    assert envelope["error_type"] == "binary_not_found"
    assert "fpgen's fingerprint model model-2/2026 is not installed" in envelope["message"]
    assert camoufox_backend.INSTALL_COMMAND in envelope["message"]
    # No download was tried (attempts), so it fails at once; the bound only allows a loaded machine
    # (3.5 s seen on 4 workers), far below a download's wait.
    assert envelope["operation"]["duration_ms"] < 20_000
    assert result["attempts"] == [] and result["imported"] is False


@pytest.mark.camoufox
def test_health_names_a_found_binary(tmp_path: Path, standin_binary: Path) -> None:
    """The binary is a stand-in (see `standin_binary`), found through $CAMOUFOX_EXECUTABLE_PATH."""
    result = run_isolated(
        tmp_path,
        """
        import json
        from webmcp_nb import Session
        with Session() as s:
            health = s.call("browser_health").data
        print(json.dumps({"backends": health["backends"], "attempts": ATTEMPTS}))
        """,
        env={camoufox_backend.ENV_VAR: str(standin_binary)},
    )
    fox = result["backends"][1]
    assert (fox["state"], fox["browser"], fox["executable"]) == ("model_missing", "156.0.1", str(standin_binary))
    assert "fpgen's fingerprint model" in fox["problem"]
    assert result["attempts"] == []


MAPPING = """
import json
from webmcp_nb.core.backends import LaunchOptions
from webmcp_nb.core.backends import camoufox as camoufox_backend
from camoufox.utils import launch_options
options = LaunchOptions(name="fox", backend="camoufox", webmcp="page", {options})
kwargs = camoufox_backend.builder_kwargs(options, {binary!r})
built = launch_options(**kwargs, fingerprint_preset=True, block_webgl=True)
env = built.pop("env")
config = json.loads("".join(env[key] for key in sorted(env) if key.startswith("CAMOU_CONFIG_")))
kwargs["exclude_addons"] = [addon.name for addon in kwargs["exclude_addons"]]
print(json.dumps({{"kwargs": kwargs, "built": built, "config": config, "attempts": ATTEMPTS}}))
"""


@pytest.mark.camoufox
def test_options_map_through_camoufox_builder(tmp_path: Path, standin_binary: Path) -> None:
    """Our options, through `builder_kwargs`, into camoufox's real `launch_options`, with the
    network blocked. Stand-ins: the binary (see `standin_binary`) and, because fpgen's model
    cannot be downloaded here, the identity: the test adds fingerprint_preset=True (a real device
    bundled with camoufox) and block_webgl=True (WebGL parameters come from the model)."""
    options = (
        'locale="fr-FR", headless=True, args=("-purgecaches",), '
        'own=camoufox_backend.CamoufoxOptions(os=("linux",), humanize=1.5, block_webrtc=True)'
    )
    result = run_isolated(tmp_path, MAPPING.format(options=options, binary=str(standin_binary)))
    assert result["attempts"] == []
    assert result["kwargs"] == {
        "executable_path": str(standin_binary),
        "headless": True,
        "block_webrtc": True,
        "geoip": False,
        "exclude_addons": ["UBO"],  # not on disk: adding it would download it
        "os": "linux",
        "locale": "fr-FR",
        "humanize": 1.5,
        "args": ["-purgecaches"],
    }
    built, config = result["built"], result["config"]
    assert (built["executable_path"], built["headless"], built["args"]) == (str(standin_binary), True, ["-purgecaches"])
    prefs = built["firefox_user_prefs"]
    assert prefs["media.peerconnection.enabled"] is False
    assert prefs["intl.locale.requested"].startswith("fr-")
    assert (config["locale:language"], config["locale:region"]) == ("fr", "FR")
    assert (config["humanize"], config["humanize:maxTime"]) == (True, 1.5)
    assert "Linux" in config["navigator.userAgent"] and "Firefox/156.0" in config["navigator.userAgent"]
    assert "addons" not in config

    options = 'headless=False, own=camoufox_backend.CamoufoxOptions(os=("windows",))'
    result = run_isolated(tmp_path, MAPPING.format(options=options, binary=str(standin_binary)))
    assert result["attempts"] == []
    assert result["kwargs"] == {
        "executable_path": str(standin_binary),
        "headless": False,
        "block_webrtc": False,
        "geoip": False,
        "exclude_addons": ["UBO"],
        "os": "windows",
    }
    assert result["built"]["firefox_user_prefs"]["media.peerconnection.enabled"] is True
    assert result["built"]["headless"] is False
    assert "Windows" in result["config"]["navigator.userAgent"] and "humanize" not in result["config"]


LAUNCH = """
import asyncio, json
from playwright.async_api import Error, async_playwright
from webmcp_nb.core.backends import LaunchOptions
from webmcp_nb.core.backends import camoufox as camoufox_backend
from camoufox.utils import launch_options

async def attempt(profile_dir):
    own = camoufox_backend.CamoufoxOptions(os=("linux",))
    options = LaunchOptions(name="fox", backend="camoufox", webmcp="page", own=own, profile_dir=profile_dir)
    kwargs = camoufox_backend.builder_kwargs(options, {binary!r})
    built = await asyncio.to_thread(lambda: launch_options(**kwargs, fingerprint_preset=True, block_webgl=True))
    async with async_playwright() as playwright:
        try:
            await camoufox_backend.launch(playwright, options, built, {{"viewport": {{"width": 800, "height": 600}}}})
        except Error as exc:
            return exc.message
    return "launched"

async def main():
    return [await attempt(None), await attempt({profile!r})]

print(json.dumps({{"errors": asyncio.run(main()), "attempts": ATTEMPTS}}))
"""


@pytest.mark.camoufox
def test_launch_runs_the_found_binary(tmp_path: Path, standin_binary: Path) -> None:
    """`launch` hands the builder's options to camoufox's launcher, and Playwright (1.62 here)
    starts the binary we found, with a persistent profile when asked. The binary is a stand-in
    (see `standin_binary`): it writes one line and exits, so the launch fails with that line; the
    identity is a bundled preset without WebGL, as in the mapping test."""
    profile = tmp_path / "profile"
    result = run_isolated(tmp_path, LAUNCH.format(binary=str(standin_binary), profile=str(profile)))
    temporary, persistent = result["errors"]
    for message in (temporary, persistent):
        assert f"<launching> {standin_binary} " in message and "a stand-in, not a browser" in message
    assert "playwright_firefoxdev_profile-" in temporary and str(profile) not in temporary  # a temporary profile
    assert f"-profile {profile} " in persistent
    assert result["attempts"] == []


@pytest.mark.camoufox
def test_install_command_says_when_it_cannot_download(tmp_path: Path) -> None:
    """camoufox's real fetch, with every HTTP(S) request sent to a proxy on a closed loopback port:
    GitHub is out of reach, as on this machine, and would be on one with internet access."""
    (tmp_path / "home").mkdir()
    unreachable = f"http://127.0.0.1:{free_port()}"
    proxies = dict.fromkeys(("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"), unreachable)
    done = subprocess.run(
        [sys.executable, "-m", "webmcp_nb.cli", "install", "camoufox"],
        env={
            **os.environ,
            **proxies,
            "NO_PROXY": "",
            "no_proxy": "",
            "PYTHONPATH": str(ROOT),
            "HOME": str(tmp_path / "home"),
            "XDG_CACHE_HOME": str(tmp_path / "cache"),
        },
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 1, done.stderr[-2000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("webmcp-nb install camoufox: failed, no Camoufox browser is installed (")
    assert "api.github.com" in last and last.endswith("it needs access to github.com.")
    assert done.stdout == ""
