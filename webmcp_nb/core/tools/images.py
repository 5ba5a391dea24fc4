"""PNG and JPEG sizes read from their headers: no image library needed (Pillow only scales down)."""

from __future__ import annotations

import struct

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
JPEG_MAGIC = b"\xff\xd8\xff"
MIME_TYPES = {PNG_MAGIC: "image/png", JPEG_MAGIC: "image/jpeg"}
# The JPEG markers that start a frame (SOF0 to SOF15 less DHT, JPG and DAC): its height and width follow.
_FRAME = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
# Markers without a length: TEM and the restart markers.
_STANDALONE = frozenset({0x01, *range(0xD0, 0xD8)})


def mime_type(image: bytes) -> str | None:
    """image/png or image/jpeg by the magic bytes, else None."""
    return next((mime for magic, mime in MIME_TYPES.items() if image.startswith(magic)), None)


def image_size(image: bytes) -> tuple[int, int] | None:
    """(width, height) of a PNG or JPEG from its header; None for anything else or a header cut short."""
    size: tuple[int, int] | None = None
    if image.startswith(PNG_MAGIC) and len(image) >= 24 and image[12:16] == b"IHDR":
        width, height = struct.unpack(">II", image[16:24])
        size = (width, height)
    elif image.startswith(JPEG_MAGIC):
        size = _jpeg_size(image)
    return size if size and size[0] and size[1] else None


def _jpeg_size(image: bytes) -> tuple[int, int] | None:
    """Walk the segments up to the first frame header."""
    at = 2
    while at + 4 <= len(image):
        if image[at] != 0xFF:
            return None
        marker = image[at + 1]
        if marker == 0xFF:  # a fill byte before the marker
            at += 1
        elif marker in _STANDALONE:
            at += 2
        elif marker in _FRAME:
            if at + 9 > len(image):
                return None
            height, width = struct.unpack(">HH", image[at + 5 : at + 9])
            return width, height
        elif marker in (0xD9, 0xDA):  # the end, or a scan, before any frame
            return None
        else:
            at += 2 + struct.unpack(">H", image[at + 2 : at + 4])[0]
    return None
