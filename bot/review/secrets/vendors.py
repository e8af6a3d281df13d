"""Tokens whose format names their vendor: a fixed prefix and a body of known shape.

The shapes follow gitleaks' and detect-secrets' rule families (see ``patterns`` for the
ones detect-secrets maintains and we take from it as they are). Each vendor names the
literal prefixes its tokens start with; the scan looks for those with ``str.find`` (a
fast substring search in C) and runs the vendor's pattern only where one occurs. One
regular expression alternating all vendors, or a pattern that does not start with a
literal, makes ``re`` try every position: ten times slower on real code.

Bodies are possessive (``{36,}+``) and the checks after a body (its length, the
character after it, whether the character before it continues a word) live in
:func:`classify`: a failed match never backtracks through a long run, so a scan stays
linear even on hostile input such as "sk-sk-sk-…".
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Vendor:
    kind: str
    #: What every token starts with (the Azure secret: what follows its first 4 chars).
    prefixes: tuple[str, ...]
    #: The token, from its prefix on; possessive quantifiers only.
    regex: str
    max_len: int = 300
    #: Characters that may not follow the token (it would be part of a longer word).
    bad_after: str = "_-"
    #: Characters of the token's body to the left of the literal it is found by.
    left: int = 0
    #: An extra test of the whole token (its characters look random, say).
    check: Callable[[str], bool] | None = None


def _mixed(token: str) -> bool:
    """Upper and lower case letters and some digits: a random body, not a word."""
    return (
        any(c.isupper() for c in token)
        and any(c.islower() for c in token)
        and sum(c.isdigit() for c in token) >= 2
    )


def _hex_mixed(token: str) -> bool:
    body = token[2:]
    return sum(c.isdigit() for c in body) >= 4 and sum(c.isalpha() for c in body) >= 4


def _sk_key(token: str) -> bool:
    # OpenAI, Anthropic (sk-ant-), Moonshot and DeepSeek keys all start with "sk-"; prose
    # and CSS class names do too, so the body must look random.
    return len(token) >= 35 and _mixed(token[3:])


#: What may not follow a token of fixed length: it would be part of a longer word.
_WORD = string.ascii_letters + string.digits + "_-"
_AZURE_LEFT = re.compile(r"[A-Za-z0-9_~.]{3}\d")

_W = _WORD

VENDORS: tuple[Vendor, ...] = (
    Vendor(
        "GitHub token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        r"gh[pousr]_[A-Za-z0-9]{36,}+|github_pat_[A-Za-z0-9_]{40,}+",
        255,
    ),
    Vendor("GitLab token", ("glpat-",), r"glpat-[A-Za-z0-9_\-]{20,}+", 80, bad_after=""),
    Vendor(
        "Slack token",
        ("xox", "xapp-"),
        r"xox[abposre]-[A-Za-z0-9\-]{10,}+|xapp-\d-[A-Za-z0-9\-]{20,}+",
        260,
        "_",
    ),
    Vendor("API key", ("sk-",), r"sk-[A-Za-z0-9_\-]{32,}+", 220, bad_after="", check=_sk_key),
    Vendor("Google API key", ("AIza",), r"AIza[0-9A-Za-z_\-]{35}+", 39, _W),
    Vendor("Google OAuth secret", ("GOCSPX-",), r"GOCSPX-[A-Za-z0-9_\-]{28}+", 35, _W),
    Vendor(
        "Hugging Face token",
        ("hf_", "api_org_"),
        r"hf_[A-Za-z0-9]{34,}+|api_org_[A-Za-z0-9]{34}+",
        60,
        check=_mixed,
    ),
    Vendor("Twilio key", ("AC", "SK"), r"(?:AC|SK)[0-9a-f]{32}+", 34, _W, check=_hex_mixed),
    Vendor("npm token", ("npm_",), r"npm_[A-Za-z0-9]{36}+", 40, _W),
    Vendor(
        "Stripe key",
        ("sk_", "rk_"),
        r"[rs]k_(?:live|test|prod)_[A-Za-z0-9]{20,}+",
        120,
        check=_mixed,
    ),
    Vendor(
        "Shopify token",
        ("shp",),
        r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}+",
        38,
        _W,
    ),
    Vendor(
        "DigitalOcean token",
        ("dop_v1_", "doo_v1_", "dor_v1_"),
        r"do[opr]_v1_[a-f0-9]{64}+",
        71,
        _W,
    ),
    Vendor("Postman key", ("PMAK-",), r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}+", 64, _W),
    Vendor(
        "Grafana token",
        ("glsa_", "glc_"),
        r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}+|glc_[A-Za-z0-9+/]{32,}+",
        400,
    ),
    Vendor("Databricks token", ("dapi",), r"dapi[a-f0-9]{32}+(?:-\d)?+", 38, _W, check=_hex_mixed),
    # Azure AD client secrets: three characters and a digit, then "Q~", then 31-34.
    Vendor("Azure client secret", ("Q~",), r"Q~[A-Za-z0-9_~.\-]{31,34}+", 40, _W, left=4),
    Vendor(
        "JSON web token",
        ("eyJ",),
        r"eyJ[A-Za-z0-9_\-]{10,}+\.eyJ[A-Za-z0-9_\-]{10,}+\.[A-Za-z0-9_\-]{16,}+",
        4000,
        bad_after=".",
    ),
)

_COMPILED = tuple(re.compile(v.regex) for v in VENDORS)
#: A token that follows one of these continues a longer word ("-" may separate words in
#: a file name: ``deploy-ghp_…``).
_TOKEN_CHAR = re.compile(r"[A-Za-z0-9_]")


def find_tokens(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, kind) of every vendor token in ``text``."""
    for vendor, regex in zip(VENDORS, _COMPILED, strict=True):
        for prefix in vendor.prefixes:
            at = text.find(prefix)
            while at >= 0:
                match = regex.match(text, at)
                found = _token(vendor, match) if match is not None else None
                if found is not None:
                    yield found
                # After a match, rejected or not, the next token starts past its body:
                # "sk-sk-sk-…" is one long run, scanned once, not once per prefix.
                at = text.find(prefix, match.end() if match is not None else at + 1)


def _token(vendor: Vendor, match: re.Match[str]) -> tuple[int, int, str] | None:
    """(start, end, kind) of a vendor pattern's match, or None if it is no token."""
    text = match.string
    start, end = match.span()
    token = match.group()
    after = text[end : end + 1]
    if len(token) > vendor.max_len or (after and after in vendor.bad_after):
        return None
    if vendor.left:
        start -= vendor.left
        if start < 0 or not _AZURE_LEFT.fullmatch(text, start, start + vendor.left):
            return None
        token = text[start:end]
    if start and _TOKEN_CHAR.match(text, start - 1):
        return None
    if vendor.check is not None and not vendor.check(token):
        return None
    return start, end, vendor.kind
