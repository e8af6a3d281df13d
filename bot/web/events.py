"""From a verified delivery to a decision: a job to queue, or a reason to ignore it.

One small handler per event; handlers are pure (no GitHub call, no I/O) so the webhook
answers in milliseconds and the routing is tested without a network.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

from bot.jobs import JobError, ReviewJob
from bot.text import loggable
from bot.web import payload as p
from bot.web.commands import command_decision
from bot.web.conversation import on_review_comment, on_review_thread
from bot.web.decisions import Decision, ignore, sent_by_bot, without_installation
from bot.web.payload import Payload, PayloadError
from bot.web.settings import WebSettings

__all__ = ["HANDLERS", "Decision", "route"]

log = logging.getLogger("gitneural.web")

#: ``labeled``: with ``github.auto_review = "label"`` (a repository setting the worker
#: reads), adding the review label starts the review.
PR_ACTIONS = frozenset({"opened", "reopened", "ready_for_review", "synchronize", "labeled"})
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


Handler = Callable[[Payload, str, WebSettings], Decision]


def route(event: str, payload: Payload, delivery_id: str, settings: WebSettings) -> Decision:
    """Decide what ``payload`` asks for; raises :class:`PayloadError` for malformed ones."""
    handler = HANDLERS.get(event)
    if handler is None:
        return ignore(payload, f"event {loggable(event)!r} is not handled")
    try:
        return handler(payload, delivery_id, settings)
    except JobError as exc:
        raise PayloadError(str(exc)) from None


def _head_sha(payload: Payload) -> str:
    sha = p.text(payload, "pull_request.head.sha")
    if not _SHA.fullmatch(sha):
        raise PayloadError("payload pull_request.head.sha is not a commit id")
    return sha


def on_pull_request(payload: Payload, delivery_id: str, settings: WebSettings) -> Decision:
    action = p.text(payload, "action")
    number = p.ident(payload, "pull_request.number")
    if action not in PR_ACTIONS:
        return ignore(payload, f"pull_request {loggable(action)} does not trigger a review", number)
    if not settings.auto_review:
        return ignore(payload, "automatic reviews are off (GITNEURAL_AUTO_REVIEW)", number)
    bot = sent_by_bot(payload, settings)
    if bot:
        return ignore(payload, bot, number)
    if p.flag(payload, "pull_request.draft") and not settings.review_drafts:
        return ignore(payload, "draft pull request (GITNEURAL_REVIEW_DRAFTS is off)", number)
    if refused := without_installation(payload):
        return refused
    repo = p.text(payload, "repository.full_name")
    job = ReviewJob(
        installation_id=p.ident(payload, "installation.id"),
        repo=repo,
        pr_number=number,
        head_sha=_head_sha(payload),
        trigger=action,
        delivery_id=delivery_id,
        requested_by=p.text(payload, "sender.login"),
    )
    return Decision("queued", job, action, repo, number)


#: The name of GitNeural's check run (``bot.gh.checks.CHECK_NAME``; the web process does
#: not import the GitHub client to read it).
CHECK_NAME = "GitNeural"


def on_check_run(payload: Payload, delivery_id: str, settings: WebSettings) -> Decision:
    """The check run's "Re-run" button: a full review of the head it ran on, as if a
    person had asked with ``/review``."""
    action = p.text(payload, "action")
    if action != "rerequested":
        return ignore(payload, f"check_run {loggable(action)} does not trigger a review")
    if p.text(payload, "check_run.name") != CHECK_NAME:
        return ignore(payload, "another app's check run")
    pulls = p.section(payload, "check_run").get("pull_requests")
    if not isinstance(pulls, list) or not pulls or not isinstance(pulls[0], dict):
        # GitHub lists no pull request for a head pushed to a fork.
        return ignore(payload, "check run of no pull request of this repository")
    number = p.ident(pulls[0], "number")
    bot = sent_by_bot(payload, settings)
    if bot:
        return ignore(payload, bot, number)
    if refused := without_installation(payload):
        return refused
    sha = p.text(payload, "check_run.head_sha")
    if not _SHA.fullmatch(sha):
        raise PayloadError("payload check_run.head_sha is not a commit id")
    repo = p.text(payload, "repository.full_name")
    job = ReviewJob(
        installation_id=p.ident(payload, "installation.id"),
        repo=repo,
        pr_number=number,
        head_sha=sha,
        trigger="command",
        delivery_id=delivery_id,
        full=True,
        requested_by=p.text(payload, "sender.login"),
    )
    return Decision("queued", job, action, repo, number)


def on_issue_comment(payload: Payload, delivery_id: str, settings: WebSettings) -> Decision:
    action = p.text(payload, "action")
    if action != "created":
        return ignore(payload, f"issue_comment {loggable(action)} is not a command")
    if not p.has(payload, "issue.pull_request"):
        return ignore(payload, "comment on an issue, not on a pull request")
    number = p.ident(payload, "issue.number")
    bot = sent_by_bot(payload, settings)
    if bot:
        return ignore(payload, bot, number)
    decision = command_decision(payload, delivery_id, settings, number, state_at="issue.state")
    if decision is None:
        return ignore(payload, "not a command", number)
    return decision


def on_installation(payload: Payload, delivery_id: str, settings: WebSettings) -> Decision:
    action = p.text(payload, "action")
    account = p.optional_text(payload, "installation.account.login")
    installation = p.ident(payload, "installation.id")
    repos = payload.get("repositories") or payload.get("repositories_added") or []
    count = len(repos) if isinstance(repos, list) else 0
    log.info(
        "installation %s: id=%d account=%s repositories=%d",
        loggable(action),
        installation,
        loggable(account),
        count,
    )
    return ignore(payload, f"installation {loggable(action)} logged")


def on_ping(payload: Payload, delivery_id: str, settings: WebSettings) -> Decision:
    return ignore(payload, "pong")


HANDLERS: dict[str, Handler] = {
    "pull_request": on_pull_request,
    "issue_comment": on_issue_comment,
    "check_run": on_check_run,
    "pull_request_review_comment": on_review_comment,
    "pull_request_review_thread": on_review_thread,
    "installation": on_installation,
    "installation_repositories": on_installation,
    "ping": on_ping,
}
