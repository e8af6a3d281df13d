"""The findings a strict majority of a review's passes agree on (``review.passes``).

Passes are independent reviews of the same prompt; K3 fixes its sampling, so they differ
as a model's answers do. Two findings of different passes are the same finding when they
are at the same place: the same file and side, their line ranges overlapping or within
:data:`NEAR_LINES` of each other (the place, as in a fingerprint, not the wording: passes
word the same problem differently). A finding is kept when more than half of the passes
report it; the kept copy is the one of the earliest pass that reported it. The others are
dropped with a reason starting with :data:`bot.domain.results.NO_MAJORITY`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.domain.results import NO_MAJORITY, Finding
from bot.review.findings.anchor import normalise_path

#: Line ranges this close count as the same place.
NEAR_LINES = 3


@dataclass
class _Cluster:
    first: Finding
    passes: set[int] = field(default_factory=set)
    members: list[Finding] = field(default_factory=list)


def same_place(a: Finding, b: Finding) -> bool:
    return (
        normalise_path(a.path) == normalise_path(b.path)
        and str(a.side).upper() == str(b.side).upper()
        and a.start_line <= b.end_line + NEAR_LINES
        and b.start_line <= a.end_line + NEAR_LINES
    )


def majority(
    passes: Sequence[Sequence[Finding]],
) -> tuple[list[Finding], list[tuple[Finding, str]]]:
    """-> (the findings more than half of ``passes`` report, the others with reasons)."""
    clusters: list[_Cluster] = []
    for index, found in enumerate(passes):
        for finding in found:
            home = next(
                (c for c in clusters if index not in c.passes and same_place(c.first, finding)),
                None,
            )
            if home is None:
                home = _Cluster(finding)
                clusters.append(home)
            home.passes.add(index)
            home.members.append(finding)
    total = len(passes)
    kept: list[Finding] = []
    dropped: list[tuple[Finding, str]] = []
    for cluster in clusters:
        if 2 * len(cluster.passes) > total:
            kept.append(cluster.first)
        else:
            why = f"{NO_MAJORITY}: reported by {len(cluster.passes)} of {total} passes"
            dropped.append((cluster.first, why))
    return kept, dropped
