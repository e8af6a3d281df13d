"""Child processes a test interrupts as a person would, with Ctrl-C (SIGINT).

A shell without job control starts a background job with SIGINT ignored, and a child
inherits that: Python then installs no KeyboardInterrupt handler, and the SIGINT a test
sends does nothing (the suite run as ``cmd &`` from a script timed out in every such
test). Each child a test interrupts starts with SIGINT's default disposition restored,
so the test means the same however the suite was started.
"""

from __future__ import annotations

import signal


def interruptible() -> None:
    """A ``preexec_fn``: SIGINT back to its default in the child, before it execs."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
