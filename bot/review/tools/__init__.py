"""The read-only repository tools K3 may call while it reviews (``toolbox``): paths kept
inside the snapshot (``paths``), bounded search (``search``), what the model is told
about them (``specs``) and what it sends back, checked (``arguments``)."""
