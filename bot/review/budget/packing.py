"""The token estimator, and packing files into the prompt's budget.

K3's tokenizer is not available offline, so tokens are estimated from the UTF-8 size:
one token per started 3 bytes. That over-counts on purpose: BPE tokenizers of current
models spend about 3.5 to 4.5 bytes per token on source code and English, and a CJK
character (3 bytes in UTF-8) is rarely less than one token. Only dense, unusual text
(base64, hex dumps, long runs of punctuation) comes near 2 bytes per token, and such files
are mostly ignored by default (minified, generated, lock files). An over-estimate costs a
few skipped files in a huge change; an under-estimate costs a rejected request
(context too long) for the whole review. Counting bytes is linear and cheap: 3,000 files
are estimated in milliseconds.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from bot.domain.results import SkippedFile
from bot.text import encode_text

if TYPE_CHECKING:
    from bot.review.context.file_context import FileContext

#: Bytes per token assumed by :func:`estimate_tokens`.
BYTES_PER_TOKEN = 3
#: What the prompt adds around each file besides its text and its path: the header line
#: with status and language, the labels, and two fences with their ids (measured: about
#: 31 tokens for a bare diff, 61 with context; tests/review/test_prompt.py checks the bound).
FILE_OVERHEAD_TOKENS = 64


def estimate_tokens(text: str) -> int:
    """A conservative token count for ``text`` (monotone: more text, never fewer tokens)."""
    size = len(encode_text(text))
    return -(-size // BYTES_PER_TOKEN)


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
    then the remaining budget grows admitted files back to their full context, in the
    given order. A file that does not fit even bare is skipped with its size, so the user
    knows why and by how much. Both lists keep the given order.
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
