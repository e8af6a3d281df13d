"""A reply in one of GitNeural's review threads, answered once.

GitHub requests (four when it is answered, the first the replier's write access, kept
ten minutes (:mod:`bot.usecases.conversation.dispatch`); the App's bot account is asked once per
process, a token minted once an hour): the PR (1: closed or gone, nothing to do); its
review threads (1 GraphQL query per 100 threads: the thread must be GitNeural's, and an
answer already there ends the job, before any model call); then git fetches into the
mirror, the repository's settings from its default branch, K3's ``submit_reply``, the
finding recorded as dismissed when K3 withdraws it, and the reply (1), read back before
any retry.
"""

from __future__ import annotations

import logging

from bot.domain.conversation import PostedFinding, ThreadEntry, ThreadQuestion
from bot.domain.diff import Side
from bot.gh.pulls import PullInfo
from bot.render.conversation import reply_body, visible_text
from bot.review import answer_thread
from bot.store.findings import Dismissal, DismissalReason, FindingFacts, dismiss_finding
from bot.usecases.conversation.thread_run import (
    ConversationOutcome,
    ConversationRun,
    GitNeuralThread,
)

log = logging.getLogger("gitneural.worker")

#: Thread replies shown to the model, the most recent ones.
MAX_ENTRIES = 40


def answer_in_thread(run: ConversationRun) -> ConversationOutcome:
    pull = run.open_pull()
    if pull is None:
        return ConversationOutcome("gone", detail="the pull request is closed or gone")
    assert run.job.in_reply_to is not None  # a reply job names the comment it answers
    found = run.thread(run.job.in_reply_to)
    if isinstance(found, str):
        return ConversationOutcome("ignored", detail=found)
    run.top_id = found.top.id
    if found.answered is not None:
        return ConversationOutcome("already-answered", found.answered, "answered before")
    ready = run.ready_for_model(pull)
    if isinstance(ready, ConversationOutcome):
        return ready
    change, config = ready
    question = _question(found)
    answer = answer_thread(
        change,
        question,
        config,
        run.client(config),
        deadline=run.deadline(),
        learnings=run.learnings(pull),
    )
    if answer.withdraw:
        _dismiss(run, pull, found, question.finding)
    body = reply_body(answer.body, withdraw=answer.withdraw, to=run.job.comment_id)
    posted = run.post_reply(body)
    withdrawn = " (finding withdrawn)" if answer.withdraw else ""
    return ConversationOutcome("answered", posted, f"in thread {found.top.id}{withdrawn}")


def _question(found: GitNeuralThread) -> ThreadQuestion:
    thread, top, marker = found.thread, found.top, found.marker
    start, end = thread.lines() or (1, 1)
    side: Side = "LEFT" if thread.side == "LEFT" else "RIGHT"
    finding = PostedFinding(
        path=thread.path,
        side=side,
        start_line=start,
        end_line=end,
        text=visible_text(top.body),
        severity=marker.severity or "unknown",
        fingerprint=marker.fingerprint,
    )
    replies = list(thread.comments[1:])
    upto = next(i for i, c in enumerate(replies) if c.id == found.reply.id)
    shown = replies[: upto + 1]
    truncated = len(shown) > MAX_ENTRIES
    entries = tuple(
        ThreadEntry(
            c.login,
            c is not found.reply and c.by_bot and c.login == top.login,
            visible_text(c.body),
        )
        for c in shown[-MAX_ENTRIES:]
    )
    return ThreadQuestion(
        finding, entries, found.reply.login, truncated or thread.truncated, thread.outdated
    )


def _dismiss(
    run: ConversationRun, pull: PullInfo, found: GitNeuralThread, finding: PostedFinding
) -> None:
    """Record the finding as dismissed, by the one whose reply K3 agreed with."""
    facts = FindingFacts(
        repository_id=pull.repo_id,
        repository=pull.repo,
        pr_number=pull.number,
        fingerprint=finding.fingerprint,
        head_sha=pull.head_sha,
        path=finding.path,
        side=finding.side,
        start_line=finding.start_line,
        end_line=finding.end_line,
        severity=finding.severity,
        title=_title(finding.text),
        comment_id=found.top.id,
        thread_node_id=found.thread.node_id or None,
    )
    dismissal = Dismissal(DismissalReason.WITHDRAWN, found.reply.login, found.reply.id)
    dismiss_finding(run.ctx.ensure_store(), facts, dismissal)
    log.info(
        "%s: finding %s on %s:%d withdrawn, recorded as dismissed",
        run.job.key,
        finding.fingerprint[:16],
        finding.path,
        finding.start_line,
    )


def _title(text: str) -> str | None:
    # The headline GitNeural wrote: "🟠 **major** · bug: **Title**".
    first = text.strip().split("\n", 1)[0]
    head, sep, title = first.partition(": **")
    return title.removesuffix("**")[:300] if sep and head else None
