"""``/learn RULE``, ``/learnings`` and ``/forget ID``, answered once, without a model.

GitHub requests (four when it is answered): the commenter's write access (1, kept ten
minutes: :mod:`bot.usecases.conversation.dispatch`), the PR (1: gone, nothing to do; a closed PR
is answered too), then, on the PR, its comments since the command (1), or, in a review
thread, its threads (1 GraphQL query per 100 threads): the command as it is now, and an
answer already there, which ends the job before anything is stored. Then a git fetch of
the default branch into the mirror for the repository's settings (the commenter must
still be in its ``github.allowed_associations``), the store (the rule is keyed by the
repository's id and by the command's comment, so a job run twice stores one rule; a
forgotten rule remembers the ``/forget`` that did it), and the answer (1), read back
before any retry. A command in a review thread is answered in it, and ``/learn`` there
is for the thread's file only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from bot.domain.learnings import MAX_RULE_CHARS, LearningCommand, forget_id
from bot.gh.mirrors.cache import MirrorNotFoundError
from bot.gh.pulls import PullInfo, read_pull
from bot.gh.threads import read_review_threads, thread_of
from bot.git.repo import TreeSnapshot, resolve_commit
from bot.render import learnings as say
from bot.review import select_learnings
from bot.settings.repository import trusted_config
from bot.store.learnings import MAX_STORED, Taught, active_learnings, forget, learn
from bot.text import printable
from bot.usecases.conversation.thread_run import ConversationOutcome, ConversationRun, answer_in
from bot.usecases.review.steps import fetch_mirror

log = logging.getLogger("gitneural.worker")


#: The learning command a comment says (the command's grammar, :mod:`bot.commands.learn`).
ReadCommand = Callable[[str | None], LearningCommand | None]


def answer_learning(run: ConversationRun, read: ReadCommand) -> ConversationOutcome:
    job = run.job
    pull = read_pull(run.gh, job.repo, job.pr_number, on_401=run.forget_token)
    if pull is None:
        return ConversationOutcome("gone", detail="the pull request is gone")
    found = _command(run, read)
    if isinstance(found, ConversationOutcome):
        return found
    command, path = found
    if command.name != job.trigger:
        return ConversationOutcome("ignored", detail=f"the comment is no longer /{job.trigger}")
    refused = _not_allowed(run, pull)
    if refused is not None:
        return ConversationOutcome("ignored", detail=refused)
    text, detail = _act(run, pull, command, path)
    body = say.answer(text, kind=run.kind, to=job.comment_id)
    posted = run.post_reply(body) if run.kind == "reply" else run.post_answer(body)
    return ConversationOutcome("answered", posted, detail)


def _command(
    run: ConversationRun, read: ReadCommand
) -> tuple[LearningCommand, str | None] | ConversationOutcome:
    """The command as the comment says it now, and the path of its thread (None on the
    PR); or the outcome when it is answered already, gone or no command any more."""
    job = run.job
    if job.in_reply_to is None:
        comments = run.pr_comments()
        answered = run.answered_on_pr(comments)
        body = next((c.body for c in comments if c.id == job.comment_id), None)
        path = None
    else:
        threads = read_review_threads(run.gh, job.repo, job.pr_number, on_401=run.forget_token)
        thread = thread_of(threads, job.comment_id)
        comment = thread.comment(job.comment_id) if thread is not None else None
        if thread is None or comment is None or thread.first is None:
            return ConversationOutcome("gone", detail="the command's comment is gone")
        run.top_id = thread.first.id
        answered = answer_in(thread, job.comment_id, run.ctx.identity())
        body, path = comment.body, thread.path or None
    if answered is not None:
        return ConversationOutcome("already-answered", answered, "answered before")
    if body is None:
        return ConversationOutcome("gone", detail="the command's comment is gone")
    command = read(body)
    if command is None:
        return ConversationOutcome("ignored", detail="the comment is no longer a command")
    return command, path


def _not_allowed(run: ConversationRun, pull: PullInfo) -> str | None:
    """Why the commenter may not teach this repository (its settings, from the default
    branch, may allow fewer than the App's defaults), if so."""
    job = run.job
    try:
        mirror, refs = fetch_mirror(run.ctx, job.installation_id, pull, default_only=True)
    except MirrorNotFoundError as exc:
        return str(exc)
    config = trusted_config(TreeSnapshot(mirror, resolve_commit(mirror, refs.default)))
    if job.author_association not in config.github.allowed_associations:
        return f"{job.author_association} may not teach (github.allowed_associations)"
    return None


def _act(
    run: ConversationRun, pull: PullInfo, command: LearningCommand, path: str | None
) -> tuple[str, str]:
    """What the command does to the store: the answer's text and the job's detail."""
    store, job = run.ctx.ensure_store(), run.job
    if command.name == "learnings":
        rules = active_learnings(store, pull.repo_id)
        return say.listing_text(rules), f"{len(rules)} learning(s) listed"
    if command.name == "forget":
        wanted = forget_id(command.argument)
        if wanted is None:
            return say.FORGET_USAGE, "the usage: no id"
        state, rule = forget(store, pull.repo_id, wanted, job.requested_by or "", job.comment_id)
        if state == "unknown" or rule is None:
            return say.unknown_text(wanted), f"no learning #{wanted}"
        if state == "forgotten-before":
            return say.forgotten_before_text(wanted), f"#{wanted} was forgotten before"
        log.info("%s: learning #%d forgotten", job.key, wanted)
        return say.forgot_text(rule), f"forgot #{wanted}"
    rule_text = printable(command.argument).strip()
    if not rule_text:
        return say.LEARN_USAGE, "the usage: no rule"
    if len(rule_text) > MAX_RULE_CHARS:
        return say.too_long_text(len(rule_text)), "the rule is too long"
    taught = Taught(
        repository_id=pull.repo_id,
        repository=pull.repo,
        text=rule_text,
        path=path,
        author=job.requested_by or "",
        pr_number=job.pr_number,
        comment_id=job.comment_id,
    )
    learnt = learn(store, taught)
    if learnt is None:
        return say.full_text(MAX_STORED), "the repository keeps the most learnings already"
    log.info("%s: learning #%d stored%s", job.key, learnt.id, " for a path" if path else "")
    # Repository-wide rules alone past what a prompt shows: the newest are left out.
    over = bool(select_learnings(active_learnings(store, pull.repo_id), ()).left_out)
    return say.learnt_text(learnt, over_cap=over), f"learnt #{learnt.id}"
