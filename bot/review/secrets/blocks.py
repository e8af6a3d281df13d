"""Secrets that span lines: private key blocks, and runs of bare base64 lines (the middle
of a key whose BEGIN or END line lies outside the text scanned: a hunk, a window).

Public material is not secret and reviewers need it as it is: a certificate
(``BEGIN CERTIFICATE``), a public key (``BEGIN PUBLIC KEY``, an SSH ``*.pub`` line) or a
PGP public key block is never redacted, so a run of base64 lines next to the BEGIN or
END line of such a block is left alone.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

PRIVATE_KEY = "private key"
#: Runs of bare base64 lines with no BEGIN/END in sight: the middle of a key, or a
#: certificate. Redacted (the model gains nothing from them) but never reported.
KEY_MATERIAL = "key material"

_BEGIN = re.compile(r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----")
_END = re.compile(r"-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----")
# A line of a PEM/OpenSSH body as it appears in files and source: base64, optional
# RFC 1421 headers, wrapped in quotes, string escapes, commas or concatenation.
_BODY_LINE = re.compile(
    r"""[ \t"'`+,;]*(?:[A-Za-z0-9+/=]{16,}|(?:Proc-Type|DEK-Info|Comment):[^\n]*|)"""
    r"""(?:\\n)?[ \t"'`+,;\\]*(?:\r?\n|\Z)"""
)
# Anchored on the newline, not on ``^``: ``re`` finds a literal fast, a class slowly.
_BARE_RUN = re.compile(
    r"""(?:\n[ \t"'`]*[A-Za-z0-9+/]{60,76}={0,2}(?:\\n)?[ \t"'`+,;]*(?=\r?\n|$)){3,}"""
)
_BARE_LINE = re.compile(r"""\n[ \t"'`]*[A-Za-z0-9+/]{60}""")
BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{40,}")
_MAX_KEY_CHARS = 20_000


#: BEGIN/END lines of public PEM blocks: certificates, public keys, CRLs, requests.
_PUBLIC = (
    r"(?:TRUSTED |X509 )?CERTIFICATE(?: REQUEST)?|NEW CERTIFICATE REQUEST|X509 CRL"
    r"|(?:RSA |EC |SSH2 )?PUBLIC KEY|PGP PUBLIC KEY BLOCK|PGP SIGNATURE|PKCS7|CMS"
)
_PUBLIC_BEGIN = re.compile(rf"-----BEGIN (?:{_PUBLIC})-----")
_PUBLIC_END = re.compile(rf"-----END (?:{_PUBLIC})-----")
#: How far a public block's marker may be from a run of its body lines: the short last
#: line of a body, and a quote or two of the source it sits in.
_MARKER_REACH = 160


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    kind: str
    report: bool
    #: Short hash of the secret, for stable fingerprints; never the secret.
    digest: str


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def key_blocks(text: str) -> list[Span]:
    spans: list[Span] = []
    paired_ends: set[int] = set()
    begin = _BEGIN.search(text)
    while begin is not None:
        following = _BEGIN.search(text, begin.end())
        # The END of this key comes before the next BEGIN (bounding the search keeps a
        # text of many markers linear).
        limit = min(begin.end() + _MAX_KEY_CHARS, following.start() if following else len(text))
        end = _END.search(text, begin.end(), limit)
        if end is not None:
            stop = end.end()
            paired_ends.add(end.start())
        else:
            # Truncated (a window or hunk that ends inside the key): the body lines after.
            nl = text.find("\n", begin.end())
            stop = len(text) if nl < 0 else nl + 1
            while nl >= 0 and (line := _BODY_LINE.match(text, stop)) and line.end() > stop:
                stop = line.end()
        body = text[begin.end() : stop]
        if BASE64_RUN.search(body):
            # A marker without base64 after it is code that parses PEM, not a key.
            spans.append(Span(begin.start(), stop, PRIVATE_KEY, True, digest(body)))
        while following is not None and following.start() < stop:
            following = _BEGIN.search(text, following.end())
        begin = following
    # An END whose BEGIN lies before the scanned text: the key lines just above it.
    for end in _END.finditer(text):
        if end.start() in paired_ends:
            continue
        start = cursor = text.rfind("\n", 0, end.start()) + 1
        while cursor > 0:
            prev = text.rfind("\n", 0, cursor - 1) + 1
            if _BODY_LINE.fullmatch(text, prev, cursor) is None:
                break
            start = cursor = prev
        if BASE64_RUN.search(text, start, end.start()):
            secret = text[start : end.end()]
            spans.append(Span(start, end.end(), PRIVATE_KEY, True, digest(secret)))
    return spans


def bare_runs(text: str) -> list[Span]:
    # Prefixing "\n" lets the first line start a run; offsets shift back by one. The
    # run regex is slow to scan with, so it only runs where a long base64 line starts.
    shifted = "\n" + text
    spans: list[Span] = []
    pos = 0
    while (line := _BARE_LINE.search(shifted, pos)) is not None:
        run = _BARE_RUN.match(shifted, line.start())
        if run is None:
            pos = line.end()
            continue
        if not _public(shifted, run.start(), run.end()):
            spans.append(Span(run.start(), run.end() - 1, KEY_MATERIAL, False, ""))
        pos = run.end()
    return spans


def _public(text: str, start: int, end: int) -> bool:
    """Whether the base64 run ``start..end`` is the body of a public block: the nearest
    marker above it begins one, or the nearest below ends one."""
    low = max(0, start - _MARKER_REACH)
    above = max(text.rfind("-----BEGIN ", low, start), text.rfind("-----END ", low, start))
    if above >= 0 and _PUBLIC_BEGIN.match(text, above):
        return True
    high = end + _MARKER_REACH
    below = [i for i in (text.find("-----BEGIN ", end, high), text.find("-----END ", end, high))]
    first = min((i for i in below if i >= 0), default=-1)
    return first >= 0 and _PUBLIC_END.match(text, first) is not None
