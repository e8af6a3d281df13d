"""Stage 7: the conversation with K3 (``conversation``: one-shot or agentic, always ending
in ``submit_review``), and the groups of a large change reviewed in parallel and merged
(``parallel``)."""
