"""The reply GitNeural leaves in a thread it resolves because a push fixed its finding.

``Addressed in `abc1234`.`` then the hidden marker ``<!-- gitneural:addressed v1
head=SHA -->``: a job that runs again finds the reply by it (on a comment by GitNeural's
own account, which the caller checks) and never replies twice.
"""

from __future__ import annotations

import re

_ADDRESSED = re.compile(r"<!-- gitneural:addressed v1 head=([0-9a-f]{7,64}) -->")
_SHA = re.compile(r"[0-9a-f]{7,64}")


def addressed_body(head_sha: str) -> str:
    sha = head_sha if _SHA.fullmatch(head_sha) else "0" * 40
    return f"Addressed in `{sha[:7]}`.\n\n<!-- gitneural:addressed v1 head={sha} -->"


def addressed_head(body: str | None) -> str | None:
    """The head an "Addressed" reply names, or None for any other text."""
    found = _ADDRESSED.findall(body or "")
    return found[-1] if found else None
