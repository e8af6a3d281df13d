"""The secret formats GitNeural redacts, and which of them it reports.

Precision matters, but a secret sent to the model cannot be taken back: every report is a
``critical`` finding, and a reviewer who sees false alarms learns to ignore them. So:

* Formats with a vendor prefix (:mod:`bot.review.secrets.vendors`: GitHub, GitLab, Slack,
  OpenAI/Anthropic/Moonshot ``sk-`` keys, Google, Hugging Face, Twilio, npm, Stripe, Azure
  client secrets, JSON web tokens, …) and AWS key ids are always redacted and reported;
  the prefix makes a false positive very unlikely. GitLab (other kinds), Stripe (live),
  SendGrid, Square, PyPI and Azure storage keys use the patterns ``detect-secrets``
  maintains, imported only for text holding one of their prefixes.
* A value assigned to a secret-sounding name (``api_key = "…"``, ``DB_PASS=…``,
  ``pass: …``, ``\\"token\\": \\"…\\"``) is reported when it looks like a credential:
  for a password, any non-placeholder of 8 or more mixed characters; for a key, token,
  secret, credential or auth value, a random-looking one (length, character mix,
  Shannon entropy) or a long random hex string. Any other value given to such a name is
  redacted without a report unless it is evidently a placeholder or (unquoted) a name;
  XML string resources and ``name``/``value`` attributes named like secrets likewise.
  Public keys are not secret.
  We use no free-floating high-entropy detector: lock-file hashes, UUIDs and base64 test
  data would drown real findings.
* A password inside a URL or DSN is always redacted but reported only when it looks
  random and the host is not a local or documentation host (``postgres:postgres@localhost``
  is everywhere in test configs).

Private key blocks span lines, so ``bot.review.secrets.blocks`` finds them; tokens split
over lines or base64-encoded are found by ``bot.review.secrets.wrapped``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from bot.review.secrets.randomness import is_placeholder, looks_random, shannon_entropy
from bot.review.secrets.vendors import find_tokens

#: (start, end, kind, reportable) of one secret in a text.
Found = tuple[int, int, str, bool]


@dataclass(frozen=True)
class SecretPattern:
    """One format.

    Regexes start with a literal where they can: ``re`` then skips ahead with a fast
    substring search, which keeps a scan of a large diff well under a second. Checks
    that would need a leading look-behind are done in ``classify`` instead.
    """

    kind: str
    regex: re.Pattern[str]
    #: The group holding the secret (0: the whole match); only that span is redacted.
    group: int = 0
    #: The kind of a match, or None when it is not a secret after all.
    classify: Callable[[re.Match[str]], str | None] | None = None
    #: Whether a match is certain enough to be reported as a finding.
    report: Callable[[re.Match[str]], bool] | None = None

    def find(self, text: str) -> Iterator[Found]:
        for match in self.regex.finditer(text):
            if not match.group(self.group):
                continue
            kind = self.kind if self.classify is None else self.classify(match)
            if kind is None:
                continue
            report = self.report(match) if self.report is not None else True
            yield (*match.span(self.group), kind, report)


class VendorTokens:
    """Every prefixed vendor token, one scan (see :mod:`bot.review.secrets.vendors`)."""

    kind = "vendor token"

    def find(self, text: str) -> Iterator[Found]:
        for start, end, kind in find_tokens(text):
            yield start, end, kind, True


#: The last word before an assignment names a secret: ``pass``, ``passwd``, ``password``,
#: ``pwd``, ``secret``, ``token``, ``key``, ``credential(s)``, ``auth``, with prefixes
#: (``DB_PASS``, ``SIGNING_KEY``) and short suffixes (``secret_key_base``, ``token_v2``),
#: then an optional closing quote (escaped, in JSON inside a string) or bracket.
_SECRET_NAME = re.compile(
    r"(pass(?:wd|word|phrase)?|pwd|secret|token|key|credentials?|auth)"
    r"""[a-z0-9]*(?:[_.\-][a-z0-9]+){0,2}[\]"'`\\]*[ \t]*:?$"""
)
#: The same words anywhere in an XML resource's name (``com.example.API_KEY``).
_SECRET_NAME_XML = re.compile(r"pass(?:wd|word|phrase)?|pwd|secret|token|key|credential|auth")
_PASSWORD_WORDS = ("pass", "pwd")
#: Names that say the value is public or not a credential at all.
_NOT_SECRET_NAME = re.compile(
    r"public|pub_?key|(?:key|token)_?(?:id|name|type|file|path|size|len|length|count|url|"
    r"uri|endpoint|field|prefix|format|header|param|env|var|column|attr)s?\b|passthrough|bypass|compass|keyboard|monkey|turkey"
    # Words that hold a secret's name but name something else (``# Author:``,
    # ``KEYWORD_ONLY``, ``auth_header``, ``key_separator``, ``keylog_filename``).
    r"|author|keyword|header|hdr|separator|encoding|filename"
)
#: An SSH public key blob (``ssh-rsa``, ``ssh-ed25519``, ``ecdsa-…``) without its prefix.
_SSH_PUBLIC_BLOB = ("AAAAB3NzaC1", "AAAAC3NzaC1", "AAAAE2VjZHNh")
_AWS_SECRET_NAME = re.compile(
    r"""aws[\w.\-]*secret[_.\-]?(?:access[_.\-]?)?key[\]"'`\\]*[ \t]*:?$"""
)
# An assignment (`=`, `:=`, `:`, `=>`) of a value, quoted (also with escaped quotes) or
# not; what may follow the value is checked in _assignment. "=", "&" and "?" end a value
# (base64 padding aside): a URL's query string holds one assignment per parameter.
_ASSIGNED_VALUE = re.compile(
    r"""(?:=>?|:)[ \t]*+(?:b?\\*["'`])?([A-Za-z0-9+/_\-.~!@#%^*$]{8,}+={0,2})"""
)
_VALUE_END = frozenset("\"'` \t\r\n,;)}]\\&")
#: An unquoted name as a value: SCREAMING_CASE, snake_case or a call-free identifier.
_REFERENCE = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
_DOTTED_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_HEX = re.compile(r"[0-9a-fA-F]{32,}")
#: Digits and dots only: a number, a version, an OID (``'1.3.6.1.5.5.7.3.1'``).
_NUMERAL = re.compile(r"[0-9]+(?:\.[0-9]+)*")
_ENV_NAME = re.compile(r"[A-Z][A-Z_]*[A-Z]")
_MODULE_PATH = re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*){2,}")
_IDENTIFIER_ONLY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CLASS_NAME = re.compile(r"[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+")
#: After a bare word: the expression goes on (``, x``, ``+ y``, ``| z``, a call), or
#: words follow (a sentence: ``pwd: expected bytes``).
_BUILT_ON = re.compile(r"[\"'`][ \t]*[+%]")
_GOES_ON = re.compile(r"[ \t]*[,+|(\[]|[ \t]+[A-Za-z]")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[A-Za-z_][\w.]*\(?")
_LOCAL_HOST = re.compile(
    r"@(?:localhost|127\.|0\.0\.0\.0|\[::1\]|[\w.-]*example\.(?:com|org|net)|host\b|[\w-]+:\d)",
    re.IGNORECASE,
)


def _aws_key_id(match: re.Match[str]) -> str | None:
    start = match.start()
    if start and (match.string[start - 1].isupper() or match.string[start - 1].isdigit()):
        return None
    # AWS documents AKIAIOSFODNN7EXAMPLE; it is in countless tests and READMEs.
    return "AWS access key" if "EXAMPLE" not in match.group() else None


def _name_before(match: re.Match[str]) -> str:
    """Up to 80 characters left of the assignment, on its line, lowercased."""
    start = match.start()
    line_start = match.string.rfind("\n", max(0, start - 80), start) + 1
    return match.string[max(line_start, start - 80) : start].lower()


def _password_like(value: str) -> bool:
    """A password: 8+ characters, not a placeholder, not a word or an identifier."""
    if is_placeholder(value) or (
        _IDENTIFIER.fullmatch(value) and not any(c.isdigit() for c in value)
    ):
        return False
    classes = sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() for c in value),
        )
    )
    return classes >= 3 or (classes == 2 and len(value) >= 12 and shannon_entropy(value) >= 3.0)


