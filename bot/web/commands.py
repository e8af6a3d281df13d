"""From a comment that starts with a command to its job, through the command registry
(:mod:`bot.commands`): the webhook knows no command by name.

A comment on the pull request (``issue_comment``) may be any command; a comment in a
review thread only one answered there (``in_threads``: the learning commands). Every
command is refused, with the reason in the delivery log, when its options cannot be
honoured, when its author's ``author_association`` is not allowed (the worker then asks
GitHub for write access, :func:`bot.gh.permissions.may_command`), or on a closed pull
request unless the command is answered there (``on_closed``).
"""

from __future__ import annotations

from bot.commands import Command, CommandError, Invocation, find_command
from bot.jobs import ConversationJob, ReviewJob
from bot.text import loggable
from bot.web import payload as p
from bot.web.decisions import Decision, ignore, without_installation
from bot.web.payload import Payload
from bot.web.settings import WebSettings


def command_decision(
    payload: Payload,
    delivery_id: str,
    settings: WebSettings,
    number: int,
    *,
    state_at: str,
    thread: int | None = None,
    in_thread: bool = False,
) -> Decision | None:
    """The decision about a comment that is a command; None for any other comment.

    ``state_at``: where the payload says whether the PR is closed; ``thread``: the first
    comment of the review thread the command was written in, where it is answered.
    """
    try:
        found = find_command(p.optional_text(payload, "comment.body"))
    except CommandError as exc:
        name = (p.optional_text(payload, "comment.body") or "").split(maxsplit=1)[0]
        return ignore(payload, f"{loggable(name[:20])} refused: {exc}", number)
    if found is None:
        return None
    command, invocation = found
    if in_thread and not command.in_threads:
        return None
    association = p.text(payload, "comment.author_association")
    if association not in settings.allowed_associations:
        return ignore(payload, f"/{command.name} by {loggable(association)} is not allowed", number)
    if not command.on_closed and p.optional_text(payload, state_at) == "closed":
        return ignore(payload, "pull request is closed", number)
    if refused := without_installation(payload):
        return refused
    job = _job(command, invocation, payload, delivery_id, number, thread)
    return Decision("queued", job, p.text(payload, "action"), job.repo, number)


def _job(
    command: Command,
    invocation: Invocation,
    payload: Payload,
    delivery_id: str,
    number: int,
    thread: int | None,
) -> ReviewJob | ConversationJob:
    installation, repo = (
        p.ident(payload, "installation.id"),
        p.text(payload, "repository.full_name"),
    )
    comment_id, login = p.ident(payload, "comment.id"), p.text(payload, "comment.user.login")
    association = p.text(payload, "comment.author_association")
    if command.job == "review":
        return ReviewJob(
            installation_id=installation,
            repo=repo,
            pr_number=number,
            head_sha=None,
            trigger="command",
            delivery_id=delivery_id,
            effort=invocation.options.get("effort"),
            full="full" in invocation.options,
            comment_id=comment_id,
            requested_by=login,
            author_association=association,
        )
    return ConversationJob(
        installation_id=installation,
        repo=repo,
        pr_number=number,
        trigger=command.name,
        comment_id=comment_id,
        delivery_id=delivery_id,
        in_reply_to=thread,
        requested_by=login,
        author_association=association,
        created_at=p.optional_text(payload, "comment.created_at"),
    )
