"""The 👀 reaction GitNeural gives a command comment at once, before any queued work.

Only to a commenter with write access (:func:`bot.gh.permissions.may_command`, read here
in the worker: the webhook never calls GitHub). A read-only member gets what a NONE user
gets: nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from bot.errors import GitHubError
from bot.gh.permissions import may_command
from bot.jobs import ConversationJob, ReviewJob
from bot.usecases.context import JobContext
from bot.usecases.errors import TransientJobError, unfenced
from bot.usecases.poster import Poster

log = logging.getLogger("gitneural.worker")


def add_eyes_reaction(
    job: ReviewJob | ConversationJob, ctx: JobContext, fence: Callable[[], None] = unfenced
) -> None:
    """React ``eyes`` to the ``/review`` comment (GitHub keeps one per user: repeatable).

    ``fence``: the job's, when a run that holds it reacts; the fast queue's task reacts
    before any claim (a reaction repeated changes nothing), unfenced."""
    if job.comment_id is None:
        return
    gh = ctx.github(job.installation_id)

    def forget() -> None:
        ctx.forget_token(job.installation_id)

    try:
        if not may_command(gh, job.repo, job.requested_by, on_401=forget):
            log.info(
                "%s#%d: no eyes reaction: %s may not write",
                job.repo,
                job.pr_number,
                job.requested_by,
            )
            return
        Poster(gh, fence, forget).react(job.repo, job.pr_number, job.comment_id, "eyes")
    except GitHubError as exc:
        if exc.transient:
            raise TransientJobError(str(exc), exc.retry_after) from exc
        log.warning("%s#%d: no eyes reaction: %s", job.repo, job.pr_number, exc)
