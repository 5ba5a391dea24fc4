"""Execute notebooks headless (nbclient) and export them to HTML; what `make demo` runs.

    python scripts/run_notebook.py notebooks/01-quickstart.ipynb [--out build]

Writes <out>/<name>.ipynb (executed, with outputs) and <out>/<name>.html. Exits
non-zero, naming the cell, if any cell fails.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbconvert import HTMLExporter


def run(path: Path, out: Path, timeout: int) -> Path:
    notebook = nbformat.read(path, as_version=4)
    resources = {"metadata": {"path": str(path.parent)}}
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        resources=resources,
        extra_arguments=["--IPKernelApp.log_level=ERROR"],  # no start-up warnings; cell errors still fail the run
    )
    started = time.monotonic()
    client.execute()
    out.mkdir(parents=True, exist_ok=True)
    executed = out / path.name
    nbformat.write(notebook, executed)
    html, _ = HTMLExporter().from_notebook_node(notebook)
    exported = executed.with_suffix(".html")
    exported.write_text(html, encoding="utf-8")
    print(f"done ({len(notebook.cells)} cells, {time.monotonic() - started:.1f} s): {executed}, {exported}")
    return exported


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, default=Path("build"))
    parser.add_argument("--timeout", type=int, default=300, help="seconds per cell")
    options = parser.parse_args()
    for path in options.notebooks:
        print(f"Running {path} (a kernel and a headless Chromium) ... ", end="", flush=True)
        try:
            run(path, options.out, options.timeout)
        except CellExecutionError as error:
            print("failed")
            print(f"{path}: a cell failed:\n{error}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
