"""The review core, and its public face: what the entrances, the renderers and the hook
import (always from here, or from :mod:`bot.domain`; never from a module inside).

:func:`review` runs the whole pipeline (:mod:`bot.review.pipeline`), :func:`plan_review`
everything before the model (:mod:`bot.review.plan`). The stages, in the order the
pipeline runs them:

0. ``route``: the change's effort and endpoint, decided from the change alone (a
   formatting-only change, ``formatting``, is sent nowhere);
1. ``selection``: which files are reviewed, and why the others are not;
2. ``secrets``: committed secrets reported, and redacted from all the model will see;
3. ``context``: each hunk grown to the function or class around it;
4. ``budget``: the files packed into the token budget, or a change too large for one
   prompt split into groups of related files;
5. ``related``: callers and definitions up front, in the room left;
6. ``prompt``: the chat messages, rendered from ``prompts/*.j2``;
7. ``agent``: the conversation with K3, read-only ``tools`` at hand, the groups of a large
   change in parallel;
8. ``findings``: what the model reported, parsed, then checked against the real change
   (the quoted evidence, anchoring, suggestions, duplicates, cap).

:func:`answer_thread`, :func:`answer_question` and :func:`describe_change` (``answers``)
answer developers who talk back, in a finding's thread, with ``/ask`` or ``/describe``,
on the same stages and the same loop. They, and :func:`review`, take the repository's
learnings (``context.learnings``: the rules taught with ``/learn``, shown after the
trusted instructions, within :data:`LEARNINGS_LIMIT`).

The names load on first use (PEP 562): ``from bot.review import plan_review`` imports the
planning stages only. The hook plans a review, and keys its result cache on
:data:`PROMPT_VERSION`, before it knows whether a request is sent; importing the agent
loop, the answers and the pipeline for that made most of its start-up (issue 37).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.review.agent.parallel import ReviewGroup
    from bot.review.answers.describe import describe_change
    from bot.review.answers.run import answer_question, answer_thread
    from bot.review.context.learnings import LIMIT_TEXT as LEARNINGS_LIMIT
    from bot.review.context.learnings import select_learnings
    from bot.review.findings.anchor import find_file
    from bot.review.findings.evidence import EVIDENCE_WINDOW
    from bot.review.findings.side_text import SideText, side_text, split_lines
    from bot.review.findings.suggestions import SuggestionError, apply_suggestion, replacement_lines
    from bot.review.pipeline import review
    from bot.review.plan import PlanOptions, ReviewPlan, plan_review
    from bot.review.prompt import PROMPT_VERSION
    from bot.review.related.finder import RelatedLimits
    from bot.review.route import DOC_EXTENSIONS, SENSITIVE, decide_route
    from bot.review.token_estimate import estimate_tokens
    from bot.review.tools.toolbox import ToolLimits

#: Each public name: the module that holds it, and its name there.
_HOMES: dict[str, tuple[str, str]] = {
    "ReviewGroup": ("bot.review.agent.parallel", "ReviewGroup"),
    "describe_change": ("bot.review.answers.describe", "describe_change"),
    "answer_question": ("bot.review.answers.run", "answer_question"),
    "answer_thread": ("bot.review.answers.run", "answer_thread"),
    "LEARNINGS_LIMIT": ("bot.review.context.learnings", "LIMIT_TEXT"),
    "select_learnings": ("bot.review.context.learnings", "select_learnings"),
    "find_file": ("bot.review.findings.anchor", "find_file"),
    "EVIDENCE_WINDOW": ("bot.review.findings.evidence", "EVIDENCE_WINDOW"),
    "SideText": ("bot.review.findings.side_text", "SideText"),
    "side_text": ("bot.review.findings.side_text", "side_text"),
    "split_lines": ("bot.review.findings.side_text", "split_lines"),
    "SuggestionError": ("bot.review.findings.suggestions", "SuggestionError"),
    "apply_suggestion": ("bot.review.findings.suggestions", "apply_suggestion"),
    "replacement_lines": ("bot.review.findings.suggestions", "replacement_lines"),
    "review": ("bot.review.pipeline", "review"),
    "PlanOptions": ("bot.review.plan", "PlanOptions"),
    "ReviewPlan": ("bot.review.plan", "ReviewPlan"),
    "plan_review": ("bot.review.plan", "plan_review"),
    "PROMPT_VERSION": ("bot.review.prompt", "PROMPT_VERSION"),
    "RelatedLimits": ("bot.review.related.finder", "RelatedLimits"),
    "DOC_EXTENSIONS": ("bot.review.route", "DOC_EXTENSIONS"),
    "SENSITIVE": ("bot.review.route", "SENSITIVE"),
    "decide_route": ("bot.review.route", "decide_route"),
    "estimate_tokens": ("bot.review.token_estimate", "estimate_tokens"),
    "ToolLimits": ("bot.review.tools.toolbox", "ToolLimits"),
}


def __getattr__(name: str) -> Any:
    try:
        module, attribute = _HOMES[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value  # once loaded, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})


__all__ = [
    "DOC_EXTENSIONS",
    "EVIDENCE_WINDOW",
    "LEARNINGS_LIMIT",
    "PROMPT_VERSION",
    "SENSITIVE",
    "PlanOptions",
    "RelatedLimits",
    "ReviewGroup",
    "ReviewPlan",
    "SideText",
    "SuggestionError",
    "ToolLimits",
    "answer_question",
    "answer_thread",
    "apply_suggestion",
    "decide_route",
    "describe_change",
    "estimate_tokens",
    "find_file",
    "plan_review",
    "replacement_lines",
    "review",
    "select_learnings",
    "side_text",
    "split_lines",
]
