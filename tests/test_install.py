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
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

RUN_QUICKSTART = """
import json, sys
import nbformat
from nbclient import NotebookClient
notebook = nbformat.read(sys.argv[1], as_version=4)
notebook.cells.append(nbformat.v4.new_code_cell("import sys, webmcp_nb; print(sys.prefix, webmcp_nb.__file__)"))
NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": "."}}).execute()
errors = [o for c in notebook.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
print(json.dumps({"errors": errors, "last": notebook.cells[-1].outputs[0]["text"]}))
"""


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
    assert not [name for name in names if name.startswith(("tests/", "bench/", "notebooks/"))]
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "Provides-Extra: notebook" in metadata and "Provides-Extra: mcp" in metadata
    # [notebook] is what `%load_ext webmcp_nb` needs, not the tools that run notebooks headless.
    notebook_requirements = [line for line in metadata.splitlines() if 'extra == "notebook"' in line]
    assert not [line for line in notebook_requirements if line.split()[1].startswith(("nbclient", "nbconvert"))]


@pytest.mark.browser  # the quickstart launches Chromium
def test_pip_install_into_a_fresh_jupyterlab_runs_the_quickstart(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "lab-env"
    run(sys.executable, "-m", "venv", venv, cwd=tmp_path, timeout=120)
    python = venv / "bin" / "python"
    run(python, "-m", "pip", "install", "--quiet", f"webmcp_nb[notebook] @ {wheel.as_uri()}", "jupyterlab",
        cwd=tmp_path, timeout=900)  # fmt: skip
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    assert run(venv / "bin" / "jupyter", "lab", "--version", cwd=tmp_path, timeout=120, env=env).strip()
    work = tmp_path / "my-notebooks"
    work.mkdir()
    shutil.copy(ROOT / "notebooks" / "01-quickstart.ipynb", work)
    report = json.loads(
        run(python, "-c", RUN_QUICKSTART, "01-quickstart.ipynb", cwd=work, timeout=600, env=env).splitlines()[-1]
    )
    assert report["errors"] == []
    prefix, package = report["last"].split()
    assert Path(prefix).resolve() == venv.resolve()  # the notebook ran on the new environment's kernel
    assert Path(package).resolve().is_relative_to(venv.resolve())  # and imported the installed wheel
    shutil.rmtree(venv)
