"""GitNeural's earlier finding threads on a PR, and the dismissals people made in them.

A finding is dismissed when a person resolved its thread while its lines were unchanged
(GitHub does not call the thread outdated), or when the PR's author or a user with write
access reacted 👎 to its first comment. A 👎 by anyone else changes nothing.

Who dismissed it says where the dismissal holds. Someone with write access: the whole
repository (every later PR with the same code holds the finding back). The PR's author
without write access: that PR only, so a drive-by contributor cannot silence a finding
for everyone. Access is one REST read per person (:func:`has_write_access`), kept for
ten minutes by the process; for 👎 givers other than the author at most
:data:`MAX_PERMISSION_READS` reads per review (answers kept are free; the rest are
judged by the next review), the author and those who resolved a thread outside that
budget. A dismissal that held for the PR only is widened when a writer's is seen,
never narrowed.
K3's withdrawals in a thread are recorded by the conversation job
(:mod:`bot.usecases.conversation.replies`), which answers only commenters with write
access: they hold for the repository. A dismissal, once recorded, stands.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import github

from bot.gh.identity import BotIdentity
from bot.gh.permissions import has_write_access, known_write_access
from bot.gh.pulls import PullInfo
from bot.gh.threads import ReviewThread
from bot.render.addressed import addressed_head
from bot.render.conversation import parse_finding_marker
from bot.store import Store
from bot.store.finding_states import attach_thread
from bot.store.findings import (
    Dismissal,
    DismissalReason,
    DismissalScope,
    FindingFacts,
    FindingState,
    StoredFinding,
    dismiss_finding,
)

log = logging.getLogger("gitneural.worker")

#: Permission reads one review may spend on 👎 reactions (the rest wait for the next;
#: answers the process kept cost nothing).
MAX_PERMISSION_READS = 3

Author = Callable[[Any], bool]


def gitneural_author(login: str) -> Author:
    """Whether GraphQL's ``author`` is the account GitNeural writes as (``login``, REST's
    spelling: an App's ``<slug>[bot]`` is GraphQL's Bot ``<slug>``)."""
    if login.endswith("[bot]"):
        return BotIdentity.from_login(login).is_graphql_author
    return lambda author: (
        isinstance(author, dict)
        and author.get("__typename") == "User"
        and str(author.get("login") or "").lower() == login.lower()
    )


@dataclass(frozen=True)
class EarlierThread:
    """One of GitNeural's finding threads on the PR."""

    thread: ReviewThread
    fingerprint: str
    severity: str
    #: Someone other than GitNeural (and not a bot) answered in it.
    answered: bool
    #: GitNeural's "Addressed in …" reply is in it.
    addressed: bool


def earlier_threads(threads: Iterable[ReviewThread], mine: Author) -> dict[str, EarlierThread]:
    """The threads GitNeural's own account started on a finding, by fingerprint."""
    found: dict[str, EarlierThread] = {}
    for thread in threads:
        top = thread.first
        marker = parse_finding_marker(top.body) if top is not None and mine(top.author) else None
        if marker is None or not marker.fingerprint:
            continue
        replies = thread.comments[1:]
        found[marker.fingerprint] = EarlierThread(
            thread=thread,
            fingerprint=marker.fingerprint,
            severity=marker.severity,
            answered=any(not mine(c.author) and not c.by_bot for c in replies),
            addressed=any(mine(c.author) and addressed_head(c.body) for c in replies),
        )
    return found


@dataclass
class _Judge:
    gh: github.Github
    pull: PullInfo
    on_401: Callable[[], None] | None
    reads: int = 0

    def writes(self, login: str, *, budgeted: bool = True) -> bool | None:
        """Whether ``login`` may push; None when this review may read no more. The PR's
        author and those who resolved a thread (GitHub lets only writers and the author
        resolve: a few people a PR) are read outside the 👎 givers' budget."""
        known = known_write_access(self.gh, self.pull.repo, login)
        if known is not None:
            return known
        if budgeted and login.lower() != self.pull.author.lower():
            if self.reads >= MAX_PERMISSION_READS:
                return None
            self.reads += 1
        return has_write_access(self.gh, self.pull.repo, login, on_401=self.on_401)

    def dismissal(self, thread: ReviewThread) -> Dismissal | None:
        """The widest dismissal the thread shows: a writer's holds for the repository;
        the PR's author's without write access (or a resolver's without it) for this PR
        only; a 👎 by anyone else, none."""
        here: Dismissal | None = None
        if thread.resolved and thread.resolved_by and not thread.outdated:
            by = thread.resolved_by
            if self.writes(by, budgeted=False):
                return Dismissal(DismissalReason.RESOLVED, by)
            here = Dismissal(DismissalReason.RESOLVED, by, scope=DismissalScope.PULL_REQUEST)
        author = self.pull.author.lower()
        for login in sorted(thread.thumbs_down, key=lambda who: who.lower() != author):
            if self.writes(login):
                return Dismissal(DismissalReason.THUMBS_DOWN, login)
            if here is None and login.lower() == author:
                here = Dismissal(
                    DismissalReason.THUMBS_DOWN, login, scope=DismissalScope.PULL_REQUEST
                )
        return here


def record_dismissals(
    store: Store,
    gh: github.Github,
    pull: PullInfo,
    threads: dict[str, EarlierThread],
    rows: Iterable[StoredFinding],
    on_401: Callable[[], None] | None = None,
) -> int:
    """Record the dismissals the threads show (and where each recorded finding's thread
    is); how many are new."""
    by_fingerprint = {r.fingerprint: r for r in rows}
    judge = _Judge(gh, pull, on_401)
    new = 0
    for fp, earlier in threads.items():
        thread, row = earlier.thread, by_fingerprint.get(fp)
        top = thread.first
        assert top is not None  # a finding thread starts with GitNeural's comment
        if row is not None and (row.comment_id is None or row.thread_node_id is None):
            attach_thread(store, pull.repo_id, pull.number, fp, top.id, thread.node_id)
        done = row is not None and row.state == FindingState.DISMISSED.value
        if done and row is not None and row.dismissal_scope != DismissalScope.PULL_REQUEST:
            continue  # held back in the whole repository already
        dismissal = judge.dismissal(thread)
        if dismissal is None or (done and dismissal.scope == DismissalScope.PULL_REQUEST):
            continue
        start, end = thread.lines() or (1, 1)
        facts = FindingFacts(
            repository_id=pull.repo_id,
            repository=pull.repo,
            pr_number=pull.number,
            fingerprint=fp,
            head_sha=row.head_sha if row is not None else pull.head_sha,
            path=row.path if row is not None else thread.path,
            side=row.side if row is not None else thread.side,
            start_line=row.start_line if row is not None else start,
            end_line=row.end_line if row is not None else end,
            severity=earlier.severity or None,
            comment_id=top.id,
            thread_node_id=thread.node_id or None,
        )
        dismiss_finding(store, facts, dismissal)
        new += 1
        log.info(
            "finding %s dismissed (%s by %s, for the %s)",
            fp[:16],
            dismissal.reason,
            dismissal.by,
            dismissal.scope.value.replace("_", " "),
        )
    return new
