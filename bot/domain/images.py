"""The images a review shows K3: those sent (prepared: sniffed, downscaled, stripped of
metadata) and those only named (not fetched, too many, too large, not an image).

An image's token cost is estimated from its size: a 28x28-pixel patch per token (the
grid a vision encoder such as K3's reads after merging its 14-pixel patches two by two),
and never less than 1,024, the flat rate Moonshot's API bills an image at. The estimate
counts in the review's budget instead of the data URI's length, which says nothing of
what the model reads.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any, Literal

#: What Moonshot bills one image at, whatever its size; the floor of the estimate.
IMAGE_MIN_TOKENS = 1024
#: The side of the pixel square one image token stands for.
PATCH_PIXELS = 28


def image_tokens(width: int, height: int) -> int:
    """The estimated prompt tokens of an image of ``width`` x ``height`` pixels."""
    patches = -(-width // PATCH_PIXELS) * -(-height // PATCH_PIXELS)
    return max(IMAGE_MIN_TOKENS, patches)


@dataclass(frozen=True)
class PreparedImage:
    """An image ready to send: re-encoded, so no metadata of the original survives."""

    #: Where it came from, as the prompt says: the file's path and side, or the words
    #: before it in the description (untrusted text, fenced in the prompt).
    label: str
    #: ``image/png`` or ``image/jpeg``: the encoding of ``data``.
    media_type: str
    data: bytes = field(repr=False)
    width: int
    height: int
    #: What the summary calls it: the link's host and path, or the file's path and side.
    name: str = ""
    source: Literal["description", "comment", "file"] = "description"

    @property
    def tokens(self) -> int:
        return image_tokens(self.width, self.height)

    def data_uri(self) -> str:
        return f"data:{self.media_type};base64,{base64.b64encode(self.data).decode('ascii')}"


@dataclass(frozen=True)
class NamedImage:
    """An image (or video) the change shows that was not sent, and why."""

    #: The link (its host and path, never a signature) or the file path and side.
    what: str
    reason: str
    #: The extra whose absence kept it out (``images``: Pillow is not installed), when
    #: that is the reason: the summary counts those in one line instead of naming each.
    extra: str = ""


@dataclass
class ChangeImages:
    """The images of one change; on a :class:`~bot.domain.change.Change`, their presence
    means images are on for its review (``KIMI_IMAGES`` and the settings allow them)."""

    #: From the description or a comment, in the order they appear.
    described: list[PreparedImage] = field(default_factory=list)
    #: Found there but not sent.
    named: list[NamedImage] = field(default_factory=list)
    #: Whether the images the change adds or modifies are sent too.
    files: bool = True
    #: At most this many images per review, each at most this many bytes as stored.
    max_images: int = 6
    max_bytes: int = 5_000_000


def is_image_part(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") == "image_url"


def parts_of(message: dict[str, Any]) -> list[Any]:
    content = message.get("content")
    return content if isinstance(content, list) else []


def image_part(image: PreparedImage) -> dict[str, Any]:
    """The OpenAI-style content part of ``image``."""
    return {"type": "image_url", "image_url": {"url": image.data_uri()}}


def text_size(messages: list[dict[str, Any]]) -> int:
    """The JSON size in bytes of ``messages`` without their images' data."""
    shown = [
        {**m, "content": [p for p in parts_of(m) if not is_image_part(p)]}
        if isinstance(m.get("content"), list)
        else m
        for m in messages
    ]
    return len(json.dumps(shown, ensure_ascii=False).encode())


def messages_image_tokens(messages: list[dict[str, Any]]) -> int:
    """The estimated tokens of the images in ``messages``, from the pixel size in each
    data URI's PNG or JPEG header (the only encodings a prepared image has)."""
    total = 0
    for m in messages:
        for part in parts_of(m):
            if is_image_part(part):
                total += _uri_tokens(str(part.get("image_url", {}).get("url", "")))
    return total


def _uri_tokens(uri: str) -> int:
    """Tokens of a data URI's image, from the dimensions in its PNG or JPEG header."""
    _, _, payload = uri.partition(";base64,")
    try:
        head = base64.b64decode(payload[:65_536].encode("ascii")[: 65_536 // 4 * 4])
    except ValueError:
        return IMAGE_MIN_TOKENS
    size = _png_size(head) or _jpeg_size(head)
    return image_tokens(*size) if size else IMAGE_MIN_TOKENS


def _png_size(head: bytes) -> tuple[int, int] | None:
    if head[:8] != b"\x89PNG\r\n\x1a\n" or len(head) < 24:
        return None
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def _jpeg_size(head: bytes) -> tuple[int, int] | None:
    if head[:2] != b"\xff\xd8":
        return None
    at = 2
    while at + 9 < len(head):
        if head[at] != 0xFF:
            return None
        marker = head[at + 1]
        length = int.from_bytes(head[at + 2 : at + 4], "big")
        if marker in (0xC0, 0xC1, 0xC2):  # start of frame: height, then width
            h = int.from_bytes(head[at + 5 : at + 7], "big")
            w = int.from_bytes(head[at + 7 : at + 9], "big")
            return w, h
        at += 2 + length
    return None
