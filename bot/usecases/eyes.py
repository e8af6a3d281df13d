"""The 👀 reaction GitNeural gives a command comment at once, before any queued work.

Only to a commenter with write access (:func:`bot.gh.permissions.may_command`, read here
in the worker: the webhook never calls GitHub). A read-only member gets what a NONE user
gets: nothing.
"""

from __future__ import annotations

import logging

from bot.errors import GitHubError
from bot.gh.api.errors import github_errors
from bot.gh.permissions import may_command
from bot.gh.pulls import lazy_repo
from bot.jobs import ConversationJob, ReviewJob
from bot.usecases.context import JobContext
from bot.usecases.errors import TransientJobError

log = logging.getLogger("gitneural.worker")


def add_eyes_reaction(job: ReviewJob | ConversationJob, ctx: JobContext) -> None:
    """React ``eyes`` to the ``/review`` comment (GitHub keeps one per user: repeatable)."""
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
        with github_errors("adding the eyes reaction", forget):
            issue = lazy_repo(gh, job.repo).get_issue(job.pr_number)
            issue.get_comment(job.comment_id).create_reaction("eyes")
    except GitHubError as exc:
        if exc.transient:
            raise TransientJobError(str(exc), exc.retry_after) from exc
        log.warning("%s#%d: no eyes reaction: %s", job.repo, job.pr_number, exc)
