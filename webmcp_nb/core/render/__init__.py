"""Rendering: the one renderer of results (text, HTML, MIME bundles) and the network waterfall.

Envelopes display through this package (`Envelope._repr_mimebundle_`, `str`, `plot`); it imports
them, never the other way round at import time.
"""

from .renderer import mimebundle, render_html, render_text
from .waterfall import Waterfall

__all__ = ["Waterfall", "mimebundle", "render_html", "render_text"]
