"""Writing a benchmark's section into BENCHMARKS.md between its markers."""

from __future__ import annotations

import argparse
import re
from pathlib import Path


def update_section(path: Path, begin: str, end: str, section: str) -> None:
    """Replace the text between `begin` and `end` in `path` with `section` (or append it)."""
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    if begin in text:
        text = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: section, text, flags=re.S)
    else:
        text = text.rstrip() + "\n\n" + section + "\n"
    path.write_text(text)


def bench_parser(doc: str, rounds: int) -> argparse.ArgumentParser:
    """The options every benchmark takes: --rounds and --write (a Markdown file to update)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--write", type=Path, help="update this Markdown file")
    return parser


def publish(section: str, write: Path | None, begin: str, end: str) -> None:
    """Print a benchmark's section, and put it into `write` between its markers."""
    print(section)
    if write:
        update_section(write, begin, end, section)
