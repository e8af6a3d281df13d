"""The values the review core hands to every entrance: findings, coverage, results."""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from typing import Any

from bot.domain.diff import Side
from bot.domain.route import Route
from bot.domain.walkthrough import Walkthrough
from bot.usage import Usage


class Severity(enum.StrEnum):
    CRITICAL = "critical"
    MAJOR = "major"
    MINOR = "minor"
    NIT = "nit"

    @property
    def rank(self) -> int:
        """Higher is more severe."""
        return _RANKS[self]

    def at_least(self, other: Severity) -> bool:
        return self.rank >= other.rank


_RANKS = {Severity.CRITICAL: 3, Severity.MAJOR: 2, Severity.MINOR: 1, Severity.NIT: 0}


#: How the reason of every finding dropped by the evidence rule starts: the code it
#: quotes is not there (see ``bot.review.findings.evidence``).
QUOTE_NOT_FOUND = "quoted code not found"


def unquoted_text(count: int) -> str:
    """``2 findings dropped: quoted code not found``, as every output says it."""
    return f"{count} finding{'s' if count != 1 else ''} dropped: {QUOTE_NOT_FOUND}"


#: How the reason of every finding K3 refuted when asked to verify it starts
#: (``review.verify``; see ``bot.review.agent.verify``).
REFUTED = "refuted"
#: How the reason of every finding too few of ``review.passes`` reported starts.
NO_MAJORITY = "no majority"


def refuted_text(count: int) -> str:
    """``2 findings dropped: refuted``, as every output says it."""
    return f"{count} finding{'s' if count != 1 else ''} dropped: {REFUTED}"


def no_majority_text(count: int) -> str:
    """``1 finding dropped: no majority`` (of the review's passes), as every output says it."""
    return f"{count} finding{'s' if count != 1 else ''} dropped: {NO_MAJORITY} of the passes"


class Placement(enum.StrEnum):
    """Where a checked finding may be shown."""

    #: On a line GitHub accepts: an inline comment (with a suggestion, if any).
    INLINE = "inline"
    #: Near or outside the diff: listed in the review's summary only.
    SUMMARY = "summary"


@dataclass
class Finding:
    path: str
    start_line: int
    end_line: int
    side: Side
    severity: Severity
    category: str
    title: str
    body: str
    #: Exact replacement text for new-file lines ``start_line..end_line``.
    suggestion: str | None = None
    placement: Placement = Placement.INLINE
    #: Why the check moved, re-anchored or changed this finding ("" when untouched).
    note: str = ""
    #: Stable across reviews: path, normalised code at the anchor, normalised title.
    fingerprint: str = ""
    #: ``model`` or ``secret-scan``: who reported it.
    source: str = "model"
    #: The code the model quoted as the finding's evidence (None: it quoted none).
    evidence: str | None = None

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["severity"] = str(self.severity)
        data["placement"] = str(self.placement)
        return data


@dataclass
class SkippedFile:
    path: str
    #: Short and human: "ignored by 'package-lock.json'", "binary", "over the token budget".
    reason: str


@dataclass
class Coverage:
    reviewed: list[str] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"reviewed": list(self.reviewed), "skipped": [asdict(s) for s in self.skipped]}


@dataclass
class ReviewResult:
    summary: str
    #: Every finding the check kept, most severe first (inline and summary placements).
    findings: list[Finding]
    coverage: Coverage
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    effort: str = ""
    duration_s: float = 0.0
    #: Findings the check could not keep, with the reason (never dropped silently).
    dropped: list[tuple[Finding, str]] = field(default_factory=list)
    #: Ids of the repository's learnings the prompt could not show (over the cap).
    learnings_left_out: list[int] = field(default_factory=list)
    #: What the change is (``[walkthrough] enabled``), when K3 wrote a usable one.
    walkthrough: Walkthrough | None = None
    #: The route the change took (``bot.review.route``): its effort, endpoint and reason.
    route: Route | None = None

    def unquoted(self) -> int:
        """How many findings were dropped because the code they quote is not there."""
        return sum(reason.startswith(QUOTE_NOT_FOUND) for _, reason in self.dropped)

    def refuted(self) -> int:
        """How many findings K3 refuted when asked to verify them (``review.verify``)."""
        return sum(reason.startswith(REFUTED) for _, reason in self.dropped)

    def unmajorities(self) -> int:
        """How many findings too few of the review's passes reported (``review.passes``)."""
        return sum(reason.startswith(NO_MAJORITY) for _, reason in self.dropped)

    def lever_counts(self) -> list[str]:
        """The outputs' words for the findings the levers against noise dropped."""
        counts = [(self.refuted(), refuted_text), (self.unmajorities(), no_majority_text)]
        return [text(n) for n, text in counts if n]

    def worst(self) -> Severity | None:
        return max((f.severity for f in self.findings), key=lambda s: s.rank, default=None)
