"""A network waterfall as static SVG: one row per request, bars per phase, failures marked.

Standard library only, no script: the picture survives nbconvert and GitHub's viewer.
"""

from __future__ import annotations

import html
from typing import Any

from .renderer import ERROR_COLOUR

ROW = 18
LABEL = 300
BAR_AREA = 560
TOP = 28
PHASES = (  # (name, start mark, end mark, colour)
    ("connect", None, "request_start", "#9aa5b1"),
    ("wait", "request_start", "response_start", "#3fb950"),
    ("receive", "response_start", "response_end", "#2f81f7"),
)
TYPE_COLOURS = {
    "document": "#8250df",
    "script": "#bf8700",
    "stylesheet": "#1f883d",
    "image": "#0969da",
    "fetch": "#cf6b00",
    "xhr": "#cf6b00",
    "font": "#57606a",
    "media": "#57606a",
}
FAILED = ERROR_COLOUR


class Waterfall:
    """A waterfall picture that displays itself (SVG) in a notebook; `.svg` is its text."""

    def __init__(self, entries: list[dict[str, Any]]) -> None:
        self.entries = entries
        self.svg = waterfall_svg(entries)

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None, **kwargs: Any
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        return {"text/plain": f"<network waterfall: {len(self.entries)} requests>", "image/svg+xml": self.svg}, {}

    def save(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as file:
            file.write(self.svg)


def waterfall_svg(entries: list[dict[str, Any]]) -> str:
    """The SVG for network entries (as `browser_network` returns them), oldest first."""
    timed = [entry for entry in entries if (entry.get("timing") or {}).get("start")]
    base = min((entry["timing"]["start"] for entry in timed), default=0.0)
    end = max([_offset(entry, base) + _duration(entry) for entry in timed] + [1.0])
    scale = BAR_AREA / end
    width, height = LABEL + BAR_AREA + 90, TOP + ROW * len(entries) + 24
    out = [
        (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="system-ui, sans-serif" font-size="11">'
        ),
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
    ]
    out += _axis(end, scale, height)
    for row, entry in enumerate(entries):
        y = TOP + row * ROW
        if row % 2:
            out.append(f'<rect x="0" y="{y}" width="{width}" height="{ROW}" fill="#f6f8fa"/>')
        out += _label(entry, y)
        out += _bars(entry, base, scale, y)
    out += _legend(height)
    out.append("</svg>")
    return "".join(out)


def _offset(entry: dict[str, Any], base: float) -> float:
    return float(entry["timing"]["start"] - base)


def _duration(entry: dict[str, Any]) -> float:
    timing = entry["timing"]
    marks = [value for key, value in timing.items() if key != "start" and value is not None]
    return max(marks, default=0.0)


def _axis(end: float, scale: float, height: int) -> list[str]:
    step = _nice_step(end / 6)
    out = []
    tick = 0.0
    while tick <= end:
        x = LABEL + tick * scale
        out.append(f'<line x1="{x:.1f}" y1="{TOP - 4}" x2="{x:.1f}" y2="{height - 20}" stroke="#d0d7de"/>')
        out.append(f'<text x="{x:.1f}" y="{TOP - 8}" text-anchor="middle" fill="#57606a">{tick:g} ms</text>')
        tick += step
    return out


def _nice_step(raw: float) -> float:
    for step in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 60000):
        if step >= raw:
            return float(step)
    return raw


def _label(entry: dict[str, Any], y: int) -> list[str]:
    failed = entry.get("state") == "failed"
    status = str(entry.get("failure") or "failed")[:24] if failed else entry.get("status") or "…"
    url = entry.get("url", "")
    short = url.split("://", 1)[-1]
    short = short if len(short) <= 40 else short[:18] + "…" + short[-21:]
    colour = TYPE_COLOURS.get(entry.get("resource_type", ""), "#6e7781")
    text_colour = FAILED if failed or (isinstance(entry.get("status"), int) and entry["status"] >= 400) else "#1f2328"
    title = html.escape(f"{entry.get('method')} {url} {status}")
    return [
        f'<rect x="4" y="{y + 5}" width="8" height="8" rx="2" fill="{colour}"><title>{html.escape(str(entry.get("resource_type")))}</title></rect>',
        (
            f'<text x="16" y="{y + 13}" fill="{text_colour}"><title>{title}</title>'
            f"{html.escape(str(entry.get('method', '')))} {html.escape(short)} "
            f'<tspan fill="#57606a">{html.escape(str(status))}</tspan></text>'
        ),
    ]


def _bars(entry: dict[str, Any], base: float, scale: float, y: int) -> list[str]:
    timing = entry.get("timing") or {}
    if not timing.get("start"):
        if entry.get("state") == "failed":
            return [f'<text x="{LABEL + 2}" y="{y + 13}" fill="{FAILED}" font-weight="bold">✕ failed</text>']
        return [f'<text x="{LABEL + 2}" y="{y + 13}" fill="#57606a">pending</text>']
    start_x = LABEL + _offset(entry, base) * scale
    out = []
    for name, first, last, colour in PHASES:
        begin = 0.0 if first is None else timing.get(first)
        finish = timing.get(last)
        if begin is None or finish is None or finish <= begin:
            continue
        x, w = start_x + begin * scale, max(1.0, (finish - begin) * scale)
        out.append(
            f'<rect x="{x:.1f}" y="{y + 4}" width="{w:.1f}" height="{ROW - 8}" fill="{colour}">'
            f"<title>{name}: {finish - begin:.1f} ms</title></rect>"
        )
    total = _duration(entry)
    end_x = start_x + total * scale
    if entry.get("state") == "failed":
        out.append(f'<text x="{end_x + 3:.1f}" y="{y + 13}" fill="{FAILED}" font-weight="bold">✕ failed</text>')
    else:
        out.append(f'<text x="{end_x + 3:.1f}" y="{y + 13}" fill="#57606a">{total:.0f} ms</text>')
    return out


def _legend(height: int) -> list[str]:
    out, x = [], LABEL
    for name, _first, _last, colour in PHASES:
        out.append(f'<rect x="{x}" y="{height - 14}" width="10" height="8" fill="{colour}"/>')
        out.append(f'<text x="{x + 14}" y="{height - 7}" fill="#57606a">{name}</text>')
        x += 80
    out.append(f'<text x="{x}" y="{height - 7}" fill="{FAILED}">✕ failed</text>')
    return out
