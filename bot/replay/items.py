"""The words replay speaks: a past change, a golden item (what a right review would have
flagged), and a match between a finding and a golden item."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class PastChange:
    """One change of the history, reviewed as ``base..head`` (a merge: ``merge^1..merge^2``)."""

    base: str
    head: str
    title: str
    #: The merge commit (or, with ``--commits``, the commit itself) the change came from.
    commit: str = ""

    @property
    def key(self) -> str:
        """How golden files and reports name the change: ``BASE..HEAD``."""
        return f"{self.base}..{self.head}"


@dataclass(frozen=True)
class GoldenItem:
    """Something a right review of the change would have flagged.

    ``path`` and ``lines`` (first and last line in the change's head, 1-based) are None for
    an item a golden file gives only as text: only the model judge can match those.
    """

    change: str  # PastChange.key
    path: str | None
    lines: tuple[int, int] | None
    text: str = ""
    severity: str | None = None
    #: ``history`` (a later fix), ``file`` (--golden FILE) or ``github`` (a person's comment).
    source: str = "history"
    #: For an item mined from history: the later commit that fixed it.
    fix_sha: str | None = None
    fix_subject: str | None = None


@dataclass(frozen=True)
class Match:
    """Finding ``finding`` (its index in the change's findings) describes golden item
    ``golden`` (its index in the change's golden items), as judged by ``judge``."""

    finding: int
    golden: int
    judge: str = "location"
    reason: str = ""


@dataclass
class Judged:
    """One change's findings against its golden items."""

    matches: list[Match] = field(default_factory=list)
    #: The model judge's answer as it came (kept in the report, reused by later runs).
    answer: str = ""

    def found(self, golden: int) -> bool:
        return any(m.golden == golden for m in self.matches)

    def matched(self, finding: int) -> bool:
        return any(m.finding == finding for m in self.matches)
