"""What a burst is (:class:`BurstPlan`), what it did (:class:`BurstResult`), and the
promises it is checked against (:meth:`BurstResult.problems`). See ``rig``."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

#: GitHub's limit for a webhook answer.
ANSWER_LIMIT = 10.0


@dataclass(frozen=True)
class BurstPlan:
    prs: int = 50
    #: Heads per PR: ``opened``, then ``rounds - 1`` pushes with their ``synchronize``.
    rounds: int = 15
    #: ``synchronize`` sent again for the same head with a new delivery id.
    repeats: int = 50
    #: Deliveries sent again with the same ``X-GitHub-Delivery`` and body.
    redeliveries: int = 200
    concurrency: int = 16
    #: Seconds from one round's start to the next: workers review heads in between, so
    #: new heads arrive while reviews of older ones run.
    round_gap: float = 3.0
    seed: int = 7
    #: Seconds to wait after the burst for every queued job to end.
    settle_timeout: float = 240.0

    @property
    def total(self) -> int:
        return self.prs * self.rounds + self.repeats + self.redeliveries


@dataclass(frozen=True)
class Delivery:
    id: str
    kind: str  # opened | synchronize | repeat | redelivery
    pr: int
    head: str
    body: bytes


@dataclass
class Answer:
    delivery: Delivery
    status: int | None
    answer: str | None
    latency: float


@dataclass(frozen=True)
class Push:
    pr: int
    sha: str
    started: float
    done: float


@dataclass
class BurstResult:
    plan: BurstPlan
    answers: list[Answer]
    pushes: list[Push]
    #: Per PR: the head it started with, then its later heads in order.
    heads: dict[int, list[str]]
    outcomes: Counter[str]
    #: Per PR: the commit of every review posted, with the POST's time.
    reviews: dict[int, list[tuple[str, float]]]
    #: Per PR: (sent, answered) times of every read of the PR (``GET pulls/N``).
    reads: dict[int, list[tuple[float, float]]]
    burst_seconds: float
    settle_seconds: float
    forbidden: int
    #: GitNeural check runs left ``in_progress`` after every job ended.
    unfinished_checks: int
    log_errors: list[str] = field(default_factory=list)

    # -- measures ------------------------------------------------------------------------

    def latencies(self) -> list[float]:
        return sorted(a.latency for a in self.answers if a.status is not None)

    def percentile(self, q: float) -> float:
        """Nearest-rank percentile (0..100) of the answered deliveries' latencies, in s."""
        values = self.latencies()
        rank = max(1, math.ceil(q / 100 * len(values)))
        return values[min(rank, len(values)) - 1]

    def reviews_per_head(self) -> Counter[tuple[int, str]]:
        return Counter((pr, sha) for pr, posted in self.reviews.items() for sha, _ in posted)

    def stale_reviews(self) -> list[str]:
        """Reviews of a head that was not the PR's head when the job last read the PR."""
        stale = []
        for pr, posted in self.reviews.items():
            windows = self._head_windows(pr)
            for sha, when in posted:
                before = [r for r in self.reads.get(pr, []) if r[1] <= when]
                if not before:
                    stale.append(f"PR {pr}: review of {sha[:12]} without a read of the PR")
                    continue
                sent, answered = max(before, key=lambda r: r[1])
                start, end = windows.get(sha, (0.0, -1.0))
                if not (start <= answered and sent <= end):
                    stale.append(f"PR {pr}: {sha[:12]} was not the head when it was reviewed")
        return stale

    def _head_windows(self, pr: int) -> dict[str, tuple[float, float]]:
        """When each head may have been the PR's head (widened by the push's own time)."""
        pushes = [p for p in self.pushes if p.pr == pr]
        shas = self.heads[pr]
        starts = [float("-inf")] + [p.started for p in pushes]
        ends = [p.done for p in pushes] + [float("inf")]
        return {sha: (starts[i], ends[i]) for i, sha in enumerate(shas)}

    def problems(self) -> list[str]:
        """Every broken promise of the burst, in words; ``[]`` when all hold."""
        found = []
        unanswered = [a for a in self.answers if a.status is None]
        not_2xx = [a for a in self.answers if a.status is not None and not 200 <= a.status < 300]
        late = [a for a in self.answers if a.latency >= ANSWER_LIMIT]
        if len(self.answers) != self.plan.total:
            found.append(f"{len(self.answers)} deliveries sent, {self.plan.total} planned")
        if unanswered or not_2xx or late:
            found.append(
                f"{len(unanswered)} unanswered, {len(not_2xx)} not 2xx "
                f"({Counter(a.status for a in not_2xx)}), {len(late)} slower than 10 s"
            )
        queued: Counter[str] = Counter(
            a.delivery.id for a in self.answers if (a.status, a.answer) == (202, "queued")
        )
        ids = {a.delivery.id for a in self.answers}
        twice = [i for i in ids if queued[i] > 1]
        never = [i for i in ids if queued[i] == 0]
        if twice or never:
            found.append(f"delivery ids queued twice: {twice[:5]}, never: {never[:5]}")
        if self.outcomes["failed"]:
            found.append(f"{self.outcomes['failed']} job(s) failed: {self.log_errors[:3]}")
        doubles = [
            f"PR {pr} {sha[:12]}" for (pr, sha), n in self.reviews_per_head().items() if n > 1
        ]
        if doubles:
            found.append(f"heads reviewed more than once: {doubles[:5]}")
        newest = [
            pr
            for pr, heads in self.heads.items()
            if heads[-1] not in {sha for sha, _ in self.reviews.get(pr, [])}
        ]
        if newest:
            found.append(f"PRs whose newest head has no review: {newest[:10]}")
        found += self.stale_reviews()[:5]
        if self.unfinished_checks:
            found.append(f"{self.unfinished_checks} check run(s) left in progress")
        if self.forbidden:
            found.append(f"{self.forbidden} request(s) wrote to a repository or approved")
        return found
