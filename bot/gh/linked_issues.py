"""The issues a pull request says it closes: at most three, of its own repository, and at
most ten asked of GitHub.

Two sources, in this order: GitHub's own links (``closingIssuesReferences``, carried by
the review's threads query, :func:`bot.gh.threads.read_pull_threads`: no request of its
own), then "Fixes #12", "Closes owner/repo#12", "Resolves: #12" in the description. GitHub
links the description's keywords itself only for a pull request into the default branch,
so the rest (at most ten, deduplicated) are read together by one GraphQL query
(``issueOrPullRequest`` per number, never one REST request each); a number that is a
pull request, or is gone, is skipped. An issue of another repository is never read, nor
one whose repository id is not the reviewed repository's (GitHub resolves a transferred
issue's old number to its new home, perhaps private; REST answers it with a 301 that is
never followed, since no REST request is made): its text is not ours to give the model.

Titles and bodies are the issue authors' words: untrusted, fenced in the prompt.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import github
from github import GithubException

from bot.domain.walkthrough import LinkedIssue
from bot.gh.api.errors import fresh_read
from bot.gh.graphql import Document, document
from bot.gh.threads import ClosingIssue

#: Issues read per review, at most.
MAX_LINKED = 3
#: Issue numbers a description may name that are asked of GitHub, found or not, in one
#: GraphQL request: an outsider's description can spend one request per review.
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


def _linked_document(count: int) -> Document:
    numbers = ", ".join(f"$n{i}: Int!" for i in range(count))
    fields = "\n    ".join(
        f"i{i}: issueOrPullRequest(number: $n{i}) {{ ...linked }}" for i in range(count)
    )
    return document(
        f"LinkedIssues{count}",
        f"""
query LinkedIssues{count}($owner: String!, $name: String!, {numbers}) {{
  repository(owner: $owner, name: $name) {{
    id
    {fields}
  }}
}}
fragment linked on IssueOrPullRequest {{
  __typename
  ... on Issue {{ number title body repository {{ id }} }}
}}
""",
    )


#: One query per number of references, 1 to :data:`MAX_REFERENCES`: each reads them all
#: in one request, with the repository each issue lives in now.
LINKED_ISSUES = {n: _linked_document(n) for n in range(1, MAX_REFERENCES + 1)}


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
    :data:`MAX_LINKED`; one GraphQL request at most for those GitHub's links did not
    carry."""
    found = [_issue(c.number, c.title, c.body) for c in closing if c.repo.lower() == repo.lower()][
        :MAX_LINKED
    ]
    if len(found) >= MAX_LINKED:
        return found
    carried = {issue.number for issue in found} | {pr_number}
    # described_issues names at most MAX_REFERENCES, once each: one query reads them all.
    wanted = [n for n in described_issues(description, repo) if n not in carried]
    if wanted:
        found += _read_issues(gh, repo, wanted, on_401)[: MAX_LINKED - len(found)]
    return found


def _read_issues(
    gh: github.Github, repo: str, numbers: list[int], on_401: Callable[[], None] | None
) -> list[LinkedIssue]:
    """The issues of ``repo`` among ``numbers``, in order, in one request: a pull
    request, a number that is gone, and an issue that now lives in another repository
    (GitHub resolves a transferred issue's old number to it) are left out."""
    doc = LINKED_ISSUES[len(numbers)]
    owner, name = repo.split("/", 1)
    variables: dict[str, Any] = {"owner": owner, "name": name}
    variables.update({f"n{i}": number for i, number in enumerate(numbers)})
    doing = f"reading the issues #{', #'.join(map(str, numbers))}"
    data = fresh_read(lambda: _partial(gh, doc, variables), doing, on_401)
    here = data.get("repository") if isinstance(data, dict) else None
    if not isinstance(here, dict) or not here.get("id"):
        return []
    issues: list[LinkedIssue] = []
    for i, number in enumerate(numbers):
        node = here.get(f"i{i}")
        if not isinstance(node, dict) or node.get("__typename") != "Issue":
            continue  # gone, never was, or "Fixes #N" naming a pull request
        where = node.get("repository")
        if not isinstance(where, dict) or where.get("id") != here["id"]:
            continue  # transferred away, perhaps to a private repository: not ours to give
        if node.get("number") != number:
            continue
        issues.append(_issue(number, str(node.get("title") or ""), str(node.get("body") or "")))
    return issues


def _partial(gh: github.Github, doc: Document, variables: dict[str, Any]) -> Any:
    """The ``data`` of ``doc``, also when GitHub answered some fields "not found" (a
    number with no issue): those fields are null beside the others. Any other error
    is raised."""
    try:
        return gh.requester.graphql_query(doc.text, variables)[1].get("data")
    except GithubException as exc:
        answer = exc.data if isinstance(exc.data, dict) else {}
        errors = answer.get("errors")
        if not isinstance(answer.get("data"), dict) or not isinstance(errors, list):
            raise
        if not all(isinstance(e, dict) and e.get("type") == "NOT_FOUND" for e in errors):
            raise
        return answer["data"]
