"""Whether a person may push to a repository: who may give GitNeural a command, and
whose dismissal of a finding holds for the whole repository.

:func:`has_write_access` is REST's ``GET …/collaborators/{user}/permission``. GitHub's
GraphQL tells nothing of a reactor's access: ``Reaction.user`` and the reactors of a
``reactionGroup`` are bare ``User``s (``viewerPermission`` is the viewer's, GitNeural's
own), and ``Repository.collaborators`` asks for push access, which the App, holding
``contents: read``, does not have. The REST endpoint needs only the ``metadata``
permission every App holds (a workflow's ``GITHUB_TOKEN`` has it too). Its ``permission``
is the legacy base role: ``maintain`` reads ``write``, ``triage`` reads ``read``.

``author_association`` in a webhook is only a cheap first filter: a MEMBER or a
COLLABORATOR may have read access only. :func:`may_command` is the last word on every
command (``/review``, ``/ask``, ``/learn``, ``/learnings``, ``/forget``, a reply in one of
GitNeural's threads), asked by the worker (the webhook never calls GitHub) before any
reaction, answer or model call.

Answers are kept for :data:`TTL_S` seconds per GitHub host, repository and user, in the
process (:data:`PERMISSIONS`): a 👎 by someone without write access, which every review
of the PR judges again, costs one read per process and TTL, not one per review. A
permission changed on GitHub is seen within the TTL.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import github

from bot.errors import GitHubError
from bot.gh.api.errors import fresh_read
from bot.gh.pulls import lazy_repo

WRITE_PERMISSIONS = frozenset({"admin", "maintain", "write"})
#: How long an answer is believed.
TTL_S = 600.0

_Key = tuple[str, str, str]


class PermissionCache:
    """Write access by (GitHub API host, repository, user), for a while."""

    def __init__(self, ttl_s: float = TTL_S, clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl_s, self._clock = ttl_s, clock
        self._lock = threading.Lock()
        self._answers: dict[_Key, tuple[float, bool]] = {}

    def get(self, key: _Key) -> bool | None:
        with self._lock:
            found = self._answers.get(key)
            if found is None:
                return None
            if found[0] <= self._clock():
                del self._answers[key]
                return None
            return found[1]

    def put(self, key: _Key, writes: bool) -> None:
        with self._lock:
            now = self._clock()
            if len(self._answers) > 10_000:  # a bound, not a policy: expired ones go first
                self._answers = {k: v for k, v in self._answers.items() if v[0] > now}
            self._answers[key] = (now + self._ttl_s, writes)


#: The process's answers.
PERMISSIONS = PermissionCache()


def _key(gh: github.Github, full_name: str, login: str) -> _Key:
    return (str(gh.requester.base_url), full_name.lower(), login.lower())


def known_write_access(
    gh: github.Github, full_name: str, login: str, *, cache: PermissionCache = PERMISSIONS
) -> bool | None:
    """The answer read within the TTL, or None (a read would be needed)."""
    return cache.get(_key(gh, full_name, login))


def has_write_access(
    gh: github.Github,
    full_name: str,
    login: str,
    *,
    on_401: Callable[[], None] | None = None,
    cache: PermissionCache = PERMISSIONS,
) -> bool:
    """Whether ``login`` may push to ``full_name`` (admin, maintain or write): the answer
    kept, or one REST read."""
    key = _key(gh, full_name, login)
    known = cache.get(key)
    if known is not None:
        return known
    try:
        permission = fresh_read(
            lambda: lazy_repo(gh, full_name).get_collaborator_permission(login),
            f"reading {login}'s permission on {full_name}",
            on_401,
        )
    except GitHubError as exc:
        if exc.status != 404:  # 404: no such user (any more)
            raise
        permission = "none"
    writes = str(permission).lower() in WRITE_PERMISSIONS
    cache.put(key, writes)
    return writes


def may_command(
    gh: github.Github,
    full_name: str,
    login: str | None,
    *,
    on_401: Callable[[], None] | None = None,
    cache: PermissionCache = PERMISSIONS,
) -> bool:
    """Whether a comment by ``login`` may make GitNeural act (write, maintain or admin);
    a command nobody is named for is not obeyed."""
    if not login:
        return False
    return has_write_access(gh, full_name, login, on_401=on_401, cache=cache)
