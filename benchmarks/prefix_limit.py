"""How much of a prompt a prefix cache can serve at best: its physical limit.

A prefix cache serves a prompt up to the first token that differs from an earlier one;
nothing after it can come from the cache, however the cache works. For two consecutive
reviews the limit is therefore the share of the second review's prompt before its first
change, and a budget on the cache is fair only against that limit: a 1-file pull request
whose file changed cannot be served past the start of that file.

Everything is counted in **characters of the prompt as the K3 stub serialises it**
(:func:`tests.fakes.k3.handler.prompt_text`: the model, the effort, the tools and the
messages as JSON), the text on which the stub counts its cached tokens (the longest
prefix shared with an earlier prompt, at 4 characters a token, above 256 tokens). A share
of characters is therefore a share of the stub's tokens.

:func:`prefix_limit` also says whether the first change comes no earlier than the pushed
file's section (its ``## File "…"`` heading) in either prompt, the earlier one or this
one: so a limit lowered by something volatile earlier in the prompt (a timestamp, an id,
another effort, the files in another order) fails instead of excusing a cache that serves
little.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tests.fakes.k3.handler import prompt_text
from tests.fakes.k3.reply import CHARS_PER_TOKEN

#: How a file's section starts in the review prompt (``prompts/change.md.j2``).
FILE_HEADING = "## File "


@dataclass(frozen=True)
class PrefixLimit:
    #: Characters of the prompts (every request of the review), and of those the
    #: characters before each request's first change from the previous review.
    chars: int
    unchanged_chars: int
    #: Whether no request changed before the pushed file's section (in its prompt or the
    #: previous one it shares the most with).
    first_change_in_pushed_file: bool

    @property
    def share(self) -> float:
        return self.unchanged_chars / self.chars if self.chars else 0.0

    @property
    def tokens(self) -> float:
        """The limit in the stub's tokens."""
        return self.unchanged_chars / CHARS_PER_TOKEN


def serialised(body: dict[str, Any]) -> str:
    """A request's prompt as the stub counts it."""
    return prompt_text(body)


def first_difference(a: str, b: str) -> int:
    """The index of the first character where ``a`` and ``b`` differ (or the shorter length)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:  # binary search on slices: the comparisons run in C
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _heading(path: str) -> str:
    """The pushed file's heading as it appears in the serialised prompt (JSON in JSON)."""
    return json.dumps(FILE_HEADING + json.dumps(path), ensure_ascii=False)[1:-1]


def prefix_limit(previous: Sequence[str], current: Sequence[str], pushed: str) -> PrefixLimit:
    """The limit for the ``current`` review's prompts, the ``previous`` review's cached."""
    chars = unchanged = 0
    in_pushed = True
    own = _heading(pushed)
    for prompt in current:
        start, before = max(((first_difference(p, prompt), p) for p in previous), default=(0, ""))
        chars += len(prompt)
        unchanged += start
        if start < len(prompt):
            # Where the pushed file's section starts, in either prompt: a change there
            # moves everything after it (``changed_last`` moves the file itself).
            sections = [at for at in (before.find(own), prompt.find(own)) if at != -1]
            in_pushed = in_pushed and bool(sections) and start >= min(sections)
    return PrefixLimit(chars, unchanged, in_pushed)
