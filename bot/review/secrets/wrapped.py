"""Vendor tokens written in pieces or encoded, which no pattern sees whole:

* split over two lines: string concatenation (``"ghp_abc…"`` then ``"…xyz"`` on the next
  line, with or without ``+``) or a backslash line continuation;
* base64-encoded: a Kubernetes secret, a Docker ``auth`` value, a token wrapped once
  more to get past a scanner.

Both are found without scanning every position: a split is looked for only where a line
starts with a string literal (or one ends with a backslash), and base64 only where the
text holds the encoding of a token prefix (each prefix encodes to a fixed piece at each
of its three alignments, see :data:`_ENCODED`). Every span found is whole lines' worth
of the original text, so redaction stays per line.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re

from bot.review.secrets.blocks import PRIVATE_KEY, Span, digest
from bot.review.secrets.patterns import vendor_tokens

#: A line that opens with a string literal, maybe after ``+``.
_NEXT_PIECE = re.compile(r"""\n[ \t]*+(?:\+[ \t]*+)?[rbfuRBFU]?["'`]""")
#: The end of the line before it: a string literal closed, maybe ``+`` or ``\``.
_PREVIOUS_END = re.compile(r"""["'`][ \t]*+\+?[ \t]*+\\?\r?\Z""")
_BACKSLASH = re.compile(r"\\\r?\n[ \t]*+")
#: How much of each line is joined and scanned: a token is far shorter.
_REACH = 300

#: Token prefixes whose base64 encoding is looked for: the common ones only, since each
#: costs three substring searches of every text.
_PREFIXES = ("ghp_", "github_pat_", "glpat-", "sk-", "AIza", "hf_", "-----BEGIN")
_BASE64_CHARS = re.compile(r"[A-Za-z0-9+/_\-]")
_MAX_RUN = 20_000
_MIN_RUN = 24


def _stable(prefix: bytes, pad: int) -> str:
    """The characters of base64(``pad`` bytes + ``prefix`` + …) that depend on the prefix
    only: char i covers bits 6i..6i+6; the prefix holds bits 8*pad..8*(pad+len)."""
    encoded = base64.b64encode(b"\0" * pad + prefix).decode()
    first = -(-8 * pad // 6)
    last = (8 * (pad + len(prefix))) // 6
    return encoded[first:last]


@functools.cache
def _encoded() -> tuple[str, ...]:
    """The fixed pieces to look for, with ``str.find`` (one regex alternating them makes
    ``re`` try every position)."""
    pieces: set[str] = set()
    for prefix in _PREFIXES:
        for pad in range(3):
            piece = _stable(prefix.encode(), pad)
            # Standard base64 only: the URL-safe alphabet would double the searches.
            if len(piece) >= 4:
                pieces.add(piece)
    return tuple(sorted(pieces))


def _hits(text: str) -> list[int]:
    found: list[int] = []
    for piece in _encoded():
        at = text.find(piece)
        while at >= 0:
            found.append(at)
            at = text.find(piece, at + 1)
    return sorted(found)


def _join_spans(text: str, left_end: int, right_start: int) -> list[Span]:
    """Tokens that straddle the join of ``text[..left_end]`` and ``text[right_start..]``,
    each line bounded by :data:`_REACH`."""
    low = max(text.rfind("\n", 0, left_end) + 1, left_end - _REACH)
    newline = text.find("\n", right_start)
    high = min(len(text) if newline < 0 else newline, right_start + _REACH)
    joined = text[low:left_end] + text[right_start:high]
    cut = left_end - low
    spans = []
    for start, end, kind, _ in vendor_tokens(joined):
        if start < cut < end:
            spans.append(
                Span(low + start, right_start + end - cut, kind, True, digest(joined[start:end]))
            )
    return spans


def split_tokens(text: str) -> list[Span]:
    """Vendor tokens cut over two lines."""
    spans: list[Span] = []
    for piece in _NEXT_PIECE.finditer(text):
        line_start = max(text.rfind("\n", 0, piece.start()) + 1, piece.start() - 20)
        tail = _PREVIOUS_END.search(text, line_start, piece.start())
        if tail is not None:
            spans += _join_spans(text, tail.start(), piece.end())
    for cont in _BACKSLASH.finditer(text):
        spans += _join_spans(text, cont.start(), cont.end())
    return spans


def _decoded(run: str) -> str:
    body = run.rstrip("=")
    body += "=" * (-len(body) % 4)
    altchars = b"-_" if ("-" in body or "_" in body) else None
    try:
        return base64.b64decode(body, altchars=altchars, validate=True).decode("latin-1")
    except (binascii.Error, ValueError):
        return ""


def encoded_tokens(text: str) -> list[Span]:
    """Base64 runs whose decoded text holds a vendor token or a private key."""
    spans: list[Span] = []
    pos = 0
    for hit in _hits(text):
        if hit < pos:
            continue
        start = hit
        low = max(0, start - _MAX_RUN)
        while start > low and _BASE64_CHARS.match(text, start - 1):
            start -= 1
        end = hit
        while end < len(text) and end - start < _MAX_RUN and _BASE64_CHARS.match(text, end):
            end += 1
        while end < len(text) and text[end] == "=" and end - start < _MAX_RUN:
            end += 1
        pos = end
        if end - start < _MIN_RUN:
            continue
        decoded = _decoded(text[start:end])
        kinds = [kind for _, _, kind, _ in vendor_tokens(decoded)]
        if "PRIVATE KEY-----" in decoded:
            kinds.append(PRIVATE_KEY)
        if kinds:
            spans.append(Span(start, end, f"{kinds[0]} (base64)", True, digest(text[start:end])))
    return spans
