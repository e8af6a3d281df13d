"""What every conversation job shares: the PR, the repository's settings and the change,
its learnings, the K3 client, GitNeural's answers found by their markers and posted once."""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from bot import metrics
from bot.domain.change import Change
from bot.domain.learnings import Learning
from bot.errors import GitHubError
from bot.gh.answers import IssueComment, comments_since
from bot.gh.identity import BotIdentity
from bot.gh.mirrors.cache import MirrorNotFoundError
from bot.gh.pulls import PullInfo, read_pull
from bot.gh.threads import ReviewThread, ThreadComment, read_review_threads, thread_of
from bot.git.repo import TreeSnapshot, resolve_commit
from bot.jobs import ConversationJob
from bot.llm.client import K3Client
from bot.render.conversation import (
    FindingMarker,
    Kind,
    answered_comment,
    notice_body,
    parse_finding_marker,
)
from bot.settings.repository import Config, trusted_config
from bot.store.learnings import active_learnings
from bot.usecases.context import JobContext
from bot.usecases.errors import unfenced
from bot.usecases.poster import Poster
from bot.usecases.pull_change import build_change
from bot.usecases.review.steps import fetch_mirror
from bot.usecases.spend import answer_refusal, usage_recorder

log = logging.getLogger("gitneural.worker")

Status = Literal["answered", "already-answered", "dismissed", "ignored", "gone", "budget", "failed"]


@dataclass
class ConversationOutcome:
    status: Status
    #: The answer GitNeural posted (or found posted).
    comment_id: int | None = None
    detail: str = ""


@dataclass(frozen=True)
class GitNeuralThread:
    """A review thread GitNeural started on one of its findings, with the reply to answer."""

    thread: ReviewThread
    top: ThreadComment
    marker: FindingMarker
    reply: ThreadComment
    #: GitNeural's answer to the reply, when it is there already.
    answered: int | None


def find_gitneural_thread(
    thread: ReviewThread | None, comment_id: int, identity: BotIdentity
) -> GitNeuralThread | str:
    """The thread as GitNeural's, or why it is not one to answer in.

    Its first comment must be written by GitNeural's own bot account and carry a
    finding's marker: a marker alone proves nothing (anyone, another bot too, can paste
    one), and a thread of GitNeural's without one is not a finding.
    """
    top = thread.first if thread is not None else None
    if thread is None or top is None:
        return "the comment it answers is in no review thread of this pull request"
    if not identity.is_graphql_author(top.author):
        return f"the thread is not GitNeural's (it was started by {top.login})"
    marker = parse_finding_marker(top.body)
    if marker is None:
        return "the thread's first comment is not one of GitNeural's findings"
    reply = thread.comment(comment_id)
    if reply is None:
        return "the reply is past the comments read" if thread.truncated else "the reply is gone"
    if identity.is_graphql_author(reply.author):
        return "the reply is GitNeural's own"
    return GitNeuralThread(thread, top, marker, reply, answer_in(thread, comment_id, identity))


def answer_in(thread: ReviewThread | None, comment_id: int, identity: BotIdentity) -> int | None:
    """GitNeural's answer to ``comment_id`` in ``thread``, when it is there."""
    return next(
        (
            c.id
            for c in (thread.comments if thread is not None else ())
            if identity.is_graphql_author(c.author)
            and answered_comment(c.body, "reply") == comment_id
        ),
        None,
    )


