"""Answering a reply in a finding's thread, or a ``/ask`` question, with K3.

Both run the review's own machinery: the change redacted (:func:`redacted_change`), the
trusted instructions from the default branch, the same read-only tools on the PR's head
snapshot (at ``high`` and ``max`` effort, as in a review), the same conversation loop
(preserved thinking, budgets, one repair turn), ending in ``submit_reply`` or
``submit_answer``. ``/ask`` sees the PR's change as a review would: files selected,
grown to their enclosing functions and packed into the token budget, with related code
(:func:`bot.review.plan.plan_review`); what does not fit is listed as skipped. Its
images (the ``/ask`` comment's, then the description's and the change's files', as
the entrance prepared them) follow the question's text, as a review's follow its
change, and the answer ends with the note on them. The texts of the thread and the
question are redacted like everything else sent.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any, TypeVar

from bot.domain.change import Change
from bot.domain.conversation import Answer, PullQuestion, ThreadEntry, ThreadQuestion
from bot.domain.learnings import Learning
from bot.llm.types import ModelClient
from bot.review.agent.final import FinalTool
from bot.review.agent.loop import LoopBudget, LoopStats, converse_until
from bot.review.answers.code import finding_code, finding_diff
from bot.review.answers.prompt import ask_messages, reply_messages
from bot.review.answers.tools import Submitted, answer_final, reply_final
from bot.review.context.instructions import load_instructions
from bot.review.context.learnings import learnings_for
from bot.review.images import TextOnlyFallback, ask_task_text, images_note, with_images
from bot.review.plan import PlanOptions, ReviewPlan, plan_review
from bot.review.secrets.redacted_change import redacted_change
from bot.review.secrets.redaction import redact_text
from bot.review.tools.toolbox import RepoTools, ToolLimits
from bot.settings.repository import Config

T = TypeVar("T")


def may_use_tools(config: Config, client: ModelClient, change: Change) -> bool:
    """Whether the answer may read the repository with tools (as a review would)."""
    return config.agent.enabled and client.effort != "low" and change.head is not None


def answer_plan(
    change: Change, config: Config, client: ModelClient, learnings: Sequence[Learning]
) -> tuple[ReviewPlan, bool]:
    """The PR's plan as a review of one group would see it, for an answer (``/ask``,
    ``/describe``), and whether the answer may use tools."""
    agentic = may_use_tools(config, client, change)
    options = PlanOptions(
        effort=client.effort,
        agentic=agentic,
        max_groups=1,
        learnings=learnings,
        routed=False,  # an answer, not a review: asked at its own effort
    )
    return plan_review(change, config, options), agentic


def converse(
    final: FinalTool[T],
    messages: list[dict[str, Any]],
    change: Change,
    config: Config,
    client: ModelClient,
    with_tools: bool,
    deadline: float | None,
    tool_limits: ToolLimits | None,
) -> tuple[T, LoopStats]:
    """The review's conversation loop, ending in ``final``: the PR head's read-only tools
    when ``with_tools``, the agent's budgets. Shared by replies, ``/ask`` and ``/describe``."""
    budget = LoopBudget.for_agent(config.agent, deadline)
    tools = RepoTools(change.head, limits=tool_limits) if with_tools and change.head else None
    return converse_until(
        final,
        client,
        messages,
        tools=tools,
        budget=budget,
        max_completion_tokens=config.review.max_completion_tokens,
    )


def _run(
    final: FinalTool[Submitted],
    messages: list[dict[str, Any]],
    change: Change,
    config: Config,
    client: ModelClient,
    with_tools: bool,
    deadline: float | None,
    tool_limits: ToolLimits | None,
) -> Answer:
    started = time.monotonic()
    submitted, stats = converse(
        final, messages, change, config, client, with_tools, deadline, tool_limits
    )
    return Answer(
        body=submitted.body,
        withdraw=submitted.withdraw,
        usage=stats.usage,
        model=client.model,
        effort=client.effort,
        duration_s=time.monotonic() - started,
        tool_calls=stats.tool_calls,
    )


def _redacted(question: ThreadQuestion) -> ThreadQuestion:
    entries = tuple(
        ThreadEntry(e.author, e.by_gitneural, redact_text(e.body)[0]) for e in question.entries
    )
    finding = dataclasses.replace(question.finding, text=redact_text(question.finding.text)[0])
    return dataclasses.replace(question, finding=finding, entries=entries)


def answer_thread(
    change: Change,
    question: ThreadQuestion,
    config: Config,
    client: ModelClient,
    *,
    deadline: float | None = None,
    tool_limits: ToolLimits | None = None,
    learnings: Sequence[Learning] = (),
) -> Answer:
    """K3's reply to the last entry of ``question``'s thread, about the PR ``change``;
    ``learnings``: the repository's, shown after the instructions when they apply."""
    safe = redacted_change(change)
    shown = _redacted(question)
    agentic = may_use_tools(config, client, change)
    messages = reply_messages(
        shown,
        change=safe,
        instructions=load_instructions(
            safe.trusted, config.review.instructions, config.review.instructions_max_chars
        ),
        diff_text=finding_diff(safe.diff.get(shown.finding.path), shown.finding),
        code_text=finding_code(change, shown.finding),
        agentic=agentic,
        learnings=learnings_for(learnings, change),
    )
    return _run(reply_final(), messages, change, config, client, agentic, deadline, tool_limits)


def answer_question(
    change: Change,
    question: PullQuestion,
    config: Config,
    client: ModelClient,
    *,
    deadline: float | None = None,
    tool_limits: ToolLimits | None = None,
    learnings: Sequence[Learning] = (),
) -> Answer:
    """K3's answer to ``/ask``, seeing the PR ``change`` as a review would (learnings
    included)."""
    plan, agentic = answer_plan(change, config, client, learnings)
    group = plan.groups[0] if plan.groups else None
    messages = with_images(
        ask_messages(
            PullQuestion(redact_text(question.question)[0], question.asker),
            change=redacted_change(change),
            files=group.files if group else [],
            skipped=plan.skipped,
            instructions=plan.instructions,
            extra_context=group.extra_context if group else "",
            agentic=agentic,
            learnings=plan.learnings,
        ),
        plan.images,
        task=ask_task_text(len(plan.images)),
        comment="the /ask comment",
    )
    # A text-only server's refusal of the images: asked again without them.
    fallback = TextOnlyFallback(client)
    sent_to = fallback if plan.images else client
    answer = _run(answer_final(), messages, change, config, sent_to, agentic, deadline, tool_limits)
    note = images_note(plan.images, plan.images_named, fallback.refused, work="answer")
    return dataclasses.replace(answer, body=f"{answer.body}\n\n{note}") if note else answer
