"""The comment commands a workflow answers besides ``/review``: ``/describe`` and ``/help``
(those the registry marks ``in_action``), answered by the App's own use cases with the
workflow's token, so the answer is the App's, word for word.

The use case checks the asker's write access with the token, reads the pull request and
posts one comment (never twice: an answer already there ends the run). ``/help`` needs no
model key; ``/describe`` does, and without one the step fails saying which input to pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TextIO

from bot.action import report
from bot.action.env import ActionEnv
from bot.commands.dispatch import run_conversation
from bot.commands.registry import command_named
from bot.errors import EXIT_OK, GitHubError
from bot.gh.api.client import token_writer
from bot.jobs import ConversationJob
from bot.llm.settings import LLMSettings
from bot.usecases.context import TOKEN_INSTALLATION, JobContext
from bot.usecases.review.run import TransientJobError


def answer_command(
    action: ActionEnv, job: ConversationJob, env: Mapping[str, str], out: TextIO
) -> int:
    """Answer ``job``'s command on the pull request; the step's exit status."""
    name = f"{job.repo}#{job.pr_number}"
    llm = LLMSettings.from_env(env)
    if command_named(job.trigger).needs_model:
        llm.require_key()  # raises: the workflow forgot to pass kimi-api-key
    action.require_token()
    ctx = JobContext.for_token(
        action.token,
        action.api_url,
        data=action.temp,
        llm=llm,
        bot_login=action.bot_login,
        github_pacing=action.github_pacing,
    )
    try:
        if ctx.bot_login is None:
            # As for a review: the account the token posts as is the one whose earlier
            # answers count as GitNeural's.
            ctx.bot_login = token_writer(ctx.github(TOKEN_INSTALLATION))
        out.write(f"GitNeural: answering /{job.trigger} on {name}…\n")
        out.flush()
        outcome = run_conversation(job, ctx)
    except (TransientJobError, GitHubError) as exc:
        raise report.RunFailedError(f"{name}: {report.for_a_single_run(str(exc))}") from None
    if outcome.status == "failed":
        raise report.RunFailedError(f"{name}: /{job.trigger}: {outcome.detail}")
    out.write(f"GitNeural: /{job.trigger} {outcome.status}: {outcome.detail}\n")
    link = action.pull_link(job.repo, job.pr_number)
    report.append_summary(
        action.step_summary, report.plain_summary(f"/{job.trigger} on {link}: {outcome.detail}.")
    )
    report.write_outputs(action.output, {"findings": "0", "sarif": ""})
    return EXIT_OK
