"""Stage 8: what the model reported, parsed (``submission``) and checked against the real
change (``check``): anchored where GitHub accepts a comment (``anchor``), suggestions
applied and judged (``suggestions``, ``python_syntax``) on the text of each side
(``side_text``), duplicates merged by fingerprint (``fingerprint``)."""
