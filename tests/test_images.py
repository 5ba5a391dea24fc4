"""PNG and JPEG sizes read from their headers (webmcp_nb.core.tools.images), checked against what
Pillow encodes: baseline and progressive JPEG, metadata segments before the frame, cut-short data."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from webmcp_nb.core.tools.images import image_size, mime_type


def encoded(fmt: str, size: tuple[int, int], mode: str = "RGB", **options: object) -> bytes:
    out = io.BytesIO()
    Image.new(mode, size, "white").save(out, fmt, **options)
    return out.getvalue()


@pytest.mark.parametrize(
    ("image", "mime"),
    [
        (encoded("PNG", (1280, 720)), "image/png"),
        (encoded("PNG", (3, 70_000), mode="L"), "image/png"),
        (encoded("PNG", (1, 1), mode="RGBA"), "image/png"),
        (encoded("JPEG", (1280, 720)), "image/jpeg"),
        (encoded("JPEG", (640, 4000), progressive=True), "image/jpeg"),
        (encoded("JPEG", (17, 9), exif=Image.Exif().tobytes(), icc_profile=b"\0" * 5000), "image/jpeg"),
    ],
)
def test_the_header_gives_the_size_pillow_reads(image: bytes, mime: str) -> None:
    assert mime_type(image) == mime
    with Image.open(io.BytesIO(image)) as picture:
        assert image_size(image) == picture.size


def test_fill_bytes_before_a_marker_are_skipped() -> None:
    image = encoded("JPEG", (33, 44))
    assert image_size(image[:2] + b"\xff\xff\xff" + image[2:]) == (33, 44)


def test_anything_else_has_no_size() -> None:
    png, jpeg = encoded("PNG", (10, 20)), encoded("JPEG", (10, 20))
    assert image_size(png[:20]) is None and image_size(jpeg[:12]) is None  # cut short
    assert image_size(b"\x89PNG\r\n\x1a\n but no image") is None
    assert image_size(b"\xff\xd8\xff\xd9") is None  # the end before any frame
    assert image_size(b"GIF89a\x01\x00\x01\x00") is None and mime_type(b"GIF89a") is None
    assert image_size(png[:16] + b"\0\0\0\0" + png[20:]) is None  # a zero width
