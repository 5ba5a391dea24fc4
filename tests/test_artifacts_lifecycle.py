"""The temporary artifacts directory goes away with its session (issue 21): `close()`, interpreter
exit and a kernel's shutdown remove it, browser profiles with their cookie databases included;
`keep_artifacts=True` or an explicit `artifacts_dir` keeps it; exports written to the user's own
paths stay. Real Chromium, a page served on loopback, real processes and a real kernel."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from jupyter_client.manager import start_new_kernel

from tests.helpers import Kernel, ok, wait_until
from webmcp_nb import Session
from webmcp_nb.demo import DemoServer
from webmcp_nb.serve_options import ServeOptions

pytestmark = pytest.mark.browser
REPO = Path(__file__).resolve().parent.parent


def fill(session: Session, demo: DemoServer) -> Path:
    """Use the artifacts directory as a session does: a profile with a cookie, a saved screenshot.
    Returns the directory, checked to hold both."""
    # An agent's profile name is a directory in the artifacts directory (the notebook's is a path).
    grant = ServeOptions().grant(default_upload_root=str(session.engine.artifacts_dir))
    args = {"name": "shopper", "profile_dir": "shop"}
    ok(asyncio.run(session.acall_as("agent:test", "browser_create_instance", args, grant=grant)))
    ok(session.navigate(demo.url_for("index.html"), instance="shopper"))
    ok(session.evaluate("document.cookie = 'session=abc; max-age=3600; path=/'", instance="shopper"))
    ok(session.call("browser_screenshot", instance="shopper", save=True))
    directory = session.engine.artifacts_dir
    assert (directory / "profiles" / "shop").is_dir()
    assert any(path.name.startswith("screenshot-") for path in directory.iterdir())
    return directory


def test_close_removes_the_temporary_artifacts_directory_but_not_exports(demo: DemoServer, tmp_path: Path) -> None:
    session = Session()
    directory = fill(session, demo)
    assert directory.name.startswith("webmcp_nb-artifacts-") and directory.parent == Path(tempfile.gettempdir())
    exported = session.export_notebook(tmp_path / "replay.ipynb")
    session.close()
    assert not directory.exists()
    assert exported.is_file()  # the user's own path: kept


def test_keep_artifacts_keeps_them(demo: DemoServer) -> None:
    session = Session(keep_artifacts=True)
    directory = fill(session, demo)
    session.close()
    try:
        assert (directory / "profiles" / "shop").is_dir()
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def test_an_explicit_artifacts_dir_is_the_users(demo: DemoServer, tmp_path: Path) -> None:
    chosen = tmp_path / "mine"
    with Session(artifacts_dir=str(chosen)) as session:
        assert fill(session, demo) == chosen
    assert (chosen / "profiles" / "shop").is_dir()


def test_interpreter_exit_removes_it(demo: DemoServer) -> None:
    """A script that never closes its session: the exit does."""
    script = (
        "import json, webmcp_nb\n"
        "s = webmcp_nb.Session()\n"
        f"s.navigate({demo.url_for('index.html')!r}).raise_for_status()\n"
        "s.call('browser_screenshot', save=True).raise_for_status()\n"
        "print(json.dumps(str(s.engine.artifacts_dir)), flush=True)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=180, env=env)
    assert done.returncode == 0, done.stderr
    directory = Path(json.loads(done.stdout.strip().splitlines()[-1]))
    assert directory.name.startswith("webmcp_nb-artifacts-")
    assert not directory.exists()


def test_a_kernel_shutdown_removes_it(demo: DemoServer) -> None:
    manager, client = start_new_kernel(kernel_name="python3")
    kernel = Kernel(manager, client)
    try:
        directory = Path(
            kernel.value(
                "import json, webmcp_nb\nnb = webmcp_nb.session()\n"
                f"nb.navigate({demo.url_for('index.html')!r}).raise_for_status()\n"
                "nb.call('browser_screenshot', save=True).raise_for_status()\n"
                "print(json.dumps(str(nb.engine.artifacts_dir)))"
            )
        )
        assert any(path.name.startswith("screenshot-") for path in directory.iterdir())
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=False)
    wait_until(lambda: not directory.exists(), timeout=30, message=f"{directory} is still there")
