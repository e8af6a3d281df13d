"""``CeleryJobQueue``: the webhook's :class:`bot.jobs.JobQueue`, publishing to Celery.

``submit`` runs inside the webhook request, so it is short: record the PR's latest head
(before anything else, so a job never starts without its record), put the job in the
review schedule (:mod:`workers.schedule.protocol`: its place in its installation's line, and the
worker host its repository prefers), publish the ``eyes`` reaction (``/review`` only) to
the fast queue (where the worker gives it only to a commenter with write access), and
publish the job's turn (:mod:`workers.celeryapp.turn_messages`), confirmed by the broker. A
conversation job (a reply in a thread, ``/ask``) goes to its own queue, alone.
Anything the broker or the stores refuse becomes :class:`QueueError`: the job is taken
back out of the schedule, the webhook answers 503 and forgets the delivery, so GitHub's
redelivery is queued. A reaction published before a refused turn is harmless: GitHub
keeps one ``eyes`` per user.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import TYPE_CHECKING

from bot.jobs import ConversationJob, QueueError, ReviewJob
from workers.celeryapp.task_names import CONVERSATION_TASK, EYES_TASK
from workers.celeryapp.turn_messages import TurnPublisher
from workers.schedule.protocol import QueuedJob, Schedule, ScheduleError, entry_for, open_schedule
from workers.settings import WorkerSettings
from workers.state.pr_lock import PRState, PRStateError, open_pr_state, pr_key

if TYPE_CHECKING:
    from celery import Celery

log = logging.getLogger("gitneural.queue")


class CeleryJobQueue:
    def __init__(
        self,
        app: Celery,
        settings: WorkerSettings,
        *,
        state: PRState | None = None,
        schedule: Schedule | None = None,
    ) -> None:
        self._app = app
        self._settings = settings
        self._state = state if state is not None else open_pr_state(settings)
        self.schedule = schedule if schedule is not None else open_schedule(settings)
        self._turns = TurnPublisher(app, settings, self.schedule)

    def submit(self, job: ReviewJob | ConversationJob) -> None:
        # The job's duration (gitneural_job_seconds) starts at the delivery.
        job = dataclasses.replace(job, queued_at=job.queued_at or time.time())
        if isinstance(job, ConversationJob):
            self._conversation(job)
            return
        try:
            seq = self._state.note_submitted(pr_key(job.repo, job.pr_number), job.head_sha)
            entry = self.entry(job, seq)
            self.schedule.enqueue(entry)
        except (PRStateError, ScheduleError) as exc:
            raise QueueError(str(exc)) from None
        # Shown in worker logs instead of the whole job (and cheaper than Celery's repr).
        label = f"{job.repo}#{job.pr_number} {job.trigger} delivery={job.delivery_id}"
        try:
            if job.comment_id is not None:
                self._app.send_task(
                    EYES_TASK,
                    kwargs={"job": job.to_dict()},
                    queue=self._settings.fast_queue,
                    argsrepr="",
                    kwargsrepr=label,
                )
            self._turns.give(entry.home, label)
        except self._turns.errors as exc:
            try:
                self.schedule.withdraw(entry)
            except ScheduleError as err:
                # Left in the schedule, it still gets a turn from a worker's sweep; the
                # redelivery GitHub may send is then reviewed once (found by its marker).
                log.warning("a refused job stays in the schedule: %s", err)
            raise _refused(exc) from None

    def _conversation(self, job: ConversationJob) -> None:
        label = f"{job.repo}#{job.pr_number} {job.trigger} comment={job.comment_id}"
        try:
            self._app.send_task(
                CONVERSATION_TASK,
                kwargs={"job": job.to_dict()},
                queue=self._settings.conversation_queue,
                argsrepr="",
                kwargsrepr=label,
            )
        except self._turns.errors as exc:
            raise _refused(exc) from None

    def entry(self, job: ReviewJob, seq: int | None) -> QueuedJob:
        return entry_for(job, seq, self._settings, self._turns.home(job.repo))


def _refused(exc: BaseException) -> QueueError:
    # The exception text may carry the broker URL (and its password): name the kind.
    return QueueError(
        f"the broker did not accept the job ({type(exc).__name__}): check that it "
        "is running and that GITNEURAL_BROKER_URL is right"
    )
