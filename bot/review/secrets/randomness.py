"""Whether a value looks like a credential: long, of mixed characters, of high Shannon
entropy, and not a placeholder (``changeme``, ``${TOKEN}``, a UUID, ``abcdef…``)."""

from __future__ import annotations

import base64
import binascii
import functools
import math
import re
from collections.abc import Callable

_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
#: ``module.Class`` in an annotation or an import-like value, not a credential.
_DOTTED_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")

_PLACEHOLDER_WORDS = (
    "example",
    "sample",
    "dummy",
    "fake",
    "placeholder",
    "changeme",
    "change_me",
    "your",
    "xxxx",
    "****",
    "redacted",
    "test",
    "secret",
    "password",
    "token",
)


def shannon_entropy(value: str) -> float:
    if not value:
        return 0.0
    length = len(value)
    return -sum((n / length) * math.log2(n / length) for n in (value.count(c) for c in set(value)))


def _decoded(value: str) -> str:
    """``value`` decoded if it is base64 of printable text (``"bm90IG15…"``), else ``""``."""
    if len(value) % 4 or not _BASE64.fullmatch(value):
        return ""
    try:
        text = base64.b64decode(value, validate=True).decode("ascii")
    except (binascii.Error, UnicodeDecodeError):
        return ""
    return text if text.isprintable() else ""


@functools.cache
def _heuristics() -> tuple[Callable[[str], bool], ...]:
    # detect-secrets costs ~150 ms to import (it pulls in requests): only on first need,
    # so the pre-commit hook's start stays fast for changes without secret-like text.
    from detect_secrets.filters.heuristic import (
        is_potential_uuid,
        is_sequential_string,
        is_templated_secret,
    )

    return is_templated_secret, is_sequential_string, is_potential_uuid


def is_placeholder(value: str) -> bool:
    lowered = value.lower() + "\n" + _decoded(value).lower()
    is_templated_secret, is_sequential_string, is_potential_uuid = _heuristics()
    return (
        is_templated_secret(value)
        or value.startswith(("$", "%", "{{", "<"))
        or any(word in lowered for word in _PLACEHOLDER_WORDS)
        or is_sequential_string(value)
        or is_potential_uuid(value)
    )


def looks_random(value: str) -> bool:
    """A credential-like value: long enough, mixed characters, high entropy.

    The entropy floor grows with the length because a short string cannot reach a high
    entropy: 20 random base62 characters score about 4.0 bits, 40 about 4.8.
    """
    if len(value) < 20 or is_placeholder(value) or _DOTTED_NAME.fullmatch(value):
        return False
    classes = sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
        )
    )
    if classes < 2 or sum(c.isdigit() for c in value) < 2:
        return False
    floor = min(4.2, 0.85 * math.log2(len(value)))
    return shannon_entropy(value) >= floor
