"""One review job, from a queued :class:`~bot.jobs.ReviewJob` to one posted review.

The Celery task calls :func:`run_review_job` and acts on what comes back: a
:class:`JobOutcome`, or a :class:`TransientJobError` (``transient = True``,
``retry_after`` in seconds or None) for faults worth retrying later: model overload, 5xx
and network faults, GitHub rate limits, a mirror that could not be fetched.

The steps, and the GitHub requests they make (six in all when a review is posted, for
a PR of any size, seven once GitNeural reviewed it before, plus at most one per issue
the PR says it closes; the token is minted once an hour):

0. a ``/review`` comment: the commenter's permission (1, kept ten minutes by the
   process) — without write access: ``skipped``, with nothing posted (a read-only
   MEMBER or COLLABORATOR is treated as NONE is by the webhook);
1. read the PR (1) — closed: ``gone``; a newer head than the job's: ``superseded``,
   unless the entrance's queue knows of no later submission naming a head
   (``adopt_moved_head``): the deliveries came out of order, and this job reviews the
   PR's head, since the job of that head was superseded by this one;
2. read the PR's reviews (1 per 100) — this job's review, or one for this head by an
   automatic trigger, already there: ``posted``/``nothing-new``, nothing is repeated;
3. fetch base, head and default branch into the mirror by git; settings from the
   default branch; the trigger policy (``auto_review``, ``review_drafts``, labels,
   ``base_branches``, size limits: a skip label or a PR too large gets a check run
   completed ``skipped``, 1 request) and ``allowed_associations``;
4. check run ``in_progress`` (1); the PR's threads and the issues it closes
   (:func:`~bot.usecases.review.steps.read_threads_and_issues`), read before the model:
   one GraphQL query per 100 threads after an earlier review, which carries GitHub's
   closing links too; on a first review that query only when the description names an
   issue GitHub links; one REST read per named issue the query did not carry (at most 3
   issues); review the change with K3;
   before posting, ``still_current`` and a fresh read of the PR (1): closed or moved on,
   nothing posted;
5. what the PR's earlier threads say (:mod:`bot.usecases.review.memory`, on the threads
   read in 4): dismissed findings held back, fixed ones' threads resolved, the gate
   counting every finding still standing;
6. post the review (1) and complete the check run (1 per 50 annotations).

Failures that are not transient complete the check run with a one-line reason (and,
for an exhausted model quota, leave one PR comment saying so): status ``failed``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from bot.domain.results import ReviewResult
from bot.errors import GitHubError, GitNeuralError, ModelQuotaError
from bot.extras import require
from bot.gh.checks import PAUSED_TITLE
from bot.gh.mirrors.cache import MirrorNotFoundError
from bot.gh.permissions import may_command
from bot.gh.pulls import (
    PostedReview,
    PullInfo,
    gitneural_reviews,
    read_comment_bodies,
    read_pull,
)
from bot.jobs import ReviewJob
from bot.text import one_line
from bot.usecases.context import JobContext
from bot.usecases.errors import FencedError, TransientJobError, unfenced
from bot.usecases.eyes import add_eyes_reaction
from bot.usecases.images import images_wanted
from bot.usecases.poster import Poster
from bot.usecases.pull_change import PullChange
from bot.usecases.review.check_run import JobCheck
from bot.usecases.review.publish import Publication, check_output, publish
from bot.usecases.review.steps import (
    QUOTA_MARKER,
    PolicySkip,
    fetch_mirror,
    pull_change,
    quota_notice_due,
    read_threads_and_issues,
    review_change,
    settings_gate,
)
from bot.usecases.spend import budget_check, tell_budget_spent

__all__ = [
    "JobContext",
    "JobOutcome",
    "TransientJobError",
    "add_eyes_reaction",
    "run_review_job",
]

log = logging.getLogger("gitneural.worker")

Status = Literal["posted", "nothing-new", "skipped", "budget", "superseded", "gone", "failed"]
AUTOMATIC = frozenset({"opened", "reopened", "ready_for_review", "synchronize", "labeled"})
#: Triggers that review only what changed since the last review (unless ``full``).
INCREMENTAL = frozenset({"synchronize", "command", "labeled"})
QUOTA_NOTICE = (
    "GitNeural could not review this pull request: the model API's quota is exhausted. "
    "The App's operator needs to top up the Moonshot account; comment `/review` "
    "afterwards to ask again.\n\n" + QUOTA_MARKER
)


@dataclass
class JobOutcome:
    status: Status
    review_id: int | None = None
    detail: str = ""
    #: What an entrance that shows the review needs (the Action, ``review --pr --post``):
    #: the review made, what was posted, and GitNeural's earlier review when one was found.
    result: ReviewResult | None = None
    pull_change: PullChange | None = None
    publication: Publication | None = None
    review_url: str = ""
    found: PostedReview | None = None
    #: Why a ``failed`` job failed.
    error: GitNeuralError | None = None


def run_review_job(
    job: ReviewJob,
    ctx: JobContext,
    *,
    still_current: Callable[[str], bool] = lambda head_sha: True,
    redelivered: bool = False,
    fence: Callable[[], None] = unfenced,
    adopt_moved_head: bool = False,
) -> JobOutcome:
    """Review ``job``'s pull request and post the result.

    ``redelivered``: the broker handed this job out before (its worker died), so a check
    run it left in progress is carried on rather than a second one started. ``fence``
    raises :class:`FencedError` when this run may no longer write to GitHub (another run
    may hold the job); it is asked right before every write of the run's result.
    ``adopt_moved_head``: ``still_current`` answers from a queue's record of every
    submission (the App's workers), so a job whose head GitHub has moved past, and that
    no later submission names another head than, reviews the PR's head itself.
    """
    if ctx.store is None:
        # Said before any request: the review's memory needs the store (its extra).
        require("store", "a review posted on a pull request")
    run = _JobRun(job, ctx, still_current, redelivered, fence, adopt_moved_head)
    try:
        outcome = run.run()
    except FencedError as exc:
        # Not this run's to report on any more: the check run is left to the one that is.
        log.warning("%s: %s", run.name, exc)
        raise TransientJobError(str(exc)) from exc
    except GitNeuralError as exc:
        if exc.transient:
            run.check.close("neutral", PAUSED_TITLE, f"Paused: {exc}")
            log.warning("%s: transient failure, retried later: %s", run.name, exc)
            raise TransientJobError(str(exc), exc.retry_after) from exc
        outcome = run.fail(exc)
    except Exception as exc:
        # The job's one outer boundary: whatever stopped it (a time limit, a shutdown that
        # requeues the job, a bug), the check run must not stay "in progress" forever.
        # The error propagates to the task, which knows what it means.
        run.check.close(
            "cancelled", "GitNeural stopped", f"The review stopped ({type(exc).__name__})."
        )
        raise
    log.info("%s: %s %s", run.name, outcome.status, outcome.detail)
    return outcome


class _JobRun:
    def __init__(
        self,
        job: ReviewJob,
        ctx: JobContext,
        still_current: Callable[[str], bool],
        redelivered: bool = False,
        fence: Callable[[], None] = unfenced,
        adopt_moved_head: bool = False,
    ) -> None:
        self.job, self.ctx, self.still_current, self.fence = job, ctx, still_current, fence
        self.adopt_moved_head = adopt_moved_head
        self.gh = ctx.github(job.installation_id)
        self.name = f"{job.repo}#{job.pr_number} ({job.trigger}, delivery {job.delivery_id})"
        self.pull: PullInfo | None = None
        #: Every write of the run, fenced.
        self.poster = Poster(self.gh, fence, self._forget_token)
        self.check = JobCheck(self.gh, job, ctx, self.name, redelivered, self.poster)
        self.earlier: list[PostedReview] = []

    def _forget_token(self) -> None:
        self.ctx.forget_token(self.job.installation_id)

    def _reviews(self) -> list[PostedReview]:
        job = self.job
        return gitneural_reviews(
            self.gh, job.repo, job.pr_number, self.ctx.login(), on_401=self._forget_token
        )

    def run(self) -> JobOutcome:
        job = self.job
        commenter = job.trigger == "command" and job.comment_id is not None
        if commenter and not may_command(
            self.gh, job.repo, job.requested_by, on_401=self._forget_token
        ):
            return JobOutcome("skipped", detail=f"/review by {job.requested_by}, who may not write")
        pull = read_pull(self.gh, job.repo, job.pr_number, on_401=self._forget_token)
        if pull is None or not pull.open:
            return JobOutcome("gone", detail="the pull request is closed or gone")
        if job.head_sha is not None and job.head_sha != pull.head_sha:
            if not (self.adopt_moved_head and self.still_current(job.head_sha)):
                return JobOutcome("superseded", detail=f"the head is now {pull.head_sha[:12]}")
            # GitHub does not deliver in order: the newer head's delivery came first, so
            # this job's submission superseded that head's job, and no queued job will
            # review the PR's head unless this one does (a later delivery of that head
            # finds the review posted: ``_already_done``).
            log.info("%s: reviews %s, the PR's head", self.name, pull.head_sha[:12])
        self.pull = pull
        self.earlier = self._reviews()
        done = self._already_done(pull.head_sha)
        if done is not None:
            return done
        # Held until the review is posted: the mirror cache's cap never evicts it meanwhile.
        with self.ctx.mirrors.lease(job.installation_id, pull.clone_url):
            return self._review(pull)

    def _review(self, pull: PullInfo) -> JobOutcome:
        # The memory's tables (SQLAlchemy) load with the first review that posts.
        from bot.usecases.review.memory import recall

        job = self.job
        try:
            mirror, refs = fetch_mirror(self.ctx, job.installation_id, pull)
        except MirrorNotFoundError as exc:
            return JobOutcome("gone", detail=str(exc))
        if mirror.get(pull.head_sha) is None:
            # Pushed to between the API read and the fetch: that push has its own job.
            return JobOutcome("superseded", detail="the head moved while it was fetched")
        gate = settings_gate(
            job, pull, mirror, refs, self.ctx.token_run.config_path if self.ctx.token_run else None
        )
        if isinstance(gate, str):
            return JobOutcome("skipped", detail=gate)
        if isinstance(gate, PolicySkip):
            self.check.skip(pull.head_sha, gate.reason, blocks=gate.blocks)
            return JobOutcome("skipped", detail=f"{gate.reason}: check run skipped")
        last = self.earlier[-1].marker.head if self.earlier else None
        incremental = job.trigger in INCREMENTAL and not job.full
        # The /review comment's images come with the description's.
        asked = (
            read_comment_bodies(self.gh, job.repo, job.comment_id, on_401=self._forget_token)
            if job.comment_id is not None and images_wanted(gate)
            else None
        )
        pc, refused = budget_check(
            self.ctx,
            job,
            gate,
            lambda: pull_change(mirror, pull, refs, last, incremental, gate, asked),
        )
        if refused is not None:
            note = tell_budget_spent(self.ctx, job, self.check, pull.head_sha, refused)
            return JobOutcome("budget", detail=note)
        self.check.start(pull.head_sha)
        pc = pc or pull_change(mirror, pull, refs, last, incremental, gate, asked)
        nothing_new = pc.since is not None and not pc.change.diff.files
        # Read before the model: the linked issues go into its prompt (and the threads
        # come in the same query).
        threads, linked = read_threads_and_issues(
            self.gh,
            pull,
            gate,
            threads=bool(self.earlier),
            issues=not nothing_new,
            on_401=self._forget_token,
        )
        pc, result = review_change(
            self.ctx, job, pull, mirror, refs, gate, last, incremental, pc=pc, linked=linked
        )
        if result is None:
            # The push may still have fixed earlier findings (a file back as it was).
            memory = recall(
                self.ctx,
                self.poster,
                pull,
                read_threads=True,
                threads=threads,
            )
            self.fence()  # settling replies in and resolves the threads of fixed findings
            since = (pc.since or "")[:12]
            conclusion, still = memory.verdict(memory.settle([], mirror), gate.github)
            summary = f"No file of this PR changed since `{since}`.{still}"
            self.check.close(conclusion, "Nothing new to review", summary)
            return JobOutcome("nothing-new", detail=f"nothing changed since {since}")
        if result.route is not None and result.route.skip and not result.findings:
            # Its route sent it nowhere (formatting only, a team's skip): nothing to post,
            # and the gate still counts what earlier reviews found and is still open.
            memory = recall(self.ctx, self.poster, pull, read_threads=True, threads=threads)
            self.fence()  # settling replies in and resolves the threads of fixed findings
            conclusion, still = memory.verdict(memory.settle([], mirror), gate.github)
            self.check.close(conclusion, "Not sent to the model", result.route.line() + still)
            return JobOutcome("skipped", detail=result.route.line())
        stop = self._moved_on(pull.head_sha)
        if stop is not None:
            return stop
        memory = recall(
            self.ctx,
            self.poster,
            pull,
            read_threads=bool(self.earlier),
            threads=threads,
        )
        self.fence()  # settling the memory replies in and resolves threads of fixed findings
        pub = publish(
            result,
            pc,
            head_sha=pull.head_sha,
            trigger=job.trigger,
            delivery=job.delivery_id,
            web_url=pull.web_url,
            posted_fingerprints={fp for r in self.earlier for fp in r.marker.fingerprints},
            settings=gate.github,
            dismissed=memory.dismissed,
            dismissed_here=memory.dismissed_here,
            still_open=memory.settle(result.findings, mirror),
        )
        memory.record(pub.inline + pub.listed + pub.repeated)
        posted = self.poster.review(
            job.repo,
            job.pr_number,
            pub.draft,
            already_posted=lambda: self._find_posted(pull.head_sha),
        )
        url = f"{pull.web_url}/pull/{job.pr_number}#pullrequestreview-{posted.review_id}"
        self.check.complete_posted(check_output(result, pc, pub, url, posted.moved_inline))
        moved = " (inline comments moved into the body after a 422)" if posted.moved_inline else ""
        detail = f"{len(pub.inline)} inline, {len(pub.listed)} in the body{moved}"
        return JobOutcome("posted", posted.review_id, detail, result, pc, pub, url)

    def _already_done(self, head_sha: str) -> JobOutcome | None:
        for review in reversed(self.earlier):
            marker = review.marker
            same_job = marker.delivery == self.job.delivery_id
            if not same_job and (self.job.trigger not in AUTOMATIC or marker.head != head_sha):
                continue
            if same_job or marker.trigger == self.job.trigger:
                paused_by = self.job.delivery_id if same_job else None
                self.check.finish_stale(marker.head, marker.conclusion, review, paused_by)
                return JobOutcome("posted", review.id, "already posted", found=review)
            detail = f"{head_sha[:12]} was already reviewed ({marker.trigger})"
            return JobOutcome("nothing-new", review.id, detail, found=review)
        return None

    def _moved_on(self, head_sha: str) -> JobOutcome | None:
        """Whether the PR was closed or pushed to while the model was reviewing."""
        if not self.still_current(head_sha):
            self.check.close("cancelled", "Superseded", "A newer commit is queued for review.")
            return JobOutcome("superseded", detail="a newer head was queued")
        now = read_pull(self.gh, self.job.repo, self.job.pr_number, on_401=self._forget_token)
        if now is None or not now.open:
            self.check.close("cancelled", "Pull request closed", "Closed while it was reviewed.")
            return JobOutcome("gone", detail="closed while it was reviewed")
        if now.head_sha != head_sha:
            self.check.close("cancelled", "Superseded", f"The head moved to `{now.head_sha[:12]}`.")
            return JobOutcome("superseded", detail=f"the head moved to {now.head_sha[:12]}")
        return None

    def _find_posted(self, head_sha: str) -> int | None:
        for review in self._reviews():
            if review.marker.delivery == self.job.delivery_id and review.marker.head == head_sha:
                return review.id
        return None

    def fail(self, exc: GitNeuralError) -> JobOutcome:
        """A failure that retrying will not fix: say so on the check run."""
        reason = one_line(str(exc)) or type(exc).__name__
        log.warning("%s: failed: %s", self.name, reason)
        if self.pull is not None:
            self.check.start_for_failure(self.pull.head_sha)
        head = f"`{self.pull.head_sha[:12]}`" if self.pull is not None else "this change"
        self.check.close(
            "failure",
            "GitNeural could not review this change",
            f"The review of {head} failed: {reason}",
        )
        if isinstance(exc, ModelQuotaError) and self.pull is not None:
            self._quota_notice()
        return JobOutcome("failed", detail=reason, error=exc)

    def _quota_notice(self) -> None:
        try:
            if quota_notice_due(self.gh, self.job, self.ctx.login(), self.earlier):
                self.poster.notice(self.job.repo, self.job.pr_number, QUOTA_NOTICE)
        except (GitHubError, FencedError) as exc:
            log.warning("%s: could not post the quota notice: %s", self.name, exc)
