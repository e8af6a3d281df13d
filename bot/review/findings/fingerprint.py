"""Stable identities for findings, so a later review can tell "already said that".

A fingerprint hashes the path, the code at the finding's anchor with whitespace
collapsed, and the normalised title. Line numbers are left out on purpose: when code only
moves (lines added above it), the fingerprint stays the same; when the code itself
changes, it differs.

Secret findings are the exception: the fingerprint is public (it goes into a hidden marker
on GitHub), and a hash of a line holding a weak password could be reversed by guessing.
Unless the secret scan set one itself, their fingerprint uses the path, the title and
the finding's rank among the secret findings with that path and title instead.
"""

from __future__ import annotations

import difflib
import hashlib
import re

from bot.text import encode_text

SECRET_SOURCE = "secret-scan"  # noqa: S105 (a source name, not a password)
_NON_WORD = re.compile(r"[\W_]+")
_SIMILAR_TITLES = 0.8


def normalise_title(title: str) -> str:
    """Lower case words only: "Off-by-one in `loop`!" -> "off by one in loop"."""
    return " ".join(_NON_WORD.sub(" ", title.lower()).split())


def normalise_code(code: str) -> str:
    return " ".join(code.split())


def similar_titles(a: str, b: str) -> bool:
    """Whether two titles say the same thing, allowing for small rewording."""
    na, nb = normalise_title(a), normalise_title(b)
    if na == nb:
        return True
    if not na or not nb:
        return False
    return difflib.SequenceMatcher(None, na, nb).ratio() >= _SIMILAR_TITLES


def _digest(*parts: str) -> str:
    data = b"\0".join(encode_text(p) for p in parts)
    return hashlib.sha256(data).hexdigest()[:20]


def fingerprint(path: str, code: str, title: str) -> str:
    """The fingerprint of a finding whose anchor holds ``code``."""
    return _digest("v1", path, normalise_code(code), normalise_title(title))


def secret_fingerprint(path: str, title: str, rank: int) -> str:
    """The fingerprint of the ``rank``-th secret finding titled ``title`` in ``path``."""
    return _digest("secret-v1", path, normalise_title(title), str(rank))
