"""The plain jobs a webhook produces and a worker consumes, and the queue between them:
a :class:`ReviewJob`, or a :class:`ConversationJob` (a reply or ``/ask`` to answer).

A job carries ids and small strings only: the worker mints its own installation token and
reads the pull request itself, so nothing secret or large ever sits in the broker.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol, get_args

from bot.effort import EFFORTS
from bot.errors import GitNeuralError

Trigger = Literal["opened", "reopened", "ready_for_review", "synchronize", "labeled", "command"]
TRIGGERS: Final[tuple[str, ...]] = get_args(Trigger)


class JobError(GitNeuralError):
    """A job dictionary that is not a valid :class:`ReviewJob` (a web/worker version skew)."""


class QueueError(GitNeuralError):
    """The queue could not accept a job; the webhook answers 503 so GitHub can redeliver."""


@dataclass(frozen=True)
class ReviewJob:
    installation_id: int
    #: ``"owner/name"``.
    repo: str
    pr_number: int
    #: ``None`` for ``/review``: the worker reviews the head current when it runs.
    head_sha: str | None
    #: One of :data:`TRIGGERS`.
    trigger: str
    #: ``X-GitHub-Delivery``; lets the worker recognise a job it has already run.
    delivery_id: str
    #: ``/review effort=low|high|max``; ``None`` means the repository's configured effort.
    effort: str | None = None
    #: ``/review full``: review the whole PR, not only what changed since the last review.
    full: bool = False
    #: The ``/review`` comment, for the ``eyes`` reaction.
    comment_id: int | None = None
    requested_by: str | None = None
    #: The commenter's ``author_association``, so the worker can also apply the
    #: repository's own ``github.allowed_associations`` from ``.gitneural.toml``.
    author_association: str | None = None
    #: When the webhook queued it (seconds since the epoch), for the job's duration.
    queued_at: float | None = None

    def __post_init__(self) -> None:
        _check(self)

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        if data["queued_at"] is None:
            del data["queued_at"]  # the message stays as it was for a job never timed
        return data

    @classmethod
    def from_dict(cls, d: Any) -> ReviewJob:
        """Rebuild a job from :meth:`to_dict` output; unknown keys are ignored so a newer
        web process can feed an older worker during a rolling upgrade."""
        if not isinstance(d, dict):
            raise JobError(f"a review job must be a JSON object, not {type(d).__name__}")
        known = {f.name for f in dataclasses.fields(cls)}
        try:
            return cls(**{k: v for k, v in d.items() if k in known})
        except TypeError as exc:
            raise JobError(f"invalid review job: {exc}") from None


_TYPES: Final[dict[str, tuple[type, ...]]] = {
    "installation_id": (int,),
    "repo": (str,),
    "pr_number": (int,),
    "head_sha": (str, type(None)),
    "trigger": (str,),
    "delivery_id": (str,),
    "effort": (str, type(None)),
    "full": (bool,),
    "comment_id": (int, type(None)),
    "requested_by": (str, type(None)),
    "author_association": (str, type(None)),
    "queued_at": (float, int, type(None)),
}


#: An owner or repository name as GitHub spells it (the mirror cache accepts the same):
#: anything else in a job would end up in API paths and clone URLs.
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")
#: GitHub's ids fit in a signed 64-bit integer, as do the lock and head records' keys.
_MAX_ID = 2**63 - 1


def _check(job: ReviewJob) -> None:
    for name, types in _TYPES.items():
        value = getattr(job, name)
        # bool is an int subclass; an id of True is a bug, not an id.
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise JobError(f"invalid review job: {name} has type {type(value).__name__}")
    ids = (job.installation_id, job.pr_number, job.comment_id or 1)
    if not all(0 < value <= _MAX_ID for value in ids):
        raise JobError(
            "invalid review job: installation_id, pr_number and comment_id must be "
            "positive 64-bit ids"
        )
    if not _valid_repo(job.repo):
        raise JobError(
            "invalid review job: repo must be 'owner/name' of letters, digits, '-', '_' and '.'"
        )
    if job.trigger not in TRIGGERS:
        raise JobError(f"invalid review job: trigger must be one of {', '.join(TRIGGERS)}")
    if job.effort is not None and job.effort not in EFFORTS:
        raise JobError(f"invalid review job: effort must be one of {', '.join(EFFORTS)}")


#: A conversation job's kind: ``reply``, ``resolved`` (a thread a person resolved: no
#: model call, nothing posted), or a command's name. Which kinds exist is the command
#: registry's to say (:mod:`bot.commands`); the worker refuses a kind it does not know,
#: loudly. Here only its shape is checked.
_KIND = re.compile(r"[a-z]{1,30}")


@dataclass(frozen=True)
class ConversationJob:
    """A reply in one of GitNeural's review threads, an ``/ask`` comment, or a learning
    command (``/learn``, ``/learnings``, ``/forget``), to answer; or a thread a person
    resolved (``resolved``: its first comment), whose finding may be dismissed by it (no
    model call, nothing posted).

    Keyed by the comment that asks (:attr:`key`): whatever delivered it, and however
    often, it is answered once.
    """

    installation_id: int
    repo: str
    pr_number: int
    #: ``reply`` (in a review thread), ``resolved``, or a command's name (``ask``,
    #: ``learn``, ``describe``…: :mod:`bot.commands`).
    trigger: str
    #: The comment that asks: the reply in the thread, or the ``/ask`` comment (for
    #: ``resolved``: the resolved thread's first comment).
    comment_id: int
    delivery_id: str
    #: In a review thread: its first comment (GitHub's ``in_reply_to_id``), where the
    #: answer goes. Always set for ``reply``; for a learning command asked in a thread.
    in_reply_to: int | None = None
    requested_by: str | None = None
    #: Checked again by the worker against the repository's ``allowed_associations``.
    author_association: str | None = None
    #: When the comment was written (ISO 8601, as GitHub sent it): ``/ask`` reads the
    #: PR's comments from then on, the question and any answer to it, in one request.
    created_at: str | None = None
    #: When the webhook queued it (seconds since the epoch): the job's duration, from
    #: delivery to answer, is measured from here.
    queued_at: float | None = None

    def __post_init__(self) -> None:
        _check_conversation(self)

    @property
    def key(self) -> str:
        return f"{self.repo.lower()}#{self.pr_number}:{self.trigger}:{self.comment_id}"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: Any) -> ConversationJob:
        if not isinstance(d, dict):
            raise JobError(f"a conversation job must be a JSON object, not {type(d).__name__}")
        known = {f.name for f in dataclasses.fields(cls)}
        try:
            return cls(**{k: v for k, v in d.items() if k in known})
        except TypeError as exc:
            raise JobError(f"invalid conversation job: {exc}") from None


_CONVERSATION_TYPES: Final[dict[str, tuple[type, ...]]] = {
    "installation_id": (int,),
    "repo": (str,),
    "pr_number": (int,),
    "trigger": (str,),
    "comment_id": (int,),
    "delivery_id": (str,),
    "in_reply_to": (int, type(None)),
    "requested_by": (str, type(None)),
    "author_association": (str, type(None)),
    "created_at": (str, type(None)),
}
_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{8,15}(?:Z|[+-][0-9]{2}:[0-9]{2})")


def _check_conversation(job: ConversationJob) -> None:
    for name, types in _CONVERSATION_TYPES.items():
        value = getattr(job, name)
        if not isinstance(value, types) or isinstance(value, bool):
            raise JobError(f"invalid conversation job: {name} has type {type(value).__name__}")
    ids = (job.installation_id, job.pr_number, job.comment_id, job.in_reply_to or 1)
    if not all(0 < value <= _MAX_ID for value in ids):
        raise JobError("invalid conversation job: its ids must be positive 64-bit integers")
    if not _valid_repo(job.repo):
        raise JobError(
            "invalid conversation job: repo must be 'owner/name' of letters, digits, '-', '_' "
            "and '.'"
        )
    if not _KIND.fullmatch(job.trigger):
        raise JobError("invalid conversation job: trigger must be a kind of lowercase letters")
    if job.trigger == "reply" and job.in_reply_to is None:
        raise JobError("invalid conversation job: a reply names the comment it answers")
    if job.created_at is not None and not _TIME.fullmatch(job.created_at):
        raise JobError("invalid conversation job: created_at is not an ISO 8601 time")


def _valid_repo(repo: str) -> bool:
    parts = repo.split("/")
    return len(parts) == 2 and all(_NAME.fullmatch(p) and p not in (".", "..") for p in parts)


class JobQueue(Protocol):
    """Where accepted jobs go (the Celery side implements it).

    ``submit`` must return quickly (it runs inside the webhook request) and either accept
    the job durably or raise :class:`QueueError`.
    """

    def submit(self, job: ReviewJob | ConversationJob) -> None: ...
