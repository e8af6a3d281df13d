"""The judges of a replay: ``location``, which matches a finding to a golden item of the
same file when their line ranges come within :data:`WINDOW` lines."""

from __future__ import annotations

from collections.abc import Sequence

from bot.domain.results import Finding
from bot.replay.items import GoldenItem, Judged, Match

#: A finding and a golden item this many lines apart (or closer) describe the same place.
WINDOW = 3


def judge_location(findings: Sequence[Finding], golden: Sequence[GoldenItem]) -> Judged:
    """Every (finding, golden item) pair on the same path within :data:`WINDOW` lines."""
    matches = []
    for fi, finding in enumerate(findings):
        for gi, item in enumerate(golden):
            if item.path != finding.path or item.lines is None:
                continue
            first, last = item.lines
            if finding.start_line <= last + WINDOW and first <= finding.end_line + WINDOW:
                matches.append(Match(fi, gi, "location"))
    return Judged(matches)
