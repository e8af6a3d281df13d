"""Stage 2 of the review: committed secrets found, reported, and redacted from everything
the model will see (``patterns``: the formats, with ``randomness`` for values that must
look random to count; ``redaction``: finding and replacing them in text and diffs, and
the "secret committed" findings; ``redacted_change``: the change as the model may see it)."""
