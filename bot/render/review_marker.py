"""The hidden marker that ends every review body GitNeural posts.

``<!-- gitneural:v1 head=SHA trigger=T delivery=ID since=SHA|- conclusion=C worst=S|-
findings=N fp=F1,F2 -->``: how a later run knows its own work (head and trigger, or
delivery, make posting idempotent; ``head`` starts the next ``synchronize`` review;
fingerprints name the findings already posted). Every value is reduced to safe
characters, so no text can end the comment early.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.domain.results import Severity

MARKER_PREFIX = "<!-- gitneural:v1 "
_MARKER = re.compile(r"<!-- gitneural:v1 ((?:[a-z]+=[A-Za-z0-9._,-]*\s)*)-->")
_FIELD = re.compile(r"([a-z]+)=([A-Za-z0-9._,-]*)")
_SAFE_VALUE = re.compile(r"[^A-Za-z0-9._-]")


@dataclass(frozen=True)
class Marker:
    head: str
    trigger: str
    delivery: str
    #: The start of an incremental review (the last reviewed head); None for a full one.
    since: str | None = None
    #: The check run's conclusion when the review was posted.
    conclusion: str = "neutral"
    fingerprints: tuple[str, ...] = ()
    #: The worst severity and the number of findings kept (None in older markers): a
    #: re-run workflow reaches the same verdict without asking the model again.
    worst: str | None = None
    findings: int | None = None

    def render(self) -> str:
        fields = {
            "head": self.head,
            "trigger": self.trigger,
            "delivery": self.delivery,
            "since": self.since or "-",
            "conclusion": self.conclusion,
            "worst": self.worst or "-",
            "findings": "-" if self.findings is None else str(self.findings),
        }
        parts = [f"{k}={_SAFE_VALUE.sub('', v)[:100] or '-'}" for k, v in fields.items()]
        fps = ",".join(_SAFE_VALUE.sub("", fp)[:64] for fp in self.fingerprints)
        return MARKER_PREFIX + " ".join(parts) + f" fp={fps} -->"


def parse_marker(body: str | None) -> Marker | None:
    """The last GitNeural marker in a review body, or None."""
    found = list(_MARKER.finditer(body or ""))
    if not found:
        return None
    values = dict(_FIELD.findall(found[-1].group(1)))
    head, trigger = values.get("head", ""), values.get("trigger", "")
    if not head or not trigger:
        return None
    since, worst, count = values.get("since", "-"), values.get("worst"), values.get("findings")
    return Marker(
        head=head,
        trigger=trigger,
        delivery=values.get("delivery", "-"),
        since=None if since == "-" else since,
        conclusion=values.get("conclusion", "neutral"),
        fingerprints=tuple(fp for fp in values.get("fp", "").split(",") if fp),
        worst=worst if worst in {str(s) for s in Severity} else None,
        findings=int(count) if count and count.isdigit() and len(count) < 7 else None,
    )
