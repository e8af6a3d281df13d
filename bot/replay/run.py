"""A replay's run: each past change planned, then reviewed by the review core exactly as
the App would have (the settings and instruction files of the change's base), posting
nothing; reviews kept in :class:`~bot.replay.cache.ReviewCache`, findings judged."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from bot.domain.change import Change
from bot.domain.results import Finding
from bot.effort import Effort
from bot.git.repo import range_change
from bot.llm.types import ModelClient
from bot.replay.cache import KeptReview, ReviewCache, judge_key, review_key
from bot.replay.items import GoldenItem, Judged, PastChange
from bot.replay.judges import judge_location, judge_with_model, parse_answer
from bot.review import PlanOptions, plan_review
from bot.settings.repository import Config, chosen_effort, trusted_config
from bot.usage import Usage


@dataclass
class Planned:
    """One change under one settings file, before the model: its estimate, and its kept
    review when an earlier run already asked."""

    past: PastChange
    change: Change
    config: Config
    effort: Effort
    key: str
    estimated_tokens: int
    kept: KeptReview | None
    #: Whether this run asked the model (else the review was kept by an earlier run).
    asked: bool = False


@dataclass
class Outcome:
    """One change's review, judged (``findings`` empty in a dry run)."""

    past: PastChange
    golden: list[GoldenItem]
    findings: list[Finding] = field(default_factory=list)
    judged: Judged = field(default_factory=Judged)
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0
    estimated_tokens: int = 0
    from_cache: bool = False


def plan_changes(
    repo: pygit2.Repository,
    changes: Sequence[PastChange],
    *,
    config_file: Path | None,
    effort_flag: str | None,
    model: str,
    cache: ReviewCache,
    fresh: bool,
) -> list[Planned]:
    """Every change planned with the settings of its base (or ``config_file``)."""
    planned = []
    for past in changes:
        change = range_change(repo, past.base, past.head)
        change.title = past.title or change.title
        config = trusted_config(change.trusted, config_file)
        effort = chosen_effort(effort_flag, config.review.effort)
        key = review_key(past.base, past.head, config, model, effort)
        kept = None if fresh else cache.get(key)
        estimate = 0
        if kept is None:
            estimate = plan_review(change, config, PlanOptions(effort=effort)).estimated_tokens
        planned.append(Planned(past, change, config, effort, key, estimate, kept))
    return planned


def to_ask(planned: Sequence[Planned]) -> list[Planned]:
    """The changes no earlier run kept a review of."""
    return [p for p in planned if p.kept is None]


#: ``(done, total, past)`` after each change the model reviewed.
OnChange = Callable[[int, int, PastChange], None]


def review_all(
    planned: Sequence[Planned],
    cache: ReviewCache,
    *,
    model: str,
    timeout: float | None,
    on_start: OnChange | None = None,
) -> None:
    """Ask the model about each change not kept yet, keeping each review as it finishes
    (an interrupted run keeps every change done before it)."""
    from bot.llm.client import K3Client
    from bot.llm.settings import LLMSettings
    from bot.review import review

    pending = to_ask(planned)
    for n, p in enumerate(pending):
        if on_start is not None:
            on_start(n, len(pending), p.past)
        settings = LLMSettings.from_env(
            effort=p.effort, stall_timeout=p.config.review.stall_timeout, model=model
        )
        settings.require_key()
        limit = timeout or p.config.review.timeout
        result = review(p.change, p.config, K3Client(settings), deadline=time.monotonic() + limit)
        p.kept = KeptReview(list(result.findings), result.usage, result.duration_s)
        p.asked = True
        cache.put(p.key, p.kept)


class ModelJudge:
    """``--judge model``: the model asked once per change which findings describe which
    golden items; each answer kept in the cache (by :func:`judge_key`) so a later run over
    the same reviews and golden items asks nothing (``fresh``: ask again)."""

    def __init__(
        self,
        client: Callable[[], ModelClient],
        cache: ReviewCache,
        *,
        model: str,
        fresh: bool = False,
    ) -> None:
        self._client = client
        self._made: ModelClient | None = None
        self.cache = cache
        self.model = model
        self.fresh = fresh
        #: How many changes this run asked the model to judge.
        self.asked = 0

    def __call__(self, p: Planned, findings: list[Finding], items: list[GoldenItem]) -> Judged:
        if not findings or not items:
            return Judged()
        key = judge_key(p.key, findings, items, self.model)
        answer = None if self.fresh else self.cache.get_answer(key)
        if answer is not None:
            return Judged(parse_answer(answer, len(findings), len(items)), answer=answer)
        if self._made is None:
            self._made = self._client()
        judged = judge_with_model(self._made, p.past, findings, items)
        self.asked += 1
        self.cache.put_answer(key, judged.answer)
        return judged


#: How one change's findings are judged against its golden items.
Judge = Callable[[Planned, list[Finding], list[GoldenItem]], Judged]


def location_judge(_p: Planned, findings: list[Finding], items: list[GoldenItem]) -> Judged:
    return judge_location(findings, items)


def judge_all(
    planned: Sequence[Planned],
    golden: dict[str, list[GoldenItem]],
    judge: Judge = location_judge,
) -> list[Outcome]:
    """Each change's findings against its golden items (no findings when not reviewed)."""
    out = []
    for p in planned:
        items = golden.get(p.past.key, [])
        outcome = Outcome(p.past, items, estimated_tokens=p.estimated_tokens)
        if p.kept is not None:
            outcome.findings = p.kept.findings
            outcome.usage = p.kept.usage
            outcome.seconds = p.kept.seconds
            outcome.from_cache = not p.asked
            outcome.judged = judge(p, p.kept.findings, items)
        out.append(outcome)
    return out
