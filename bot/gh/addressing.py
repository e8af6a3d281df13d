"""Closing a thread whose finding a push fixed, and judging who may dismiss a finding.

:func:`address_thread` sends one GraphQL request: the reply ("Addressed in …") and
``resolveReviewThread`` in one mutation document, executed in order by GitHub. It is a
write, so it is never retried blindly: the caller records its claim first and finds its
reply by its marker when the threads are read again.

:func:`has_write_access` is REST's ``GET …/collaborators/{user}/permission``: GitHub's
GraphQL tells nothing of a reactor's access (``Reaction.user`` is a bare ``User``, and
``collaborators`` asks for push access the App does not have), while this endpoint needs
only the ``metadata`` permission every App holds. Its ``permission`` is the legacy base
role: ``maintain`` reads ``write``, ``triage`` reads ``read``.
"""

from __future__ import annotations

from collections.abc import Callable

import github

from bot.errors import GitHubError
from bot.gh.errors import fresh_read
from bot.gh.graphql import document, run_query
from bot.gh.pulls import lazy_repo
from bot.gh.threads import resolve_thread

WRITE_PERMISSIONS = frozenset({"admin", "write"})

ADDRESS_THREAD = document(
    "AddressThread",
    """
mutation AddressThread($threadId: ID!, $body: String!) {
  addPullRequestReviewThreadReply(input: {pullRequestReviewThreadId: $threadId, body: $body}) {
    comment { fullDatabaseId }
  }
  resolveReviewThread(input: {threadId: $threadId}) {
    thread { id isResolved }
  }
}
""",
    mutation=True,
)


def address_thread(
    gh: github.Github,
    node_id: str,
    body: str | None,
    *,
    on_401: Callable[[], None] | None = None,
) -> bool:
    """Reply ``body`` in thread ``node_id`` and resolve it (only resolve, when ``body`` is
    None: the reply is there already); whether the thread is resolved now."""
    if body is None:
        return resolve_thread(gh, node_id, on_401=on_401)
    data = run_query(
        gh,
        ADDRESS_THREAD,
        {"threadId": node_id, "body": body},
        doing="resolving an addressed review thread",
        on_401=on_401,
    )
    thread = (data.get("resolveReviewThread") or {}).get("thread") or {}
    return bool(thread.get("isResolved"))


def has_write_access(
    gh: github.Github, full_name: str, login: str, *, on_401: Callable[[], None] | None = None
) -> bool:
    """Whether ``login`` may push to ``full_name`` (admin, maintain or write)."""
    try:
        permission = fresh_read(
            lambda: lazy_repo(gh, full_name).get_collaborator_permission(login),
            f"reading {login}'s permission on {full_name}",
            on_401,
        )
    except GitHubError as exc:
        if exc.status == 404:  # no such user (any more)
            return False
        raise
    return str(permission).lower() in WRITE_PERMISSIONS
