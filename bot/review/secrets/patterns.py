"""The secret formats GitNeural redacts, and which of them it reports.

Precision matters more than recall here: every report is a ``critical`` finding on a
pull request, and a reviewer who sees one false alarm learns to ignore the next. So:

* Formats with a vendor prefix (GitHub, AWS key ids, Slack, GitLab, Stripe, …) are
  always redacted and reported; the prefix makes a false positive very unlikely.
  GitLab, Stripe, SendGrid, Square, PyPI and Azure storage keys use the patterns
  ``detect-secrets`` maintains. GitHub, AWS, Slack, npm and ``sk-`` keys (OpenAI,
  Moonshot) use our own: detect-secrets runs its patterns line by line, and some of them
  backtrack quadratically on a long line, while we scan whole texts (a minified file is
  one long line). Discord, Telegram, Mailchimp, Twilio and Artifactory patterns are left
  out: they have no distinctive prefix and matched ordinary data in our measurements.
* A value assigned to a secret-sounding name (``api_key = "…"``) is reported only when
  it looks random (length, character mix, Shannon entropy) and is not a placeholder.
  We use no free-floating high-entropy detector: lock-file hashes, UUIDs and base64 test
  data would drown real findings.
* A password inside a URL is always redacted but reported only when it looks random
  and the host is not a local or documentation host (``postgres:postgres@localhost``
  is everywhere in test configs).
* JSON Web Tokens are not matched: example tokens fill test suites and documentation.

Private key blocks span lines, so ``bot.review.secrets.redaction`` finds them itself.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.review.secrets.randomness import is_placeholder, looks_random


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

    def kind_of(self, match: re.Match[str]) -> str | None:
        return self.kind if self.classify is None else self.classify(match)


_TOKEN_CHAR = re.compile(r"[A-Za-z0-9_\-]")
_SECRET_NAME = re.compile(
    r"(?:api[_.\-]?key|apikey|secret|client[_.\-]?secret|access[_.\-]?token|auth[_.\-]?token"
    r"""|api[_.\-]?token|password|passwd|private[_.\-]?key)[\]"'`]?[ \t]*:?$"""
)
_AWS_SECRET_NAME = re.compile(r"""aws[\w.\-]*secret[_.\-]?(?:access[_.\-]?)?key[\]"'`]?[ \t]*:?$""")
# An assignment (`=`, `:=`, `:`, `=>`) of a value, quoted or not; what may follow the
# value is checked in _assignment.
_ASSIGNED_VALUE = re.compile(r"""(?:=>?|:)[ \t]*+(?:b?["'`])?([A-Za-z0-9+/=_\-.~!@#%^&*]{20,}+)""")
_VALUE_END = frozenset("\"'` \t\r\n,;)")
_LOCAL_HOST = re.compile(
    r"@(?:localhost|127\.|0\.0\.0\.0|\[::1\]|[\w.-]*example\.(?:com|org|net)|host\b|[\w-]+:\d)",
    re.IGNORECASE,
)


def _after_token_boundary(match: re.Match[str]) -> bool:
    """The match does not continue a longer word to its left."""
    start = match.start()
    return start == 0 or not _TOKEN_CHAR.match(match.string, start - 1)


def _token(kind: str, max_len: int, bad_after: str) -> Callable[[re.Match[str]], str | None]:
    """Classify a possessive token match: a whole word, not too long, and not followed by
    a character that shows it is part of a longer identifier."""

    def classify(match: re.Match[str]) -> str | None:
        after = match.string[match.end() : match.end() + 1]
        if len(match.group()) > max_len or (after and after in bad_after):
            return None
        return kind if _after_token_boundary(match) else None

    return classify


def _aws_key_id(match: re.Match[str]) -> str | None:
    start = match.start()
    if start and (match.string[start - 1].isupper() or match.string[start - 1].isdigit()):
        return None
    # AWS documents AKIAIOSFODNN7EXAMPLE; it is in countless tests and READMEs.
    return "AWS access key" if "EXAMPLE" not in match.group() else None


