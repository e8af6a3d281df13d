"""``X-Hub-Signature-256``: HMAC-SHA256 of the raw body, compared in constant time."""

from __future__ import annotations

import hashlib
import hmac

PREFIX = "sha256="


def sign(secret: str | bytes, body: bytes) -> str:
    """The header value GitHub sends for ``body``: ``sha256=<hex>``."""
    key = secret.encode() if isinstance(secret, str) else secret
    return PREFIX + hmac.new(key, body, hashlib.sha256).hexdigest()


def verify(secret: str | bytes, body: bytes, header: str | None) -> bool:
    """Whether ``header`` is the signature of ``body``; missing or malformed is ``False``."""
    if not header:
        return False
    # Compare bytes: compare_digest refuses non-ASCII str, and a header is attacker input.
    expected = sign(secret, body).encode()
    return hmac.compare_digest(expected, header.strip().encode("utf-8", "replace"))
