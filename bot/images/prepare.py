"""An image's bytes made fit to send: the type sniffed from the bytes (never the name),
the picture downscaled and re-encoded so nothing of the original file but its pixels
leaves (no EXIF, no GPS position, no text chunks, no ICC profile naming a device).

The long side is capped at 2,048 pixels. Moonshot's documentation names no size for
K3's images (it bills each at a flat 1,024 tokens); 2,048 keeps a screenshot's text
legible at a retina display's half size, the cap other vision APIs use for their
high-detail mode, and bounds what one image costs a self-hosted deployment that counts
patches (:func:`bot.domain.images.image_tokens`).
"""

from __future__ import annotations

import io
import warnings
from typing import Literal

from bot.domain.images import NamedImage, PreparedImage
from bot.extras import left_out

#: The long side an image is downscaled to, at most (see the module's docstring).
MAX_SIDE = 2048
#: Pictures above this many pixels are refused undecoded (a decompression bomb).
MAX_PIXELS = 64_000_000

_SIGNATURES: tuple[tuple[bytes, int, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "png"),
    (b"\xff\xd8\xff", 0, "jpeg"),
    (b"GIF87a", 0, "gif"),
    (b"GIF89a", 0, "gif"),
    (b"WEBP", 8, "webp"),
)


def sniff(data: bytes) -> str | None:
    """``png``, ``jpeg``, ``gif`` or ``webp`` from the file's first bytes; None otherwise
    (an SVG is text, and stays in the diff)."""
    for magic, offset, kind in _SIGNATURES:
        if data[offset : offset + len(magic)] == magic:
            if kind == "webp" and data[:4] != b"RIFF":
                continue
            return kind
    return None


def pillow_missing() -> str | None:
    """Why no image can be prepared here, when Pillow (the ``images`` extra) is not
    installed: then none is fetched or read, and each is named with this reason."""
    return left_out("images", "Pillow")


def not_prepared(what: str, reason: str) -> NamedImage:
    """``what``, left out because Pillow is missing (``reason``: :func:`pillow_missing`)."""
    return NamedImage(what, reason, extra="images")


def prepare(
    data: bytes,
    label: str,
    what: str,
    max_bytes: int,
    source: Literal["description", "comment", "file"] = "description",
) -> PreparedImage | NamedImage:
    """``data`` ready to send under ``label``, or why not; ``what`` names it in the
    summary either way."""
    if len(data) > max_bytes:
        return NamedImage(what, f"larger than {_mb(max_bytes)}")
    kind = sniff(data)
    if kind is None:
        return NamedImage(what, "not a PNG, JPEG, GIF or WebP image")
    # Imported here: a review without images (the hook's usual case) never loads Pillow,
    # and the default install, which has none, reviews without images.
    try:
        from PIL import Image, ImageOps
    except ImportError:
        return not_prepared(what, pillow_missing() or "Pillow cannot be imported")

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            picture = Image.open(io.BytesIO(data), formats=[kind.upper()])
            if picture.width * picture.height > MAX_PIXELS:
                return NamedImage(what, f"over {MAX_PIXELS // 1_000_000} million pixels")
            picture.seek(0)  # a GIF or WebP animation: its first frame
            picture.load()
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombWarning) as exc:
        return NamedImage(what, f"unreadable {kind.upper()} ({type(exc).__name__})")
    # The orientation EXIF asks for is applied to the pixels before EXIF is dropped.
    shown: Image.Image = ImageOps.exif_transpose(picture)
    shown.thumbnail((MAX_SIDE, MAX_SIDE), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    if kind == "jpeg":
        shown.convert("RGB").save(out, "JPEG", quality=85)
        media = "image/jpeg"
    else:
        mode = "RGBA" if shown.mode in ("RGBA", "LA", "P", "PA") else "RGB"
        shown.convert(mode).save(out, "PNG", optimize=True)
        media = "image/png"
    return PreparedImage(
        label, media, out.getvalue(), shown.width, shown.height, name=what, source=source
    )


def _mb(size: int) -> str:
    return f"{size / 1_000_000:g} MB"
