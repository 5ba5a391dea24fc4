"""Make sure a Chromium exists for webmcp_nb; install one if it can.

    python scripts/ensure_chromium.py [--log build/logs/chromium.log]

Order: an already resolvable Chromium (see webmcp_nb.core.backends.chromium); as root on
Debian/Ubuntu, `apt-get install chromium`; otherwise Playwright's own build. Prints
one line; the installer's output goes to the log, which is named (and its end shown)
if the installation fails.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from webmcp_nb.core.backends import chromium

SHOWN_LOG_LINES = 25


def install_commands() -> tuple[str, list[list[str]]]:
    """What installs a Chromium here, described, and the commands that do it."""
    if os.geteuid() == 0 and shutil.which("apt-get"):
        return "Debian's chromium with apt-get", [
            ["apt-get", "update", "-qq"],
            ["apt-get", "install", "-y", "-qq", "chromium"],
        ]
    return "Playwright's Chromium (no root)", [[sys.executable, "-m", "playwright", "install", "chromium"]]


def run_logged(commands: list[list[str]], log: Path) -> int:
    """Run `commands` in turn with their output in `log`; the first non-zero status, or 0."""
    log.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    with log.open("w", encoding="utf-8") as out:
        for command in commands:
            out.write(f"$ {' '.join(command)}\n")
            out.flush()
            status = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, env=env, check=False).returncode
            if status:
                return status
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", type=Path, default=Path("build/logs/chromium.log"))
    options = parser.parse_args()
    found, tried = chromium.resolve(None, chromium.playwright_cache_chromium())
    if found:
        print(f"Chromium: {found}")
        return 0
    how, commands = install_commands()
    print(f"Installing {how} ... ", end="", flush=True)
    status = run_logged(commands, options.log)
    if status:
        print(f"failed (exit {status}); the full output is in {options.log}, ending:")
        lines = options.log.read_text(encoding="utf-8", errors="replace").splitlines()
        print("\n".join(f"    {line}" for line in lines[-SHOWN_LOG_LINES:]))
        return status
    found, tried = chromium.resolve(None, chromium.playwright_cache_chromium())
    if not found:
        print(f"failed; the installer's output is in {options.log}")
        print(chromium.describe_failure(tried), file=sys.stderr)
        return 1
    print(f"done: {found}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