class ConversationRun:
    def __init__(
        self, job: ConversationJob, ctx: JobContext, fence: Callable[[], None] = unfenced
    ) -> None:
        #: ``fence``: raises :class:`~bot.usecases.errors.FencedError` when this run may no
        #: longer post (its lock taken over, or its store unreachable); asked before each post.
        self.job, self.ctx = job, ctx
        self.gh = ctx.github(job.installation_id)
        #: Every post of the run, fenced.
        self.poster = Poster(self.gh, fence, self.forget_token)
        # A command asked in a review thread is answered there too.
        self.kind: Kind = "reply" if job.in_reply_to is not None else "answer"
        #: The thread's first comment, once the thread is known to be the one to answer in
        #: (GitNeural's, for a reply).
        self.top_id: int | None = None
        self.since = _time(job.created_at)

    def forget_token(self) -> None:
        self.ctx.forget_token(self.job.installation_id)

    def eyes(self) -> None:
        """👀 on the asking comment, at once: an answer by the model takes a while. A
        refusal that retrying cannot fix costs the reaction only."""
        job = self.job
        try:
            self.poster.react(job.repo, job.pr_number, job.comment_id, "eyes")
        except GitHubError as exc:
            if exc.transient:
                raise
            log.warning("%s: no eyes reaction: %s", job.key, exc)

    def open_pull(self) -> PullInfo | None:
        job = self.job
        pull = read_pull(self.gh, job.repo, job.pr_number, on_401=self.forget_token)
        return pull if pull is not None and pull.open else None

    def open_on_pr(
        self, *, eyes: bool = True
    ) -> tuple[PullInfo, list[IssueComment]] | ConversationOutcome:
        """The opening every command answered on the PR shares: 👀 (``eyes=False`` for an
        answer that needs no model), the PR (closed or gone: nothing to do), and an
        answer already posted, which ends the job before any model call. The PR's
        comments are handed back: a command may read its own comment again in them."""
        if eyes:
            self.eyes()
        pull = self.open_pull()
        if pull is None:
            return ConversationOutcome("gone", detail="the pull request is closed or gone")
        comments = self.pr_comments()
        answered = self.answered_on_pr(comments)
        if answered is not None:
            return ConversationOutcome("already-answered", answered, "answered before")
        return pull, comments

    def ready_for_model(self, pull: PullInfo) -> tuple[Change, Config] | ConversationOutcome:
        """The change and the settings the model answers on, then the monthly budget (its
        notice posted in the answer's place when it is spent)."""
        ready = self.settings(pull)
        if isinstance(ready, str):
            return ConversationOutcome("ignored", detail=ready)
        refused = self.over_budget()
        return ready if refused is None else refused

    def settings(self, pull: PullInfo) -> tuple[Change, Config] | str:
        """The PR's whole change and the repository's settings (from the default branch),
        or why there is no answer."""
        job = self.job
        try:
            mirror, refs = fetch_mirror(self.ctx, job.installation_id, pull)
        except MirrorNotFoundError as exc:
            return str(exc)
        config = trusted_config(TreeSnapshot(mirror, resolve_commit(mirror, refs.default)))
        if not config.conversation.enabled:
            return "answers are off (conversation.enabled = false)"
        if job.author_association not in config.github.allowed_associations:
            return f"{job.author_association} may not ask (github.allowed_associations)"
        pc = build_change(
            mirror,
            pull,
            base_ref=refs.base,
            default_ref=refs.default,
            last_reviewed=None,
            incremental=False,
        )
        return pc.change, config

    def learnings(self, pull: PullInfo) -> list[Learning]:
        """The repository's learnings, for the prompt."""
        return active_learnings(self.ctx.ensure_store(), pull.repo_id)

    def client(self, config: Config) -> K3Client:
        settings = dataclasses.replace(self.ctx.llm, effort=config.conversation.effort)
        return K3Client(settings, on_usage=usage_recorder(self.ctx, self.job, self.job_kind))

    @property
    def job_kind(self) -> str:
        """The job's kind as usage, budgets and metrics name it: ``reply`` or ``ask``."""
        return "reply" if self.job.trigger == "reply" else "ask"

    def over_budget(self) -> ConversationOutcome | None:
        """The notice posted in the answer's place, when a monthly budget is spent."""
        refused = answer_refusal(self.ctx, self.job)
        if refused is None:
            return None
        metrics.budget_refused(self.job_kind)
        body = notice_body(
            f"Not answered: {refused.message}.", kind=self.kind, to=self.job.comment_id
        )
        posted = self.post_answer(body) if self.kind == "answer" else self.post_reply(body)
        return ConversationOutcome("budget", posted, f"not sent to the model: {refused.message}")

    def deadline(self) -> float | None:
        seconds = self.ctx.review_seconds
        return time.monotonic() + seconds if seconds else None

    # -- a reply in a thread -------------------------------------------------------------

    def thread(self, comment_id: int) -> GitNeuralThread | str:
        job = self.job
        threads = read_review_threads(self.gh, job.repo, job.pr_number, on_401=self.forget_token)
        return find_gitneural_thread(
            thread_of(threads, comment_id), job.comment_id, self.ctx.identity()
        )

    def answered_in_thread(self) -> int | None:
        """This job's answer, if it is in the thread now (read back from GitHub)."""
        if self.top_id is None:
            return None
        job = self.job
        threads = read_review_threads(self.gh, job.repo, job.pr_number, on_401=self.forget_token)
        return answer_in(thread_of(threads, self.top_id), job.comment_id, self.ctx.identity())

    def post_reply(self, body: str) -> int:
        assert self.top_id is not None
        job = self.job
        posted, _found = self.poster.thread_reply(
            job.repo, job.pr_number, self.top_id, body, already_posted=self.answered_in_thread
        )
        return posted

    # -- an answer on the PR -------------------------------------------------------------

    def pr_comments(self) -> list[IssueComment]:
        job = self.job
        return comments_since(
            self.gh, job.repo, job.pr_number, self.since, on_401=self.forget_token
        )

    def answered_on_pr(self, comments: list[IssueComment] | None = None) -> int | None:
        identity = self.ctx.identity()
        for c in self.pr_comments() if comments is None else comments:
            if (
                identity.is_rest_user(c.user)
                and answered_comment(c.body, "answer") == self.job.comment_id
            ):
                return c.id
        return None

    def post_answer(self, body: str) -> int:
        job = self.job
        posted, _found = self.poster.pr_comment(
            job.repo, job.pr_number, body, already_posted=self.answered_on_pr
        )
        return posted


def _time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