def _random_hex(value: str) -> bool:
    """A key written in hex (``SIGNING_KEY = "9f…"``): 32+ digits of high entropy."""
    if not _HEX.fullmatch(value) or is_placeholder(value):
        return False
    return shannon_entropy(value) >= 3.3 and sum(c.isdigit() for c in value) >= 4


def _assignment(match: re.Match[str]) -> str | None:
    value = match.group(1)
    after = match.string[match.end(1) : match.end(1) + 1]
    if len(value) > 200 or (after and after not in _VALUE_END):
        return None
    # The name check is cheaper than looks_random and rejects almost every candidate.
    name = _name_before(match)
    if len(value) == 40 and _AWS_SECRET_NAME.search(name):
        return "AWS secret key" if "EXAMPLE" not in value and looks_random(value) else None
    said = _SECRET_NAME.search(name)
    if said is None or _NOT_SECRET_NAME.search(name, max(0, said.start() - 12)):
        return None
    if value.startswith(_SSH_PUBLIC_BLOB):
        return None
    if said.group(1).startswith(_PASSWORD_WORDS) and _password_like(value):
        return "password"
    if looks_random(value) or _random_hex(value):
        return "hard-coded secret"
    # Any other value given to a secret's name is redacted (not reported): it may be a
    # real secret of few digits, and the model needs no credential to review the code.
    return None if _stand_in(match, value) else _UNSURE


