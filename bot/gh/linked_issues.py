"""The issues a pull request says it closes: at most three, of its own repository, and at
most ten asked of GitHub.

Two sources, in this order: GitHub's own links (``closingIssuesReferences``, carried by
the review's threads query, :func:`bot.gh.threads.read_pull_threads`: no request of its
own), then "Fixes #12", "Closes owner/repo#12", "Resolves: #12" in the description. GitHub
links the description's keywords itself only for a pull request into the default branch,
so the rest are read one REST request each (``GET /repos/{o}/{r}/issues/{n}``); a number
that is a pull request, or is gone, is skipped. An issue of another repository is never
read, nor one GitHub redirects to another repository (a transferred issue): its text is
not the reviewed repository's to give to the model.

Titles and bodies are the issue authors' words: untrusted, fenced in the prompt.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import github

from bot.domain.walkthrough import LinkedIssue
from bot.errors import GitHubError
from bot.gh.api.errors import fresh_read
from bot.gh.pulls import lazy_repo
from bot.gh.threads import ClosingIssue

#: Issues read per review, at most.
MAX_LINKED = 3
#: Issue numbers a description may name that are asked of GitHub, found or not: one
#: request each, so an outsider's description can spend at most this many per review.
MAX_REFERENCES = 10
#: Characters of the description scanned for references (GitHub's own limit on a body
#: is 65,536; the keywords that matter come first).
MAX_SCANNED = 20_000
#: Characters of an issue's body given to the model.
MAX_BODY_CHARS = 4_000

# Only the keyword is matched by a pattern (no nested or adjacent quantifiers, so no
# backtracking); what follows it is read by hand, each character once.
_KEYWORD = re.compile(r"(?<![\w/#-])(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)(?=[\s:])", re.I)
_OWNER_REPO = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+#")


def _reference_after(text: str, at: int) -> tuple[str | None, int] | None:
    """The ``(owner/repo or None, number)`` a keyword ending at ``at`` names: optional
    spaces, an optional colon, at least one space, then ``#N`` or ``owner/repo#N``."""
    i, n = at, len(text)
    while i < n and text[i].isspace():
        i += 1
    spaced = i > at
    if i < n and text[i] == ":":
        i += 1
        spaced = False
    start = i
    while i < n and text[i].isspace():
        i += 1
    if not (spaced or i > start) or i >= n:
        return None
    other = None
    if text[i] != "#":
        named = _OWNER_REPO.match(text, i, min(n, i + 140))
        if named is None:
            return None
        other, i = named.group()[:-1], named.end() - 1
    digits = i + 1
    end = digits
    while end < n and end - digits < 10 and text[end].isdigit():
        end += 1
    if (
        end == digits
        or text[digits] == "0"
        or (end < n and (text[end].isalnum() or text[end] == "_"))
    ):
        return None
    return other, int(text[digits:end])


def described_issues(description: str, repo: str) -> list[int]:
    """The numbers "Fixes/Closes/Resolves #N" names in ``description``, of ``repo`` only,
    in order, once each: at most :data:`MAX_REFERENCES`, from its first
    :data:`MAX_SCANNED` characters, in time linear in the text."""
    text = description[:MAX_SCANNED]
    found: list[int] = []
    for keyword in _KEYWORD.finditer(text):
        reference = _reference_after(text, keyword.end())
        if reference is None:
            continue
        other, number = reference
        if other is not None and other.lower() != repo.lower():
            continue
        if number not in found:
            found.append(number)
            if len(found) == MAX_REFERENCES:
                break
    return found


def _issue(number: int, title: str, body: str) -> LinkedIssue:
    return LinkedIssue(number, title, body[:MAX_BODY_CHARS])


def linked_issues(
    gh: github.Github,
    repo: str,
    description: str,
    closing: Sequence[ClosingIssue],
    *,
    pr_number: int,
    on_401: Callable[[], None] | None = None,
) -> list[LinkedIssue]:
    """GitHub's closing links of ``repo``, then the description's, at most
    :data:`MAX_LINKED`; one request per issue GitHub's links did not carry."""
    found = [_issue(c.number, c.title, c.body) for c in closing if c.repo.lower() == repo.lower()][
        :MAX_LINKED
    ]
    carried = {issue.number for issue in found}
    # described_issues names at most MAX_REFERENCES: the requests are bounded by it
    # whether the numbers exist or not.
    for number in described_issues(description, repo):
        if len(found) >= MAX_LINKED:
            break
        if number in carried or number == pr_number:
            continue
        issue = _read_issue(gh, repo, number, on_401)
        if issue is not None:
            found.append(issue)
    return found


def _read_issue(
    gh: github.Github, repo: str, number: int, on_401: Callable[[], None] | None
) -> LinkedIssue | None:
    try:
        data = fresh_read(
            lambda: lazy_repo(gh, repo).get_issue(number).raw_data,
            f"reading issue #{number}",
            on_401,
        )
    except GitHubError as exc:
        if exc.status in (404, 410):
            return None  # gone, or never was: nothing to check the change against
        raise
    if not isinstance(data, dict) or data.get("pull_request"):
        return None  # "Fixes #N" naming a pull request
    # GitHub answers an issue transferred elsewhere (perhaps to a private repository)
    # with a redirect, which the client follows: its text is not this repository's.
    where = str(data.get("repository_url") or "")
    if not where.lower().endswith(f"/repos/{repo.lower()}"):
        return None
    return _issue(number, str(data.get("title") or ""), str(data.get("body") or ""))
