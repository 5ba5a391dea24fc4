"""Installing into a Jupyter of your own: the wheel builds, its metadata passes `twine check`, and
`pip install "webmcp_nb[notebook]" jupyterlab` into a fresh virtualenv runs the quickstart there.

The wheel is built from a copy of the tracked files, so nothing outside git (a local build/ or an
egg-info) can make it look complete; the notebook then runs in a directory outside the checkout, on the
new environment's own kernel, so the package can only come from the wheel.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.helpers import uv

ROOT = Path(__file__).resolve().parent.parent

RUN_QUICKSTART = """
import json, sys
import nbformat
from nbclient import NotebookClient
notebook = nbformat.read(sys.argv[1], as_version=4)
notebook.cells.append(nbformat.v4.new_code_cell(sys.argv[2]))
notebook.cells.append(nbformat.v4.new_code_cell("import sys, webmcp_nb; print(sys.prefix, webmcp_nb.__file__)"))
NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": "."}}).execute()
errors = [o for c in notebook.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
texts = [c.outputs[0]["text"] for c in notebook.cells[-2:]]
print(json.dumps({"errors": errors, "no_pillow": json.loads(texts[0]), "last": texts[1]}))
"""
# A cell after the quickstart's: [notebook] leaves Pillow out, so a screenshot that would need scaling
# down is refused before capture, saying how to get it (original=True still works).
NO_PILLOW_CELL = """
import importlib.util, json
height = nb.evaluate("document.body.style.minHeight = '3000px', document.documentElement.scrollHeight")
refused, unscaled = nb.screenshot(full_page=True), nb.screenshot(full_page=True, original=True)
print(json.dumps({"pillow": importlib.util.find_spec("PIL") is not None,
                  "refused": [refused.error_type, refused.operation.outcome, refused.message],
                  "unscaled": [unscaled.status, unscaled.data["height"], unscaled.data["scaled"]],
                  "height": height.data["result"]}))
"""


def weigh(site: Path, roots: list[tuple[str, list[str]]], beside: list[tuple[str, list[str]]]) -> dict[str, Any]:
    """What the distributions in `site` weigh on disk (the files their RECORDs list), in MB of 10**6
    bytes: all of them (`total`), and those the closure of `roots` needs beyond the closure of `beside`
    (`adds`: what installing `roots` adds to an environment that has `beside` already)."""
    dists = {canonicalize_name(d.metadata["Name"]): d for d in metadata.distributions(path=[str(site)])}

    def closure(wanted: list[tuple[str, list[str]]]) -> set[str]:
        done: set[tuple[str, tuple[str, ...]]] = set()
        todo = [(canonicalize_name(root), tuple(extras)) for root, extras in wanted]
        while todo:
            key, extras = todo.pop()
            if (key, extras) in done or key not in dists:
                continue
            done.add((key, extras))
            for text in dists[key].requires or []:
                req = Requirement(text)
                if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in extras or [""]):
                    todo.append((canonicalize_name(req.name), tuple(sorted(req.extras))))
        return {key for key, _ in done}

    sizes = {
        key: sum(path.stat().st_size for path in map(d.locate_file, d.files or []) if Path(path).is_file()) / 1e6
        for key, d in dists.items()
    }
    adds = closure(roots) - closure(beside)
    return {
        "total": round(sum(sizes.values()), 1),
        "adds": round(sum(sizes.get(key, 0) for key in adds), 1),
        "by_package": {
            key: round(sizes[key], 1) for key in sorted(adds, key=lambda k: -sizes.get(k, 0)) if key in sizes
        },
    }


# Measured in a fresh venv (MB, Chromium not counted; the venv is made without pip, installed into
# by this one's, so its own pip and setuptools, 23 MB, are not there): webmcp_nb[notebook] alone 247
# (Playwright 171 of it, its Node driver 164; IPython with jedi, pygments, prompt-toolkit and wcwidth
# 42; the widgets with anywidget 15; pydantic 10; jsonschema 3; this package 4); what it adds to a
# JupyterLab environment 202. Pillow (22) is left out: only scaling a screenshot down needs it (the
# mcp extra brings it). IPython stays: ipywidgets requires it, and every Jupyter kernel has it.
NOTEBOOK_ALONE_MB = 250
NOTEBOOK_IN_JUPYTERLAB_MB = 210


def run(*command: str | Path, cwd: Path, timeout: float, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(part) for part in command], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )
    assert done.returncode == 0, f"{command}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = tmp_path_factory.mktemp("source")
    tracked = run("git", "ls-files", "-z", cwd=ROOT, timeout=60).split("\0")
    for name in filter(None, tracked):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    dist = tmp_path_factory.mktemp("dist")
    run(sys.executable, "-m", "build", "--wheel", "--outdir", dist, cwd=source, timeout=300)
    (built,) = dist.glob("webmcp_nb-*.whl")
    return built


def test_the_wheel_holds_the_package_and_passes_twine_check(wheel: Path) -> None:
    assert "PASSED" in run(sys.executable, "-m", "twine", "check", "--strict", wheel, cwd=wheel.parent, timeout=120)
    names = zipfile.ZipFile(wheel).namelist()
    assert "webmcp_nb/py.typed" in names
    assert "webmcp_nb/demo/site/index.html" in names  # the demo site the quickstart serves
    assert any(name.startswith("webmcp_nb/notebook/static/") for name in names)  # the widgets' front end
    assert "webmcp_nb/mcp/static/live.html" in names  # the MCP App, built at build time (no Node at install)
    assert not [name for name in names if name.startswith(("tests/", "bench/", "notebooks/"))]
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "Provides-Extra: notebook" in metadata and "Provides-Extra: mcp" in metadata
    # [notebook] is what `%load_ext webmcp_nb` needs, not the tools that run notebooks headless.
    notebook_requirements = [line for line in metadata.splitlines() if 'extra == "notebook"' in line]
    assert not [line for line in notebook_requirements if line.split()[1].startswith(("nbclient", "nbconvert"))]


@pytest.mark.browser  # the quickstart launches Chromium
def test_pip_install_into_a_fresh_jupyterlab_runs_the_quickstart(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "lab-env"
    run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path, timeout=120)  # ensurepip: seconds
    python = venv / "bin" / "python"
    (site,) = venv.glob("lib/python*/site-packages")
    pip = (sys.executable, "-m", "pip", "--python", python, "install", "--quiet")
    run(*pip, f"webmcp_nb[notebook] @ {wheel.as_uri()}", cwd=tmp_path, timeout=900)
    roots = [("webmcp_nb", ["notebook"])]
    alone = weigh(site, roots, [])
    assert alone["total"] <= NOTEBOOK_ALONE_MB, alone
    assert not {"ipykernel", "jupyterlab", "pillow"} & set(alone["by_package"]), alone
    # JupyterLab comes through the test extra's uv, from the cache `make install` filled (its files
    # are not weighed, and uv compiles none); [notebook] came through pip, as users get it.
    run(uv(), "pip", "install", "--quiet", "--python", python, "jupyterlab", cwd=tmp_path, timeout=900)
    added = weigh(site, roots, [("jupyterlab", [])])
    assert added["adds"] <= NOTEBOOK_IN_JUPYTERLAB_MB, added
    print(f"webmcp_nb[notebook]: {alone['total']} MB alone, {added['adds']} MB added to JupyterLab")
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    assert run(venv / "bin" / "jupyter", "lab", "--version", cwd=tmp_path, timeout=120, env=env).strip()
    work = tmp_path / "my-notebooks"
    work.mkdir()
    shutil.copy(ROOT / "notebooks" / "01-quickstart.ipynb", work)
    report = json.loads(
        run(
            python, "-c", RUN_QUICKSTART, "01-quickstart.ipynb", NO_PILLOW_CELL, cwd=work, timeout=600, env=env
        ).splitlines()[-1]
    )
    assert report["errors"] == []
    no_pillow = report["no_pillow"]
    assert no_pillow["pillow"] is False
    error_type, outcome, message = no_pillow["refused"]
    assert (error_type, outcome) == ("unsupported_capability", "not_started"), no_pillow
    assert "pip install pillow" in message and "original=true" in message, message
    assert no_pillow["height"] >= 3000 and no_pillow["unscaled"] == ["success", no_pillow["height"], False], no_pillow
    prefix, package = report["last"].split()
    assert Path(prefix).resolve() == venv.resolve()  # the notebook ran on the new environment's kernel
    assert Path(package).resolve().is_relative_to(venv.resolve())  # and imported the installed wheel
    shutil.rmtree(venv)
