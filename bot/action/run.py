"""``gitneural action``: one review of the workflow's pull request, posted by the App's
own job runner with the workflow's token.

The job runner does what it does for the App, step for step: it reads the PR and
GitNeural's earlier reviews (a review already posted for this run, or for this head and
trigger, is not posted again), reads the code (from the workspace when it holds the
commits, else by git into its mirror), reads settings and instructions from the base
branch, starts a check run if the token may, reviews with K3, and posts one review with
its suggestions, markers and 422 fallback. This module adds what a workflow expects of a
step: a line saying why there is nothing to do, the step summary, the outputs, the SARIF
file, and an exit code (1 when a finding reaches ``fail-on``).

``/describe`` and ``/help`` are answered by :mod:`bot.action.commands`. A ``/review``
comment is obeyed only when its author may write to the repository (the
permission read with the workflow's token, :func:`bot.gh.permissions.may_command`):
``author_association`` alone lets a read-only MEMBER or COLLABORATOR through.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TextIO

from bot.action import report
from bot.action.commands import answer_command
from bot.action.env import ActionEnv
from bot.action.events import Nothing, review_job, without_secrets
from bot.action.workspace import workspace_code
from bot.domain.results import Severity
from bot.errors import EXIT_FINDINGS, EXIT_OK, GitHubError
from bot.gh.api.client import token_writer
from bot.gh.permissions import may_command
from bot.jobs import ConversationJob, ReviewJob
from bot.llm.settings import LLMSettings
from bot.render.progress import ProgressLine
from bot.usecases.context import TOKEN_INSTALLATION, JobContext, TokenRun
from bot.usecases.review.run import JobOutcome, TransientJobError, add_eyes_reaction, run_review_job


def run_action(env: Mapping[str, str], out: TextIO) -> int:
    action = ActionEnv.from_env(env)
    job = review_job(action)
    if isinstance(job, Nothing):
        out.write(f"GitNeural: nothing to review: {job.reason}\n")
        report.write_outputs(action.output, {"findings": "0", "sarif": ""})
        return EXIT_OK
    if isinstance(job, ConversationJob):
        return answer_command(action, job, env, out)
    llm = LLMSettings.from_env(env)
    if not llm.api_key:
        withheld = without_secrets(action)
        if withheld is None:
            llm.require_key()  # raises: the workflow forgot to pass kimi-api-key
        notice = f"No review: kimi-api-key is empty; {withheld}."
        out.write(report.workflow_command("notice", notice) + "\n")
        link = action.pull_link(job.repo, job.pr_number)
        report.append_summary(action.step_summary, report.plain_summary(f"{link}: {notice}"))
        report.write_outputs(action.output, {"findings": "0", "sarif": ""})
        return EXIT_OK
    action.require_token()
    if job.effort is None and action.effort is not None:
        job = dataclasses.replace(job, effort=action.effort)
    ctx = JobContext.for_token(
        action.token,
        action.api_url,
        data=action.temp,
        llm=llm,
        bot_login=action.bot_login,
        github_pacing=action.github_pacing,
        run=TokenRun(
            local_code=workspace_code(action.workspace, lambda line: print(line, file=out)),
            settings_from_base=True,
            config_path=action.config_path,
            on_progress=ProgressLine(out),  # a line every 15 s in the job's log
        ),
    )
    return _review(action, job, ctx, out)


def _review(action: ActionEnv, job: ReviewJob, ctx: JobContext, out: TextIO) -> int:
    name = f"{job.repo}#{job.pr_number}"
    link = action.pull_link(job.repo, job.pr_number)
    try:
        if job.comment_id is not None:
            gh = ctx.github(TOKEN_INSTALLATION)
            if not may_command(gh, job.repo, job.requested_by):
                # The router let the association through; the token's read is the last word.
                reason = f"/review by {job.requested_by}, who may not write to {job.repo}"
                out.write(f"GitNeural: nothing to review: {reason}\n")
                report.write_outputs(action.output, {"findings": "0", "sarif": ""})
                return EXIT_OK
            add_eyes_reaction(job, ctx)  # 👀 first: the review takes minutes
        if ctx.bot_login is None:
            # A person's token (a PAT as github-token) posts as that person, GITHUB_TOKEN
            # as the workflow's bot: only that account's reviews are GitNeural's earlier
            # ones (another bot pasting GitNeural's marker is not GitNeural).
            ctx.bot_login = token_writer(ctx.github(TOKEN_INSTALLATION))
        out.write(f"GitNeural: reviewing {name} with Kimi K3…\n")
        out.flush()
        outcome = run_review_job(job, ctx)
    except (TransientJobError, GitHubError) as exc:
        raise report.RunFailedError(f"{name}: {report.for_a_single_run(str(exc))}") from None
    if outcome.status == "failed":
        error = outcome.error
        report.append_summary(
            action.step_summary,
            report.plain_summary(f"GitNeural could not review {link}: {outcome.detail}"),
        )
        if error is not None:
            raise error
        raise report.RunFailedError(f"{name}: {outcome.detail}")
    if outcome.result is not None and outcome.pull_change is not None:
        return _reviewed(action, outcome, out)
    return _already_or_nothing(action, outcome, link, out)


def _verdict(action: ActionEnv, worst: Severity | None, count: int, out: TextIO) -> int:
    if action.fail_on is None or worst is None or not worst.at_least(action.fail_on):
        return EXIT_OK
    found = f"{count} finding{'s' if count != 1 else ''}, the worst {worst}"
    message = f"GitNeural found {found}: fail-on is {action.fail_on}"
    out.write(report.workflow_command("error", message) + "\n")
    return EXIT_FINDINGS


def _reviewed(action: ActionEnv, outcome: JobOutcome, out: TextIO) -> int:
    result, pc = outcome.result, outcome.pull_change
    assert result is not None and pc is not None
    report.print_review(out, result, pc.change)
    sarif = report.write_sarif(result, pc.change, action.temp)
    posted = report.Posted("Review posted", outcome.review_url)
    report.append_summary(action.step_summary, report.review_summary(posted, result, pc.scope))
    report.write_outputs(
        action.output, {"findings": str(len(result.findings)), "sarif": str(sarif)}
    )
    out.write(f"GitNeural: review posted: {outcome.review_url} ({outcome.detail})\n")
    return _verdict(action, result.worst(), len(result.findings), out)


def _already_or_nothing(action: ActionEnv, outcome: JobOutcome, link: str, out: TextIO) -> int:
    """No new review: one was there already (a re-run), or the PR moved on or closed.

    A review found keeps its verdict: the marker records its worst finding, so a re-run
    of a job that failed on ``fail-on`` fails again rather than passing unreviewed.
    """
    found = outcome.found
    out.write(f"GitNeural: no new review ({outcome.status}): {outcome.detail}\n")
    if found is None:
        report.append_summary(
            action.step_summary, report.plain_summary(f"No new review of {link}: {outcome.detail}.")
        )
        report.write_outputs(action.output, {"findings": "0", "sarif": ""})
        return EXIT_OK
    marker = found.marker
    count = marker.findings
    text = f"{link} was already reviewed at `{marker.head[:12]}`: {outcome.detail}."
    report.append_summary(action.step_summary, report.plain_summary(text, found.html_url))
    report.write_outputs(
        action.output, {"findings": "" if count is None else str(count), "sarif": ""}
    )
    worst = Severity(marker.worst) if marker.worst else None
    return _verdict(action, worst, count or 0, out)
