"""A pull request's review threads, in one GraphQL query per 100 threads.

REST has no notion of a thread: it would take a request per comment to learn which
thread is resolved, and a listing of every review comment to rebuild them. One GraphQL
query answers with each thread's id (``PRRT_…``, what ``resolveReviewThread`` takes), its
resolved and outdated state, where it is, and its comments with their authors, oldest
first. Comment ids are the REST ids (``fullDatabaseId``; ``databaseId`` is deprecated).

The same query carries, when asked (``$issues``), the issues the pull request closes
(``closingIssuesReferences``, first page only): the review reads them before the model
runs, at no request of their own; on a first review, with no thread to read (``$threads``
false), that is the query's only business.

The same query reads what a review needs to stay quiet: who resolved each thread
(``resolvedBy`` is a ``User``: null when a bot, GitNeural included, resolved it) and the
people who reacted 👎 to each thread's first comment (``reactionGroups``, read on the
first comment only, aliased ``top``, so the query stays far under GitHub's node limit).
GitHub says nothing there about the reactors' access to the repository: the review
judges that (:mod:`bot.gh.permissions`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import github

from bot.errors import GitHubError
from bot.gh.graphql import document, run_query

#: Pages of 100 threads read at most (a PR with more has bigger problems than this).
MAX_PAGES = 30

REVIEW_THREADS = document(
    "ReviewThreads",
    """
query ReviewThreads(
  $owner: String!
  $name: String!
  $number: Int!
  $after: String
  $threads: Boolean = true
  $issues: Boolean = false
) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      closingIssuesReferences(first: 3) @include(if: $issues) {
        nodes { number title body repository { nameWithOwner } }
      }
      reviewThreads(first: 100, after: $after) @include(if: $threads) {
        pageInfo { hasNextPage endCursor }
        nodes {
          id
          isResolved
          isOutdated
          path
          line
          startLine
          originalLine
          originalStartLine
          diffSide
          resolvedBy { login }
          top: comments(first: 1) {
            nodes {
              reactionGroups {
                content
                reactors(first: 50) {
                  totalCount
                  nodes { __typename ... on User { login } }
                }
              }
            }
          }
          comments(first: 100) {
            totalCount
            nodes {
              fullDatabaseId
              body
              createdAt
              authorAssociation
              author { __typename login }
            }
          }
        }
      }
    }
  }
}
""",
)


RESOLVE_THREAD = document(
    "ResolveReviewThread",
    """
mutation ResolveReviewThread($threadId: ID!) {
  resolveReviewThread(input: {threadId: $threadId}) {
    thread { id isResolved }
  }
}
""",
    mutation=True,
)


@dataclass(frozen=True)
class ThreadComment:
    #: The REST id (the number ``POST …/comments/{id}/replies`` takes).
    id: int
    body: str
    #: GraphQL's ``author``: ``{"__typename", "login"}``, or None for a deleted account.
    author: dict[str, Any] | None
    association: str
    created_at: str

    @property
    def login(self) -> str:
        return str((self.author or {}).get("login") or "ghost")

    @property
    def by_bot(self) -> bool:
        return (self.author or {}).get("__typename") == "Bot"


@dataclass(frozen=True)
class ReviewThread:
    node_id: str
    resolved: bool
    outdated: bool
    path: str
    #: Where the thread is on the PR's current diff (None when outdated).
    line: int | None
    start_line: int | None
    #: Where it was when posted.
    original_line: int | None
    original_start_line: int | None
    side: str
    comments: tuple[ThreadComment, ...]
    #: The thread has more than the 100 comments read.
    truncated: bool = False
    #: Who resolved it, when a person did (None when unresolved, or resolved by a bot).
    resolved_by: str | None = None
    #: The people who reacted 👎 to its first comment (bots left out).
    thumbs_down: tuple[str, ...] = ()

    @property
    def first(self) -> ThreadComment | None:
        return self.comments[0] if self.comments else None

    def lines(self) -> tuple[int, int] | None:
        """``(start, end)`` of the thread's lines: where they are now, else where they were."""
        end = self.line or self.original_line
        if end is None:
            return None
        start = (self.start_line if self.line else self.original_start_line) or end
        return min(start, end), end

    def comment(self, comment_id: int) -> ThreadComment | None:
        return next((c for c in self.comments if c.id == comment_id), None)


def _comment(node: dict[str, Any]) -> ThreadComment | None:
    raw_id = node.get("fullDatabaseId")
    if not isinstance(raw_id, str | int) or not str(raw_id).isdigit():
        return None
    comment_id = int(raw_id)  # BigInt: GitHub sends it as a string
    author = node.get("author")
    return ThreadComment(
        id=comment_id,
        body=str(node.get("body") or ""),
        author=author if isinstance(author, dict) else None,
        association=str(node.get("authorAssociation") or "NONE"),
        created_at=str(node.get("createdAt") or ""),
    )


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _thumbs_down(node: dict[str, Any]) -> tuple[str, ...]:
    tops = (node.get("top") or {}).get("nodes") or []
    groups = (tops[0] or {}).get("reactionGroups") or [] if tops else []
    logins: list[str] = []
    for group in groups:
        if not isinstance(group, dict) or group.get("content") != "THUMBS_DOWN":
            continue
        for reactor in (group.get("reactors") or {}).get("nodes") or []:
            if isinstance(reactor, dict) and reactor.get("__typename") == "User":
                login = reactor.get("login")
                if isinstance(login, str) and login:
                    logins.append(login)
    return tuple(dict.fromkeys(logins))


