"""Writing a benchmark's section into BENCHMARKS.md between its markers."""

from __future__ import annotations

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
