"""Binder: the configuration repo2docker reads, checked offline, and the image's install replayed.

`jupyter-repo2docker --no-build --debug .` prints the Dockerfile Binder would build without
needing Docker; the second test installs `binder/requirements.txt` into a fresh virtualenv, as
the image does, and runs the quickstart notebook on that environment's own kernel.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from tests.helpers import uv

ROOT = Path(__file__).resolve().parent.parent
BINDER = ROOT / "binder"
QUICKSTART = "notebooks/01-quickstart.ipynb"


@pytest.fixture(scope="module")
def dockerfile() -> str:
    repo2docker = Path(sys.executable).with_name("jupyter-repo2docker")
    assert repo2docker.exists(), "jupyter-repo2docker is part of the test extra"
    done = subprocess.run(
        [str(repo2docker), "--no-build", "--debug", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return done.stdout + done.stderr


def test_binder_python_satisfies_requires_python(dockerfile: str) -> None:
    chosen = re.search(r"conda environment for python=(\d+\.\d+)", dockerfile)
    assert chosen, dockerfile[:2000]
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert chosen.group(1) in SpecifierSet(requires), (chosen.group(1), requires)
    assert (BINDER / "runtime.txt").read_text().strip() == f"python-{chosen.group(1)}"
    assert "FROM docker.io/library/buildpack-deps:24.04" in dockerfile  # apt.txt names are Ubuntu 24.04's


def test_binder_installs_the_package_after_copying_the_repository(dockerfile: str) -> None:
    lines = [line.strip() for line in (BINDER / "requirements.txt").read_text().splitlines()]
    assert "-e .[notebook,mcp]" in lines
    copy = dockerfile.index("COPY --chown=0:0 src/ ${REPO_DIR}/")
    install = dockerfile.index('pip install --no-cache-dir -r "binder/requirements.txt"')
    assert copy < install  # `-e .` needs the repository in place


def test_binder_post_build_is_strict_and_executable(dockerfile: str) -> None:
    post_build = BINDER / "postBuild"
    assert os.access(post_build, os.X_OK)
    mode = subprocess.run(
        ["git", "ls-files", "-s", "binder/postBuild"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()[0]
    assert mode == "100755"  # executable in a fresh clone too
    text = post_build.read_text().splitlines()
    assert text[0] == "#!/usr/bin/env bash"
    assert "set -euo pipefail" in text
    assert "python -m playwright install chromium" in text
    assert dockerfile.index("RUN ./binder/postBuild") > dockerfile.index('-r "binder/requirements.txt"')


def test_readme_binder_badge_opens_an_existing_notebook() -> None:
    readme = (ROOT / "README.md").read_text()
    badge = re.search(r"\(https://mybinder\.org/v2/gh/([^/\s]+/[^/\s]+)/main\?urlpath=lab/tree/([^)\s]+)\)", readme)
    assert badge, "README has a Binder badge linking to JupyterLab on the main branch"
    repository = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Repository"]
    assert f"https://github.com/{badge.group(1)}" == repository  # Binder builds the repository the package names
    assert badge.group(2) == QUICKSTART
    assert (ROOT / badge.group(2)).is_file()


RUN_QUICKSTART = """
import json, sys
import nbformat
from nbclient import NotebookClient
notebook = nbformat.read(sys.argv[1], as_version=4)
notebook.cells.append(nbformat.v4.new_code_cell("import sys, webmcp_nb; print(sys.prefix, webmcp_nb.__file__)"))
NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": "notebooks"}}).execute()
errors = [o for c in notebook.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
print(json.dumps({"cells": len(notebook.cells), "errors": len(errors), "last": notebook.cells[-1].outputs[0]["text"]}))
"""


@pytest.mark.browser  # the quickstart launches Chromium
def test_binder_requirements_alone_run_the_quickstart(tmp_path: Path) -> None:
    venv = tmp_path / "binder-env"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    install = subprocess.run(
        # nbclient runs the notebook, as the image's JupyterLab (from repo2docker's base environment) would.
        # uv (the test extra's) resolves the requirements as the image's pip would, from the cache
        # `make install` filled, so the test does not download the environment again.
        [uv(), "pip", "install", "--quiet", "--python", str(python), "-r", "binder/requirements.txt", "nbclient"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(
        [str(python), "-c", RUN_QUICKSTART, QUICKSTART],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["errors"] == 0
    prefix, package = report["last"].split()
    assert Path(prefix).resolve() == venv.resolve()  # the notebook ran on the image's environment
    assert Path(package).resolve().is_relative_to(ROOT)
    shutil.rmtree(venv)
