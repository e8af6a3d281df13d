"""A stub brain for the levers against noise: reviews answered per pass, and verification
requests answered finding by finding.

    brain = LeverBrain(passes=[[bug, decoy], [bug], [bug, other]])
    with K3Stub(brain=brain) as stub: ...

Every request that is not a verification is a review request; the n-th one with the
same messages is pass n (the passes of a review send the same prompt) and submits
``passes[n]`` (the last list once the passes run out), so passes over one prompt answer
differently, whatever order they come in. A *verification request* ends with the user
message that lists the findings to verify (``bot.review.agent.verify``): a finding whose
quoted evidence holds :data:`REFUTE_MARK` (a comment in the reviewed code) is refuted,
every other one confirmed, so the test drives the verdicts from the code it plants.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.k3.reply import Reply

#: Put in the reviewed code (a comment) and quoted by a finding: the stub refutes it.
REFUTE_MARK = "k3stub: intended"
SUBMIT_VERDICTS = "submit_verdicts"
_FENCED = re.compile(r"<untrusted-([0-9a-f]{12})>\n(.*?)\n</untrusted-\1>", re.DOTALL)


def verify_listing(body: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The findings a verification request lists, or None for any other request."""
    last = body["messages"][-1]
    content = str(last.get("content") or "")
    if last["role"] != "user" or f"`{SUBMIT_VERDICTS}`" not in content:
        return None
    found = _FENCED.search(content)
    if found is None:
        return None
    listing: list[dict[str, Any]] = json.loads(found.group(2))
    return listing


def verdicts_reply(listing: list[dict[str, Any]]) -> Reply:
    """Refute the findings quoting :data:`REFUTE_MARK`, confirm the others."""
    verdicts = []
    for item in listing:
        refuted = REFUTE_MARK in str(item.get("evidence", ""))
        verdicts.append(
            {
                "id": item["id"],
                "verdict": "refuted" if refuted else "confirmed",
                "evidence": (
                    f"The code says this is intended: {item['evidence'].strip()}"
                    if refuted
                    else f"The quoted line really does this: {item['evidence'].strip()}"
                ),
            }
        )
    return Reply(
        reasoning="Checking each finding against the code.",
        tool_calls=[(SUBMIT_VERDICTS, {"verdicts": verdicts})],
    )


@dataclass
class LeverBrain:
    """Pass n of a prompt submits ``passes[n]``; verification as the module says."""

    passes: list[list[dict[str, Any]]]
    summary: str = "Reviewed the change."
    #: Review requests seen, by prompt.
    seen: Counter[str] = field(default_factory=Counter)
    #: The listings of the verification requests answered, in order.
    verified: list[list[dict[str, Any]]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, body: dict[str, Any]) -> Reply:
        listing = verify_listing(body)
        if listing is not None:
            with self._lock:
                self.verified.append(listing)
            return verdicts_reply(listing)
        prompt = json.dumps(body["messages"], sort_keys=True)
        with self._lock:
            index = self.seen[prompt]
            self.seen[prompt] += 1
        findings = self.passes[min(index, len(self.passes) - 1)] if self.passes else []
        return Reply(
            reasoning=f"Pass {index + 1}: reading the change.",
            tool_calls=[("submit_review", {"summary": self.summary, "findings": findings})],
        )
