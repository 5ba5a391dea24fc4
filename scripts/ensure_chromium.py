"""Make sure a Chromium exists for webmcp_nb; install one if it can.

Order: an already resolvable Chromium (see webmcp_nb.core.chromium); as root on
Debian/Ubuntu, `apt-get install chromium`; otherwise Playwright's own build.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from webmcp_nb.core import chromium


def main() -> int:
    found, tried = chromium.resolve(None, chromium.playwright_cache_chromium())
    if found:
        print(f"chromium: {found}")
        return 0
    if os.geteuid() == 0 and shutil.which("apt-get"):
        print("chromium: installing Debian's chromium with apt-get", flush=True)
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], check=True, env=env)
    else:
        print("chromium: installing Playwright's Chromium (no root)", flush=True)
        subprocess.run([sys.executable, "-m", "playwright", "install", "chromium"], check=True)
    found, tried = chromium.resolve(None, chromium.playwright_cache_chromium())
    if not found:
        print(chromium.describe_failure(tried), file=sys.stderr)
        return 1
    print(f"chromium: {found}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