def _stand_in(match: re.Match[str], value: str) -> bool:
    """Whether an assigned value is evidently not a secret: a placeholder, a number, a
    version or an OID, or (unquoted) code: a reference to a name (``token = self.token``,
    ``api_key = API_KEY_DEFAULT``, ``skipkeys=skipkeys``), or an expression that goes on
    (``key = filename, lineno``). Found on the standard library, which holds no secret."""
    if is_placeholder(value) or value.strip("xX*.-_") == "" or _NUMERAL.fullmatch(value):
        return True
    quoted = match.start(1) > 0 and match.string[match.start(1) - 1] in "\"'`"
    if quoted:
        # An environment variable's name or a dotted module path as a string, or a string
        # built on (``'prefix.' + name``, ``"VS%d" % version``).
        built = _BUILT_ON.match(match.string, match.end(1)) is not None
        return built or bool(_ENV_NAME.fullmatch(value) or _MODULE_PATH.fullmatch(value))
    if _DOTTED_NAME.fullmatch(value) or _REFERENCE.fullmatch(value):
        return True
    if not _IDENTIFIER_ONLY.fullmatch(value):
        return False
    name = _name_before(match).rstrip(" \t:")
    last = re.split(r"[^a-z0-9]+", name.strip("_]\"'`"))[-1] if name else ""
    goes_on = _GOES_ON.match(match.string, match.end(1)) is not None
    # In code (an attribute, a subscript or the name itself given back) a bare word is a
    # name; in a settings file it is a value, and stays redacted.
    code = "." in name or "[" in name or value.lower() == last
    return code or goes_on or value.startswith("_") or bool(_CLASS_NAME.fullmatch(value))


#: The kind of a value redacted but not reported (too unsure for a finding).
_UNSURE = "value of a secret-named setting"


def _unsure_not_reported(match: re.Match[str]) -> bool:
    return _assignment(match) != _UNSURE


def _xml_secret(match: re.Match[str]) -> str | None:
    """A string resource or ``name``/``value`` pair named like a secret (Android's
    ``<string name="api_secret">…</string>``, ``<meta-data android:name="API_KEY"
    android:value="…"/>``)."""
    name = match.group("name").lower()
    said = _SECRET_NAME_XML.search(name)
    if said is None or _NOT_SECRET_NAME.search(name):
        return None
    value = match.group("value")
    if is_placeholder(value) or value.startswith("@") or value.strip("xX*.-_ ") == "":
        return None
    return "hard-coded secret" if looks_random(value) else _UNSURE


def _xml_reportable(match: re.Match[str]) -> bool:
    return _xml_secret(match) != _UNSURE


def _url_password(match: re.Match[str]) -> str | None:
    value = match.group(1)
    return None if is_placeholder(value) or value.lower() in {"pass", "pwd"} else "password in URL"


def _url_password_reportable(match: re.Match[str]) -> bool:
    value = match.group(1)
    random = looks_random(value) or (len(value) >= 8 and _password_like(value))
    return random and not _LOCAL_HOST.match(match.string, match.end(1))


