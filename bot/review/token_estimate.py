"""The token estimator.

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

from bot.text import encode_text

#: Bytes per token assumed by :func:`estimate_tokens`.
BYTES_PER_TOKEN = 3


def estimate_tokens(text: str) -> int:
    """A conservative token count for ``text`` (monotone: more text, never fewer tokens)."""
    size = len(encode_text(text))
    return -(-size // BYTES_PER_TOKEN)
