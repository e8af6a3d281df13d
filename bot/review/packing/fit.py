"""Packing files into the prompt's budget (tokens as :mod:`bot.review.token_estimate`
estimates them): the files that fit, and the others skipped with their size."""

from __future__ import annotations

import json

from bot.domain.results import SkippedFile
from bot.review.context.file_context import FileContext
from bot.review.token_estimate import estimate_tokens

#: What the prompt adds around each file besides its text and its path: the header line
#: with status and language, the labels, and two fences with their ids (measured: about
#: 31 tokens for a bare diff, 61 with context; tests/review/test_prompt.py checks the bound).
FILE_OVERHEAD_TOKENS = 64
#: The room left for context, once every bare diff is in, is granted in steps of this
#: share of the budget. A re-review's prompt differs from the last one by a few tokens
#: elsewhere (a commit added to the description, a line grown in the file that changed):
#: on a full budget, those would take the context of some earlier file away and end K3's
#: prefix cache there. In steps, they change which files show context only when they
#: cross a step. Costs at most this share of the budget.
CONTEXT_STEP = 1 / 256


def file_cost(item: FileContext) -> int:
    """Tokens ``item`` adds to the prompt: its text, its quoted path(s) and the framing."""
    paths = [item.file.path]
    if item.file.old_path != item.file.path:
        paths.append(item.file.old_path)
    quoted = sum(estimate_tokens(json.dumps(p, ensure_ascii=False)) for p in paths)
    return item.tokens + quoted + FILE_OVERHEAD_TOKENS


def over_budget(tokens: int) -> str:
    return f"over the token budget ({tokens} tokens)"


def pack(items: list[FileContext], budget: int) -> tuple[list[FileContext], list[SkippedFile]]:
    """The files that fit in ``budget`` tokens, in their given order, and the rest skipped.

    Coverage comes before depth. First the bare diffs are admitted smallest first, which
    reviews as many files as the budget allows (and never fewer for a larger budget);
    then the remaining budget (in steps of :data:`CONTEXT_STEP`, unless every file fits
    whole) grows admitted files back to their full context, in the given order. A file
    that does not fit even bare is skipped with its size, so the user knows why and by how
    much. Both lists keep the given order.
    """
    slim = [item.bare() if item.context_text else item for item in items]
    cost = [file_cost(s) for s in slim]
    remaining = budget
    admitted: set[int] = set()
    for i in sorted(range(len(items)), key=lambda i: (cost[i], i)):
        if cost[i] > remaining:
            break  # every later file is at least as large
        remaining -= cost[i]
        admitted.add(i)
    if sum(file_cost(item) for item in items) > budget:
        step = max(1, int(budget * CONTEXT_STEP))
        remaining -= remaining % step
    packed: list[FileContext] = []
    skipped: list[SkippedFile] = []
    for i, item in enumerate(items):
        if i not in admitted:
            skipped.append(SkippedFile(item.file.path, over_budget(cost[i])))
            continue
        extra = item.tokens - slim[i].tokens
        if item is not slim[i] and extra <= remaining:
            remaining -= extra
            packed.append(item)
        else:
            packed.append(slim[i])
    return packed, skipped
