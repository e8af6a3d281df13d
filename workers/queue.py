"""``CeleryJobQueue``: the webhook's :class:`bot.jobs.JobQueue`, publishing to Celery.

``submit`` runs inside the webhook request, so it is short: record the PR's latest head
(before publishing, so a job never starts without its record), publish the ``eyes``
reaction (``/review`` only) to the fast queue, publish the review. A conversation job (a
reply in a thread, ``/ask``) goes to its own queue, alone. Anything the broker or
the head store refuses becomes :class:`QueueError`: the webhook answers 503 and forgets the
delivery, so GitHub's redelivery is queued. A reaction published before a refused review
is harmless: GitHub keeps one ``eyes`` per user.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

import kombu.exceptions

from bot.jobs import ConversationJob, QueueError, ReviewJob
from workers.locks import PRState, PRStateError, open_pr_state, pr_key
from workers.settings import WorkerSettings
from workers.task_names import CONVERSATION_TASK, EYES_TASK, REVIEW_TASK

if TYPE_CHECKING:
    from celery import Celery

log = logging.getLogger("gitneural.queue")


class CeleryJobQueue:
    def __init__(
        self, app: Celery, settings: WorkerSettings, *, state: PRState | None = None
    ) -> None:
        self._app = app
        self._settings = settings
        self._state = state if state is not None else open_pr_state(settings)
        # Creating a Connection object connects nothing; it names the transport's errors.
        conn = app.connection_for_write()
        try:
            self._errors: tuple[type[BaseException], ...] = (
                kombu.exceptions.KombuError,
                OSError,
                *conn.connection_errors,
                *conn.channel_errors,
            )
        finally:
            conn.release()

    def submit(self, job: ReviewJob | ConversationJob) -> None:
        if isinstance(job, ConversationJob):
            self._publish(
                CONVERSATION_TASK,
                {"job": {**job.to_dict(), "queued_at": job.queued_at or time.time()}},
                self._settings.conversation_queue,
                f"{job.repo}#{job.pr_number} {job.trigger} comment={job.comment_id}",
            )
            return
        try:
            seq = self._state.note_submitted(pr_key(job.repo, job.pr_number), job.head_sha)
        except PRStateError as exc:
            raise QueueError(str(exc)) from None
        payload = job.to_dict()
        if payload.get("queued_at") is None:
            payload["queued_at"] = time.time()  # the job's duration starts at the delivery
        # Shown in worker logs instead of the whole job (and cheaper than Celery's repr).
        label = f"{job.repo}#{job.pr_number} {job.trigger} delivery={job.delivery_id}"
        if job.comment_id is not None:
            self._publish(EYES_TASK, {"job": payload}, self._settings.fast_queue, label)
        self._publish(REVIEW_TASK, {"job": payload, "seq": seq}, self._settings.review_queue, label)

    def _publish(self, task: str, kwargs: dict[str, object], queue: str, label: str) -> None:
        try:
            # ``kwargsrepr``: shown in worker logs instead of the whole job (and cheaper).
            self._app.send_task(task, kwargs=kwargs, queue=queue, argsrepr="", kwargsrepr=label)
        except self._errors as exc:
            # The exception text may carry the broker URL (and its password): name the kind.
            raise QueueError(
                f"the broker did not accept the job ({type(exc).__name__}): check that it "
                "is running and that GITNEURAL_BROKER_URL is right"
            ) from None
