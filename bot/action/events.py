"""From the workflow's event to a review job, through the App's own router.

``pull_request`` and ``pull_request_target`` review the pull request; an
``issue_comment`` that is a command is read by the App's command registry
(:mod:`bot.commands`), allowed by the same gate as the App (author association, bots and
GitNeural itself ignored, the comment's options): ``/review`` asks for a review,
``/describe`` and ``/help`` are answered as the App answers them (``in_action``), and a
command the Action does not run is named in the reason. The job
runner applies the repository's trigger policy to automatic reviews, as for the App. The
App's deployment-wide switches are left open here (automatic reviews, drafts): for a
workflow, the repository's ``.gitneural.toml`` on the base branch decides, as the job
runner reads it. Everything else is not GitNeural's to act on, and says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.action.env import ActionEnv
from bot.commands import commands
from bot.jobs import ConversationJob, ReviewJob
from bot.usecases.context import TOKEN_INSTALLATION
from bot.web.events import route
from bot.web.payload import PayloadError
from bot.web.settings import WebSettings

#: The workflow's event -> the webhook event the App's router knows it as.
EVENTS = {
    "pull_request": "pull_request",
    "pull_request_target": "pull_request",
    "issue_comment": "issue_comment",
}
#: No webhook reaches the Action; the router's settings only need one to exist.
_NO_WEBHOOK = "unused: the action is given its event, not sent a webhook"


@dataclass(frozen=True)
class Nothing:
    """Nothing to review, and why (one line for the job's log)."""

    reason: str


def _settings(action: ActionEnv) -> WebSettings:
    return WebSettings(
        webhook_secret=_NO_WEBHOOK,
        bot_login=action.bot_login,
        allowed_associations=action.allowed_associations,
        review_drafts=True,
        auto_review=True,
        data_dir=action.temp,
    )


def review_job(action: ActionEnv) -> ReviewJob | ConversationJob | Nothing:
    """The review (or the command the Action answers) the event asks for, or why there
    is none."""
    event = EVENTS.get(action.event_name)
    if event is None:
        known = ", ".join(EVENTS)
        return Nothing(f"the {action.event_name} event is not one GitNeural reviews on ({known})")
    # A workflow's event carries no installation: the job stands for the token's.
    payload = {**action.event, "installation": {"id": TOKEN_INSTALLATION}}
    try:
        decision = route(event, payload, action.delivery_id, _settings(action))
    except PayloadError as exc:
        raise PayloadError(f"the {action.event_name} event in GITHUB_EVENT_PATH: {exc}") from None
    if decision.job is None:
        return Nothing(decision.reason)
    if not isinstance(decision.job, ReviewJob):
        what = decision.job.trigger
        command = commands().get(what)
        if command is None or not command.in_action:
            runs = ", ".join(f"/{c.name}" for c in commands().values() if c.in_action)
            asked = "a reply in a thread" if what == "reply" else f"/{what}"
            return Nothing(f"{asked} is answered by the GitHub App; the Action runs {runs}")
    if decision.job.repo.lower() != action.repository.lower():
        return Nothing(f"the event is about {decision.job.repo}, not {action.repository}")
    return decision.job


def _text(obj: Any, *path: str) -> str:
    for key in path:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj if isinstance(obj, str) else ""


def without_secrets(action: ActionEnv) -> str | None:
    """Why the run was given no secrets, if GitHub withholds them (a ``pull_request`` from
    a fork); None when they should be there. Dependabot's runs get no secrets either, but
    its pull requests are a bot's, which the router already set aside."""
    if action.event_name != "pull_request":
        return None
    pull = action.event.get("pull_request")
    head = _text(pull, "head", "repo", "full_name")
    base = _text(pull, "base", "repo", "full_name") or action.repository
    if head.lower() != base.lower():  # a deleted fork has no head repository at all
        return (
            "a pull request from a fork gets no secrets on pull_request: review those with "
            "pull_request_target (GitNeural never runs their code; see its README)"
        )
    return None
