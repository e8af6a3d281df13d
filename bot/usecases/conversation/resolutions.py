"""A thread a person resolved: its finding recorded as dismissed, if the thread is one of
GitNeural's and its lines are unchanged.

One GraphQL query reads the PR's threads (after ``GET /pulls/{n}``: closed or gone,
nothing to do); the thread must start with a finding of GitNeural's own account; the
dismissal is judged as a review judges it (:mod:`bot.usecases.review.dismissals`: resolved by a
person while not outdated, or a 👎 that counts). Nothing is posted and K3 is not asked,
so a redelivery or a retry only finds the dismissal recorded.
"""

from __future__ import annotations

from bot.gh.threads import read_review_threads, thread_of
from bot.store.finding_states import pull_findings
from bot.usecases.conversation.thread_run import ConversationOutcome, ConversationRun
from bot.usecases.review.dismissals import earlier_threads, gitneural_author, record_dismissals


def record_resolution(run: ConversationRun) -> ConversationOutcome:
    pull = run.open_pull()
    if pull is None:
        return ConversationOutcome("gone", detail="the pull request is closed or gone")
    job = run.job
    threads = read_review_threads(run.gh, job.repo, job.pr_number, on_401=run.forget_token)
    thread = thread_of(threads, job.comment_id)
    mine = earlier_threads([thread] if thread else [], gitneural_author(run.ctx.login()))
    if not mine:
        return ConversationOutcome(
            "ignored", detail="the thread is not one of GitNeural's findings"
        )
    store = run.ctx.ensure_store()
    rows = pull_findings(store, pull.repo_id, pull.number)
    if record_dismissals(store, run.gh, pull, mine, rows, run.forget_token):
        return ConversationOutcome("dismissed", job.comment_id, "the finding is dismissed")
    [fingerprint] = mine
    if any(r.fingerprint == fingerprint and r.state == "dismissed" for r in rows):
        return ConversationOutcome("ignored", detail="the finding was dismissed already")
    return ConversationOutcome(
        "ignored", detail="not dismissed: open again, outdated, or resolved by a bot"
    )
