"""What a review remembers of the PR's earlier findings, so that it stays quiet.

Before a review is posted. GitHub requests: one GraphQL query per 100 earlier threads,
and only when GitNeural reviewed the PR before; one GraphQL request for every thread a
push fixed, up to :data:`bot.gh.addressing.BATCH` (25) of them, and one more per further
25; a permission read for the PR's author and each person who resolved a thread, when
one of them dismissed a finding (their access says where the dismissal holds), and per
👎 of someone else, at most :data:`bot.usecases.review.dismissals.MAX_PERMISSION_READS` (3); every
answer kept ten minutes by the process. With the six requests of the job
itself (:mod:`bot.usecases.review.run`), a review after a push to a PR with up to 100 earlier
threads makes at most 8 requests however many threads the push fixed (up to 25), and at
most 11 when it also meets three 👎 givers, other than the author, it has not judged in
the last ten minutes (plus the author and the resolvers, once per ten minutes).

1. **Dismissals** (:func:`recall`). A finding of GitNeural's thread is dismissed when a
   person resolved the thread while its lines were unchanged (GitHub does not call it
   outdated), or when the PR's author or a user with write access reacted 👎 to its
   first comment; K3's withdrawals are recorded by the conversation job. A fingerprint
   dismissed by someone with write access is then held back on this PR and on any later
   PR whose finding has the same fingerprint (the same file, the same code at the
   anchor, the same title); one dismissed by the PR's author without write access, on
   this PR only (:mod:`bot.usecases.review.dismissals`).
2. **Fixed findings** (:meth:`Memory.settle`). A finding recorded open on the PR that the
   new review does not report is followed from the head it was recorded at to the new
   one: a push that touched its lines fixed it; otherwise it still stands (and moved
   with its code). A fixed finding's thread, still open and answered by nobody, gets one
   "Addressed in `abc1234`." and is resolved; a thread a person answered is theirs.
3. **The gate** counts every finding still standing: the new review's (dismissed ones
   left out) and the earlier ones neither fixed nor dismissed.
4. **Records** (:meth:`Memory.record`): what the review reports, open, before it is
   posted, so the next review knows it even if this one dies after posting.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import pygit2

from bot.domain.results import Finding
from bot.errors import GitError, StoreError
from bot.gh.addressing import Addressing
from bot.gh.pulls import PullInfo
from bot.gh.threads import ReviewThread, read_review_threads
from bot.git.line_moves import follow_lines
from bot.render.addressed import addressed_body
from bot.settings.repository import GitHubSettings
from bot.store import Store
from bot.store.finding_states import (
    follow,
    mark_auto_resolved,
    mark_fixed,
    pull_findings,
    release_auto_resolved,
)
from bot.store.findings import (
    DismissalScope,
    FindingFacts,
    FindingState,
    StoredFinding,
    held_back,
    record_finding,
)
from bot.usecases.context import JobContext
from bot.usecases.errors import FencedError, TransientJobError
from bot.usecases.poster import Poster
from bot.usecases.review.dismissals import (
    EarlierThread,
    earlier_threads,
    gitneural_author,
    record_dismissals,
)
from bot.usecases.review.publish import conclusion_for

log = logging.getLogger("gitneural.worker")

_WHOLE_FILE = (1, 2**31 - 1)
#: Where a finding's lines are when the head it was recorded at is gone from the mirror.
_UNKNOWN = (0, 0)


@dataclass
class Memory:
    store: Store
    pull: PullInfo
    #: The run's writes (the threads of fixed findings closed), fenced.
    poster: Poster
    #: Fingerprints this review holds back: dismissed for the whole repository, or on
    #: this PR by its author.
    dismissed: set[str] = field(default_factory=set)
    #: Those of :attr:`dismissed` held back on this PR only.
    dismissed_here: set[str] = field(default_factory=set)
    threads: dict[str, EarlierThread] = field(default_factory=dict)
    rows: list[StoredFinding] = field(default_factory=list)

    def settle(self, findings: Sequence[Finding], mirror: pygit2.Repository) -> list[str]:
        """Earlier findings the review did not report: fixed (and their threads closed)
        or still standing. The severities of those still standing."""
        with _transient_store():
            return self._settle(findings, mirror)

    def _settle(self, findings: Sequence[Finding], mirror: pygit2.Repository) -> list[str]:
        head = self.pull.head_sha
        reported = {f.fingerprint for f in findings if f.fingerprint}
        standing: list[str] = []
        fixed: list[StoredFinding] = []
        for row in self.rows:
            if row.state != FindingState.OPEN.value or row.fingerprint in reported:
                continue
            if row.fingerprint in self.dismissed:
                continue
            where = _followed(mirror, row, head)
            if where is None:
                fixed.append(row)
                continue
            if where != _UNKNOWN and (
                where != (row.start_line, row.end_line) or row.head_sha != head
            ):
                follow(self.store, row.id, head, *where)
            standing.append(row.severity or "minor")
        mark_fixed(self.store, (r.id for r in fixed), head)
        for row in fixed:
            row.state, row.fixed_in = FindingState.FIXED.value, head
        self._close_threads(
            r
            for r in self.rows
            if r.state == FindingState.FIXED.value and r.auto_resolved_at is None
        )
        return standing

    def _close_threads(self, rows: Iterable[StoredFinding]) -> None:
        """Reply in and resolve the threads of fixed findings, all in one request."""
        claimed: dict[str, tuple[StoredFinding, Addressing]] = {}
        for row in rows:
            earlier = self.threads.get(row.fingerprint)
            if earlier is None or earlier.thread.resolved or earlier.answered:
                continue
            if not mark_auto_resolved(self.store, row.id):
                continue  # another run of this job resolved it already
            head = row.fixed_in or self.pull.head_sha
            body = None if earlier.addressed else addressed_body(head)
            claimed[earlier.thread.node_id] = (row, Addressing(earlier.thread.node_id, body))
        if not claimed:
            return
        try:
            done = self.poster.address_threads([item for _, item in claimed.values()])
        except FencedError:
            # Nothing was sent: the run that holds the job may close them.
            release_auto_resolved(self.store, (row.id for row, _ in claimed.values()))
            raise
        for node_id in done.resolved:
            row = claimed[node_id][0]
            log.info("finding %s fixed in %s: thread resolved", row.fingerprint[:16], row.fixed_in)
        if done.failed:
            # Left open, and tried again by the next review: a thread GitNeural fails to
            # close is only a thread left open.
            release_auto_resolved(self.store, (claimed[n][0].id for n in done.failed))
            log.warning(
                "could not resolve %d of %d threads of fixed findings: %s",
                len(done.failed),
                len(claimed),
                done.summary(),
            )

    def verdict(self, still_open: Sequence[str], settings: GitHubSettings) -> tuple[str, str]:
        """The check run's conclusion when nothing new was reviewed, and what to add to
        its summary: the gate still counts the findings standing."""
        conclusion = conclusion_for([], settings, still_open)
        if not still_open:
            return ("success" if conclusion == "success" else "neutral"), ""
        n = len(still_open)
        return conclusion, f" {n} finding{'s' if n != 1 else ''} still open from earlier reviews."

    def record(self, findings: Iterable[Finding]) -> None:
        """The findings this review reports (new or repeated), open at the new head."""
        pull = self.pull
        with _transient_store():
            for f in findings:
                if not f.fingerprint:
                    continue
                facts = FindingFacts(
                    repository_id=pull.repo_id,
                    repository=pull.repo,
                    pr_number=pull.number,
                    fingerprint=f.fingerprint,
                    head_sha=pull.head_sha,
                    path=f.path,
                    side=f.side,
                    start_line=f.start_line,
                    end_line=f.end_line,
                    severity=str(f.severity),
                    title=f.title[:300],
                )
                record_finding(self.store, facts)


def _followed(mirror: pygit2.Repository, row: StoredFinding, head: str) -> tuple[int, int] | None:
    """Where the row's lines are at ``head``; None if the push touched them; ``(0, 0)``
    when that cannot be told (the recorded head is gone): counted, not moved."""
    try:
        if row.side == "LEFT":
            # Lines of the old file: fixed only if the push changed the file at all.
            same = follow_lines(mirror, row.head_sha, head, row.path, *_WHOLE_FILE)
            return None if same is None else (row.start_line, row.end_line)
        return follow_lines(mirror, row.head_sha, head, row.path, row.start_line, row.end_line)
    except GitError:
        return _UNKNOWN if row.head_sha != head else (row.start_line, row.end_line)


@contextlib.contextmanager
def _transient_store() -> Iterator[None]:
    """The store out of reach is worth a retry: a dismissal must not be lost."""
    try:
        yield
    except StoreError as exc:
        raise TransientJobError(str(exc)) from exc


def recall(
    ctx: JobContext,
    poster: Poster,
    pull: PullInfo,
    *,
    read_threads: bool,
    threads: list[ReviewThread] | None = None,
) -> Memory:
    """The PR's earlier findings and threads, with the dismissals they show recorded;
    ``threads``: the PR's threads, when the job read them already (with the linked
    issues, before the model ran). Reads go to ``poster``'s GitHub client, writes
    through ``poster``."""
    gh, on_401 = poster.gh, poster.on_401
    with _transient_store():
        memory = Memory(ctx.ensure_store(), pull, poster)
        if read_threads:
            if threads is None:
                threads = read_review_threads(gh, pull.repo, pull.number, on_401=on_401)
            memory.threads = earlier_threads(threads, gitneural_author(ctx.login()))
        memory.rows = pull_findings(memory.store, pull.repo_id, pull.number)
        if memory.threads:
            record_dismissals(memory.store, gh, pull, memory.threads, memory.rows, on_401)
            memory.rows = pull_findings(memory.store, pull.repo_id, pull.number)
        held = held_back(memory.store, pull.repo_id, pull.number)
        memory.dismissed = set(held)
        memory.dismissed_here = {
            fp for fp, scope in held.items() if scope == DismissalScope.PULL_REQUEST
        }
        return memory