def _thread(node: dict[str, Any]) -> ReviewThread:
    connection = node.get("comments") or {}
    nodes = connection.get("nodes") or []
    comments = tuple(c for c in (_comment(n) for n in nodes if isinstance(n, dict)) if c)
    total = connection.get("totalCount")
    return ReviewThread(
        node_id=str(node.get("id") or ""),
        resolved=bool(node.get("isResolved")),
        outdated=bool(node.get("isOutdated")),
        path=str(node.get("path") or ""),
        line=_int(node.get("line")),
        start_line=_int(node.get("startLine")),
        original_line=_int(node.get("originalLine")),
        original_start_line=_int(node.get("originalStartLine")),
        side=str(node.get("diffSide") or "RIGHT"),
        comments=comments,
        truncated=isinstance(total, int) and total > len(comments),
        resolved_by=str((node.get("resolvedBy") or {}).get("login") or "") or None,
        thumbs_down=_thumbs_down(node),
    )


@dataclass(frozen=True)
class ClosingIssue:
    """An issue GitHub links to the pull request as one it closes."""

    number: int
    title: str
    body: str
    #: ``owner/name`` of the issue's repository (it may be another one).
    repo: str


@dataclass
class PullThreads:
    threads: list[ReviewThread]
    #: Only when asked for (``issues=True``).
    closing: list[ClosingIssue]


def _closing(pull: dict[str, Any]) -> list[ClosingIssue]:
    found = []
    for node in (pull.get("closingIssuesReferences") or {}).get("nodes") or []:
        if not isinstance(node, dict) or _int(node.get("number")) is None:
            continue
        repo = (node.get("repository") or {}).get("nameWithOwner")
        found.append(
            ClosingIssue(
                int(node["number"]),
                str(node.get("title") or ""),
                str(node.get("body") or ""),
                str(repo or ""),
            )
        )
    return found


def read_review_threads(
    gh: github.Github,
    full_name: str,
    number: int,
    *,
    on_401: Callable[[], None] | None = None,
) -> list[ReviewThread]:
    """Every review thread of PR ``number``, oldest first (one query per 100 threads)."""
    return read_pull_threads(gh, full_name, number, on_401=on_401).threads


def read_pull_threads(
    gh: github.Github,
    full_name: str,
    number: int,
    *,
    threads: bool = True,
    issues: bool = False,
    on_401: Callable[[], None] | None = None,
) -> PullThreads:
    """PR ``number``'s review threads (when ``threads``; one query per 100) and the
    issues it closes (when ``issues``; in the first query)."""
    owner, _, name = full_name.partition("/")
    found = PullThreads([], [])
    after: str | None = None
    for _ in range(MAX_PAGES):
        variables = {
            "owner": owner,
            "name": name,
            "number": number,
            "after": after,
            "threads": threads,
            "issues": issues and after is None,
        }
        data = run_query(
            gh,
            REVIEW_THREADS,
            variables,
            doing=f"reading the review threads of pull request #{number}",
            on_401=on_401,
        )
        pull = (data.get("repository") or {}).get("pullRequest")
        if not isinstance(pull, dict):
            raise GitHubError(f"GitHub has no pull request #{number} in {full_name}", status=404)
        if after is None and issues:
            found.closing = _closing(pull)
        connection = pull.get("reviewThreads") or {}
        nodes = connection.get("nodes") or []
        found.threads += [_thread(n) for n in nodes if isinstance(n, dict)]
        page = connection.get("pageInfo") or {}
        after = page.get("endCursor")
        if not threads or not page.get("hasNextPage") or not after:
            break
    return found


def thread_of(threads: Iterable[ReviewThread], comment_id: int) -> ReviewThread | None:
    """The thread holding comment ``comment_id`` (its first comment, or a reply)."""
    return next((t for t in threads if t.comment(comment_id) is not None), None)


def resolve_thread(
    gh: github.Github, node_id: str, *, on_401: Callable[[], None] | None = None
) -> bool:
    """Resolve the review thread ``node_id`` (``PRRT_…``); whether it is resolved now.

    Resolving is GraphQL only; resolving a resolved thread changes nothing, so the
    mutation is safe to send again after a lost answer."""
    data = run_query(
        gh, RESOLVE_THREAD, {"threadId": node_id}, doing="resolving a review thread", on_401=on_401
    )
    thread = (data.get("resolveReviewThread") or {}).get("thread") or {}
    return bool(thread.get("isResolved"))
