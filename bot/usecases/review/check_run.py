"""The check run of one review job: started once (a redelivered job carries on the one its
dead worker left), completed once, and completed best effort when the job fails."""

from __future__ import annotations

import logging

import github

from bot.errors import GitHubError
from bot.gh.checks import Check, CheckOutput, unfinished_checks
from bot.gh.pulls import PostedReview, lazy_repo
from bot.jobs import ReviewJob
from bot.usecases.context import JobContext
from bot.usecases.errors import FencedError
from bot.usecases.poster import Poster

log = logging.getLogger("gitneural.worker")


class JobCheck:
    """Every write goes through the run's :class:`~bot.usecases.poster.Poster`, fenced
    (:func:`bot.usecases.review.run.run_review_job`): a run that may no longer report
    leaves the check run to the one that may."""

    def __init__(
        self,
        gh: github.Github,
        job: ReviewJob,
        ctx: JobContext,
        name: str,
        redelivered: bool,
        poster: Poster,
    ) -> None:
        self.gh, self.job, self.ctx, self.name = gh, job, ctx, name
        self.redelivered, self.poster = redelivered, poster
        #: The run in progress, if one was started and not completed yet.
        self.run: Check | None = None
        #: The token may not create check runs (``ctx.checks_optional``): none is made.
        self.skipped = False

    def _forget_token(self) -> None:
        self.ctx.forget_token(self.job.installation_id)

    def start(self, head_sha: str) -> None:
        # Asked before the model is too: a run that may not post spends nothing.
        self.poster.fence()
        repo = lazy_repo(self.gh, self.job.repo)
        if self.redelivered and self.ctx.app_id is not None:
            # One more request, only on a redelivery: no orphan run left "in progress".
            resumed = Check.resume(
                repo,
                head_sha,
                external_id=self.job.delivery_id,
                app_id=self.ctx.app_id,
                on_401=self._forget_token,
            )
            if resumed is not None:
                self.run = resumed
                return
        try:
            self.run = self.poster.start_check(
                self.job.repo,
                head_sha,
                external_id=self.job.delivery_id,
                summary=f"Reviewing `{head_sha[:12]}` with Kimi K3.",
            )
        except GitHubError as exc:
            # A person's token, or a workflow without `checks: write`: the review is
            # what matters, the check run only reports on it.
            if not self.ctx.checks_optional or exc.transient or exc.status not in (403, 404):
                raise
            log.warning("%s: no check run (%s); reviewing without one", self.name, exc)
            self.skipped = True

    def skip(self, head_sha: str, reason: str, *, blocks: bool = False) -> None:
        """The trigger policy left this pull request alone: a run completed ``skipped``
        says why, and how to ask for the review anyway (``failure`` when ``blocks``: a
        gate does not pass a change it did not read)."""
        gate = (
            ' The check fails: it is a gate (github.check_conclusion = "failure"), and '
            "a change too large to review is not passed unread."
            if blocks
            else ""
        )
        try:
            self.poster.skipped_check(
                self.job.repo,
                head_sha,
                external_id=self.job.delivery_id,
                title="Too large to pass unreviewed" if blocks else "Not reviewed automatically",
                summary=f"Not reviewed automatically: {reason}.{gate} Comment `/review` to "
                "review anyway.",
                conclusion="failure" if blocks else "skipped",
            )
        except GitHubError as exc:
            if exc.transient:
                raise
            # As for any run: without `checks: write` the review is what matters.
            log.warning("%s: no skipped check run: %s", self.name, exc)

    def start_for_failure(self, head_sha: str) -> None:
        """A run to say why the job failed on, if none was started (best effort)."""
        if self.run is not None or self.skipped:
            return
        try:
            self.run = self.poster.start_check(
                self.job.repo, head_sha, external_id=self.job.delivery_id, summary="Starting…"
            )
        except FencedError as exc:
            self._left(exc)
        except GitHubError as err:
            log.warning("%s: could not create a check run: %s", self.name, err)

    def complete_posted(self, output: CheckOutput) -> None:
        """Complete the check run of a posted review.

        A transient failure propagates without touching the run: the job's retry finds
        the review by its marker and completes the run it left in progress.
        """
        if self.run is None and self.skipped:
            return
        check, self.run = self.run, None
        assert check is not None
        try:
            self.poster.complete_check(check, output)
        except GitHubError as exc:
            if exc.transient:
                raise
            log.warning("%s: GitHub refused the check run's output: %s", self.name, exc)
            self.run = check
            self.close(output.conclusion, output.title, "Review posted.")

    def finish_stale(
        self, head_sha: str, conclusion: str, review: PostedReview, paused_by: str | None
    ) -> None:
        """A worker killed after posting left its check run in progress, or this job's
        first run paused it, not knowing its review had landed: complete it."""
        app_id = self.ctx.app_id
        if app_id is None:
            return  # reviewing with a token: its check runs are not told apart from others'
        try:
            repo = lazy_repo(self.gh, self.job.repo)
            for check in unfinished_checks(repo, head_sha, app_id, paused_by=paused_by):
                summary = f"[Review posted]({review.html_url})." if review.html_url else ""
                out = CheckOutput(conclusion, "Review posted", summary or "Posted.")
                self.poster.complete_check(check, out)
        except GitHubError as exc:
            log.warning("%s: could not complete an earlier check run: %s", self.name, exc)

    def close(self, conclusion: str, title: str, summary: str) -> None:
        """Best effort: complete the check run, if one was started."""
        if self.run is None:
            return
        check, self.run = self.run, None
        try:
            self.poster.complete_check(check, CheckOutput(conclusion, title, summary))
        except FencedError as exc:
            self._left(exc)
        except GitHubError as exc:
            log.warning("%s: could not complete the check run: %s", self.name, exc)

    def _left(self, exc: FencedError) -> None:
        log.warning("%s: check run left to the run that holds the job: %s", self.name, exc)
