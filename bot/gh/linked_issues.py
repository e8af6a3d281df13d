"""The issues a pull request says it closes: at most three, of its own repository.

Two sources, in this order: GitHub's own links (``closingIssuesReferences``, carried by
the review's threads query, :func:`bot.gh.threads.read_pull_threads`: no request of its
own), then "Fixes #12", "Closes owner/repo#12", "Resolves: #12" in the description. GitHub
links the description's keywords itself only for a pull request into the default branch,
so the rest are read one REST request each (``GET /repos/{o}/{r}/issues/{n}``); a number
that is a pull request, or is gone, is skipped. An issue of another repository is never
read: its text is not the reviewed repository's to give to the model.

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
#: Characters of an issue's body given to the model.
MAX_BODY_CHARS = 4_000

_REFERENCE = re.compile(
    r"(?<![\w/#-])(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+"
    r"(?:([A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+))?#([1-9][0-9]{0,9})\b",
    re.IGNORECASE,
)


def described_issues(description: str, repo: str) -> list[int]:
    """The numbers "Fixes/Closes/Resolves #N" names in ``description``, of ``repo`` only,
    in order, once each."""
    found: list[int] = []
    for match in _REFERENCE.finditer(description):
        other, number = match.group(1), int(match.group(2))
        if other is not None and other.lower() != repo.lower():
            continue
        if number not in found:
            found.append(number)
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
    return _issue(number, str(data.get("title") or ""), str(data.get("body") or ""))
