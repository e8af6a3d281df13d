"""What a job's model requests cost, and the monthly budgets they must fit in.

Every answered request's tokens are added to the store (by installation, repository,
PR and kind) as they come, so a review that fails half-way is still paid for. Before a
review is sent, its prompt is estimated: if that would take any budget that applies
(``GITNEURAL_BUDGETS_FILE``) over its cap, the model is not asked. The PR is told once a
month, by one check run; the next push or redelivery says nothing new.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import cast

from bot import metrics
from bot.effort import Effort
from bot.errors import StoreError
from bot.jobs import ConversationJob, ReviewJob
from bot.review import PlanOptions, plan_review
from bot.settings.budgets import Refusal, month_of, refusal
from bot.settings.repository import Config

# The store's modules (SQLAlchemy, the store extra) are imported where a store is given:
# the runs of ``review --pr`` and the Action have none.
from bot.usage import Usage
from bot.usecases.context import JobContext
from bot.usecases.pull_change import PullChange
from bot.usecases.review.check_run import JobCheck

log = logging.getLogger("gitneural.worker")

BUDGET_TITLE = "Monthly token budget spent"


def usage_recorder(
    ctx: JobContext, job: ReviewJob | ConversationJob, kind: str
) -> Callable[[Usage], None]:
    """For ``K3Client(on_usage=…)``: each request's tokens into the store."""
    store = ctx.store

    def record(usage: Usage) -> None:
        if store is None:
            return
        from bot.store.usage import record_usage  # a store: the store extra is installed

        try:
            record_usage(
                store,
                installation_id=job.installation_id,
                repo=job.repo,
                pr_number=job.pr_number,
                kind=kind,
                usage=usage,
            )
        except StoreError as exc:
            # The review goes on: losing a usage row beats losing the review.
            log.warning("%s#%d: usage not recorded: %s", job.repo, job.pr_number, exc)

    return record


def budget_check(
    ctx: JobContext, job: ReviewJob, config: Config, build: Callable[[], PullChange]
) -> tuple[PullChange | None, Refusal | None]:
    """The change (built with ``build`` only when a budget applies, for its estimate) and
    why it must not be sent to the model, if a budget is spent."""
    if ctx.store is None or not ctx.budgets.limits_for(job.installation_id, job.repo):
        return None, None
    pc = build()
    return pc, budget_refusal(ctx, job, pc, config)


def budget_refusal(
    ctx: JobContext, job: ReviewJob, pc: PullChange, config: Config
) -> Refusal | None:
    """Why the review of ``pc`` must not be sent, if a budget that applies is spent."""
    limits = ctx.budgets.limits_for(job.installation_id, job.repo)
    if not limits or ctx.store is None:
        return None
    if pc.since is not None and not pc.change.diff.files:
        return None  # nothing new to review: nothing is sent anyway
    effort = cast(Effort, job.effort or config.review.effort)
    plan = plan_review(pc.change, config, PlanOptions(effort=effort, changed_last=pc.changed_last))
    month = month_of()
    from bot.store.usage import spent

    try:
        used = spent(ctx.store, month, job.installation_id, job.repo)
    except StoreError as exc:
        # Budgets guard spend, not reviews: an unreadable store does not stop the App.
        log.warning("%s#%d: budget not checked: %s", job.repo, job.pr_number, exc)
        return None
    return refusal(limits, used, plan.estimated_tokens, month)


def answer_refusal(ctx: JobContext, job: ConversationJob) -> Refusal | None:
    """Why an answer must not be sent to the model: a budget that applies is spent.

    A review's prompt is estimated before it is sent; an answer's is small and only
    known once the core has built it, so an answer is refused once the month's spend has
    reached a cap (it does not start over budget), and then says so in its place.
    """
    limits = ctx.budgets.limits_for(job.installation_id, job.repo)
    if not limits or ctx.store is None:
        return None
    month = month_of()
    from bot.store.usage import spent

    try:
        used = spent(ctx.store, month, job.installation_id, job.repo)
    except StoreError as exc:
        log.warning("%s: budget not checked: %s", job.key, exc)
        return None
    return refusal(limits, used, 0, month)


def tell_budget_spent(
    ctx: JobContext, job: ReviewJob, check: JobCheck, head_sha: str, refused: Refusal
) -> str:
    """One check run saying why, the first time this month for this PR; the job's
    detail."""
    metrics.budget_refused("review")
    reason = refused.message
    assert ctx.store is not None  # a refusal needs the store
    from bot.store.usage import claim_budget_notice

    try:
        first = claim_budget_notice(
            ctx.store,
            installation_id=job.installation_id,
            repo=job.repo,
            pr_number=job.pr_number,
            month=month_of(),
            head_sha=head_sha,
            kind="review",
        )
    except StoreError as exc:
        log.warning("%s#%d: budget notice not recorded: %s", job.repo, job.pr_number, exc)
        first = True  # better told twice than never
    if not first:
        return f"not sent to the model, the PR was told already: {reason}"
    check.start(head_sha)
    check.close("neutral", BUDGET_TITLE, f"Not reviewed: {reason}.")
    return f"not sent to the model: {reason}"
