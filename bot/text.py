"""Text as GitNeural handles it: bytes from git kept losslessly, text made printable, and
text put on one line for a message or a log.

Text from git is decoded as UTF-8 with ``surrogateescape``, so bytes of any other
encoding survive a round trip unchanged (:func:`encode_text` restores them).
"""

from __future__ import annotations

#: Where :func:`one_line` cuts text short.
ELLIPSIS = "…"


def decode_text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def encode_text(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def printable(text: str) -> str:
    """Text safe to send or print: undecodable bytes become U+FFFD."""
    return encode_text(text).decode("utf-8", "replace")


def one_line(text: str, limit: int | None = None) -> str:
    """``text`` with every run of whitespace one space, and at most ``limit`` characters
    (the last one an ellipsis when it was cut)."""
    flat = " ".join(text.split())
    if limit is None or len(flat) <= limit:
        return flat
    return flat[: limit - 1] + ELLIPSIS


def loggable(value: object) -> str:
    """``value`` safe for one log line: no control characters or spaces, bounded length."""
    if value is None:
        return "-"
    text = str(value)[:100]
    return "".join(c if c.isprintable() and not c.isspace() else "?" for c in text)
