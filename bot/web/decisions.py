"""What the webhook decides about a delivery, and the checks every handler shares.

A :class:`Decision` holds a job to queue, or the reason the delivery is ignored
(answered 200 with it, visible in the App's delivery log).
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.jobs import ConversationJob, ReviewJob
from bot.web import payload as p
from bot.web.payload import Payload
from bot.web.settings import WebSettings


@dataclass(frozen=True)
class Decision:
    """What to do with a delivery; ``job is None`` means answer 200 with ``reason``."""

    reason: str
    job: ReviewJob | ConversationJob | None = None
    action: str | None = None
    repo: str | None = None
    pr: int | None = None


def ignore(payload: Payload, reason: str, pr: int | None = None) -> Decision:
    # Best effort, for the log line only: an ignored delivery is never refused for its shape.
    action = payload.get("action")
    repository = payload.get("repository")
    repo = repository.get("full_name") if isinstance(repository, dict) else None
    return Decision(
        reason=reason,
        action=action if isinstance(action, str) else None,
        repo=repo if isinstance(repo, str) else None,
        pr=pr,
    )


def sent_by_bot(payload: Payload, settings: WebSettings) -> str | None:
    """Why the sender must be ignored, if it must: bots (loops) and GitNeural itself."""
    login = p.text(payload, "sender.login")
    if settings.bot_login and login.lower() == settings.bot_login.lower():
        return "sent by GitNeural itself"
    if p.text(payload, "sender.type") == "Bot":
        return "sent by a bot"
    return None


def without_installation(payload: Payload) -> Decision | None:
    """A job needs the App's installation to mint its token: a delivery without one did
    not come from the App (a repository or organisation webhook) and is ignored."""
    if p.has(payload, "installation"):
        return None
    return ignore(payload, "no installation: deliveries must come from the GitHub App")
