"""The tools a conversation ends with: ``submit_reply`` (a reply in a finding's thread)
and ``submit_answer`` (an answer to ``/ask``), and reading their calls.

Arguments are checked against their schemas in ``prompts/`` (the schemas the model was
given), so a bad call is explained in the schema's own terms in the one repair turn.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import prompts
from bot.review.agent.final import FinalTool
from bot.review.findings.submission import (
    SubmissionError,
    decode_arguments,
    extract_valid,
    schema_problems,
    schema_validator,
)

SUBMIT_REPLY = "submit_reply"
SUBMIT_ANSWER = "submit_answer"


@dataclass(frozen=True)
class Submitted:
    body: str
    withdraw: bool = False


def _tool(name: str, schema: str, description: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": prompts.tool_schema(schema),
        },
    }


def reply_tool() -> dict[str, Any]:
    return _tool(
        SUBMIT_REPLY,
        prompts.SUBMIT_REPLY_SCHEMA,
        "Submit your reply in the finding's thread: the answer, and whether you withdraw "
        "the finding. Call it exactly once.",
    )


def answer_tool() -> dict[str, Any]:
    return _tool(
        SUBMIT_ANSWER,
        prompts.SUBMIT_ANSWER_SCHEMA,
        "Submit your answer to the question. Call it exactly once.",
    )


def _final(tool: dict[str, Any], noun: str) -> FinalTool[Submitted]:
    name = str(tool["function"]["name"])
    validator = schema_validator(tool["function"]["parameters"])

    def validate(data: Any) -> Submitted:
        problems = schema_problems(validator, data)
        if not problems and not str(data["body"]).strip():
            problems = ["arguments.body: is blank"]
        if problems:
            raise SubmissionError(
                f"{name} arguments do not match the schema: " + "; ".join(problems)
            )
        return Submitted(str(data["body"]).strip(), bool(data.get("withdraw", False)))

    def repair(error: SubmissionError) -> str:
        keys = "body and withdraw (true or false)" if name == SUBMIT_REPLY else "body"
        return (
            f"Your {noun} could not be used: {error} Call `{name}` again, once, with "
            f"arguments that are a single JSON object with {keys} and no other keys. "
            "Do not answer in text."
        )

    return FinalTool(
        tool,
        lambda arguments: validate(decode_arguments(arguments, name)),
        lambda content: extract_valid(content, validate),
        repair,
        noun=noun,
        what_you_have="the answer you have",
    )


@functools.cache
def reply_final() -> FinalTool[Submitted]:
    return _final(reply_tool(), "reply")


@functools.cache
def answer_final() -> FinalTool[Submitted]:
    return _final(answer_tool(), "answer")
