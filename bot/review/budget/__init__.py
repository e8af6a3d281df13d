"""Stage 4: files packed into the prompt's token budget (``packing``, with the estimator
in ``tokens``), or a change too large for one prompt split into groups of related files
(``grouping``)."""
