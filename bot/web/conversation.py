"""Deliveries in review threads: a reply to answer, a command written in a thread (the
registry's ``in_threads`` commands, :mod:`bot.web.commands`), a thread resolved.

A ``pull_request_review_comment`` that is a reply (``comment.in_reply_to_id`` set) by an
allowed commenter becomes a :class:`~bot.jobs.ConversationJob`. Whether the thread is
GitNeural's is for the worker to tell: only GitHub knows who wrote its first comment, and
the webhook never calls GitHub; a reply in someone else's thread ends there, without a
model call and without a word on the PR. Edited and deleted comments, new threads, bots
and commenters whose ``author_association`` is not allowed are answered 200 with the
reason. The association is only the cheap first filter: the worker asks GitHub whether
the commenter may write (:func:`bot.gh.permissions.may_command`) before anything else.

A ``pull_request_review_thread`` ``resolved`` by a person becomes a ``resolved`` job: the
worker reads the thread and, if it is one of GitNeural's findings and its lines are
unchanged, records the finding as dismissed (GitHub lets only people with write access
and the PR's author resolve threads).
"""

from __future__ import annotations

from bot.jobs import ConversationJob
from bot.text import loggable
from bot.web import payload as p
from bot.web.commands import command_decision
from bot.web.decisions import Decision, ignore, sent_by_bot, without_installation
from bot.web.payload import Payload
from bot.web.settings import WebSettings


def _refused(payload: Payload, settings: WebSettings, what: str, number: int) -> Decision | None:
    """Why the commenter or the PR cannot be answered, if so."""
    association = p.text(payload, "comment.author_association")
    if association not in settings.allowed_associations:
        return ignore(payload, f"{what} by {loggable(association)} is not answered", number)
    if refused := without_installation(payload):
        return refused
    return None


def _queued(
    payload: Payload, delivery_id: str, number: int, trigger: str, in_reply_to: int | None = None
) -> Decision:
    """A reply queued as its job."""
    repo = p.text(payload, "repository.full_name")
    job = ConversationJob(
        installation_id=p.ident(payload, "installation.id"),
        repo=repo,
        pr_number=number,
        trigger=trigger,
        comment_id=p.ident(payload, "comment.id"),
        delivery_id=delivery_id,
        in_reply_to=in_reply_to,
        requested_by=p.text(payload, "comment.user.login"),
        author_association=p.text(payload, "comment.author_association"),
        created_at=p.optional_text(payload, "comment.created_at"),
    )
    return Decision("queued", job, p.text(payload, "action"), repo, number)


def on_review_comment(payload: Payload, delivery_id: str, settings: WebSettings) -> Decision:
    action = p.text(payload, "action")
    number = p.ident(payload, "pull_request.number")
    if action != "created":
        reason = f"pull_request_review_comment {loggable(action)}: only new replies are answered"
        return ignore(payload, reason, number)
    bot = sent_by_bot(payload, settings)
    if bot:
        return ignore(payload, bot, number)
    # A command in a thread is answered in it: its first comment is the one replied to,
    # or the comment itself when it starts the thread.
    top = "comment.in_reply_to_id" if p.has(payload, "comment.in_reply_to_id") else "comment.id"
    command = command_decision(
        payload,
        delivery_id,
        settings,
        number,
        state_at="pull_request.state",
        thread=p.ident(payload, top),
        in_thread=True,
    )
    if command is not None:
        return command
    if not p.has(payload, "comment.in_reply_to_id"):
        return ignore(payload, "a new review comment, not a reply in a thread", number)
    if not (p.optional_text(payload, "comment.body") or "").strip():
        return ignore(payload, "an empty reply", number)
    refused = _refused(payload, settings, "a reply", number)
    if refused is not None:
        return refused
    if p.optional_text(payload, "pull_request.state") == "closed":
        return ignore(payload, "pull request is closed", number)
    return _queued(
        payload, delivery_id, number, "reply", p.ident(payload, "comment.in_reply_to_id")
    )


def on_review_thread(payload: Payload, delivery_id: str, settings: WebSettings) -> Decision:
    action = p.text(payload, "action")
    number = p.ident(payload, "pull_request.number")
    if action != "resolved":
        reason = f"pull_request_review_thread {loggable(action)}: only a resolution dismisses"
        return ignore(payload, reason, number)
    bot = sent_by_bot(payload, settings)
    if bot:
        return ignore(payload, bot, number)
    comments = p.section(payload, "thread").get("comments")
    first = comments[0] if isinstance(comments, list) and comments else None
    if not isinstance(first, dict):
        return ignore(payload, "a resolved thread without comments", number)
    if refused := without_installation(payload):
        return refused
    repo = p.text(payload, "repository.full_name")
    job = ConversationJob(
        installation_id=p.ident(payload, "installation.id"),
        repo=repo,
        pr_number=number,
        trigger="resolved",
        comment_id=p.ident(first, "id"),
        delivery_id=delivery_id,
        requested_by=p.text(payload, "sender.login"),
    )
    return Decision("queued", job, action, repo, number)