def _ours() -> list[SecretPattern | VendorTokens]:
    return [
        VendorTokens(),
        SecretPattern(
            "AWS access key",
            re.compile(r"A(?:KIA|SIA|BIA|CCA|3T[A-Z0-9])[A-Z0-9]{16}(?![A-Z0-9])"),
            classify=_aws_key_id,
        ),
        SecretPattern(
            "Slack webhook",
            re.compile(r"https://hooks\.slack\.com/(?:services|workflows)/T[A-Za-z0-9_/]{20,}+"),
        ),
        SecretPattern(
            "password in URL",
            re.compile(r"://[^\s:/@?#'\"]*+:([^\s:/@?#'\"{}$%<>]{3,}+)@"),
            group=1,
            classify=_url_password,
            report=_url_password_reportable,
        ),
        SecretPattern(
            "npm token",
            re.compile(r":_authToken=[ \t]*+(?:npm_[A-Za-z0-9]{36}|[A-Fa-f0-9\-]{36})(?![\w\-])"),
        ),
        # gitleaks' bounds (50 to 1,000 characters after the prefix); detect-secrets
        # wants 70 or more.
        SecretPattern(
            "PyPI token",
            re.compile(r"pypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[A-Za-z0-9\-_]{50,1000}+"),
        ),
        # One scan for every `name = value`: the name decides the kind.
        SecretPattern(
            "hard-coded secret",
            _ASSIGNED_VALUE,
            group=1,
            classify=_assignment,
            report=_unsure_not_reported,
        ),
        SecretPattern(
            "hard-coded secret",
            re.compile(
                r"""<(?P<tag>string|item|value|entry)\b[^<>]{0,200}?\bname[ \t]*=[ \t]*"""
                r"""["'](?P<name>[^"'<>]{1,100})["'][^<>]{0,200}>[ \t]*+"""
                r"(?P<value>[^<>\s][^<>\n]{0,199}?)[ \t]*</(?P=tag)>"
            ),
            group=3,
            classify=_xml_secret,
            report=_xml_reportable,
        ),
        SecretPattern(
            "hard-coded secret",
            re.compile(
                r"""name[ \t]*=[ \t]*["'](?P<name>[^"'<>]{1,100})["'][ \t\r\n]{1,40}"""
                r"""(?:[\w:.-]{1,40}:)?value[ \t]*=[ \t]*["'](?P<value>[^"'<>\n]{1,200})["']"""
            ),
            group=2,
            classify=_xml_secret,
            report=_xml_reportable,
        ),
    ]


def _from_detect_secrets() -> list[SecretPattern]:
    """Vendor formats whose patterns detect-secrets maintains."""
    from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
    from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
    from detect_secrets.plugins.pypi_token import PypiTokenDetector
    from detect_secrets.plugins.sendgrid import SendGridDetector
    from detect_secrets.plugins.square_oauth import SquareOAuthDetector
    from detect_secrets.plugins.stripe import StripeDetector

    found: list[SecretPattern] = []
    plugins: list[tuple[str, Any]] = [
        ("GitLab token", GitLabTokenDetector),
        ("Stripe key", StripeDetector),
        ("SendGrid key", SendGridDetector),
        ("Square OAuth secret", SquareOAuthDetector),
        ("PyPI token", PypiTokenDetector),
        ("Azure storage key", AzureStorageKeyDetector),
    ]
    for kind, plugin in plugins:
        for regex in plugin.denylist:
            # The whole match: the groups of these patterns are not always the secret
            # (GitLab's captures only the "glpat" prefix).
            found.append(SecretPattern(kind, regex))
    return found


Finder = SecretPattern | VendorTokens
OWN_PATTERNS: tuple[Finder, ...] = tuple(_ours())

#: Every prefix the detect-secrets patterns below start with: text without one cannot
#: match them, so the library is imported only for text that might.
_VENDOR_TRIGGER = re.compile(r"gl[a-z]{1,6}-|GR1348941|pypi-|SG\.|sq0csp-|[rs]k_live_|AccountKey=")


@functools.cache
def _vendor_patterns() -> tuple[SecretPattern, ...]:
    return tuple(_from_detect_secrets())


def patterns_for(text: str) -> tuple[Finder, ...]:
    """The patterns worth running on ``text``."""
    if _VENDOR_TRIGGER.search(text):
        return OWN_PATTERNS + _vendor_patterns()
    return OWN_PATTERNS


def vendor_tokens(text: str) -> Iterator[Found]:
    """Only the prefixed vendor tokens in ``text`` (for decoded or re-joined text)."""
    yield from VendorTokens().find(text)
