"""The names the webhook publishes jobs under and the workers run them by: the one thing
the publishing side (:mod:`workers.celeryapp.publisher`) and the tasks
(:mod:`workers.celeryapp.tasks`) share."""

from __future__ import annotations

from typing import Final

REVIEW_TASK: Final = "gitneural.review"
EYES_TASK: Final = "gitneural.eyes"
CONVERSATION_TASK: Final = "gitneural.conversation"
