"""Images for the tests: a screenshot-like PNG with EXIF and a GPS position in it (what
a review must strip), and reading back what the K3 stub received."""

from __future__ import annotations

import base64
import io

from PIL import Image

#: EXIF tags a phone writes: the camera's make, and the GPS block's pointer.
_MAKE, _GPS_IFD = 0x010F, 0x8825


def photo_png(width: int = 3000, height: int = 1200, *, color: int = 40) -> bytes:
    """A PNG of ``width`` x ``height`` (a gradient, so it compresses) carrying EXIF with
    a camera make and a GPS latitude."""
    picture = Image.linear_gradient("L").resize((width, height)).convert("RGB")
    picture.paste((color, 120, 200), (0, 0, width // 4, height // 4))
    exif = Image.Exif()
    exif[_MAKE] = "TestCam"
    exif.get_ifd(_GPS_IFD)[2] = (48.0, 51.0, 29.0)  # GPSLatitude
    out = io.BytesIO()
    picture.save(out, "PNG", exif=exif.tobytes())
    return out.getvalue()


def decoded(uri: str) -> Image.Image:
    """The picture a data URI holds."""
    head, _, payload = uri.partition(";base64,")
    assert head in ("data:image/png", "data:image/jpeg"), head
    picture = Image.open(io.BytesIO(base64.b64decode(payload)))
    picture.load()
    return picture


def has_metadata(picture: Image.Image) -> bool:
    """Whether anything beyond pixels came along: EXIF, text chunks, a GPS block."""
    return bool(picture.getexif()) or "exif" in picture.info or "Make" in str(picture.info)
