"""Stage 4: files packed into the prompt's token budget (``packing``), or a change too
large for one prompt split into groups of related files (``grouping``). Tokens are
counted by :mod:`bot.review.token_estimate`, the core's one estimator."""
