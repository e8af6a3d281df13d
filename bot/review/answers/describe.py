"""``/describe``: K3 writes a title and description for the pull request (what, why, how
to test, risk) that its author can copy.

It sees the change as ``/ask`` does (:func:`bot.review.plan.plan_review`: files
selected, grown and packed, related code, the trusted instructions and learnings), the
pull request's title and description fenced as untrusted claims to check against the
code, and ends with ``submit_description``, checked against its schema (one repair turn).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import prompts
from bot.domain.change import Change
from bot.domain.conversation import Description
from bot.domain.learnings import Learning
from bot.llm.types import ModelClient
from bot.review.agent.final import FinalTool
from bot.review.answers.prompt import describe_messages
from bot.review.answers.run import answer_plan, converse
from bot.review.findings.submission import (
    SubmissionError,
    decode_arguments,
    extract_valid,
    schema_problems,
    schema_validator,
)
from bot.review.secrets.redacted_change import redacted_change
from bot.review.tools.toolbox import ToolLimits
from bot.settings.repository import Config

SUBMIT_DESCRIPTION = "submit_description"
FIELDS = ("title", "what", "why", "how_to_test", "risk")


def description_tool() -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": SUBMIT_DESCRIPTION,
            "description": "Submit the suggested title and description. Call it exactly once.",
            "parameters": prompts.tool_schema(prompts.SUBMIT_DESCRIPTION_SCHEMA),
        },
    }


def _validate(validator: Any, data: Any) -> Description:
    problems = schema_problems(validator, data)
    if not problems:
        problems = [f"arguments.{k}: is blank" for k in FIELDS if not str(data[k]).strip()]
    if problems:
        raise SubmissionError(
            f"{SUBMIT_DESCRIPTION} arguments do not match the schema: " + "; ".join(problems)
        )
    title, what, why, how_to_test, risk = (str(data[k]).strip() for k in FIELDS)
    return Description(title, what, why, how_to_test, risk)


@functools.cache
def description_final() -> FinalTool[Description]:
    tool = description_tool()
    validator = schema_validator(tool["function"]["parameters"])

    def repair(error: SubmissionError) -> str:
        return (
            f"Your description could not be used: {error} Call `{SUBMIT_DESCRIPTION}` again, "
            f"once, with a single JSON object of {', '.join(FIELDS)} and no other keys. "
            "Do not answer in text."
        )

    return FinalTool(
        tool,
        lambda arguments: _validate(validator, decode_arguments(arguments, SUBMIT_DESCRIPTION)),
        lambda content: extract_valid(content, lambda data: _validate(validator, data)),
        repair,
        noun="description",
        what_you_have="the description you have",
    )


def describe_change(
    change: Change,
    asker: str,
    config: Config,
    client: ModelClient,
    *,
    deadline: float | None = None,
    tool_limits: ToolLimits | None = None,
    learnings: Sequence[Learning] = (),
) -> Description:
    """K3's suggested title and description of the PR ``change``, asked for by ``asker``."""
    plan, with_tools = answer_plan(change, config, client, learnings)
    group = plan.groups[0] if plan.groups else None
    messages = describe_messages(
        asker,
        change=redacted_change(change),
        files=group.files if group else [],
        skipped=plan.skipped,
        instructions=plan.instructions,
        extra_context=group.extra_context if group else "",
        agentic=with_tools,
        learnings=plan.learnings,
    )
    described, stats = converse(
        description_final(), messages, change, config, client, with_tools, deadline, tool_limits
    )
    described.usage, described.model, described.effort = stats.usage, client.model, client.effort
    return described
