"""``/help``, answered once, without a model call.

GitHub requests (four when it is answered): the asker's write access (1, kept ten
minutes), the PR (1: closed or gone, nothing to do), its comments since the command (1:
an answer already posted ends the job), a git fetch of the default branch for the
repository's settings, and the answer (1), read back before any retry. The commands come
from the registry (:mod:`bot.commands`), handed in by the caller.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.gh.mirrors.cache import MirrorNotFoundError
from bot.git.repo import TreeSnapshot, resolve_commit
from bot.render.command_answers import CommandLine, help_body
from bot.settings.repository import trusted_config
from bot.usecases.conversation.thread_run import ConversationOutcome, ConversationRun
from bot.usecases.review.steps import fetch_mirror


def answer_help(run: ConversationRun, commands: Sequence[CommandLine]) -> ConversationOutcome:
    job = run.job
    opened = run.open_on_pr(eyes=False)  # no model: the answer is there at once
    if isinstance(opened, ConversationOutcome):
        return opened
    pull, _ = opened
    try:
        mirror, refs = fetch_mirror(run.ctx, job.installation_id, pull, default_only=True)
    except MirrorNotFoundError as exc:
        return ConversationOutcome("gone", detail=str(exc))
    config = trusted_config(TreeSnapshot(mirror, resolve_commit(mirror, refs.default)))
    if job.author_association not in config.github.allowed_associations:
        return ConversationOutcome(
            "ignored", detail=f"{job.author_association} may not ask (github.allowed_associations)"
        )
    posted = run.post_answer(help_body(commands, config, to=job.comment_id))
    return ConversationOutcome("answered", posted, f"{len(commands)} commands listed")
