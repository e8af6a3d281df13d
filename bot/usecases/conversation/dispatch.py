"""One conversation job, from a queued :class:`~bot.jobs.ConversationJob` to one answer,
by the handler of its kind (a reply in one of GitNeural's review threads, a resolved
thread, or a command: which handler is the command registry's to say,
:mod:`bot.commands.dispatch`).

The Celery task calls the registry, which calls :func:`run_conversation_job`, and acts
on what comes back: a
:class:`ConversationOutcome`, or :class:`~bot.usecases.review.run.TransientJobError` for faults
worth retrying (model overload and 5xx, GitHub's 5xx and rate limits, the store out of
reach: a withdrawal must not be lost). What retrying cannot fix ends in one short notice
where the answer would be, never two (it carries the answer's marker): an exhausted model
quota says so. A notice is never posted in a thread that is not GitNeural's.

Every job but a resolution (``needs_permission=False``) first asks GitHub whether its
commenter may write to the repository (:func:`bot.gh.permissions.may_command`):
``author_association`` let the webhook queue it, but a MEMBER or a COLLABORATOR may have
read access only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from bot.errors import GitNeuralError, ModelQuotaError, StoreError
from bot.gh.permissions import may_command
from bot.gh.threads import read_review_threads, thread_of
from bot.jobs import ConversationJob
from bot.render.conversation import notice_body
from bot.text import one_line
from bot.usecases.context import JobContext
from bot.usecases.conversation.thread_run import ConversationOutcome, ConversationRun
from bot.usecases.errors import unfenced
from bot.usecases.review.run import TransientJobError

__all__ = ["ConversationOutcome", "Handler", "give_up", "run_conversation_job"]

#: The use case that answers one kind of conversation job.
Handler = Callable[[ConversationRun], ConversationOutcome]

log = logging.getLogger("gitneural.worker")

QUOTA_NOTICE = (
    "GitNeural could not answer: the model API's quota is exhausted. The App's operator "
    "needs to top up the Moonshot account; ask again afterwards."
)


def run_conversation_job(
    job: ConversationJob,
    ctx: JobContext,
    handle: Handler,
    *,
    needs_permission: bool = True,
    fence: Callable[[], None] = unfenced,
) -> ConversationOutcome:
    """Answer ``job``'s comment once, with ``handle`` (``fence``: :class:`ConversationRun`'s)."""
    run = ConversationRun(job, ctx, fence)
    try:
        if needs_permission and not may_command(
            run.gh, job.repo, job.requested_by, on_401=run.forget_token
        ):
            # Quiet, as for a NONE user at the webhook: no reaction, no answer, no model.
            detail = f"{job.requested_by} may not write to {job.repo}: not answered"
            return ConversationOutcome("ignored", detail=detail)
        return handle(run)
    except StoreError as exc:
        raise TransientJobError(str(exc)) from exc
    except GitNeuralError as exc:
        if exc.transient:
            raise TransientJobError(str(exc), exc.retry_after) from exc
        reason = one_line(str(exc)) or type(exc).__name__
        log.warning("conversation %s failed: %s", job.key, reason)
        text = (
            QUOTA_NOTICE
            if isinstance(exc, ModelQuotaError)
            else f"GitNeural could not answer: {reason}"
        )
        return ConversationOutcome("failed", _notify(run, text), reason)


def give_up(
    job: ConversationJob, ctx: JobContext, reason: str, *, fence: Callable[[], None]
) -> int | None:
    """After the last retry, say so where the answer would be (best effort), only while
    ``fence`` passes: the notice of a run that does not hold the comment's lock (never
    took it, or lost it) is left to the run that does."""
    run = ConversationRun(job, ctx, fence)
    if job.trigger == "resolved":
        return None
    try:
        run.poster.fence()  # before any read: a run that may not post has nothing to find
        if not may_command(run.gh, job.repo, job.requested_by, on_401=run.forget_token):
            return None
        if job.trigger == "reply":
            assert job.in_reply_to is not None
            found = run.thread(job.in_reply_to)
            if isinstance(found, str):
                return None
            run.top_id = found.top.id
        elif job.in_reply_to is not None:  # a learning command, answered in its thread
            threads = read_review_threads(run.gh, job.repo, job.pr_number)
            thread = thread_of(threads, job.comment_id)
            if thread is None or thread.first is None:
                return None
            run.top_id = thread.first.id
    except GitNeuralError as exc:
        log.warning("conversation %s: no notice after the last retry: %s", job.key, exc)
        return None
    return _notify(
        run, f"GitNeural could not answer after several attempts: {one_line(reason, 300)}"
    )


def _notify(run: ConversationRun, text: str) -> int | None:
    """One notice in place of the answer, unless an answer (or a notice) is there; a
    resolved thread is answered by nothing."""
    if run.job.trigger == "resolved":
        return None
    body = notice_body(text, kind=run.kind, to=run.job.comment_id)
    try:
        if run.kind == "answer":
            return run.answered_on_pr() or run.post_answer(body)
        if run.top_id is None:
            return None  # not known to be GitNeural's thread: say nothing there
        return run.answered_in_thread() or run.post_reply(body)
    except GitNeuralError as exc:
        log.warning("conversation %s: could not post the notice: %s", run.job.key, exc)
        return None
