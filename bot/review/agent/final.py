"""How a conversation with K3 ends: the tool the model must call, and reading its call.

A review ends in ``submit_review``; a reply in a review thread in ``submit_reply``; an
answer to ``/ask`` in ``submit_answer``. The loop (:mod:`bot.review.agent.loop`)
is the same for all: only the tool, its parser and the words said to the model differ.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from bot.review.findings.submission import (
    Submission,
    SubmissionError,
    extract_submission,
    parse_submission,
    repair_message,
)
from bot.review.prompt import submit_review_tool

T = TypeVar("T")


@dataclass(frozen=True)
class FinalTool(Generic[T]):
    """The tool a conversation ends with, and how its arguments become a result."""

    #: The OpenAI ``function`` tool offered first, in every turn.
    definition: dict[str, Any]
    #: A call's arguments to the result; raises :class:`SubmissionError` (its message is
    #: fit for the repair turn).
    parse: Callable[[str], T]
    #: A valid result written in ``content`` instead of a call, or None.
    extract: Callable[[str], T | None]
    #: The repair turn's text for a :class:`SubmissionError`.
    repair: Callable[[SubmissionError], str]
    #: What the model submits: "review", "reply", "answer".
    noun: str
    #: What the model is told to submit with when its budget is spent.
    what_you_have: str

    @property
    def name(self) -> str:
        return str(self.definition["function"]["name"])


@functools.cache
def review_final() -> FinalTool[Submission]:
    return FinalTool(
        submit_review_tool(),
        parse_submission,
        extract_submission,
        repair_message,
        noun="review",
        what_you_have="the findings you have",
    )