def _sk_key(match: re.Match[str]) -> str | None:
    body = match.group()[3:]
    mixed = any(c.isupper() for c in body) and any(c.islower() for c in body)
    random_enough = mixed and sum(c.isdigit() for c in body) >= 3
    return "API key" if random_enough and _token("", 220, "")(match) is not None else None


def _name_before(match: re.Match[str]) -> str:
    """Up to 80 characters left of the assignment, on its line, lowercased."""
    start = match.start()
    line_start = match.string.rfind("\n", max(0, start - 80), start) + 1
    return match.string[max(line_start, start - 80) : start].lower()


def _assignment(match: re.Match[str]) -> str | None:
    value = match.group(1)
    after = match.string[match.end(1) : match.end(1) + 1]
    if len(value) > 200 or (after and after not in _VALUE_END):
        return None
    # The name check is cheaper than looks_random and rejects almost every candidate.
    name = _name_before(match)
    if len(value) == 40 and _AWS_SECRET_NAME.search(name):
        return "AWS secret key" if "EXAMPLE" not in value and looks_random(value) else None
    return "hard-coded secret" if _SECRET_NAME.search(name) and looks_random(value) else None


def _url_password(match: re.Match[str]) -> str | None:
    value = match.group(1)
    return None if is_placeholder(value) or value.lower() in {"pass", "pwd"} else "password in URL"


def _url_password_reportable(match: re.Match[str]) -> bool:
    return looks_random(match.group(1)) and not _LOCAL_HOST.match(match.string, match.end(1))


# Quantifiers on token bodies are possessive (``{36,}+``) and the checks that follow a
# body (its length, the character after it) live in the classifiers: a failed match
# then never backtracks through a long run, so a scan stays linear even on hostile
# input such as "sk-sk-sk-…" or a megabyte of "=".
def _ours() -> list[SecretPattern]:
    return [
        SecretPattern(
            "GitHub token",
            re.compile(r"gh[pousr]_[A-Za-z0-9]{36,}+|github_pat_[A-Za-z0-9_]{40,}+"),
            classify=_token("GitHub token", 255, "_-"),
        ),
        SecretPattern(
            "AWS access key",
            re.compile(r"A(?:KIA|SIA|BIA|CCA|3T[A-Z0-9])[A-Z0-9]{16}(?![A-Z0-9])"),
            classify=_aws_key_id,
        ),
        SecretPattern(
            "Slack token",
            re.compile(r"xox[abposr]-[A-Za-z0-9\-]{10,}+"),
            classify=_token("Slack token", 260, "_"),
        ),
        SecretPattern(
            "Slack webhook",
            re.compile(r"https://hooks\.slack\.com/(?:services|workflows)/T[A-Za-z0-9_/]{20,}+"),
        ),
        SecretPattern("API key", re.compile(r"sk-[A-Za-z0-9_\-]{32,}+"), classify=_sk_key),
        SecretPattern(
            "password in URL",
            re.compile(r"://[^\s:/@?#'\"]++:([^\s:/@?#'\"{}$%<>]{3,}+)@"),
            group=1,
            classify=_url_password,
            report=_url_password_reportable,
        ),
        SecretPattern(
            "npm token",
            re.compile(r":_authToken=[ \t]*+(?:npm_[A-Za-z0-9]{36}|[A-Fa-f0-9\-]{36})(?![\w\-])"),
        ),
        # One scan for every `name = value`: the name decides the kind.
        SecretPattern("hard-coded secret", _ASSIGNED_VALUE, group=1, classify=_assignment),
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


OWN_PATTERNS: tuple[SecretPattern, ...] = tuple(_ours())

#: Every prefix the detect-secrets patterns below start with: text without one cannot
#: match them, so the library is imported only for text that might.
_VENDOR_TRIGGER = re.compile(r"gl[a-z]{1,6}-|GR1348941|pypi-|SG\.|sq0csp-|[rs]k_live_|AccountKey=")


@functools.cache
def _vendor_patterns() -> tuple[SecretPattern, ...]:
    return tuple(_from_detect_secrets())


def patterns_for(text: str) -> tuple[SecretPattern, ...]:
    """The patterns worth running on ``text``."""
    if _VENDOR_TRIGGER.search(text):
        return OWN_PATTERNS + _vendor_patterns()
    return OWN_PATTERNS
